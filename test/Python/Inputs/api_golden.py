"""The Python package on the golden cases, numpy only: compile each case's
folder, call it in-process on the case's inputs and compare with the
reference's outputs; decoding, batch and length handling, save/load and
the errors a user meets. One line per check; exits 1 on a failure.

    python api_golden.py GOLDEN_DIR WORK_DIR
"""

import os
import sys

import numpy as np

import dat
from dat import _safetensors

from checks import close, expect_error, failures, report

golden, work = sys.argv[1], sys.argv[2]


# Every output of these cases, against the reference's.
import json
for case in ("ra_basic", "hyla_softmax_default", "vidat_posrel_cls",
             "datlm_symbolic_rope", "ape_sequential_selfmha"):
    folder = os.path.join(golden, case)
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    io, _ = _safetensors.read(os.path.join(folder, "io.safetensors"))
    m = dat.compile(folder)
    inputs = {k[len("input."):]: v for k, v in io.items()
              if k.startswith("input.")}
    got = m(**inputs)
    got = got if isinstance(got, dict) else {next(iter(m.outputs)): got}
    tol = config.get("tolerance", {})
    for name, value in got.items():
        report(close(value, io["output." + name], tol.get("rtol", 1e-4),
                     tol.get("atol", 1e-5)), "%s %s" % (case, name))

# The language model: decoding with the KV cache equals greedy decoding by
# full forward passes (of every length: the padded path).
lm = dat.compile(os.path.join(golden, "datlm_symbolic_rope"))
B, T = lm.inputs["idx"][0]
vocab = lm.outputs["logits"][0][2]
rng = np.random.default_rng(0)
prompt = rng.integers(0, vocab, (B, 3))
tokens = lm.generate(prompt, 6)
seq = prompt
for _ in range(6):
    seq = np.concatenate([seq, lm(idx=seq)[:, -1].argmax(-1)[:, None]], 1)
report(np.array_equal(tokens, seq), "generate == greedy forward: %s"
       % tokens[0, 3:].tolist())
# One step at a time, by hand, matches the forward logits.
lm.reset()
full = lm(idx=seq[:, :5])
steps = [lm.step(seq[:, t]) for t in range(5)]
report(close(np.stack(steps, 1), full, 1e-4, 1e-5) and lm.position == 5,
       "step logits == forward logits")
# A batch of one from a program compiled for B rows: the same row.
one = lm(idx=seq[:1, :T])
report(close(one, lm(idx=seq[:, :T])[:1], 0, 1e-6), "batch 1 of %d" % B)

# Save, load (no compiler involved), same results.
saved = os.path.join(work, "saved-lm")
lm.save(saved)
again = dat.load(saved)
report(np.array_equal(again(idx=seq), lm(idx=seq)), "save and load")

# Errors: named, before anything runs.
expect_error("token out of range", lambda: lm(idx=np.full((B, 4), vocab)),
             "outside the accepted range [0, %d]" % (vocab - 1))
expect_error("too long", lambda: lm(idx=np.zeros((B, T + 1), np.int64)),
             "compiled for [%d, %d]" % (B, T))
expect_error("unknown input", lambda: lm(idx=seq, x=seq), "unknown input")
expect_error("float token ids", lambda: lm(idx=np.zeros((B, 4))),
             "expected integers")
ra = dat.compile(os.path.join(golden, "ra_basic"))
shape = ra.inputs["x"][0]
bad = np.zeros(shape, np.float32)
bad[0, 1, 2] = np.nan
expect_error("NaN input", lambda: ra(x=bad, symbols=bad), "is NaN")
expect_error("other length (not causal)",
             lambda: ra(x=bad[:, :5], symbols=bad[:, :5]),
             "compiled for %s (any batch)" % list(shape))
expect_error("missing folder", lambda: dat.load(os.path.join(work, "nope")),
             "not a saved dat model")
expect_error("no step", lambda: ra.generate(np.zeros((1, 2), np.int64), 1),
             "has no decode step")

# torch tensors in, torch tensors out, where torch is installed.
try:
    import torch
except ImportError:
    print("skipped: torch tensors (no torch in this Python)")
else:
    x = torch.from_numpy(np.array(
        _safetensors.read(os.path.join(golden, "ra_basic",
                                       "io.safetensors"))[0]["input.x"]))
    y = ra(x=x, symbols=x)["y"]
    report(torch.is_tensor(y) and np.array_equal(
        y.numpy(), ra(x=x.numpy(), symbols=x.numpy())["y"]), "torch tensors")

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
