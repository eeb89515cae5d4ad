#!/bin/sh
# Builds the release binaries, bin/tiling_server and bin/tilingctl, with GCC's profile-guided
# optimization: the same build the Docker image and scripts/run_server.sh use.
#
#   scripts/build_release.sh [--no-pgo] [--no-lto] [--configure-only] [BUILD_DIR]    (default: build)
#
# Two builds in BUILD_DIR (CMAKE_BUILD_TYPE=Release, link-time optimization, no tests or
# benchmarks):
#   1. NPU_PGO=GENERATE: instrumented, plus bin/pgo_train, which serves the calls a graph
#      compiler sends on 127.0.0.1 and writes the profile to BUILD_DIR/pgo-profile (it fails
#      the build if a call ends with a code it should not);
#   2. NPU_PGO=USE: the binaries, laid out and inlined after that profile. On GetTiling's
#      per-call path this saves about a third of the server's work besides gRPC's (see
#      bench/RESULTS.md, "Profile-guided build").
# Link-time optimization (CMAKE_INTERPROCEDURAL_OPTIMIZATION) lets GCC inline and lay out the
# per-call path across source files, with the profile; it takes the server's binary from 1.9 to
# 1.5 MB (bench/RESULTS.md, "Link-time optimization").
# --no-pgo builds once without a profile (NPU_PGO=OFF), e.g. for a compiler other than GCC.
# --no-lto compiles without link-time optimization: each library is compiled once, not again
# in the link of each of the two binaries (scripts/test.sh's check of the release build).
# --configure-only stops after configuring the first build (used by the Docker context test).
# Installs nothing: scripts/install_deps.sh does.
set -eu
cd "$(dirname "$0")/.."
PGO=1
LTO=ON
CONFIGURE_ONLY=0
BUILD_DIR=build
while [ $# -gt 0 ]; do
  case "$1" in
    --no-pgo) PGO=0; shift ;;
    --no-lto) LTO=OFF; shift ;;
    --configure-only) CONFIGURE_ONLY=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build_release.sh: unknown option $1" >&2; exit 2 ;;
    *) BUILD_DIR=$1; shift ;;
  esac
done
CONFIGURE="cmake -S . -B $BUILD_DIR -G Ninja -DCMAKE_BUILD_TYPE=Release -DNPU_BUILD_TESTS=OFF
  -DNPU_BUILD_BENCH=OFF -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=$LTO"
# A tree without git (the image's build context) takes its source revision from the environment.
if [ -n "${NPU_ENGINE_REVISION:-}" ]; then
  CONFIGURE="$CONFIGURE -DNPU_ENGINE_REVISION=$NPU_ENGINE_REVISION"
fi

if [ "$PGO" = 0 ]; then
  $CONFIGURE -DNPU_PGO=OFF
  [ "$CONFIGURE_ONLY" = 1 ] && exit 0
  cmake --build "$BUILD_DIR" --target tiling_server tilingctl
  exit 0
fi

# The profile directory must be absolute: each compiler run writes and reads it from its own
# working directory.
mkdir -p "$BUILD_DIR"
PROFILE_DIR=$(cd "$BUILD_DIR" && pwd)/pgo-profile
$CONFIGURE -DNPU_PGO=GENERATE -DNPU_PGO_DIR="$PROFILE_DIR"
[ "$CONFIGURE_ONLY" = 1 ] && exit 0
cmake --build "$BUILD_DIR" --target pgo_train
rm -rf "$PROFILE_DIR"
"$BUILD_DIR/bin/pgo_train"
if [ -z "$(find "$PROFILE_DIR" -name '*.gcda' 2>/dev/null | head -n 1)" ]; then
  echo "build_release.sh: the training run wrote no profile under $PROFILE_DIR" >&2
  exit 1
fi
$CONFIGURE -DNPU_PGO=USE -DNPU_PGO_DIR="$PROFILE_DIR"
cmake --build "$BUILD_DIR" --target tiling_server tilingctl
