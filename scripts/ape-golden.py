#!/usr/bin/env python3
"""Makes a golden case of APE's TreeAlgebraic or MTAlgebraic from the
reference itself.

    PYTHONPATH=APE_CHECKOUT python scripts/ape-golden.py tree|mt OUT_DIR [SEED]

APE_CHECKOUT: konstantinosKokos/ape (ape/nn, eval/models/{tree,nmt}), with torch
2.x. Writes OUT_DIR/config.json, model.safetensors and io.safetensors the
way ../shared/golden/README.md describes: every trainable parameter
~ N(0, 0.2) from numpy PCG64([seed, 1]) in named_parameters() order (the
frozen identity stays the identity), inputs from PCG64([seed, 2]), eval
mode, float32; the float64 run of the same model gives the deviation.
rope_like_init (10000 AdamW steps and scipy's logm, only an initializer) is
replaced before construction: every value it makes is overwritten.
"""
import json
import os
import sys

import numpy as np
import torch

import ape.nn.position.algebraic as algebraic

algebraic.rope_like_init = lambda d: torch.zeros(2 * d, 2 * d)
from eval.models.nmt.algebraic import MTAlgebraic  # noqa: E402
from eval.models.tree.algebraic import TreeAlgebraic  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from dat import _safetensors  # noqa: E402

which, out = sys.argv[1], sys.argv[2]
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20251125
os.makedirs(out, exist_ok=True)
if which == "tree":
    kwargs = dict(vocab_size=20, dim=16, num_heads=2, num_layers=[2, 2],
                  branching_factor=2)
    cls = TreeAlgebraic
else:
    kwargs = dict(vocab_size=20, dim=16, num_heads=2, num_layers=[2, 2],
                  sos_token_id=1, eos_token_id=2)
    cls = MTAlgebraic
model = cls(**{**kwargs, "num_layers": tuple(kwargs["num_layers"])})
rng = np.random.Generator(np.random.PCG64([seed, 1]))
with torch.no_grad():
    for _, p in model.named_parameters():
        if p.requires_grad:
            p.copy_(torch.from_numpy(
                rng.normal(0.0, 0.2, tuple(p.shape)).astype(np.float32)))
model.eval()

rng = np.random.Generator(np.random.PCG64([seed, 2]))
dec_mask = np.tril(np.ones((1, 5, 5), dtype=bool))
if which == "tree":
    enc_pos = np.array([[1, 2, 3, 4, 5, 6, 1000], [1, 2, 3, 6, 7, 0, -1]])
    dec_pos = np.array([[1, 2, 3, 4, 5], [1, 3, 6, 13, 0]])
    enc_ids = np.where(enc_pos > 0, rng.integers(0, 20, enc_pos.shape), -1)
    dec_ids = np.where(dec_pos > 0, rng.integers(0, 20, dec_pos.shape), -1)
    enc_mask = enc_pos > 0
    inputs = dict(encoder_ids=enc_ids, encoder_pos=enc_pos,
                  encoder_mask=enc_mask, decoder_ids=dec_ids,
                  decoder_pos=dec_pos, decoder_mask=dec_mask,
                  cross_mask=enc_mask)
else:
    src_mask = np.ones((2, 7), dtype=bool)
    src_mask[1, -2:] = False
    src_ids = np.where(src_mask, rng.integers(0, 20, (2, 7)), -1)
    inputs = dict(source_ids=src_ids, source_mask=src_mask,
                  target_ids=rng.integers(0, 20, (2, 5)),
                  target_mask=dec_mask)


def run(m, dtype):
    # MTAlgebraic.forward is the loss; forward_train gives the logits.
    fn = m.forward if which == "tree" else m.forward_train
    with torch.no_grad():
        return fn(**{k: torch.from_numpy(v) for k, v in inputs.items()}).to(
            torch.float64).numpy()


logits = run(model, torch.float32)
logits64 = run(model.double(), torch.float64)
model.float()
dev = float(np.abs(logits - logits64).max())

_safetensors.write(os.path.join(out, "model.safetensors"),
                   {k: v.numpy() for k, v in model.state_dict().items()})
io = {"input." + k: v.astype(np.int64) for k, v in inputs.items()}
io["output.logits"] = logits.astype(np.float32)
_safetensors.write(os.path.join(out, "io.safetensors"), io)
config = {
    "name": "ape_%s_algebraic" % which,
    "module": cls.__name__,
    "source": "konstantinosKokos/ape eval/models/%s/algebraic.py"
              % ("tree" if which == "tree" else "nmt"),
    "kwargs": kwargs,
    "call": {},
    "inputs": {k: {"shape": list(v.shape), "dtype": "int64"}
               for k, v in inputs.items()},
    "outputs": {"logits": {"shape": list(logits.shape),
                           "dtype": "float32"}},
    "tolerance": {"rtol": 1e-4, "atol": 5e-5},
    "generation": {"seed": seed, "float64_deviation": dev,
                   "torch": torch.__version__},
}
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f, indent=1)
print("wrote %s: logits %s, float32 vs float64 %.3g" % (out, logits.shape, dev))
