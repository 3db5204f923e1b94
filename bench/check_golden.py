#!/usr/bin/env python3
"""Proves the benchmark's PyTorch modules (dat_torch.py), or with --jax its
JAX ones (dat_jax.py), equal to the reference implementations: runs each on
the golden cases of its module (on the CPU, in float64) and compares every
output the case has with the case's tolerance.

usage: check_golden.py [--jax] GOLDEN_DIR

Prints one line per output and `PASS <case>` / `FAIL <case>` per case;
exit status 0 only if every case of a module the baselines have passes.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

NUMPY_DTYPE = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def as_float64(entry):
    """A (dtype, shape, bytes) entry as a numpy array, floats in float64."""
    kind, shape, data = entry
    a = np.frombuffer(data, dtype=NUMPY_DTYPE[kind]).reshape(shape)
    return a.astype(np.float64) if kind.startswith("F") else a.copy()  # writable


def backend(use_jax):
    """(modules, to-array, run) for PyTorch or JAX, in float64."""
    if use_jax:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import dat_jax
        return dat_jax.MODULES, jnp.asarray, lambda fn, *a: fn(*a)
    import torch
    import dat_torch

    def run(fn, *args):
        with torch.no_grad():
            return fn(*args)
    return dat_torch.MODULES, torch.from_numpy, run


def check(case_dir, modules, to_array, run):
    cfg = json.load(open(os.path.join(case_dir, "config.json")))
    fn = modules.get(cfg["module"])
    if fn is None:
        return None
    name = cfg.get("name", os.path.basename(case_dir))
    W = {k: to_array(as_float64(v)) for k, v in
         safetensors_io.read(os.path.join(case_dir, "model.safetensors")).items()}
    io = safetensors_io.read(os.path.join(case_dir, "io.safetensors"))
    inputs = {k[len("input."):]: to_array(as_float64(v))
              for k, v in io.items() if k.startswith("input.")}
    got = run(fn, W, cfg["kwargs"], cfg.get("call", {}), inputs)
    tol = cfg.get("tolerance", {})
    rtol, atol = tol.get("rtol", 1e-4), tol.get("atol", 1e-5)
    ok, compared = True, 0
    for key in cfg["outputs"]:
        if key not in got or ("output." + key) not in io:
            print("  %s: not produced by the baseline" % key)
            continue
        want = as_float64(io["output." + key])
        have = np.asarray(got[key])
        if have.size != want.size:
            print("  %s: shape %s, want %s" % (key, list(have.shape), list(want.shape)))
            ok = False
            continue
        err = np.abs(have.reshape(want.shape) - want)
        bad = int((err > atol + rtol * np.abs(want)).sum())
        print("  %s: %d of %d outside tolerance; max abs error %.3g"
              % (key, bad, want.size, float(err.max())))
        ok &= bad == 0
        compared += 1
    ok &= compared > 0
    print("%s %s" % ("PASS" if ok else "FAIL", name))
    return ok


def main():
    use_jax = sys.argv[1:2] == ["--jax"]
    root = sys.argv[2 if use_jax else 1]
    chosen = backend(use_jax)
    results = [check(os.path.join(root, c), *chosen) for c in sorted(os.listdir(root))
               if os.path.isfile(os.path.join(root, c, "config.json"))]
    ran = [r for r in results if r is not None]
    print("%d cases, %d passed" % (len(ran), sum(ran)))
    sys.exit(0 if ran and all(ran) else 1)


if __name__ == "__main__":
    main()
