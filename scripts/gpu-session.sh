#!/usr/bin/env bash
# A device session's checks (issue "GPU first light") as one command on
# each side, within a time budget:
#
#   scripts/gpu-session.sh prepare [ENTRIES]  here: builds the golden
#       programs (scripts/cuda-golden.sh build), the sanitizer programs (a
#       whole DAT LM, fp32 and bf16, run with --generate), the benchmark
#       entries ENTRIES (suite directory names, comma-separated; default
#       $DAT_SESSION_BENCH or a few of each op family) and packs them
#       (scripts/gpu-carry.sh pack) into build/gpu-carry.tar.xz
#   scripts/gpu-session.sh run [SECONDS]      there, in the checkout, with
#       build/gpu-carry.tar.xz carried: unpacks; records the machine; runs
#       every golden program twice (correctness, bitwise determinism);
#       compute-sanitizer's memcheck, racecheck, synccheck and initcheck
#       over one program of each op family; the Python package's CUDA path
#       (scripts/gpu-python-smoke.py); Nsight Compute on the first
#       entry's attention tile kernel (ncu.txt); then the benchmark entries in
#       the time left of SECONDS (default 420). Everything goes to $OUT:
#       session.log (the summary, also on stdout), env.txt,
#       cuda-golden.log, sanitize.log, ncu.txt, bench.json (written after
#       every entry), bench.md.
#
# Phases are cut at their budgets (DAT_SESSION_GOLDEN_S, default 150;
# DAT_SESSION_SANITIZE_S, default 120; DAT_SESSION_NCU_S, default 90, 0
# skips it) so one hang costs one phase, not the session. A short second
# call: DAT_SESSION_SANITIZE (programs under build/, space-separated)
# replaces the sanitizer list, DAT_SESSION_BASELINES (bench/run.py
# --baselines: eager, or none) keeps the benchmark to dat's variants. Exit status: 0 only if every golden program, every sanitizer run
# and the Python check passed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-}"
# Run in this order. Sessions 33, 34, 38, 41 (H100s), 46 and 50 (H200s)
# measured K1 (d64, d128 at N 4096, causal, d64 at N 16384), K2 relu at
# 4096 and identity at 1024, K3, K4 (sequence and tree), M1, M2 and M3
# (bench/results/). Session 50 measured sessions 47-49's changes, each
# against the program without it (BENCHMARKS.md, "Sixth lease"); what it
# left open comes first: session 50's static key blocks (HYLA's f32 weights
# swizzled; -dynblocks is without), shared-over-scratch on HYLA alone (-scratch; it
# loses 1.14x on M2's relational tile), M2 and M1 against torch.compile
# (session 50 ran them against eager only; -symprod: its position-relative
# symbols as a tensor-core product, off by default until measured), then
# the entries never
# measured or not since session 46. K3 with cuBLAS is what a user gets
# (--gemm auto): its generated projections ran at ~34 TFLOP/s in session 50.
# First of all, session 51's elementwise kernels with 8 elements a thread
# (M1: 552 small kernels took 16.6 ms of 46.9 in session 50; -perthread1 is
# one a thread, as then), and its M2 -symprod in 32-key blocks that fit.
default_bench="M1-dat-lm.bf16-cublas,M1-dat-lm.bf16-cublas-perthread1"
default_bench+=",M2-vision-dat.bf16-cublas,M2-vision-dat.bf16-cublas-symprod"
default_bench+=",K3-hyla-n2048.bf16,K3-hyla-n2048.bf16-dynblocks,K3-hyla-n2048.bf16-scratch"
default_bench+=",K3-hyla-n2048.bf16-cublas"
default_bench+=",M2-vision-dat.bf16-cublas-scratch"
# K1 with 128-row query tiles (8 warps sharing each key block; 166
# registers, no spills: ptxas 13.0) against the default 64 (docs/gpu-kernels.md
# asks for 64 or 128 rows; never measured).
default_bench+=",K1-attn-d64-n4096.bf16,K1-attn-d64-n4096.bf16-q128"
# K2's position-relative tile since session 58 takes 4 query rows, fitted to
# shared memory (-q16: the 16 rows before, 544 KiB of global scratch a block).
default_bench+=",K2-ra-identity-n1024-relpos.bf16,K2-ra-identity-n1024-relpos.bf16-q16"
default_bench+=",K3-hyla-n512.bf16,K1-attn-d64-n1024.bf16"
default_bench+=",K2-ra-identity-n4096.bf16,K1-attn-d128-n16384.bf16,K1-attn-d64-n4096.fp32"
default_bench+=",M3-vit-b16.bf16-cublas,M3-vit-b16.bf16-cublas-perthread1"
# One program of each op family, fp32 and bf16 (the tile kernels differ),
# and two whose attention tiles take the warp-row structure (bf16: encoder
# block, and transformer LM with causal and decode-step kernels).
sanitize_programs=(
  cuda-golden/attention_rope_causal_gqa cuda-golden/attention_rope_causal_gqa.bf16
  cuda-golden/ra_relpos_symbols cuda-golden/ra_relpos_symbols.bf16
  cuda-golden/hyla_softmax_default.bf16 cuda-golden/hyla_rmshead_mlprelu.bf16
  cuda-golden/ape_sequential_selfmha.bf16
  cuda-golden/encoder_block.bf16 cuda-golden/transformer_lm.bf16
  gpu-session/tiny-dat-lm gpu-session/tiny-dat-lm.bf16 gpu-session/tiny-dat-lm.bf16-generated
  # Elementwise kernels 8 elements a thread (session 51; the golden cases'
  # are too small to take it).
  gpu-session/coarse-lm.bf16
)
# initcheck does not see the writes of cuBLAS's kernels that write bf16 at
# beta 0 (library epilogues): session 50 found 17,024 "uninitialized" reads
# of such outputs in the bf16 LM whose values were there (same logits as with
# the epilogues off and with generated GEMMs, both clean). So the cuBLAS bf16
# build gets the other three tools, and its generated-GEMM twin initcheck.
sanitizer_tools() { # program
  case "$1" in
  gpu-session/tiny-dat-lm.bf16) echo memcheck racecheck synccheck ;;
  gpu-session/tiny-dat-lm.bf16-generated) echo initcheck ;;
  *) echo memcheck racecheck synccheck initcheck ;;
  esac
}

case "$mode" in
prepare)
  set -e
  bench="${2:-${DAT_SESSION_BENCH:-$default_bench}}"
  # DAT_SESSION_REUSE_GOLDEN=1: build/cuda-golden is already built.
  [ -n "${DAT_SESSION_REUSE_GOLDEN:-}" ] || "$root/scripts/cuda-golden.sh" build
  mkdir -p "$root/build/gpu-session"
  for p in "" ".bf16" ".bf16-generated"; do
    out="$root/build/gpu-session/tiny-dat-lm$p"
    mkdir -p "$out"
    gemm=()
    [ "$p" != .bf16-generated ] || gemm=(--gemm generated)
    "$root/build/bin/datc" compile "$root/examples/tiny-dat-lm.json" --random-weights 0 \
      --target cuda ${p:+--precision bf16} "${gemm[@]}" -o "$out/program"
    cp "$root/examples/tiny-dat-lm.tokens.safetensors" "$out/io.safetensors"
  done
  # A DAT LM whose MLP's elementwise kernels take 8 elements a thread
  # (elements-per-thread): 3 × 200 tokens × 1,800 = 1,080,000 elements, a
  # partial last chunk of a block's 2,048; for the sanitizers.
  out="$root/build/gpu-session/coarse-lm.bf16"
  mkdir -p "$out"
  python3 - "$root/examples/tiny-dat-lm.json" "$out" <<'PY'
import json, struct, sys
cfg = json.load(open(sys.argv[1]))
cfg["name"] = "coarse-lm"
cfg["kwargs"].update(d_model=128, dff=1800, max_block_size=200)
cfg["kwargs"]["symbol_retrieval_kwargs"]["d_model"] = 128
cfg["inputs"] = {"idx": {"shape": [3, 200], "dtype": "int64"}}
cfg["outputs"] = {"logits": {"shape": [3, 200, 97], "dtype": "float32"}}
json.dump(cfg, open(sys.argv[2] + "/config.json", "w"), indent=1)
tokens = [(7 * i + 3) % 97 for i in range(600)]
data = struct.pack("<600q", *tokens)
header = json.dumps({"input.idx": {"dtype": "I64", "shape": [3, 200],
                                   "data_offsets": [0, len(data)]}}).encode()
header += b" " * (-len(header) % 8)
with open(sys.argv[2] + "/io.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + data)
PY
  "$root/build/bin/datc" compile "$out/config.json" --random-weights 0 \
    --target cuda --precision bf16 -o "$out/program"
  # The Python package's CUDA path: a saved CUDA model of the example LM
  # and the CPU program's logits on the same tokens
  # (scripts/gpu-python-smoke.py checks it there).
  lm="$root/build/gpu-session/lm-py"
  rm -rf "$lm" && mkdir -p "$lm"
  "$root/build/bin/datc" compile "$root/examples/tiny-dat-lm.json" --random-weights 0 \
    --target cuda --emit library -o "$lm/model.so"
  module=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["module"])' \
    "$root/examples/tiny-dat-lm.json")
  printf '{"format": 1, "module": "%s", "target": "cuda", "precision": "fp32"}\n' \
    "$module" > "$lm/dat-model.json"
  cp "$root/examples/tiny-dat-lm.tokens.safetensors" "$lm/tokens.safetensors"
  "$root/build/bin/datc" compile "$root/examples/tiny-dat-lm.json" --random-weights 0 \
    -o "$lm/cpu-program"
  "$lm/cpu-program" --input "$lm/tokens.safetensors" --output "$lm/cpu-logits.safetensors"
  rm -f "$lm/cpu-program" "$lm/cpu-program.weights"
  rm -rf "$root/build/bench"
  # An entry named ...-blockwide is the attention tiles without the warp-row
  # structure, ...-scalarloads without ldmatrix, ...-nopairs without the
  # paired fragment accesses, ...-narrow without the 32×64 warp tiles,
  # ...-sync without cp.async staging copies, ...-noswizzle without the
  # swizzled tile buffers, ...-nobudget without dat-gpu-register-budget,
  # ...-addr64 with 64-bit indices and shared pointers, ...-norowred
  # without dat-gpu-map-row-reductions, ...-nolibepi with cuBLAS's calls
  # back at β 1 into f32, their fills and roundings as kernels, ...-libexp
  # with libdevice's expf, ...-noborder without the B-pair register order,
  # ...-s46 with neither (session 46's tiles), ...-nowhole with causal key
  # loops whose last block is partial, ...-keyrope with RoPE on the keys in
  # every key block, ...-s48 with session 48's HYLA tiles (64-key blocks
  # in scratch, the value network's second product on CUDA cores),
  # ...-scratch with tile buffers past 96 KiB in global scratch,
  # ...-dynblocks with key blocks of a dynamic size, ...-symprod with
  # position-relative symbols accumulated as a product, ...-perthread1 with
  # one element a thread in elementwise kernels, ...-q16 and ...-q128 with
  # query tiles of 16 and 128 rows (A/Bs in one run).
  variants=()
  [[ "$bench" != *-blockwide* ]] || variants+=(--pipeline-variant blockwide:warp-rows=false)
  [[ "$bench" != *-scalarloads* ]] || variants+=(--pipeline-variant scalarloads:ldmatrix=false)
  [[ "$bench" != *-nopairs* ]] || variants+=(--pipeline-variant nopairs:mma-pairs=false)
  [[ "$bench" != *-narrow* ]] || variants+=(--pipeline-variant narrow:wide-mma-tiles=false)
  [[ "$bench" != *-sync* ]] || variants+=(--pipeline-variant sync:async-copies=false)
  [[ "$bench" != *-noswizzle* ]] || variants+=(--pipeline-variant noswizzle:swizzle-shared=false)
  [[ "$bench" != *-nobudget* ]] || variants+=(--pipeline-variant nobudget:register-budget=false)
  [[ "$bench" != *-addr64* ]] || variants+=(--pipeline-variant addr64:index32=false+short-shared-pointers=false)
  [[ "$bench" != *-norowred* ]] || variants+=(--pipeline-variant norowred:row-reductions=false)
  [[ "$bench" != *-nolibepi* ]] || variants+=(--pipeline-variant nolibepi:library-epilogues=false)
  [[ "$bench" != *-libexp* ]] || variants+=(--pipeline-variant libexp:approximate-exp=false)
  [[ "$bench" != *-noborder* ]] || variants+=(--pipeline-variant noborder:b-pair-order=false)
  [[ "$bench" != *-s46* ]] || variants+=(--pipeline-variant s46:approximate-exp=false+b-pair-order=false)
  [[ "$bench" != *-nowhole* ]] || variants+=(--pipeline-variant nowhole:whole-key-blocks=false)
  [[ "$bench" != *-keyrope* ]] || variants+=(--pipeline-variant keyrope:rotate-keys-once=false)
  [[ "$bench" != *-s48* ]] || variants+=(--pipeline-variant s48:fit-key-blocks=false+narrow-value-network=false+shared-over-scratch=false)
  [[ "$bench" != *-scratch* ]] || variants+=(--pipeline-variant scratch:shared-over-scratch=false)
  [[ "$bench" != *-dynblocks* ]] || variants+=(--pipeline-variant dynblocks:static-key-blocks=false)
  [[ "$bench" != *-symprod* ]] || variants+=(--pipeline-variant symprod:relative-symbols-as-product=true)
  [[ "$bench" != *-perthread1* ]] || variants+=(--pipeline-variant perthread1:elements-per-thread=1)
  [[ "$bench" != *-q16* ]] || variants+=(--pipeline-variant q16:query-tile=16)
  [[ "$bench" != *-q128* ]] || variants+=(--pipeline-variant q128:query-tile=128)
  # Only the named variants (an M1 variant alone takes a minute to build).
  python3 "$root/bench/suite.py" build "$root/build/bench" --only "$bench" "${variants[@]}"
  echo "$bench" > "$root/build/bench/.session-entries"
  "$root/scripts/gpu-carry.sh" pack
  ;;
run)
  budget="${2:-420}"
  start=$(date +%s)
  out="${OUT:-$root/build/gpu-session-out}"
  mkdir -p "$out"
  summary="$out/session.log"
  : > "$summary"
  say() { echo "$*" | tee -a "$summary"; }
  # A CUDA toolkit tool: on the PATH, else where the toolkits put it.
  find_tool() {
    command -v "$1" || ls /usr/local/cuda*/bin/"$1" /opt/nvidia/*/"$1" \
      /usr/local/cuda*/"$1"/"$1" 2>/dev/null | head -n 1
  }
  elapsed() { echo $(($(date +%s) - start)); }
  "$root/scripts/gpu-carry.sh" unpack > /dev/null || { say "unpack failed"; exit 2; }
  {
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    uname -r
    python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
    command -v compute-sanitizer ncu nvcc
  } > "$out/env.txt" 2>&1
  say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
  failed=0

  # 1. Correctness and determinism.
  DAT_GOLDEN_TIMEOUT=${DAT_GOLDEN_TIMEOUT:-30} OUT="$out" timeout -k 5 \
    "${DAT_SESSION_GOLDEN_S:-150}" "$root/build/cuda-golden/cuda-golden.sh" run \
    "$root/build/cuda-golden" 2>&1 | tee -a "$summary"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || failed=1
  [ "$rc" -eq 124 ] && say "golden: cut at ${DAT_SESSION_GOLDEN_S:-150} s"
  say "golden phase done at $(elapsed) s (exit $rc)"

  # 2. The sanitizers, side by side, each run cut at 100 s.
  sanitizer="$(find_tool compute-sanitizer)"
  say "compute-sanitizer: ${sanitizer:-not found}"
  slog="$out/sanitize.log"
  : > "$slog"
  sanitize_one() { # program-dir tool
    local d="$root/build/$1" extra=() args=(--input "$root/build/$1/io.safetensors")
    [ "$2" = memcheck ] && extra=(--leak-check full)
    [ "$2" = racecheck ] && extra=(--racecheck-report all)
    if [ -f "$d/precision" ]; then args=(--input "$d/input.safetensors"); fi
    [[ "$1" == *tiny-dat-lm* ]] && args+=(--generate 4)
    timeout -k 5 100 "$sanitizer" --tool "$2" --error-exitcode 99 "${extra[@]}" \
      "$d/program" "${args[@]}" > "$d.$2.log" 2>&1
    echo "$?" > "$d.$2.rc"
  }
  [ -z "${DAT_SESSION_SANITIZE:-}" ] || read -r -a sanitize_programs <<< "$DAT_SESSION_SANITIZE"
  # No verdict left from an earlier run (a cut phase must not read one).
  for p in "${sanitize_programs[@]}"; do
    rm -f "$root/build/$p".*.rc "$root/build/$p".*.log
  done
  sstart=$(date +%s)
  for p in "${sanitize_programs[@]}"; do
    for tool in $(sanitizer_tools "$p"); do
      sanitize_one "$p" "$tool" &
      while [ "$(jobs -rp | wc -l)" -ge 8 ]; do wait -n; done
      if [ $(($(date +%s) - sstart)) -gt "${DAT_SESSION_SANITIZE_S:-120}" ]; then
        break 2
      fi
    done
  done
  wait
  for p in "${sanitize_programs[@]}"; do
    for tool in $(sanitizer_tools "$p"); do
      f="$root/build/$p.$tool"
      if [ ! -f "$f.rc" ]; then
        say "sanitize $tool $p: not run (phase budget)"
        failed=1
        continue
      fi
      rc=$(cat "$f.rc")
      { echo "== $tool $p (exit $rc)"; cat "$f.log"; } >> "$slog"
      summary_line=$(grep -m1 "ERROR SUMMARY\|LEAK SUMMARY\|RACECHECK SUMMARY" "$f.log")
      if [ "$rc" -eq 0 ]; then
        say "sanitize $tool $p: clean ($summary_line)"
      else
        say "sanitize $tool $p: exit $rc ($summary_line) $(grep -m1 '=========.*\(Invalid\|Error\|error\|Race\|Uninitialized\)' "$f.log" | cut -c1-200)"
        failed=1
      fi
    done
  done
  say "sanitizer phase done at $(elapsed) s"

  # 3. The Python package on the GPU (numpy and torch CUDA tensors).
  if [ -d "$root/build/gpu-session/lm-py" ]; then
    timeout -k 5 90 python3 "$root/scripts/gpu-python-smoke.py" \
      "$root/build/gpu-session/lm-py" 2>&1 | tail -n 20 | tee -a "$summary"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
  fi

  # 4. Nsight Compute on the attention tile kernel (or the kernels matching
  #    the regex DAT_SESSION_NCU_KERNEL) of the first benchmark entry:
  #    occupancy, throughput, tensor-core use, stall reasons, bank conflicts.
  #    DAT_SESSION_NCU_ENTRY names another built entry (suite.py build
  #    --only adds one beside the session's).
  ncu="$(find_tool ncu)"
  first=""
  [ -f "$root/build/bench/.session-entries" ] &&
    first="$root/build/bench/$(cut -d, -f1 "$root/build/bench/.session-entries")"
  [ -n "${DAT_SESSION_NCU_ENTRY:-}" ] && first="$root/build/bench/$DAT_SESSION_NCU_ENTRY"
  if [ "${DAT_SESSION_NCU_S:-90}" = 0 ]; then
    say "ncu: skipped (DAT_SESSION_NCU_S=0)"
  elif [ -n "$ncu" ] && [ -n "$first" ] && [ -x "$first/prog" ]; then
    if [ -f "$first/input.safetensors" ] ||
        timeout -k 5 60 python3 "$root/bench/run.py" --prepare "$first" > /dev/null 2>&1; then
      timeout -k 5 "${DAT_SESSION_NCU_S:-90}" "$ncu" --clock-control none \
        -k "regex:${DAT_SESSION_NCU_KERNEL:-attention_tile}" -c 1 --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section WarpStateStats "$first/prog" --input "$first/input.safetensors" \
        > "$out/ncu.txt" 2>&1
      say "ncu on $(basename "$first")'s ${DAT_SESSION_NCU_KERNEL:-attention_tile} kernel: exit $? ($out/ncu.txt)"
      grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Block Size" \
        "$out/ncu.txt" | head -n 12 | tee -a "$summary"
    else
      say "ncu: the entry's inputs could not be made"
    fi
  fi
  say "ncu phase done at $(elapsed) s"

  # 5. Speed, in what is left.
  left=$((budget - $(elapsed) - 15))
  if [ -d "$root/build/bench" ] && [ "$left" -gt 30 ]; then
    only=()
    [ -f "$root/build/bench/.session-entries" ] &&
      only=(--only "$(cat "$root/build/bench/.session-entries")")
    [ -z "${DAT_SESSION_BASELINES:-}" ] || only+=(--baselines "$DAT_SESSION_BASELINES")
    PYTHONUNBUFFERED=1 timeout -k 5 "$left" python3 "$root/bench/run.py" "$root/build/bench" \
      "${only[@]}" --results "$out/bench.json" > "$out/bench.md" 2> "$out/bench.err"
    rc=$?
    [ "$rc" -eq 124 ] && say "bench: cut at $left s"
    tail -n 5 "$out/bench.err" >> "$summary"
    cat "$out/bench.md" >> "$summary"
    if [ ! -s "$out/bench.md" ] && [ -f "$out/bench.json" ]; then
      # Cut short: the table from what was measured.
      python3 -c 'import json, sys; sys.path.insert(0, sys.argv[2]); import run
print(run.table(json.load(open(sys.argv[1]))["results"]))' "$out/bench.json" "$root/bench" \
        | tee -a "$summary"
    fi
  fi
  say "session done at $(elapsed) s; failed=$failed"
  exit "$failed"
  ;;
*)
  echo "usage: $0 prepare [ENTRIES] | run [SECONDS]" >&2
  exit 2
  ;;
esac
