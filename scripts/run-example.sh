#!/usr/bin/env bash
# The main job: builds dat, compiles the example DAT language model
# (examples/tiny-dat-lm.json, seeded random weights) into a CPU program and
# runs it on example token ids: the logits' shape and checksums, the top-5
# next tokens, the time per forward pass, then 8 tokens decoded greedily
# with the KV cache.
#   scripts/run-example.sh            the model example
#   scripts/run-example.sh FILE.mlir  an .mlir example through dat-opt's CPU
#                                     pipeline and mlir-runner instead
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DAT_BUILD_DIR:-$root/build}

"$root/scripts/build.sh" >&2
if [ $# -gt 0 ]; then
  lib=/usr/lib/llvm-22/lib
  echo "== $1: dat-opt --dat-cpu-pipeline | mlir-runner" >&2
  "$build/bin/dat-opt" "$1" --dat-cpu-pipeline |
    /usr/lib/llvm-22/bin/mlir-runner -e main -entry-point-result=void \
      -shared-libs=$lib/libmlir_runner_utils.so \
      -shared-libs=$lib/libmlir_c_runner_utils.so
  exit
fi
mkdir -p "$build/examples"
prog="$build/examples/tiny-dat-lm"
echo "== datc compile examples/tiny-dat-lm.json --random-weights 0 -o $prog" >&2
"$build/bin/datc" compile "$root/examples/tiny-dat-lm.json" --random-weights 0 \
  -o "$prog"
echo "== $prog --input examples/tiny-dat-lm.tokens.safetensors --top 5 --repeat 3" >&2
"$prog" --input "$root/examples/tiny-dat-lm.tokens.safetensors" --top 5 --repeat 3
echo "== $prog --input examples/tiny-dat-lm.tokens.safetensors --generate 8" >&2
"$prog" --input "$root/examples/tiny-dat-lm.tokens.safetensors" --generate 8
echo "(The weights are random, seeded: an untrained model, so its greedy" \
  "decoding repeats a token. docs/own-model.md compiles a trained one.)"
