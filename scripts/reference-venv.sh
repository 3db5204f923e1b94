#!/usr/bin/env bash
# Makes the Python environment the tests against the real reference run in
# (test/Python/reference.test): the DAT reference from PyPI,
# dual-attention 0.0.7, with what it imports, on top of the system's torch
# (Debian's python3-torch; --system-site-packages). Small (a few MB): no
# torch download. Without network it says so and the tests that need it are
# skipped (and say so).
#
#   scripts/reference-venv.sh [VENV]     default: build/reference-venv
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/build/reference-venv}"
python=/usr/bin/python3
if "$venv/bin/python" -c 'import torch, dual_attention, huggingface_hub, jinja2, safetensors' 2>/dev/null; then
  exit 0
fi
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "reference-venv: no torch for $python (python3-torch): the reference tests will be skipped"
  exit 0
fi
if [ ! -x "$venv/bin/python" ] && ! "$python" -m venv --system-site-packages "$venv"; then
  echo "reference-venv: cannot make a venv (python3-venv): the reference tests will be skipped"
  exit 0
fi
if ! timeout 300 "$venv/bin/pip" install -q --disable-pip-version-check \
    dual-attention==0.0.7 einops huggingface_hub safetensors jinja2; then
  echo "reference-venv: pip install failed (no network?): the reference tests will be skipped"
  exit 0
fi
echo "reference-venv: $("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)') with dual-attention 0.0.7 in $venv"
