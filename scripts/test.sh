#!/bin/sh
# The README's test command: installs everything the tests need, then compiles the sanitizer
# tree once and runs every test in it. Exits non-zero on any failure. CI (.ci/run) runs it with
# NPU_RELEASE_CHECK=1, which first compiles and checks the release build as well (tree 1, about
# 5 more minutes on a 2-core machine).
#
#   1. (NPU_RELEASE_CHECK=1) build-release/ (scripts/build_release.sh: GCC, Release, the build
#      the Docker image ships but for the profile and link-time optimization):
#      scripts/check_release.sh checks its binaries (runtime packages, CANN's golden cases, bad
#      input, an emulation, metrics, a graceful stop). The profile's training run is the ctest
#      integration_pgo_training of tree 2, and deploy_docker_context configures the image's
#      profile-guided build; the full two-pass profile-guided build with link-time optimization
#      (NPU_RELEASE_PGO=1, exactly the image's build; implies NPU_RELEASE_CHECK=1) compiles twice
#      and links with LTO, several minutes more.
#   2. build-san/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer coverage of the
#      libraries): every ctest, the unit tests of every component, the service tests, the
#      integration tests (the real binaries as child processes, Python end-to-end) and the deploy
#      checks; then every libFuzzer target of the same tree for a bounded time (scripts/fuzz.sh).
#      The benchmark programs are left out (scripts/quick_test.sh builds them and checks that
#      they start). The test code is compiled with -O0 and the libraries with -O1
#      and each gtest executable runs as a few shard processes, not one process per case: a
#      sanitized process start costs more than most cases.
#
#   NPU_RELEASE_CHECK  1: build and check tree 1, the release build, first (default 0; CI: 1)
#   NPU_RELEASE_PGO    1: tree 1 is the image's profile-guided build exactly (default 0)
#   NPU_FUZZ_SECONDS   seconds per fuzz target (default 10; 0 skips fuzzing)
#   NPU_FUZZ_JOBS      libFuzzer workers per target (default 2: one per core)
#   NPU_SAN_EXCLUDE    ctest -LE regex of labels not run in build-san (default: none)
#
# The everyday tier, scripts/quick_test.sh, builds build/ (gcc, every test, one ctest per case)
# and runs every test but the integration and deploy ones.
#
# The sanitizer tree carries line tables only (NPU_DEBUG_INFO=LINES: stack traces keep file and
# line, the compilation is cheaper). Each tree is configured with every option given, so a tree
# left by other commands is brought back to this one. ccache, when installed, is the compiler
# launcher of build-san/ (it saves a rebuild of a wiped tree or of another branch; a clean clone
# on a fresh machine gains nothing from it).
set -eu
cd "$(dirname "$0")/.."
scripts/install_deps.sh --test
LAUNCHER=""
command -v ccache > /dev/null 2>&1 && LAUNCHER=ccache

# The release build (as in the Docker image and scripts/run_server.sh): its binaries must serve
# CANN's golden cases exactly, an emulation and a graceful stop.
if [ "${NPU_RELEASE_PGO:-0}" = 1 ]; then
  echo "== build-release/: the image's profile-guided build and its check"
  scripts/build_release.sh build-release
  scripts/check_release.sh build-release
elif [ "${NPU_RELEASE_CHECK:-0}" = 1 ]; then
  echo "== build-release/: the release build and its check"
  scripts/build_release.sh --no-pgo --no-lto build-release
  scripts/check_release.sh build-release
fi

# Debian's gRPC is not instrumented but works under ASan (no leak reports). Every committed fuzz
# corpus input is replayed by the fuzz_*_corpus tests (here through the libFuzzer binaries).
# deploy_runtime_packages skips itself here (sanitized binaries need libasan and libubsan);
# check_release.sh above runs it on the release binaries (NPU_RELEASE_CHECK=1, as in CI).
echo "== build-san/: clang ASan + UBSan + fuzzing"
SAN_EXCLUDE="${NPU_SAN_EXCLUDE-}"
cmake -S . -B build-san -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNPU_DEBUG_INFO=LINES -DNPU_OPT_LEVEL=-O1 \
  -DNPU_BUILD_TESTS=ON -DNPU_BUILD_BENCH=OFF -DNPU_PGO=OFF -DNPU_SANITIZE=ON \
  -DNPU_BUILD_FUZZERS=ON -DNPU_TEST_COMPILE_OPTIONS=-O0 -DNPU_GTEST_SHARDS=4 \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$LAUNCHER"
cmake --build build-san
(cd build-san &&
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --timeout 1800 -j2 ${SAN_EXCLUDE:+-LE "$SAN_EXCLUDE"})

# libFuzzer: each target explores from its corpus for NPU_FUZZ_SECONDS with NPU_FUZZ_JOBS
# workers. A new crash, timeout or leak fails the run (fuzz.sh lists the inputs); its input
# becomes a regression test in tests/fuzz/corpus/ once fixed.
FUZZ_SECONDS="${NPU_FUZZ_SECONDS:-10}"
if [ "$FUZZ_SECONDS" != 0 ]; then
  NPU_FUZZ_BUILD_DIR=build-san NPU_FUZZ_JOBS="${NPU_FUZZ_JOBS:-2}" scripts/fuzz.sh "$FUZZ_SECONDS"
fi
echo "test.sh: PASS"
