#!/usr/bin/env python3
"""TreeAlgebraic at N = 1024: dat's program against ape's own model in
PyTorch eager, in one run on this machine.

    PYTHONPATH=APE_CHECKOUT VENV/bin/python bench/ape_tree_algebraic.py \\
        [--results FILE]

APE_CHECKOUT: konstantinosKokos/ape (see scripts/ape-golden.py). Both get
the same random weights (N(0, 0.02), the identity frozen) and inputs:
batch 1, 1024 encoder and 1024 decoder nodes below id 5000, a causal
decoder mask [1, N, N], dim 64, 4 heads, 2 + 2 layers.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import ape.nn.position.algebraic as algebraic

algebraic.rope_like_init = lambda d: torch.zeros(2 * d, 2 * d)
from eval.models.tree.algebraic import TreeAlgebraic  # noqa: E402

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(root, "python"))
from dat import _safetensors  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--results")
ap.add_argument("--repeat", type=int, default=3)
args = ap.parse_args()
N = 1024
kwargs = dict(vocab_size=100, dim=64, num_heads=4, num_layers=[2, 2],
              branching_factor=2)
torch.manual_seed(0)
model = TreeAlgebraic(**{**kwargs, "num_layers": (2, 2)}).eval()
with torch.no_grad():
    for p in model.parameters():
        if p.requires_grad:
            p.normal_(0, 0.02)
rng = np.random.default_rng(1)
inputs = dict(encoder_ids=rng.integers(0, 100, (1, N)),
              encoder_pos=rng.integers(1, 5000, (1, N)),
              encoder_mask=np.ones((1, N), np.int64),
              decoder_ids=rng.integers(0, 100, (1, N)),
              decoder_pos=rng.integers(1, 5000, (1, N)),
              decoder_mask=np.tril(np.ones((1, N, N), np.int64)),
              cross_mask=np.ones((1, N), np.int64))

work = tempfile.mkdtemp(prefix="dat-ape-bench-")
config = {"module": "TreeAlgebraic", "kwargs": kwargs,
          "inputs": {k: {"shape": list(v.shape), "dtype": "int64"}
                     for k, v in inputs.items()},
          "outputs": {"logits": {}}}
with open(os.path.join(work, "config.json"), "w") as f:
    json.dump(config, f)
_safetensors.write(os.path.join(work, "model.safetensors"),
                   {k: v.numpy() for k, v in model.state_dict().items()})
_safetensors.write(os.path.join(work, "in.safetensors"),
                   {"input." + k: v for k, v in inputs.items()})
datc = os.environ.get("DAT_DATC", os.path.join(root, "build", "bin", "datc"))
prog = os.path.join(work, "prog")
subprocess.run([datc, "compile", os.path.join(work, "config.json"),
                "--weights", os.path.join(work, "model.safetensors"),
                "-o", prog], check=True)

targs = {k: torch.from_numpy(v) for k, v in inputs.items()}
for k in ("encoder_mask", "decoder_mask", "cross_mask"):
    targs[k] = targs[k].bool()
with torch.no_grad():
    want = model(**targs).numpy()
    start = time.perf_counter()
    for _ in range(args.repeat):
        model(**targs)
    eager = (time.perf_counter() - start) / args.repeat * 1e3
out = os.path.join(work, "out.safetensors")
subprocess.run([prog, "--input", os.path.join(work, "in.safetensors"),
                "--output", out], check=True)
got = _safetensors.read(out)[0]["output.logits"]
r = subprocess.run([prog, "--input", os.path.join(work, "in.safetensors"),
                    "--repeat", str(args.repeat * 3), "--json"],
                   capture_output=True, text=True, check=True)
stats = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][0])
result = {"model": "TreeAlgebraic N=1024 dim=64 heads=4 layers=2+2",
          "machine": platform.machine(), "cores": os.cpu_count(),
          "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
          "ape_eager_ms": eager, "dat_ms": stats["ms_per_run"],
          "dat_peak_bytes": stats["peak_bytes"],
          "speedup_vs_eager": eager / stats["ms_per_run"],
          "max_abs_error": float(np.abs(got - want).max())}
print(json.dumps(result, indent=1))
if args.results:
    with open(args.results, "w") as f:
        json.dump(result, f, indent=1)
