#!/usr/bin/env bash
# The part of the ASan + UBSan configuration that fits CI's time: the
# dependency-free core every program links (safetensors reader/writer, JSON
# parser) built with the sanitizers, its unit tests, and a bounded fuzz run
# of the safetensors reader on the example inputs. The whole suite under the
# sanitizers is `scripts/test.sh --sanitize` (a second full build: ~7 min on
# 2 cores), run before a release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DAT_BUILD_DIR:-$root/build-asan-smoke}
llvm=/usr/lib/llvm-22
start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=$llvm/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=$llvm/bin/lit \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DDAT_SANITIZE=address,undefined > "$build/cmake.log" 2>&1 ||
    { cat "$build/cmake.log"; exit 1; }
fi
cmake --build "$build" -j "${DAT_JOBS:-2}" --target DatSupportTests dat-fuzz-safetensors
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
"$build/test/unittests/DatSupportTests" --gtest_brief=1
"$build/bin/dat-fuzz-safetensors" -runs=20000 -seed=1 \
  "$root/examples/tiny-dat-lm.tokens.safetensors" \
  "$root/examples/image32.safetensors"
echo "sanitize-smoke: passed in $(( $(date +%s) - start )) s"
