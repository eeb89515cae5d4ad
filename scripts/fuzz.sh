#!/bin/sh
# Builds the libFuzzer targets of tests/fuzz with clang (coverage + ASan + UBSan) in build-san
# and runs each for a bounded time, starting from its committed corpus. build-san is also the tree
# in which scripts/test.sh runs the test suite under the sanitizers, so one compilation serves both.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET ...]
#       SECONDS_PER_TARGET  default 60
#       TARGET              tiling_request explicit_tiling npy onnx_graph (default: all)
#   NPU_FUZZ_BUILD_DIR (default build-san), NPU_BUILD_JOBS (default 1),
#   NPU_FUZZ_JOBS: libFuzzer workers per target (default 1); 2 on two cores explores as much in
#   half the time.
#
# New inputs go to build-san/corpus/<target>/; tests/fuzz/corpus/ is only read. libFuzzer runs in
# fork mode and keeps going after a failure, writing each failing input to
# build-san/artifacts/<target>/. Each one is then replayed and its report compared with
# tests/fuzz/known_crashes/<target>.txt (one "file:line" per reported, not yet fixed bug): the run
# fails when any failure is not listed there. To keep a failure as a regression test, fix the bug
# and copy its input into tests/fuzz/corpus/<target>/ (the ctest fuzz_<target>_corpus replays
# every file there); until it is fixed, put it in tests/fuzz/known_crashes/<target>/ and its
# location in <target>.txt. Needs clang and libclang-rt-14-dev.
set -eu
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
case "$SECONDS_PER_TARGET" in
  '' | *[!0-9]*)
    # libFuzzer reads anything else as 0, i.e. no time limit.
    echo "fuzz.sh: SECONDS_PER_TARGET must be a whole number of seconds, got '$SECONDS_PER_TARGET'" >&2
    exit 2 ;;
esac
TARGETS=${*:-tiling_request explicit_tiling npy onnx_graph}
BUILD=${NPU_FUZZ_BUILD_DIR:-build-san}
JOBS=${NPU_BUILD_JOBS:-1}
FORKS=${NPU_FUZZ_JOBS:-1}
case "$FORKS" in
  '' | *[!0-9]* | 0)
    echo "fuzz.sh: NPU_FUZZ_JOBS must be a positive whole number, got '$FORKS'" >&2
    exit 2 ;;
esac

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ missing (apt-get install clang)" >&2; exit 2; }
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNPU_BUILD_FUZZERS=ON -DNPU_SANITIZE=ON -DNPU_BUILD_BENCH=OFF > "$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log" >&2; exit 2; }
for target in $TARGETS; do
  cmake --build "$BUILD" -j "$JOBS" --target "${target}_fuzzer"
done

failed=""
for target in $TARGETS; do
  work="$BUILD/corpus/$target"
  artifacts="$BUILD/artifacts/$target/"
  rm -rf "$artifacts"
  mkdir -p "$work" "$artifacts"
  dict=""
  [ -f "tests/fuzz/$target.dict" ] && dict="-dict=tests/fuzz/$target.dict"
  echo "== $target: ${SECONDS_PER_TARGET}s, $FORKS worker(s)"
  # -timeout: an input that keeps the target busy for 30 s is a finding too (a request that
  # would hold a server thread that long). -rss_limit_mb: the same for memory.
  # shellcheck disable=SC2086
  "$BUILD/bin/${target}_fuzzer" -fork="$FORKS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=30 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts" $dict "$work" "tests/fuzz/corpus/$target" \
    > "$BUILD/$target.log" 2>&1 || true
  grep -E "^#[0-9]+: cov:" "$BUILD/$target.log" | tail -n 1
  known="tests/fuzz/known_crashes/$target.txt"
  for input in "$artifacts"*; do
    [ -f "$input" ] || continue
    report=$("$BUILD/bin/${target}_fuzzer" -runs=1 -timeout=30 -rss_limit_mb=2048 "$input" 2>&1 |
      grep -m 1 -E "^SUMMARY: |: runtime error: |^[a-z_]+_fuzzer: |ERROR: libFuzzer" || true)
    signature=""
    if [ -f "$known" ]; then
      signature=$(sed 's/#.*//; s/[[:space:]]*$//' "$known" | grep -v '^$' | while read -r line; do
        case "$report" in *"$line"*) echo "$line"; break ;; esac
      done)
    fi
    if [ -n "$signature" ]; then
      echo "known failure ($signature, reported): $input"
    else
      echo "NEW FAILURE: $input: $report" >&2
      case " $failed " in *" $target "*) ;; *) failed="$failed $target" ;; esac
    fi
  done
  echo "corpus: $(ls "$work" | wc -l) new + $(ls "tests/fuzz/corpus/$target" | wc -l) committed"
done
if [ -n "$failed" ]; then
  echo "fuzz.sh: new failures in:$failed (inputs in $BUILD/artifacts/)" >&2
  exit 1
fi
echo "fuzz.sh: ${SECONDS_PER_TARGET}s per target, no new failure"
