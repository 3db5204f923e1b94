#!/usr/bin/env bash
# A 1024 × 512 × 512 projection: dat's generated kernel (projection.mlir
# through dat-opt's CPU pipeline, clang-22, called from projection_driver.c)
# against the hand-written AVX-512 kernel of the same register tile and
# loop order (gemm_8x32.c), on 1 and 2 threads, in one run. Needs AVX-512.
# usage: bench/cpu/probes/projection.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
build="${1:-$root/build}"
llvm=/usr/lib/llvm-22/bin
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/bin/dat-opt" "$here/projection.mlir" --dat-cpu-pipeline="openmp=true" \
  | "$llvm/mlir-translate" --mlir-to-llvmir -o "$work/projection.ll"
"$llvm/clang" -O3 -march=native -c "$work/projection.ll" -o "$work/projection.o" \
  -Wno-override-module
"$llvm/clang" -O3 -fopenmp "$here/projection_driver.c" "$work/projection.o" \
  -o "$work/dat"
cc -O3 -march=native -fopenmp "$here/gemm_8x32.c" -o "$work/hand"
for threads in 1 2; do
  OMP_NUM_THREADS=$threads "$work/dat"
  OMP_NUM_THREADS=$threads "$work/hand"
done
