"""dat.compile(module) on the real reference (dual-attention 0.0.7): random
weights, compiled in-process, called on torch tensors, compared with the
module's own output. Prints one line per check; exits 1 on a mismatch.

    python reference_modules.py   (a Python with torch and dual_attention)
"""

import sys

import numpy as np
import torch

import dat

if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
    # torch < 2.0 (Debian's 1.13): the reference calls SDPA; its math form,
    # as the golden cases' generation shimmed it.
    def _sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
              scale=None):
        assert dropout_p == 0.0
        scale = q.shape[-1] ** -0.5 if scale is None else scale
        s = q @ k.transpose(-2, -1) * scale
        if is_causal:
            keep = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool,
                              device=s.device).tril()
            s = s.masked_fill(~keep, float("-inf"))
        if attn_mask is not None:
            s = s.masked_fill(~attn_mask, float("-inf")) \
                if attn_mask.dtype == torch.bool else s + attn_mask
        return torch.softmax(s, -1) @ v
    torch.nn.functional.scaled_dot_product_attention = _sdpa
    print("note: torch %s has no scaled_dot_product_attention; its math form "
          "stands in" % torch.__version__)

torch.manual_seed(0)
failures = []


def check(what, got, want, rtol=1e-4, atol=1e-5):
    got = got.detach().float().numpy() if torch.is_tensor(got) else got
    want = want.detach().float().numpy()
    if got.shape != want.shape:
        failures.append(what)
        print("FAIL %s: shape %s, reference %s" % (what, got.shape,
                                                   want.shape))
        return
    err = np.abs(got - want)
    bad = int((err > atol + rtol * np.abs(want)).sum())
    print("%s %s: max abs error %.3g, %d of %d outside rtol %g atol %g"
          % ("ok" if bad == 0 else "FAIL", what, err.max(), bad, err.size,
             rtol, atol))
    if bad:
        failures.append(what)


def randomize(module):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.2)
    return module.eval()


# Relational attention: kwargs passed (the module keeps none).
from dual_attention.relational_attention import RelationalAttention
kw = dict(d_model=64, n_heads=4, n_relations=4, dropout=0.0,
          rel_activation="relu", symmetric_rels=False)
ra = randomize(RelationalAttention(**kw))
x, s = torch.randn(2, 12, 64), torch.randn(2, 12, 64)
m = dat.compile(ra, kwargs=kw, inputs={"x": x, "symbols": s})
with torch.no_grad():
    want = ra(x, s)[0]
check("RelationalAttention y", m(x=x, symbols=s), want)
# A batch of one and of three from the same program (compiled for two).
with torch.no_grad():
    check("RelationalAttention batch 1", m(x=x[:1], symbols=s[:1]),
          ra(x[:1], s[:1])[0])
    x3, s3 = torch.randn(3, 12, 64), torch.randn(3, 12, 64)
    check("RelationalAttention batch 3", m(x=x3, symbols=s3), ra(x3, s3)[0])

# Lengths the tiles do not divide (200 = 3 x 64 + 8): tile loops split into
# full tiles and a partial last one (dat-peel-tile-loops), projections,
# query tiles and key blocks alike.
from dual_attention.attention import Attention
kw = dict(d_model=64, n_heads=2, dropout=0.0)
at = randomize(Attention(**kw))
x200, s200 = torch.randn(1, 200, 64), torch.randn(1, 200, 64)
for causal in (False, True):
    m = dat.compile(at, kwargs=kw, inputs={"x": x200},
                    call={"is_causal": causal})
    with torch.no_grad():
        want = at(x200, x200, x200, is_causal=causal)[0]
    check("Attention length 200%s" % (" causal" if causal else ""),
          m(x=x200), want)
kw = dict(d_model=64, n_heads=4, n_relations=4, dropout=0.0,
          rel_activation="relu", symmetric_rels=False)
m = dat.compile(ra, kwargs=kw, inputs={"x": x200, "symbols": s200})
with torch.no_grad():
    check("RelationalAttention length 200", m(x=x200, symbols=s200),
          ra(x200, s200)[0])

# Dual attention.
from dual_attention.dual_attention import DualAttention
kw = dict(d_model=64, n_heads_sa=2, n_heads_ra=2, dropout=0.0,
          sa_kwargs=dict(), ra_kwargs=dict(rel_activation="identity"))
da = randomize(DualAttention(**kw))
m = dat.compile(da, kwargs=kw, inputs={"x": x, "symbols": s})
with torch.no_grad():
    check("DualAttention y", m(x=x, symbols=s), da(x, s)[0])

# The DAT language model through the hub mixin (its kwargs are kept):
# one compile, two batch sizes and two sequence lengths; greedy generation.
from dual_attention.hf import DualAttnTransformerLM_HFHub
kw = dict(vocab_size=97, d_model=64, n_layers=2, n_heads_sa=2, n_heads_ra=2,
          symbol_retrieval="symbolic_attention",
          symbol_retrieval_kwargs=dict(d_model=64, n_heads=4, n_symbols=16),
          dff=128, dropout_rate=0.0, activation="swiglu", norm_first=True,
          max_block_size=32, pos_enc_type="RoPE")
lm = randomize(DualAttnTransformerLM_HFHub(**kw))


def check_lm(m, label):
    """The compiled LM's logits at three batch sizes and lengths."""
    for b, t in ((2, 32), (1, 9), (3, 20)):
        idx = torch.randint(0, 97, (b, t))
        with torch.no_grad():
            want = lm(idx)[0]
        check("DualAttnTransformerLM %s batch %d length %d" % (label, b, t),
              m(idx=idx), want)


m = dat.compile(lm, batch=2)
check_lm(m, "logits")
prompt = torch.randint(0, 97, (2, 5))
got = m.generate(prompt, 8)
with torch.no_grad():
    seq = prompt
    for _ in range(8):  # the reference's greedy argmax, one token at a time
        seq = torch.cat([seq, lm(seq)[0][:, -1].argmax(-1, keepdim=True)], 1)
ok = torch.equal(got, seq)
print("%s DualAttnTransformerLM generate 8 tokens: %s" % (
    "ok" if ok else "FAIL", got[0, 5:].tolist()))
if not ok:
    print("  reference: %s" % seq[0, 5:].tolist())
    failures.append("generate")

# The same live module compiled once with dynamic batch and length: each
# call does the work of its own shape (no padding to the maximum).
md = dat.compile(lm, batch=2, dynamic=True)
check_lm(md, "dynamic")
ok = torch.equal(md.generate(prompt, 8), seq)
print("%s DualAttnTransformerLM dynamic generate 8 tokens" % (
    "ok" if ok else "FAIL"))
if not ok:
    failures.append("dynamic generate")

# A bfloat16 checkpoint: converted to the program's float32; the reference
# is the float32 model with the bf16-rounded weights (its buffers, e.g.
# RoPE's, stay float32 as dat computes them).
import copy
lm16 = copy.deepcopy(lm).to(torch.bfloat16)
m16 = dat.compile(lm16)
ref = copy.deepcopy(lm)
ref.load_state_dict({k: v.float() for k, v in lm16.state_dict().items()})
idx = torch.randint(0, 97, (1, 32))
with torch.no_grad():
    check("bf16 checkpoint", m16(idx), ref(idx)[0])

# The LM saved with save_pretrained, compiled from the folder.
import tempfile
with tempfile.TemporaryDirectory() as d:
    lm.save_pretrained(d)
    m2 = dat.compile(d)
    idx = torch.randint(0, 97, (1, 32))
    with torch.no_grad():
        check("save_pretrained folder", m2(idx), lm(idx)[0])
    m2.save(d + "/compiled")
    m3 = dat.load(d + "/compiled")
    check("saved and loaded", m3(idx), lm(idx)[0])

# Vision DAT.
from dual_attention.vision_models import VisionDualAttnTransformer
kw = dict(image_shape=(3, 16, 16), patch_size=(4, 4), num_classes=10,
          d_model=64, n_layers=2, n_heads_sa=2, n_heads_ra=2, dff=128,
          dropout_rate=0.0, activation="gelu", norm_first=True,
          symbol_retrieval="position_relative",
          symbol_retrieval_kwargs=dict(symbol_dim=64, max_rel_pos=17),
          ra_kwargs=dict(symmetric_rels=True,
                         use_relative_positional_symbols=True), pool="cls")
vit = randomize(VisionDualAttnTransformer(**kw))
m = dat.compile(vit, kwargs=kw, batch=2)
img = torch.randn(2, 3, 16, 16)
with torch.no_grad():
    check("VisionDualAttnTransformer logits", m(image=img), vit(img))

# The Vision DAT of examples/vision-dat.json (symbols by relational
# symbolic attention): dat, and the benchmark's PyTorch baseline
# (bench/dat_torch.py), against the reference.
import json
import os
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..")
sys.path.insert(0, os.path.join(root, "bench"))
import dat_torch  # noqa: E402
kw = json.load(open(os.path.join(root, "examples", "vision-dat.json")))["kwargs"]
kw = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
vdat = randomize(VisionDualAttnTransformer(**kw))
m = dat.compile(vdat, kwargs=kw, batch=3)
img = torch.randn(3, 3, 32, 32)
with torch.no_grad():
    want = vdat(img)
    check("VisionDualAttnTransformer rel_sym_attn logits", m(image=img), want)
    W = {k: v.detach() for k, v in vdat.state_dict().items()}
    check("bench baseline rel_sym_attn logits",
          dat_torch.MODULES["VisionDualAttnTransformer"](
              W, kw, {}, {"image": img})["logits"], want)

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
