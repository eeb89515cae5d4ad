#!/bin/sh
# Installs everything the tests need, builds the whole tree and runs every
# test through ctest. Exits non-zero on any failure.
set -eu
cd "$(dirname "$0")/.."
scripts/install_deps.sh --test
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
cd build
ctest --output-on-failure --timeout 900 -j2
