#!/bin/sh
# Checks the release binaries of scripts/build_release.sh, which the Docker image ships: they need
# only the runtime image's packages (tests/deploy/runtime_packages_test.py); then through a real
# server, as a user would run them: health; CANN's golden cases exactly (tilingctl conform); a
# request with m=0 refused with INVALID_ARGUMENT naming the field; an emulation with numerics
# against the fp64 reference and a timing-only one on a Stream-K shape; the metrics endpoint;
# and a graceful stop (SIGTERM, exit 0).
#
#   scripts/check_release.sh [BUILD_DIR]    (default: build)
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
SERVER=$BUILD_DIR/bin/tiling_server
CTL=$BUILD_DIR/bin/tilingctl
for binary in "$SERVER" "$CTL"; do
  [ -x "$binary" ] || { echo "check_release.sh: no $binary (scripts/build_release.sh)" >&2; exit 2; }
done

/usr/bin/python3 tests/deploy/runtime_packages_test.py --require-binaries "$SERVER" "$CTL" |
  tail -n 1 | grep -qx PASS || {
  echo "check_release.sh: FAIL: the release binaries need packages the runtime image lacks:" >&2
  /usr/bin/python3 tests/deploy/runtime_packages_test.py --require-binaries "$SERVER" "$CTL" >&2
  exit 1
}
echo "release check: runtime packages PASS"

WORK=$(mktemp -d /tmp/npu_release_check.XXXXXX)
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "check_release.sh: FAIL: $*" >&2
  echo "--- server log" >&2
  cat "$WORK/server.log" >&2
  exit 1
}

"$SERVER" --address=127.0.0.1 --port=0 --metrics_port=0 > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
PORT=""
METRICS=""
for _ in $(seq 100); do
  PORT=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$WORK/server.log")
  METRICS=$(sed -n 's/^metrics on .*:\([0-9][0-9]*\)$/\1/p' "$WORK/server.log")
  [ -n "$PORT" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "the server exited at start"
  sleep 0.1
done
[ -n "$PORT" ] || fail "the server printed no port within 10 s"
TARGET="127.0.0.1:$PORT"

"$CTL" health --server "$TARGET" > "$WORK/health.txt" 2>&1 || fail "health: $(cat "$WORK/health.txt")"

"$CTL" conform tests/data/cann950/cases.json --server "$TARGET" > "$WORK/conform.txt" 2>&1 ||
  fail "conform: $(tail -n 5 "$WORK/conform.txt")"
grep -Eq '^[1-9][0-9]* passed, 0 failed$' "$WORK/conform.txt" ||
  fail "conform: $(tail -n 1 "$WORK/conform.txt")"
echo "release check: $(tail -n 1 "$WORK/conform.txt") (CANN golden cases)"

# Bad input: the release build's error paths (left out of its training) still answer.
if "$CTL" tile --m 0 --n 16 --k 16 --server "$TARGET" > "$WORK/bad.txt" 2>&1; then
  fail "m=0 was answered: $(cat "$WORK/bad.txt")"
fi
grep -q 'INVALID_ARGUMENT: .*field m=0 must be in' "$WORK/bad.txt" ||
  fail "m=0: not INVALID_ARGUMENT naming the field: $(cat "$WORK/bad.txt")"
echo "release check: bad input refused (INVALID_ARGUMENT naming the field)"

"$CTL" execute --m 256 --n 320 --k 1024 --seed 7 --server "$TARGET" > "$WORK/execute.txt" 2>&1 ||
  fail "execute: $(tail -n 5 "$WORK/execute.txt")"
grep -q '^accuracy vs fp64 reference: PASS' "$WORK/execute.txt" ||
  fail "execute: numerics did not pass: $(cat "$WORK/execute.txt")"
"$CTL" execute --m 512 --n 512 --k 32768 --timing-only \
  --server "$TARGET" > "$WORK/timing.txt" 2>&1 || fail "timing-only execute: $(tail -n 5 "$WORK/timing.txt")"
grep -q 'BASIC_STREAM_K' "$WORK/timing.txt" ||
  fail "timing-only execute: not the Stream-K tiling: $(head -n 3 "$WORK/timing.txt")"
echo "release check: Execute numerics PASS, Stream-K timing-only OK"

curl -fsS "http://127.0.0.1:$METRICS/metrics" > "$WORK/metrics.txt" || fail "no /metrics"
grep '^grpc_server_handled_total{' "$WORK/metrics.txt" | grep 'grpc_method="GetTiling"' |
  grep 'grpc_code="OK"' | grep -q '} [1-9]' || fail "/metrics counts no successful GetTiling"

kill -TERM "$SERVER_PID"
STATUS=0
wait "$SERVER_PID" || STATUS=$?
SERVER_PID=""
[ "$STATUS" = 0 ] || fail "the server exited with status $STATUS after SIGTERM"
grep -q 'stopped' "$WORK/server.log" || fail "the server did not log its graceful stop"
echo "release check: PASS ($SERVER, $CTL)"
