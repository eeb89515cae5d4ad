#!/bin/sh
# The README's test command, which CI runs (.ci/run): installs everything the tests need, then
# compiles three trees, each once, and runs every test in at least one of them. Exits non-zero on
# any failure.
#
#   1. build/ (gcc, RelWithDebInfo, tests and benchmarks): every test (ctest), including those
#      labelled integration (the real binaries, Python end-to-end) and deploy (Dockerfile,
#      compose, Kubernetes, Prometheus, runtime packages): those run here only.
#   2. build-release/ (scripts/build_release.sh: the image's GCC profile-guided build, only
#      tiling_server, tilingctl and pgo_train) and scripts/check_release.sh on its binaries.
#   3. build-san/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer + libFuzzer coverage, no
#      benchmarks): every test but the integration and deploy ones, then every
#      libFuzzer target of that same tree for a bounded time (scripts/fuzz.sh). One compilation
#      serves both the sanitized suite and the fuzzers.
#
#   NPU_FUZZ_SECONDS   seconds per fuzz target (default 20; 0 skips fuzzing)
#   NPU_FUZZ_JOBS      libFuzzer workers per target (default 2: one per core)
#   NPU_SAN_EXCLUDE    ctest -LE regex of labels not run in build-san
#                      (default ^(integration|deploy)$)
#
# Both test trees carry line tables only (NPU_DEBUG_INFO=LINES: stack traces keep file and line,
# the compilation is cheaper); configure build/ with NPU_DEBUG_INFO=FULL for a debugger.
# Each tree is configured with every option given, so a tree left by other commands (e.g. a
# release configuration of scripts/run_server.sh in build/) is brought back to this one. ccache,
# when installed, is the compiler launcher of build/ and build-san/ (it saves a rebuild of a
# wiped tree or of another branch; a clean clone on a fresh machine gains nothing from it).
set -eu
cd "$(dirname "$0")/.."
scripts/install_deps.sh --test
LAUNCHER=""
command -v ccache > /dev/null 2>&1 && LAUNCHER=ccache

echo "== build/: gcc, every test"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPU_DEBUG_INFO=LINES \
  -DNPU_BUILD_TESTS=ON -DNPU_BUILD_BENCH=ON -DNPU_PGO=OFF -DNPU_SANITIZE=OFF -DNPU_BUILD_FUZZERS=OFF \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$LAUNCHER"
cmake --build build
(cd build && ctest --output-on-failure --timeout 900 -j2)

# The release build (GCC profile-guided, as in the Docker image and scripts/run_server.sh) must
# train without a failed call and its binaries must serve CANN's golden cases exactly, an
# emulation and a graceful stop.
echo "== build-release/: the release build and its check"
scripts/build_release.sh build-release
scripts/check_release.sh build-release

# Debian's gRPC is not instrumented but works under ASan (no leak reports). Every committed fuzz
# corpus input is replayed by the fuzz_*_corpus tests (here through the libFuzzer binaries).
# deploy_runtime_packages cannot pass for sanitized binaries (they need libasan and libubsan),
# and the deploy tests check tools and configuration more than our code. The integration tests
# (the real binaries as child processes) run once, in build/: every handler, reactor, queue and
# the shutdown path they drive runs in-process here through the service tests, which start the
# same server on a loopback port.
echo "== build-san/: clang ASan + UBSan + fuzzing"
SAN_EXCLUDE="${NPU_SAN_EXCLUDE-^(integration|deploy)\$}"
cmake -S . -B build-san -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNPU_DEBUG_INFO=LINES \
  -DNPU_BUILD_TESTS=ON -DNPU_BUILD_BENCH=OFF -DNPU_PGO=OFF -DNPU_SANITIZE=ON \
  -DNPU_BUILD_FUZZERS=ON -DCMAKE_CXX_COMPILER_LAUNCHER="$LAUNCHER"
cmake --build build-san
(cd build-san &&
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --timeout 1800 -j2 ${SAN_EXCLUDE:+-LE "$SAN_EXCLUDE"})

# libFuzzer: each target explores from its corpus for NPU_FUZZ_SECONDS with NPU_FUZZ_JOBS
# workers. A new crash, timeout or leak fails the run (fuzz.sh lists the inputs); its input
# becomes a regression test in tests/fuzz/corpus/ once fixed.
FUZZ_SECONDS="${NPU_FUZZ_SECONDS:-20}"
if [ "$FUZZ_SECONDS" != 0 ]; then
  NPU_FUZZ_BUILD_DIR=build-san NPU_FUZZ_JOBS="${NPU_FUZZ_JOBS:-2}" scripts/fuzz.sh "$FUZZ_SECONDS"
fi
echo "test.sh: PASS"
