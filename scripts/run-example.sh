#!/usr/bin/env bash
# The main job, for now: builds dat, lowers examples/attention.mlir (or the
# .mlir file given) through dat-opt's CPU pipeline and executes it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DAT_BUILD_DIR:-$root/build}
input=${1:-$root/examples/attention.mlir}

"$root/scripts/build.sh" >&2
lib=/usr/lib/llvm-22/lib
echo "== $input: dat-opt --dat-cpu-pipeline | mlir-runner" >&2
"$build/bin/dat-opt" "$input" --dat-cpu-pipeline |
  /usr/lib/llvm-22/bin/mlir-runner -e main -entry-point-result=void \
    -shared-libs=$lib/libmlir_runner_utils.so \
    -shared-libs=$lib/libmlir_c_runner_utils.so
