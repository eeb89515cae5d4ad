#!/bin/sh
# The everyday tier: builds build/ (configured as scripts/test.sh does, if it is not configured
# yet) and runs the unit tests of every component and the service tests, i.e. every ctest but
# those labelled integration (the real binaries as child processes, Python end-to-end) or deploy
# (Dockerfile, compose, Kubernetes, Prometheus, npm tools). scripts/test.sh runs everything.
#
#   scripts/quick_test.sh [CTEST_ARGS ...]     e.g. -R Conformance, --repeat until-fail:3
#   NPU_BUILD_DIR (default build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${NPU_BUILD_DIR:-build}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  LAUNCHER=""
  command -v ccache > /dev/null 2>&1 && LAUNCHER=ccache
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPU_DEBUG_INFO=LINES -DNPU_BUILD_TESTS=ON \
    -DNPU_BUILD_BENCH=ON -DNPU_PGO=OFF -DCMAKE_CXX_COMPILER_LAUNCHER="$LAUNCHER"
fi
cmake --build "$BUILD"
cd "$BUILD"
ctest --output-on-failure --timeout 900 -j2 -LE '^(integration|deploy)$' "$@"
