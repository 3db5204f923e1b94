#!/usr/bin/env bash
# An M × K × N projection (default 1024 × 512 × 512): dat's generated kernel
# (the op of projection.mlir at that shape, through dat-opt's CPU pipeline,
# clang-22, called from projection_driver.c) against the hand-written
# AVX-512 kernels of the same register tile and loop order (gemm_8x32.c at
# the default shape, gemm_variants.c at any), on 1 and 2 threads, in one
# run. Needs AVX-512; M a multiple of 8, K of 128, N of 32.
# usage: bench/cpu/probes/projection.sh [BUILD_DIR [M K N]]   (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
build="${1:-$root/build}"
m="${2:-1024}" k="${3:-512}" n="${4:-512}"
llvm=/usr/lib/llvm-22/bin
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# projection.mlir's x is 1x1024x512 (M × K), W 512x512 (N × K), y M × N.
sed -e "s/func.func @proj(%x: tensor<1x1024x512xf32>, %w: tensor<512x512xf32>) -> tensor<1x1024x512xf32>/func.func @proj(%x: tensor<1x${m}x${k}xf32>, %w: tensor<${n}x${k}xf32>) -> tensor<1x${m}x${n}xf32>/" \
    -e "s/ins(%x, %w : tensor<1x1024x512xf32>, tensor<512x512xf32>) outs(%f : tensor<1x1024x512xf32>)/ins(%x, %w : tensor<1x${m}x${k}xf32>, tensor<${n}x${k}xf32>) outs(%f : tensor<1x${m}x${n}xf32>)/" \
    -e "/^func\|ins(%x/! s/1x1024x512/1x${m}x${n}/g" \
    "$here/projection.mlir" >"$work/projection.mlir"
"$build/bin/dat-opt" "$work/projection.mlir" --dat-cpu-pipeline="openmp=true" \
  | "$llvm/mlir-translate" --mlir-to-llvmir -o "$work/projection.ll"
"$llvm/clang" -O3 -march=native -c "$work/projection.ll" -o "$work/projection.o" \
  -Wno-override-module
"$llvm/clang" -O3 -fopenmp "$here/projection_driver.c" "$work/projection.o" \
  -o "$work/dat"
cc -O3 -march=native -fopenmp "$here/gemm_8x32.c" -o "$work/hand"
cc -O3 -march=native -fopenmp "$here/gemm_variants.c" -o "$work/variants"
for threads in 1 2; do
  OMP_NUM_THREADS=$threads "$work/dat" "$m" "$k" "$n"
  if [ "$m $k $n" = "1024 512 512" ]; then
    OMP_NUM_THREADS=$threads "$work/hand"
  else
    OMP_NUM_THREADS=$threads "$work/variants" "$m" "$k" "$n" 64 | grep '^dat '
  fi
done
