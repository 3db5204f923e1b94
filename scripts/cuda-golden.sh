#!/usr/bin/env bash
# The golden cases on a GPU machine that has no MLIR (the H200 machine):
#
#   scripts/cuda-golden.sh build [DIR]   here: compile every golden case with
#                                        --target cuda into DIR (default
#                                        build/cuda-golden), with its inputs,
#                                        in fp32 (DIR/CASE) and with
#                                        --precision bf16 (DIR/CASE.bf16, its
#                                        inputs rounded to bf16), each also
#                                        with --gemm library (CASE.gemm,
#                                        CASE.bf16-gemm: cuBLAS projections)
#   scripts/cuda-golden.sh run [DIR]     there: run each program on its
#                                        inputs and compare (python3) like
#                                        `datc check`, then run it again and
#                                        require the same bytes (determinism);
#                                        exit 0 only if all pass
#
# Where one machine has both a GPU and MLIR, `datc check CASE --target cuda`
# (test/Integration/CUDA/golden.test) does the same in one step.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-}"
dir="${2:-$root/build/cuda-golden}"
golden="${DAT_GOLDEN_DIR:-$root/../shared/golden}"

case "$mode" in
build)
  mkdir -p "$dir"
  cp "$root/scripts/compare_golden.py" "$root/scripts/cuda-golden.sh" "$dir/"
  for case_dir in "$golden"/*/; do
    name="$(basename "$case_dir")"
    # fp32 and bf16, each with generated projections and with cuBLAS's.
    for variant in ":" ".bf16:--precision bf16" ".gemm:--gemm library" \
        ".bf16-gemm:--precision bf16 --gemm library"; do
      suffix="${variant%%:*}" flags="${variant#*:}"
      out="$dir/$name$suffix"
      mkdir -p "$out"
      cp "$case_dir/config.json" "$case_dir/io.safetensors" "$out/"
      case "$flags" in
      *bf16*)
        echo bf16 > "$out/precision"
        python3 "$root/scripts/compare_golden.py" --bf16-inputs \
          "$case_dir/io.safetensors" "$out/input.safetensors"
        ;;
      esac
      # shellcheck disable=SC2086 # flags are words
      "$root/build/bin/datc" compile "$case_dir/config.json" \
        --weights "$case_dir/model.safetensors" --target cuda $flags \
        -o "$out/program"
    done
    echo "built $name (fp32, bf16; generated and cuBLAS projections)"
  done
  ;;
run)
  here="$(cd "$(dirname "$0")" && pwd)"
  compare="$here/compare_golden.py"
  [ -f "$compare" ] || compare="$root/scripts/compare_golden.py"
  failed=0 total=0
  for case_dir in "$dir"/*/; do
    name="$(basename "$case_dir")"
    total=$((total + 1))
    input="$case_dir/io.safetensors" precision=()
    if [ -f "$case_dir/precision" ]; then
      input="$case_dir/input.safetensors"
      precision=(--precision "$(cat "$case_dir/precision")")
    fi
    if ! "$case_dir/program" --input "$input" \
        --output "$case_dir/result.safetensors"; then
      echo "FAIL $name (the program failed)"
      failed=$((failed + 1))
      continue
    fi
    if ! python3 "$compare" "${precision[@]}" "$case_dir/config.json" \
        "$case_dir/io.safetensors" "$case_dir/result.safetensors"; then
      failed=$((failed + 1))
      continue
    fi
    # Determinism: a second run must give the same bytes.
    "$case_dir/program" --input "$input" \
      --output "$case_dir/again.safetensors"
    if ! cmp -s "$case_dir/result.safetensors" "$case_dir/again.safetensors"; then
      echo "FAIL $name (a second run gave different outputs)"
      failed=$((failed + 1))
    fi
  done
  echo "$((total - failed)) of $total golden programs pass on the GPU (and repeat bitwise)"
  [ "$failed" -eq 0 ]
  ;;
*)
  echo "usage: $0 build|run [DIR]" >&2
  exit 2
  ;;
esac
