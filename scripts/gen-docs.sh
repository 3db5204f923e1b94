#!/usr/bin/env bash
# Regenerates the reference docs from the ODS (TableGen) definitions:
#   docs/reference/DatDialect.md       the dat dialect and its ops
#   docs/reference/DatPasses.md        the dat transformation passes
#   docs/reference/ConversionPasses.md the GPU conversion passes
# usage: scripts/gen-docs.sh [OUT_DIR]   (default docs/reference)
# test/Docs/reference.test fails when the committed docs are out of date.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/docs/reference}"
tblgen="${MLIR_TBLGEN:-/usr/lib/llvm-22/bin/mlir-tblgen}"
inc=(-I "$root/dialect" -I /usr/lib/llvm-22/include)
mkdir -p "$out"
"$tblgen" -gen-dialect-doc -dialect=dat "${inc[@]}" \
  "$root/dialect/Dat/IR/DatOps.td" -o "$out/DatDialect.md"
"$tblgen" -gen-pass-doc "${inc[@]}" \
  "$root/dialect/Dat/Transforms/Passes.td" -o "$out/DatPasses.md"
"$tblgen" -gen-pass-doc "${inc[@]}" \
  "$root/dialect/Conversion/Passes.td" -o "$out/ConversionPasses.md"
