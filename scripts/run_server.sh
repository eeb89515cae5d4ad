#!/bin/sh
# Installs the build dependencies, builds the service and runs it on the
# embedded ascend950pr platform profile (gRPC :50051, metrics :9464).
# Extra arguments go to tiling_server, e.g. scripts/run_server.sh --port 0.
set -eu
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNPU_BUILD_TESTS=OFF -DNPU_BUILD_BENCH=OFF
cmake --build build --target tiling_server tilingctl
exec build/bin/tiling_server "$@"
