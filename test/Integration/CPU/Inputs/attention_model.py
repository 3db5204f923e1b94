#!/usr/bin/env python3
"""A whole Attention module (projections, flash tiles, output projection)
for tile-transposes.test, and its independent float64 numpy reference.

    attention_model.py make DIR   config.json, model.safetensors,
                                  input.safetensors (seeded random values)
    attention_model.py check DIR  compares DIR/out.safetensors with the
                                  reference; exits non-zero on a mismatch

Heads of 16 and 128 keys: the keys' blocked packing in the K projection and
the tiles' transposes swap dimensions that are multiples of 16, so they run
as 16 x 16 register-block transposes (vectorizeTileTranspose).
"""
import json
import os
import sys

import numpy as np

from dat import _safetensors

B, N, D, H = 2, 128, 64, 4


def make(d):
    rng = np.random.default_rng(7)
    config = {"module": "Attention",
              "kwargs": {"d_model": D, "n_heads": H, "dropout": 0.0},
              "inputs": {"x": {"shape": [B, N, D]}},
              "outputs": {"y": {"shape": [B, N, D]}}}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    weights = {"%s.weight" % w: (rng.standard_normal((D, D)) * 0.2).astype(np.float32)
               for w in ("wq", "wk", "wv", "wo")}
    _safetensors.write(os.path.join(d, "model.safetensors"), weights)
    x = rng.standard_normal((B, N, D)).astype(np.float32)
    _safetensors.write(os.path.join(d, "input.safetensors"), {"input.x": x})


def reference(d):
    W, _ = _safetensors.read(os.path.join(d, "model.safetensors"))
    io, _ = _safetensors.read(os.path.join(d, "input.safetensors"))
    x = io["input.x"].astype(np.float64)
    lin = lambda t, w: t @ W[w + ".weight"].astype(np.float64).T
    hd = D // H
    q, k, v = (lin(x, w).reshape(B, N, H, hd).transpose(0, 2, 1, 3)
               for w in ("wq", "wk", "wv"))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    p = np.exp(s - s.max(-1, keepdims=True))
    o = (p / p.sum(-1, keepdims=True)) @ v
    return lin(o.transpose(0, 2, 1, 3).reshape(B, N, D), "wo")


def check(d):
    want = reference(d)
    out, _ = _safetensors.read(os.path.join(d, "out.safetensors"))
    got = out["output.y"].astype(np.float64)
    if got.shape != want.shape:
        print("y: shape %s, want %s" % (list(got.shape), list(want.shape)))
        return 1
    tol = 1e-5 * np.abs(want).max()
    err = np.abs(got - want)
    bad = int((err > tol).sum())
    worst = np.unravel_index(err.argmax(), err.shape)
    print("y: %d of %d within %.1e of the float64 reference (worst %s: got %.7g, "
          "want %.7g)" % (err.size - bad, err.size, tol, list(map(int, worst)),
                          got[worst], want[worst]))
    return 1 if bad else 0


if __name__ == "__main__":
    mode, directory = sys.argv[1], sys.argv[2]
    if mode == "make":
        make(directory)
    else:
        sys.exit(check(directory))
