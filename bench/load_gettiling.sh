#!/bin/bash
# Load test: GetTiling against the empty-RPC baseline grpc.health.v1.Health/Check, driven by
# h2load (Debian nghttp2-client) on one tiling_server with the decision cache off.
#
#   bench/load_gettiling.sh [--build-dir build-release] [--calls 1000000] [--rounds 4]
#                           [--clients 16] [--streams 8] [--cache-size 0] [--keep]
#
# Request bodies are built from the .proto files with `protoc --encode` and wrapped in the 5-byte
# gRPC frame: Health/Check, and one GetTiling request in both response views (FULL, the default,
# and COMPACT, what a launcher needs). The three alternate in --rounds rounds of --calls/--rounds
# calls each, on the same server, so drift of the shared machine hits all alike. Correctness comes
# from the server's own counters (grpc_server_handled_total from /metrics), because h2load counts
# a gRPC error (HTTP 200 with a non-zero grpc-status trailer) as a success. The server's RSS is
# sampled twice a second across the measured rounds. Prints a Markdown report (the
# bench/RESULTS.md format); exits non-zero when a call was lost or failed, or RSS grew. The
# throughput ratios are reported against the 0.9 goal but do not fail the run: on the shared
# 2-core build host they are noisy (see bench/RESULTS.md).
#
# Needs: h2load and nghttp (nghttp2-client), protoc, curl, python3; the grpc-proto package for
# the health request (an empty HealthCheckRequest is used without it). Builds
# <build-dir>/bin/tiling_server with scripts/build_release.sh (the profile-guided release build,
# as deployed) when it is missing; the report names the build's type and PGO setting.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

BUILD_DIR=build-release
CALLS=1000000
ROUNDS=4
CLIENTS=16
STREAMS=8
CACHE_SIZE=0
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --calls) CALLS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --streams) STREAMS=$2; shift 2 ;;
    --cache-size) CACHE_SIZE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "load_gettiling.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
PER_ROUND=$((CALLS / ROUNDS))

for tool in h2load nghttp protoc curl python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install_deps.sh --test)" >&2; exit 2; }
done
SERVER=$BUILD_DIR/bin/tiling_server
if [ ! -x "$SERVER" ]; then
  scripts/build_release.sh "$BUILD_DIR"
fi
HELPERS="python3 $ROOT/bench/load_helpers.py"

WORK=$(mktemp -d /tmp/npu_load.XXXXXX)
SERVER_PID=""
SAMPLER_PID=""
cleanup() {
  [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
  [ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null || true
  if [ "$KEEP" = 1 ]; then echo "work dir kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# --- request bodies -------------------------------------------------------------------------
# CANN golden case MatMulV3_950_basic_testNZ_streamk (key 4162, BASIC_STREAM_K): a realistic
# request whose decision runs every strategy's capability check.
cat > "$WORK/tiling.txtpb" <<'EOF'
id: "load"
problem {
  m: 4096 n: 1280 k: 8192
  dtype_a: DATA_TYPE_FLOAT16 dtype_b: DATA_TYPE_FLOAT16 dtype_c: DATA_TYPE_FLOAT16
  trans_b: true format_b: FORMAT_FRACTAL_NZ
}
client_id: "h2load"
EOF
# The same request in both views: FULL (the default: every field by name) and COMPACT (what a
# launcher needs).
protoc --encode=npu.tiling.v1.TilingRequest -I proto npu/tiling/v1/tiling_service.proto \
  < "$WORK/tiling.txtpb" > "$WORK/full.pb"
$HELPERS frame "$WORK/full.pb" "$WORK/full.bin"
(cat "$WORK/tiling.txtpb"; echo 'view: RESPONSE_VIEW_COMPACT') |
  protoc --encode=npu.tiling.v1.TilingRequest -I proto npu/tiling/v1/tiling_service.proto \
  > "$WORK/compact.pb"
$HELPERS frame "$WORK/compact.pb" "$WORK/compact.bin"
HEALTH_PROTO_DIR=/usr/share/grpc-proto
if [ -f "$HEALTH_PROTO_DIR/grpc/health/v1/health.proto" ]; then
  # service "" asks about the server as a whole; proto3 encodes it as zero bytes.
  echo 'service: ""' | protoc --encode=grpc.health.v1.HealthCheckRequest \
    -I "$HEALTH_PROTO_DIR" grpc/health/v1/health.proto > "$WORK/health.pb"
else
  : > "$WORK/health.pb"
fi
$HELPERS frame "$WORK/health.pb" "$WORK/health.bin"

# --- server ---------------------------------------------------------------------------------
"$SERVER" --address=127.0.0.1 --port=0 --metrics_port=0 --cache_size="$CACHE_SIZE" \
  --log_level=warning > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
  grep -q '^listening on ' "$WORK/server.log" && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.1
done
GRPC_PORT=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$WORK/server.log")
METRICS_PORT=$(sed -n 's/^metrics on .*:\([0-9]*\)$/\1/p' "$WORK/server.log")
[ -n "$GRPC_PORT" ] && [ -n "$METRICS_PORT" ] || { cat "$WORK/server.log" >&2; exit 1; }
URL=http://127.0.0.1:$GRPC_PORT
METRICS_URL=http://127.0.0.1:$METRICS_PORT/metrics
HEADERS=(-H 'content-type: application/grpc' -H 'te: trailers')

# --- sanity: one call of each, trailers visible ---------------------------------------------
for rpc in full compact health; do
  path=/npu.tiling.v1.TilingService/GetTiling
  [ "$rpc" = health ] && path=/grpc.health.v1.Health/Check
  nghttp -v -d "$WORK/$rpc.bin" "${HEADERS[@]}" "$URL$path" > "$WORK/$rpc.nghttp" 2>&1 || true
  grep -q 'grpc-status: 0' "$WORK/$rpc.nghttp" || {
    echo "sanity call $path did not return grpc-status 0:" >&2; cat "$WORK/$rpc.nghttp" >&2; exit 1; }
done

# CPU time (user + system) the server has used, in clock ticks.
server_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat"; }

run_h2load() {  # kind calls log; also writes LOG.cpu: the server's CPU ticks during the run
  local path=/npu.tiling.v1.TilingService/GetTiling
  [ "$1" = health ] && path=/grpc.health.v1.Health/Check
  local before
  before=$(server_cpu_ticks)
  h2load -n "$2" -c "$CLIENTS" -m "$STREAMS" -t 1 -d "$WORK/$1.bin" "${HEADERS[@]}" \
    "$URL$path" > "$3" 2>&1
  echo "$(( $(server_cpu_ticks) - before )) $(getconf CLK_TCK)" > "$3.cpu"
}

# Warm-up: connections, thread pools and allocator caches reach their steady state.
run_h2load health 20000 "$WORK/warmup-health.h2load"
run_h2load compact 20000 "$WORK/warmup-compact.h2load"
run_h2load full 20000 "$WORK/warmup-full.h2load"

# --- measured rounds ------------------------------------------------------------------------
$HELPERS metrics "$METRICS_URL" "$WORK/before.json"
(
  start=$(date +%s.%N)
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || true)
    [ -n "$rss" ] && awk -v s="$start" -v n="$(date +%s.%N)" -v r="$rss" \
      'BEGIN { printf "%.2f %d\n", n - s, r }'
    sleep 0.5
  done
) > "$WORK/rss.txt" &
SAMPLER_PID=$!
echo "server pid $SERVER_PID on $URL; $ROUNDS rounds x $PER_ROUND calls per RPC," \
  "h2load -c $CLIENTS -m $STREAMS -t 1" >&2
for r in $(seq 1 "$ROUNDS"); do
  line="round $r:"
  for kind in health compact full; do
    run_h2load "$kind" "$PER_ROUND" "$WORK/$kind-$r.h2load"
    line="$line $kind $($HELPERS h2load "$WORK/$kind-$r.h2load" | python3 -c \
      'import json,sys; print("%.0f req/s" % json.load(sys.stdin)["req_per_s"])')"
  done
  echo "$line" >&2
done
sleep 1  # one more RSS sample after the last call
kill "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""
$HELPERS metrics "$METRICS_URL" "$WORK/after.json"

# --- shutdown -------------------------------------------------------------------------------
kill -TERM "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
SERVER_PID=""

BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
PGO=$(sed -n 's/^NPU_PGO:STRING=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
echo "Server: \`$SERVER --cache_size=$CACHE_SIZE\` (${BUILD_TYPE:-RelWithDebInfo, the default}" \
  "build, NPU_PGO=${PGO:-OFF}); h2load \`-c $CLIENTS" \
  "-m $STREAMS -t 1\`, $ROUNDS alternating rounds of $PER_ROUND calls per RPC; server exit" \
  "code after SIGTERM: $rc."
echo
report_rc=0
$HELPERS report --workdir "$WORK" --rounds "$ROUNDS" --before "$WORK/before.json" \
  --after "$WORK/after.json" --rss "$WORK/rss.txt" --cache_size "$CACHE_SIZE" || report_rc=$?
[ "$rc" = 0 ] || { echo "- FAIL server exit code $rc" ; report_rc=1; }
exit "$report_rc"
