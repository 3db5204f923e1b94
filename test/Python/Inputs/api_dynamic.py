"""The Python package with a program of dynamic dimensions (a config's
dynamic_dims), numpy only: one compile of a golden case's module takes the
case's own shapes (checked against the reference's outputs) and others
(checked against programs compiled for them), a batch past its maximum in
parts, save/load, and the errors for sizes it cannot take. One line per
check; exits 1 on a failure.

    python api_dynamic.py GOLDEN_DIR WORK_DIR
"""

import json
import os
import sys

import numpy as np

import dat
from dat import _safetensors

from checks import close, expect_error, failures, report

golden, work = sys.argv[1], sys.argv[2]
folder = os.path.join(golden, "ra_basic")
with open(os.path.join(folder, "config.json")) as f:
    case = json.load(f)
weights = os.path.join(folder, "model.safetensors")
io, _ = _safetensors.read(os.path.join(folder, "io.safetensors"))
outputs = ["y", "attn_scores", "relations"]
config = {"module": case["module"], "kwargs": case["kwargs"],
          "dynamic_dims": {"batch": 4, "seq": 40},
          "inputs": {"x": {"shape": ["batch", "seq", 64]},
                     "symbols": {"shape": ["batch", "seq", 64]}},
          "outputs": {n: {} for n in outputs}}
m = dat.compile(config, weights)
report(m.dynamic_dims == {"batch": 4, "seq": 40}, "dynamic_dims")
print("  %r" % m)

# The case's own shapes: the reference's outputs.
got = m(x=io["input.x"], symbols=io["input.symbols"])
tol = case["tolerance"]
for name in outputs:
    report(close(got[name], io["output." + name], tol["rtol"], tol["atol"]),
           "reference %s %s" % (name, list(got[name].shape)))

# Other shapes, from the same program: as the program compiled for each.
rng = np.random.default_rng(5)
for batch, seq in ((1, 1), (3, 17), (4, 40), (6, 33)):
    x = rng.standard_normal((batch, seq, 64), dtype=np.float32)
    s = rng.standard_normal((batch, seq, 64), dtype=np.float32)
    static = dat.compile({"module": case["module"], "kwargs": case["kwargs"],
                          "inputs": {"x": {"shape": [batch, seq, 64]},
                                     "symbols": {"shape": [batch, seq, 64]}},
                          "outputs": {n: {} for n in outputs}}, weights)
    want, have = static(x=x, symbols=s), m(x=x, symbols=s)
    for name in outputs:
        scale = float(np.max(np.abs(want[name]))) or 1.0
        report(have[name].shape == want[name].shape and
               float(np.max(np.abs(have[name] - want[name]))) <= 1e-5 * scale,
               "batch %d seq %d %s %s" % (batch, seq, name,
                                          list(have[name].shape)))

# Saved and loaded: still any shape.
path = os.path.join(work, "saved")
m.save(path)
loaded = dat.load(path)
x = rng.standard_normal((2, 9, 64), dtype=np.float32)
a, b = m(x=x, symbols=x), loaded(x=x, symbols=x)
report(all(np.array_equal(a[n], b[n]) for n in outputs), "save and load")

# Sizes it cannot take, each naming the input.
x = rng.standard_normal((2, 9, 64), dtype=np.float32)
expect_error("lengths differ", lambda: m(x=x, symbols=x[:, :8]),
             "input 'x' has seq = 9 (dimension 1), but input 'symbols' has "
             "seq = 8")
long = rng.standard_normal((1, 41, 64), dtype=np.float32)
expect_error("too long", lambda: m(x=long, symbols=long),
             "compiled for [batch<=4, seq<=40, 64]")
narrow = rng.standard_normal((1, 9, 32), dtype=np.float32)
expect_error("wrong width", lambda: m(x=narrow, symbols=narrow),
             "input 'symbols' has shape [1, 9, 32]")


def compile_case(name, dims, inputs):
    """A golden case's module and weights compiled with `dims` dynamic:
    (its config, its io tensors, the compiled model)."""
    folder = os.path.join(golden, name)
    with open(os.path.join(folder, "config.json")) as f:
        case = json.load(f)
    io, _ = _safetensors.read(os.path.join(folder, "io.safetensors"))
    return case, io, dat.compile(
        {"module": case["module"], "kwargs": case["kwargs"],
         "dynamic_dims": dims, "inputs": inputs,
         "outputs": {"logits": {}}},
        os.path.join(folder, "model.safetensors"))


# A language model compiled once for any batch and length: the reference's
# logits at the case's length, and (causal) their first rows at shorter
# prompts; generation with the decode step equals greedy forward passes.
case, io, lm = compile_case("datlm_symbolic_rope", {"batch": 2, "seq": 32},
                            {"idx": {"shape": ["batch", "seq"],
                                     "dtype": "int64"}})
idx, want = io["input.idx"], io["output.logits"]
tol = case["tolerance"]
for rows, length in ((2, 16), (1, 5), (2, 1), (3, 9)):
    got = lm(idx=np.concatenate([idx, idx])[:rows, :length])
    ref = np.concatenate([want, want])[:rows, :length]
    report(close(got, ref, tol["rtol"], tol["atol"]),
           "lm reference logits batch %d length %d %s" % (rows, length,
                                                          list(got.shape)))
tokens = lm.generate(idx[:, :4], 6)
seq = idx[:, :4]
for _ in range(6):
    seq = np.concatenate([seq, np.argmax(lm(idx=seq)[:, -1], -1)[:, None]], 1)
report(np.array_equal(tokens, seq), "lm generate == greedy forward")

# A vision model over any batch: the reference's logits at the case's
# batch, its rows at smaller ones, and a batch past the maximum in parts.
case, io, vit = compile_case("vidat_posrel_cls", {"batch": 2},
                             {"image": {"shape": ["batch", 3, 32, 32]}})
image, want = io["input.image"], io["output.logits"]
tol = case["tolerance"]
for rows in (2, 1, 5):
    got = vit(image=np.concatenate([image] * 3)[:rows])
    report(close(got, np.concatenate([want] * 3)[:rows], tol["rtol"],
                 tol["atol"]),
           "vision reference logits batch %d %s" % (rows, list(got.shape)))

# Every other kind of module compiled once with dynamic dimensions, each at
# its golden case's own shapes against the reference's outputs (lengths
# below one tile: the padded partial tiles).
here = os.path.dirname(os.path.abspath(__file__))
ape = os.path.join(here, "..", "..", "Frontend", "Inputs")
for name, dims, shapes in (
        ("hyla_softmax_default", {"batch": 3, "seq": 70},
         {"x": ["batch", "seq", 32], "attention_bias": [1, 4, "seq", "seq"]}),
        ("hyla_rmshead_mlprelu", {"batch": 3, "seq": 70},
         {"x": ["batch", "seq", 32], "attention_bias": [1, 8, "seq", "seq"]}),
        ("ra_relpos_symbols", {"batch": 3, "seq": 70},
         {"x": ["batch", "seq", 64], "symbols": ["seq", "seq", 64]}),
        ("symbolic_attention", {"batch": 3, "seq": 70},
         {"x": ["batch", "seq", 64]}),
        ("relational_symbolic_attention", {"batch": 3, "seq": 70},
         {"x": ["batch", "seq", 64]}),
        ("positional_symbols", {"batch": 3, "seq": 30},
         {"x": ["batch", "seq", 64]}),
        ("da_decoder_prenorm_gelu", {"batch": 3, "seq": 70, "ctx": 20},
         {"x": ["batch", "seq", 64], "context": ["batch", "ctx", 64],
          "symbols": ["batch", "seq", 64]}),
        ("ape_sequential_selfmha", {"batch": 3, "seq": 16},
         {"x": ["batch", "seq", 32], "positions": ["batch", "seq"],
          "mediator": [1, "seq", "seq", 1, 1]}),
        ("ape_sequential_encoder", {"batch": 3, "seq": 16},
         {"x": ["batch", "seq", 32], "positions": ["batch", "seq"],
          "mediator": [1, "seq", "seq", 1, 1], "key_mask": ["batch", "seq"]}),
        ("ape_grid_selfmha", {"batch": 3, "seq": 20},
         {"x": ["batch", "seq", 32], "x_pos": [1, "seq"], "y_pos": [1, "seq"],
          "mediator": [1, "seq", "seq", 1, 1]}),
        # (APE's own models; their references in test/Frontend/Inputs.)
        (os.path.join(ape, "ape_branching_selfmha_positions"),
         {"batch": 3, "seq": 20},
         {"x": ["batch", "seq", 8], "positions": ["batch", "seq"]}),
        (os.path.join(ape, "ape_tree_algebraic"),
         {"batch": 3, "src": 20, "tgt": 20},
         {"encoder_ids": ["batch", "src"], "encoder_pos": ["batch", "src"],
          "encoder_mask": ["batch", "src"], "decoder_ids": ["batch", "tgt"],
          "decoder_pos": ["batch", "tgt"], "decoder_mask": [1, "tgt", "tgt"],
          "cross_mask": ["batch", "src"]}),
        (os.path.join(ape, "ape_mt_algebraic"),
         {"batch": 3, "src": 20, "tgt": 20},
         {"source_ids": ["batch", "src"], "source_mask": ["batch", "src"],
          "target_ids": ["batch", "tgt"], "target_mask": [1, "tgt", "tgt"]}),
        (os.path.join(ape, "ape_cct_algebraic"), {"batch": 3},
         {"pixel_values": ["batch", 3, 14, 14]})):
    folder = os.path.join(golden, name)
    name = os.path.basename(name)
    with open(os.path.join(folder, "config.json")) as f:
        case = json.load(f)
    io, _ = _safetensors.read(os.path.join(folder, "io.safetensors"))
    config = {"module": case["module"], "kwargs": case["kwargs"],
              "call": case.get("call", {}), "dynamic_dims": dims,
              "inputs": {k: {"shape": v,
                             "dtype": case["inputs"][k].get("dtype",
                                                            "float32")}
                         for k, v in shapes.items()},
              "outputs": {k: {} for k in case["outputs"]}}
    m = dat.compile(config, os.path.join(folder, "model.safetensors"))
    got = m(**{k: io["input." + k] for k in shapes})
    got = got if isinstance(got, dict) else {list(case["outputs"])[0]: got}
    tol = case["tolerance"]
    for out in case["outputs"]:
        report(close(got[out], io["output." + out], tol["rtol"], tol["atol"]),
               "%s reference %s %s" % (name, out, list(got[out].shape)))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
