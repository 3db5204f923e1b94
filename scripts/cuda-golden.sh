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
#                                        CASE.bf16-gemm: cuBLAS projections),
#                                        and bf16 without ldmatrix
#                                        (CASE.bf16-scalar-loads) and with
#                                        16×8 flash tiles
#                                        (CASE.bf16-small-tiles: key loops
#                                        of several blocks, whose next
#                                        block is copied by cp.async)
#   scripts/cuda-golden.sh run [DIR]     there: run each program on its
#                                        inputs and compare (python3) like
#                                        `datc check`, then run it again and
#                                        require the same bytes (determinism);
#                                        exit 0 only if all pass
#
# `run` prints little: the device tool returns only the tail of the output.
# Each program's own output goes to the log ($OUT/cuda-golden.log when $OUT
# is set, else DIR/cuda-golden.log); stdout gets which cuBLAS it uses, one
# line per failure and, last, the summary line
# "N of M golden programs pass on the GPU (and repeat bitwise)".
# Each run of a program is killed after DAT_GOLDEN_TIMEOUT seconds (60);
# DAT_GOLDEN_JOBS cases run at once (default the cores, at most 8).
# cuBLAS (for the .gemm programs): $DAT_CUBLAS, else libcublas.so.13 on the
# loader's path, in $CUDA_HOME/lib64 or /usr/local/cuda/lib64, or in a pip
# nvidia-cublas package (PYTHONPATH, e.g. wheels carried as the device
# tool's README says); if none is found the .gemm programs are not run and
# one line says why.
#
# Where one machine has both a GPU and MLIR, `datc check CASE --target cuda`
# (test/Integration/CUDA/golden.test) does the same in one step.
set -uo pipefail
shopt -s nullglob
root="$(cd "$(dirname "$0")/.." && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
mode="${1:-}"
# The copy of this script that `build` leaves in DIR runs DIR by default.
if [ -f "$here/.cuda-golden" ]; then
  default_dir="$here"
else
  default_dir="$root/build/cuda-golden"
fi
dir="${2:-$default_dir}"
golden="${DAT_GOLDEN_DIR:-$root/../shared/golden}"

# Prints the cuBLAS library's path and, in parentheses, where it was
# found, or nothing.
find_cublas() {
  if [ -n "${DAT_CUBLAS:-}" ]; then
    [ -f "$DAT_CUBLAS" ] && echo "$DAT_CUBLAS (DAT_CUBLAS)"
    return
  fi
  local lib
  lib=$(ldconfig -p 2>/dev/null | awk '/libcublas\.so\.13 /{print $NF; exit}')
  if [ -n "$lib" ]; then echo "$lib (the loader's path)"; return; fi
  for d in "${CUDA_HOME:-}/lib64" /usr/local/cuda/lib64; do
    if [ -f "$d/libcublas.so.13" ]; then echo "$d/libcublas.so.13 (CUDA toolkit)"; return; fi
  done
  # pip's CUDA wheels (PyTorch's dependencies): nvidia/cublas/lib for
  # CUDA 12, nvidia/cu13/lib for CUDA 13.
  lib=$(python3 - <<'PY' 2>/dev/null
import glob, os
import nvidia
for root in nvidia.__path__:
    for hit in sorted(glob.glob(os.path.join(root, "**", "libcublas.so.13"), recursive=True)):
        print(hit)
        raise SystemExit
PY
)
  if [ -n "$lib" ]; then
    echo "$lib (pip's nvidia wheels)"
  fi
}

case "$mode" in
build)
  set -e
  mkdir -p "$dir"
  cp "$root/scripts/compare_golden.py" "$root/scripts/cuda-golden.sh" "$dir/"
  touch "$dir/.cuda-golden"
  # The shared golden cases, and the project's own cases made from a
  # reference's code (APE's models: scripts/ape-golden.py).
  cases=("$golden"/*/)
  if [ -z "${DAT_GOLDEN_DIR:-}" ]; then
    cases+=("$root"/test/Frontend/Inputs/ape_*_algebraic/
            "$root"/test/Frontend/Inputs/ape_branching_selfmha_positions/)
  fi
  if [ ${#cases[@]} -eq 0 ]; then
    echo "cuda-golden: no golden cases under $golden" >&2
    exit 2
  fi
  build_failed=0
  for case_dir in "${cases[@]}"; do
    name="$(basename "$case_dir")"
    # fp32 and bf16, each with generated projections and with cuBLAS's;
    # bf16 also with the lanes' scalar fragment loads instead of ldmatrix
    # (where .bf16 fails and this passes, ldmatrix is at fault); bf16 with
    # 16×8 flash tiles: the golden sequences are 12-32 tokens, so with the
    # default tiles most key loops have one block and the next block's
    # cp.async (session 40) runs in few of them.
    # (The GPU's default is cuBLAS, --gemm auto: the generated ones are named.)
    for variant in ":--gemm generated" ".bf16:--precision bf16 --gemm generated" \
        ".gemm:--gemm library" ".bf16-gemm:--precision bf16 --gemm library" \
        ".bf16-scalar-loads:--precision bf16 --gemm generated --pipeline ldmatrix=false" \
        ".bf16-small-tiles:--precision bf16 --gemm generated --flash-tiles 16,8"; do
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
      rm -f "$out/program"
      # A case that does not compile is recorded (run counts it as a
      # failure) and the others are still built.
      # shellcheck disable=SC2086 # flags are words
      if ! "$root/build/bin/datc" compile "$case_dir/config.json" \
          --weights "$case_dir/model.safetensors" --target cuda $flags \
          -o "$out/program" 2> "$out/compile-error"; then
        echo "cuda-golden: $name$suffix does not compile:" >&2
        head -n 3 "$out/compile-error" >&2
        build_failed=$((build_failed + 1))
      else
        rm -f "$out/compile-error"
      fi
    done
    echo "built $name (fp32, bf16; generated and cuBLAS projections)"
  done
  if [ "$build_failed" -gt 0 ]; then
    echo "cuda-golden: $build_failed programs did not compile" >&2
    exit 1
  fi
  ;;
run)
  compare="$here/compare_golden.py"
  [ -f "$compare" ] || compare="$root/scripts/compare_golden.py"
  timeout_s="${DAT_GOLDEN_TIMEOUT:-60}"
  log="${OUT:-$dir}/cuda-golden.log"
  mkdir -p "$(dirname "$log")"
  programs=()
  for case_dir in "$dir"/*/; do
    if [ -x "$case_dir/program" ] || [ -f "$case_dir/compile-error" ]; then
      programs+=("${case_dir%/}")
    fi
  done
  if [ ${#programs[@]} -eq 0 ]; then
    echo "cuda-golden: no golden programs under $dir (scripts/cuda-golden.sh build DIR makes them)" >&2
    exit 2
  fi
  : > "$log"
  cublas="$(find_cublas)"
  if [ -n "$cublas" ]; then
    # Its folder on the loader's path: libcublasLt.so.13 lives beside it.
    lib="${cublas%% (*}"
    export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "cuBLAS: $lib, from ${cublas##* (}" | tr -d ')'
  fi
  jobs="${DAT_GOLDEN_JOBS:-$(nproc 2>/dev/null || echo 1)}"
  [ "$jobs" -gt 8 ] && jobs=8
  run_program() { # case_dir input output
    timeout -k 5 "$timeout_s" "$1/program" --input "$2" --output "$3"
  }
  # One case: its two runs and the comparison, its log in CASE/check.log,
  # its verdict in CASE/verdict ("PASS", "SKIP" or "FAIL why").
  check_case() {
    local case_dir="$1" name input precision=() rc report
    name="$(basename "$case_dir")"
    if [ -f "$case_dir/compile-error" ]; then
      echo "FAIL did not compile: $(grep -m1 error "$case_dir/compile-error" | cut -c1-160)" \
        > "$case_dir/verdict"
      return
    fi
    if [ -z "$cublas" ] && [[ "$name" == *gemm ]]; then
      echo SKIP > "$case_dir/verdict"
      return
    fi
    input="$case_dir/io.safetensors"
    if [ -f "$case_dir/precision" ]; then
      input="$case_dir/input.safetensors"
      precision=(--precision "$(cat "$case_dir/precision")")
    fi
    rm -f "$case_dir/result.safetensors" "$case_dir/again.safetensors"
    run_program "$case_dir" "$input" "$case_dir/result.safetensors"
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      echo "FAIL no result after ${timeout_s} s" > "$case_dir/verdict"
      return
    elif [ $rc -ne 0 ]; then
      echo "FAIL the program failed with exit $rc: $(tail -n 1 "$case_dir/check.log" | cut -c1-160)" \
        > "$case_dir/verdict"
      return
    fi
    report=$(python3 "$compare" "${precision[@]}" "$case_dir/config.json" \
      "$case_dir/io.safetensors" "$case_dir/result.safetensors" 2>&1)
    rc=$?
    echo "$report"
    if [ $rc -ne 0 ]; then
      echo "FAIL $(echo "$report" | grep -m1 '^  ' | sed 's/^ *//' | cut -c1-160)" \
        > "$case_dir/verdict"
      return
    fi
    # Determinism: a second run must give the same bytes.
    run_program "$case_dir" "$input" "$case_dir/again.safetensors"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL the second run failed with exit $rc" > "$case_dir/verdict"
    elif ! cmp -s "$case_dir/result.safetensors" "$case_dir/again.safetensors"; then
      echo "FAIL a second run gave different outputs" > "$case_dir/verdict"
    else
      echo PASS > "$case_dir/verdict"
    fi
  }
  # Cases run side by side (DAT_GOLDEN_JOBS, default the cores, at most 8):
  # most of each run is the CUDA context's start.
  for case_dir in "${programs[@]}"; do
    rm -f "$case_dir/verdict"
    check_case "$case_dir" > "$case_dir/check.log" 2>&1 &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  done
  wait
  failed=0 total=0 skipped=0
  for case_dir in "${programs[@]}"; do
    name="$(basename "$case_dir")"
    total=$((total + 1))
    { echo "== $name"; cat "$case_dir/check.log"; } >> "$log"
    verdict="$(cat "$case_dir/verdict" 2>/dev/null || echo "FAIL no verdict")"
    case "$verdict" in
    PASS) echo "PASS $name" >> "$log" ;;
    SKIP) skipped=$((skipped + 1)) ;;
    *)
      echo "FAIL $name (${verdict#FAIL })" | tee -a "$log"
      failed=$((failed + 1))
      ;;
    esac
  done
  if [ $skipped -gt 0 ]; then
    echo "SKIPPED $skipped cuBLAS programs (.gemm): libcublas.so.13 not found (set DAT_CUBLAS, or carry the nvidia-cublas wheel)"
  fi
  echo "log: $log"
  echo "$((total - failed - skipped)) of $total golden programs pass on the GPU (and repeat bitwise)"
  [ "$failed" -eq 0 ] && [ "$skipped" -eq 0 ]
  ;;
*)
  echo "usage: $0 build|run [DIR]" >&2
  exit 2
  ;;
esac
