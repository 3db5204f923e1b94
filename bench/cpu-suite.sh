#!/usr/bin/env bash
# The whole CPU benchmark suite in one command: the baselines' Python
# environment if missing (scripts/bench-venv.sh, ~4 GB), the suite's
# programs compiled by build/bin/datc (fp32; dat's generated GEMMs, the
# CPU default, unless --with-library adds the OpenBLAS variants, which
# doubles the run), then every entry next to eager, torch.compile, SDPA
# and FlexAttention with this machine's FMA peak measured in the same
# run. Prints the Markdown table for BENCHMARKS.md; writes the JSON to
# bench/results/DATE-cpu-suite.json (or RESULTS). About 16 minutes on the
# 2-core development host (generated GEMMs only). --heldout runs the shapes
# kept out of the suite instead (suite.py --cpu-heldout; about 5 minutes).
#
#   bench/cpu-suite.sh [--with-library] [--heldout] [--only ID,...] [--results RESULTS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gemm=generated
only=()
set_flag=--cpu
results="$root/bench/results/$(date +%F)-cpu-suite.json"
while [ $# -gt 0 ]; do
  case "$1" in
    --with-library) gemm=generated,library; shift ;;
    --heldout) set_flag=--cpu-heldout; shift ;;
    --only) only=(--only "$2"); shift 2 ;;
    --results) results="$2"; shift 2 ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
done
[ -x "$root/build/bin/datc" ] || { echo "cpu-suite.sh: no build/bin/datc (scripts/build.sh)" >&2; exit 1; }
venv="$root/build/bench-venv"
[ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, jax' 2>/dev/null ||
  "$root/scripts/bench-venv.sh" "$venv"
out="$root/build/bench-cpu-suite"
[ "$set_flag" = --cpu ] || out="$root/build/bench-cpu-heldout"
rm -rf "$out"
python3 "$root/bench/suite.py" build "$out" "$set_flag" --gemm "$gemm" "${only[@]}"
"$venv/bin/python" "$root/bench/run.py" "$out" --device cpu --results "$results"
