#!/usr/bin/env bash
# Runs the ADVISE sweep and writes bench/ADVISE_SWEEP.md (and a per-problem
# CSV in the build directory). Builds the advise_sweep target first.
#
#   bench/advise_sweep.sh [BUILD_DIR] [extra advise_sweep flags...]
#
# BUILD_DIR defaults to build/. The sweep runs on every host core
# (--threads N to change it) and takes a few minutes on two cores.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${root}/build}"
shift || true

if [[ ! -f "${build}/build.ninja" && ! -f "${build}/Makefile" ]]; then
  cmake -S "${root}" -B "${build}" -G Ninja
fi
cmake --build "${build}" --target advise_sweep -j "$(nproc)"

"${build}/bin/advise_sweep" \
  --out "${root}/bench/ADVISE_SWEEP.md" \
  --csv "${build}/advise_sweep.csv" \
  "$@"
# How the recommendations moved against the last committed baseline.
if [[ -f "${root}/bench/advise_sweep_baseline.csv" ]]; then
  python3 "${root}/bench/advise_sweep_compare.py" "${root}/bench/advise_sweep_baseline.csv" \
    "${build}/advise_sweep.csv" "${root}/bench/ADVISE_SWEEP.md" \
    "the timing model before its calibration on measured kernels, bench/CALIBRATION.md"
fi
echo "wrote ${root}/bench/ADVISE_SWEEP.md and ${build}/advise_sweep.csv" >&2
