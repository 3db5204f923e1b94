#!/usr/bin/env bash
# Makes the Python environment the CPU benchmarks' baselines run in:
# PyTorch 2.x from PyPI (torch.compile, SDPA, FlexAttention), JAX (HYLA's
# `jit` baseline: its reference is Flax), numpy, safetensors. PyPI's torch wheel is the CUDA build and brings its CUDA
# libraries even for CPU use (~4 GB); Debian's python3-torch (1.13) has no
# torch.compile. The tests do not need it.
#
#   scripts/bench-venv.sh [VENV]     default: build/bench-venv
#
# Then: python3 bench/suite.py build build/bench-cpu --cpu
#       VENV/bin/python bench/run.py build/bench-cpu --device cpu
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/build/bench-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q torch jax numpy safetensors
"$venv/bin/python" -c 'import torch; print("bench-venv: torch", torch.__version__, "with", torch.get_num_threads(), "threads")'
"$venv/bin/python" -c 'import jax; print("bench-venv: jax", jax.__version__)'
