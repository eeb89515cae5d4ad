#!/bin/sh
# Installs the Debian 12 packages this project needs (run as root).
#   scripts/install_deps.sh          build + run the service
#   scripts/install_deps.sh --test   also everything the test suite uses
set -eu

BUILD_PACKAGES="g++ cmake ninja-build pkg-config libgrpc++-dev libgrpc-dev protobuf-compiler-grpc \
libprotobuf-dev protobuf-compiler libabsl-dev prometheus-cpp-dev nlohmann-json3-dev libopenblas-dev libonnx-dev"
# Test tools: GoogleTest / Benchmark, grpc-proto (health.proto for clients), Python grpcio and
# YAML for the end-to-end checks, a real Prometheus, docker-compose v1 to validate the compose
# file without a daemon, h2load,
# clang with its libFuzzer runtime (scripts/fuzz.sh), openssl for the TLS test
# certificates, Python protobuf for the fuzz seed and Execute bench scripts.
TEST_PACKAGES="libgtest-dev libgmock-dev libbenchmark-dev grpc-proto python3 python3-grpcio \
python3-yaml prometheus docker-compose nghttp2-client binutils curl \
clang libclang-rt-14-dev openssl python3-protobuf libonnx-testdata"

packages="$BUILD_PACKAGES"
if [ "${1:-}" = "--test" ]; then
  packages="$packages $TEST_PACKAGES"
  # dockerfilelint and the Kubernetes schema check run on Node.js from npm.
  command -v npm >/dev/null 2>&1 || packages="$packages nodejs npm"
fi

missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
fi
