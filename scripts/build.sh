#!/usr/bin/env bash
# Installs what is missing, configures (once) and builds dat into build/.
#   DAT_BUILD_DIR   build folder (default: build)
#   DAT_BUILD_TYPE  CMake build type (default: Release)
#   DAT_JOBS        parallel jobs (default: 2)
#   DAT_SKIP_SETUP  set to 1 to skip the package check
#   --sanitize      an ASan + UBSan build in build-asan/ (or DAT_BUILD_DIR)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DAT_BUILD_DIR:-$root/build}
if [ "${1:-}" = --sanitize ]; then
  build=${DAT_BUILD_DIR:-$root/build-asan}
  DAT_CMAKE_ARGS="${DAT_CMAKE_ARGS:-} -DDAT_SANITIZE=address,undefined"
fi
jobs=${DAT_JOBS:-2}

if [ "${DAT_SKIP_SETUP:-0}" != 1 ]; then
  "$root/scripts/setup.sh"
fi

llvm=/usr/lib/llvm-22
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE="${DAT_BUILD_TYPE:-Release}" \
    -DMLIR_DIR=$llvm/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$llvm/bin/lit \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    ${DAT_CMAKE_ARGS:-}
fi

start=$(date +%s)
cmake --build "$build" -j "$jobs"
echo "build: finished in $(( $(date +%s) - start )) s"
