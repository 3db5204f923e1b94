#!/usr/bin/env python3
"""Proves the benchmark's PyTorch modules (dat_torch.py) equal to the
reference implementations: runs each on the golden cases of its module (on
the CPU, in float64) and compares every output the case has with the case's
tolerance.

usage: check_golden.py GOLDEN_DIR

Prints one line per output and `PASS <case>` / `FAIL <case>` per case;
exit status 0 only if every case of a module dat_torch.py has passes.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dat_torch  # noqa: E402
import safetensors_io  # noqa: E402


def check(case_dir):
    cfg = json.load(open(os.path.join(case_dir, "config.json")))
    fn = dat_torch.MODULES.get(cfg["module"])
    if fn is None:
        return None
    name = cfg.get("name", os.path.basename(case_dir))
    W = {k: safetensors_io.to_torch(v, dtype=torch.float64)
         for k, v in safetensors_io.read(os.path.join(case_dir, "model.safetensors")).items()}
    io = safetensors_io.read(os.path.join(case_dir, "io.safetensors"))
    inputs = {k[len("input."):]: safetensors_io.to_torch(v, dtype=torch.float64)
              for k, v in io.items() if k.startswith("input.")}
    with torch.no_grad():
        got = fn(W, cfg["kwargs"], cfg.get("call", {}), inputs)
    tol = cfg.get("tolerance", {})
    rtol, atol = tol.get("rtol", 1e-4), tol.get("atol", 1e-5)
    ok, compared = True, 0
    for key in cfg["outputs"]:
        if key not in got or ("output." + key) not in io:
            print("  %s: not produced by dat_torch" % key)
            continue
        want = safetensors_io.to_torch(io["output." + key], dtype=torch.float64)
        have = got[key].reshape(want.shape) if got[key].numel() == want.numel() else None
        if have is None:
            print("  %s: shape %s, want %s" % (key, list(got[key].shape), list(want.shape)))
            ok = False
            continue
        err = (have - want).abs()
        bad = int((err > atol + rtol * want.abs()).sum())
        print("  %s: %d of %d outside tolerance; max abs error %.3g"
              % (key, bad, want.numel(), float(err.max())))
        ok &= bad == 0
        compared += 1
    ok &= compared > 0
    print("%s %s" % ("PASS" if ok else "FAIL", name))
    return ok


def main():
    root = sys.argv[1]
    results = [check(os.path.join(root, c)) for c in sorted(os.listdir(root))
               if os.path.isfile(os.path.join(root, c, "config.json"))]
    ran = [r for r in results if r is not None]
    print("%d cases, %d passed" % (len(ran), sum(ran)))
    sys.exit(0 if ran and all(ran) else 1)


if __name__ == "__main__":
    main()
