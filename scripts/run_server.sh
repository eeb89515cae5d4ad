#!/bin/sh
# Installs the build dependencies, builds the service (the profile-guided
# release build, scripts/build_release.sh) and runs it on the
# embedded ascend950pr platform profile (gRPC :50051, metrics :9464).
# Extra arguments go to tiling_server, e.g. scripts/run_server.sh --port 0.
set -eu
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build_release.sh build
exec build/bin/tiling_server "$@"
