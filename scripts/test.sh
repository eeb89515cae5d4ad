#!/bin/sh
# Installs everything the tests need, builds the whole tree and runs every
# test through ctest; then the release build and a check of its binaries;
# then the same suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan); then every libFuzzer target for a
# bounded time (NPU_FUZZ_SECONDS, default 60 each). Exits non-zero on any
# failure.
set -eu
cd "$(dirname "$0")/.."
scripts/install_deps.sh --test
# Every option is given: the same tree may hold a release configuration of
# scripts/run_server.sh (tests off, profile-guided).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPU_BUILD_TESTS=ON \
  -DNPU_BUILD_BENCH=ON -DNPU_PGO=OFF
cmake --build build
cd build
ctest --output-on-failure --timeout 900 -j2
cd ..

# The release build (scripts/build_release.sh: GCC profile-guided, as in the
# Docker image and scripts/run_server.sh) must train without a failed call and
# its binaries must serve CANN's golden cases exactly, an emulation and a
# graceful stop (scripts/check_release.sh).
scripts/build_release.sh build-release
scripts/check_release.sh build-release

# ASan + UBSan (gcc): the whole tree, every test. Debian's gRPC is not
# instrumented but works under ASan (no leak reports). The benchmarks are
# not tests, so they are not built here. Excluded (NPU_ASAN_EXCLUDE_TESTS
# overrides the list): deploy_runtime_packages, which checks that the release
# binaries need only the runtime image's packages; sanitized binaries also
# need libasan and libubsan, by design.
ASAN_EXCLUDE="${NPU_ASAN_EXCLUDE_TESTS-^deploy_runtime_packages\$}"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPU_SANITIZE=ON \
  -DNPU_BUILD_BENCH=OFF
cmake --build build-asan
(cd build-asan &&
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --timeout 1800 -j2 ${ASAN_EXCLUDE:+-E "$ASAN_EXCLUDE"})

# libFuzzer (clang, ASan + UBSan): every committed corpus input is already
# replayed above by the fuzz_*_corpus tests in both builds; then each target
# explores from its corpus for NPU_FUZZ_SECONDS (default 60; 0 skips it). A
# new crash, timeout or leak fails the run (fuzz.sh lists the inputs); its
# input becomes a regression test in tests/fuzz/corpus/ once fixed.
FUZZ_SECONDS="${NPU_FUZZ_SECONDS:-60}"
if [ "$FUZZ_SECONDS" != 0 ]; then
  NPU_BUILD_JOBS="${NPU_BUILD_JOBS:-2}" scripts/fuzz.sh "$FUZZ_SECONDS"
fi
