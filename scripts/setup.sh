#!/usr/bin/env bash
# Installs the Debian packages dat needs. Idempotent: packages already present
# are skipped, and `apt-get update` runs only when something is missing.
set -euo pipefail

required=(cmake ninja-build g++ python3 llvm-22-dev llvm-22-tools libmlir-22-dev
          mlir-22-tools libgtest-dev libgmock-dev libopenblas-dev
          libomp-22-dev python3-numpy python3-venv)
# Optional: a faster rebuild (ccache), clang-22 for the fuzzers and sanitizers,
# lld for fast links, clang-format for the style check, libFuzzer (clang-rt)
# for the coverage-guided fuzzers, PyTorch for the benchmark baselines' check
# (test/Bench; bench/ runs them on the GPU machine).
optional=(ccache clang-22 lld-22 clang-format-22 libclang-rt-22-dev python3-torch)

missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      echo "$p"
  done
}

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

need=($(missing "${required[@]}"))
want=($(missing "${optional[@]}"))
if [ ${#need[@]} -eq 0 ] && [ ${#want[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
for p in "${want[@]}"; do
  $SUDO apt-get install -y -qq --no-install-recommends "$p" ||
    echo "setup: optional package $p not available, continuing"
done
