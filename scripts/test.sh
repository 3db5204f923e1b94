#!/usr/bin/env bash
# Builds dat and runs every test: the lit suite (dialect, transforms,
# pipelines, integration, examples) and the GoogleTest unit tests, which lit
# runs too. Ends with one line "N passed, N failed, N skipped".
#   --sanitize   the same suite on the ASan + UBSan build (build-asan/)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DAT_BUILD_DIR:-$root/build}
if [ "${1:-}" = --sanitize ]; then
  build=${DAT_BUILD_DIR:-$root/build-asan}
  # MLIR/LLVM are not instrumented; their one-time allocations are not leaks
  # of dat's. LLVM's bump allocators poison the unused rest of each slab in
  # our instrumented code (attribute storage made in dat's headers) but not
  # in the uninstrumented libMLIR, whose later allocations from the same slab
  # then read as use-after-poison: user poisoning off (ASan's own checks of
  # dat's memory stay).
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allow_user_poisoning=0}
fi

DAT_BUILD_DIR=$build "$root/scripts/build.sh" "$@" ||
  { echo "0 passed, 1 failed"; exit 1; }

# The real reference for the Python package's tests (skipped where it
# cannot be installed; they say so).
"$root/scripts/reference-venv.sh" "$build/reference-venv"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
/usr/lib/llvm-22/bin/lit -sv "$build/test" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# lit's summary: "  Passed: 3" or, with aligned columns, "  Passed      : 3".
count() { sed -n "s/^ *$1 *: *\\([0-9]*\\).*/\\1/p" "$log" | tail -1; }
passed=$(( $(count Passed || true) + 0 ))
failed=$(( $(count Failed || true) + $(count 'Unresolved' || true) + \
           $(count 'Timed Out' || true) + $(count 'Unexpectedly Passed' || true) + 0 ))
skipped=$(( $(count Unsupported || true) + $(count 'Expectedly Failed' || true) + 0 ))
# lit 22 exits 0 on an unexpected pass; count it as the failure it is.
if [ "$failed" -gt 0 ]; then status=1; fi
if [ "$passed" -eq 0 ] && [ "$status" -eq 0 ]; then
  echo "no test ran"; status=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit "$status"
