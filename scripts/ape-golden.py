#!/usr/bin/env python3
"""Makes a golden case of APE's TreeAlgebraic, MTAlgebraic, AlgebraicCCT or
AlgebraicSeqCCT from the reference itself.

    PYTHONPATH=APE_CHECKOUT python scripts/ape-golden.py \
        tree|mt|cct|seqcct|branching OUT_DIR [SEED]

branching: `Branching + SelfMHA` given node positions only, maps and the
0.98^steps mediator made as TreeAlgebraic makes them (from the unique
positions of the call).

The CCT models: eval/models/image/cct.py at bd64e50 cannot be constructed
(`from ape.nn.position import ..., Sequential` shadows torch.nn.Sequential,
which its patch_embed needs), so they are assembled here from ape's own
Encoder, Grid, Sequential and attention as cct.py's forward does, with
torch's Conv2d, ReLU and MaxPool2d.

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
from ape.nn.encoder import Encoder  # noqa: E402
from ape.nn.attention import SelfMHA  # noqa: E402


class BranchingSelfMHA(torch.nn.Module):
    """Branching + SelfMHA with the positions of the call, as TreeAlgebraic
    prepares its attention."""

    def __init__(self, positional_encoder, mha):
        super().__init__()
        self.positional_encoder = algebraic.Branching(**positional_encoder)
        self.mha = SelfMHA(mha["num_heads"], mha["dim"],
                           dropout_rate=mha["dropout_rate"])

    def forward(self, x, positions):
        unique, inverse = positions.unique(return_inverse=True)
        self.positional_encoder.precompute(positions=unique.tolist())
        maps, steps = self.positional_encoder.maps
        mediator = 0.98 ** steps[inverse.unsqueeze(-1), inverse.unsqueeze(-2)]
        atn_fn = self.positional_encoder.adjust_attention(
            q_maps=maps[inverse], k_maps=maps[inverse],
            mediator=(mediator.unflatten(-1, (-1, 1, 1)), True))
        return self.mha(x, None, atn_fn), maps[inverse]


class CCT(torch.nn.Module):
    """AlgebraicCCT (grid) / AlgebraicSeqCCT as cct.py builds and runs them."""

    def __init__(self, grid, dim, num_layers, num_heads, in_channels,
                 kernel_size, num_classes, mlp_ratio):
        super().__init__()
        self.grid = grid
        self.patch_embed = torch.nn.Sequential(
            torch.nn.Conv2d(in_channels, dim, kernel_size, stride=(1, 1),
                            bias=False),
            torch.nn.ReLU(), torch.nn.MaxPool2d(kernel_size=kernel_size))
        self.encoder = Encoder(num_heads=num_heads, num_layers=num_layers,
                               dim=dim, dropout_rate=0.1, weight_dropout=0.1,
                               activation='GELU', drop_path=True,
                               mlp_ratio=mlp_ratio)
        self.positional_encoder = (
            algebraic.Grid(num_axes=2, num_heads=num_heads,
                           dim=dim // (num_heads * 2)) if grid else
            algebraic.Sequential(dim=dim // num_heads, num_heads=num_heads))
        self.pooler = torch.nn.Linear(dim, 1)
        self.fc = torch.nn.Linear(dim, num_classes)

    def forward(self, pixel_values):
        patch_values = self.patch_embed(pixel_values)
        if self.grid:
            h, w = patch_values.shape[-2], patch_values.shape[-2]
            patch_values = patch_values.permute(0, 2, 3, 1).flatten(1, 2)
            x_pos = torch.arange(0, h).unsqueeze(-1).expand(h, w).flatten()[None]
            y_pos = torch.arange(0, w).unsqueeze(0).expand(h, w).flatten()[None]
            self.positional_encoder.precompute(max(h, w))
            x_maps, y_maps = self.positional_encoder.forward(x_pos, y_pos)
            coords = torch.cat((x_pos, y_pos), dim=0)
            dists = ((coords[:, None] - coords[:, :, None]) ** 2).sum(0)
            dists = dists.sqrt().floor()[None, :, :, None, None]
            atn_fn = self.positional_encoder.adjust_attention(
                (x_maps, y_maps), (x_maps, y_maps), (0.98 ** dists, True))
        else:
            patch_values = patch_values.permute(0, 2, 3, 1).flatten(1, 2)
            positions = torch.arange(0, patch_values.shape[1])[None]
            distances = (positions[:, :, None] - positions[:, None])
            mediator = 0.98 ** distances.unsqueeze(-1).unsqueeze(-1).abs()
            self.positional_encoder.precompute(positions.shape[1])
            maps = self.positional_encoder.forward(
                positions[:1, :patch_values.shape[1]])
            atn_fn = self.positional_encoder.adjust_attention(
                q_maps=maps, k_maps=maps, mediator=(mediator, True))
        patch_values = self.encoder.forward(
            encoder_input=patch_values, encoder_mask=None, atn_fn=atn_fn)
        gate = self.pooler(patch_values).softmax(dim=1)
        return self.fc((gate * patch_values).sum(dim=1))

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from dat import _safetensors  # noqa: E402

which, out = sys.argv[1], sys.argv[2]
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20251125
os.makedirs(out, exist_ok=True)
if which == "tree":
    kwargs = dict(vocab_size=20, dim=16, num_heads=2, num_layers=[2, 2],
                  branching_factor=2)
    cls = TreeAlgebraic
elif which == "mt":
    kwargs = dict(vocab_size=20, dim=16, num_heads=2, num_layers=[2, 2],
                  sos_token_id=1, eos_token_id=2)
    cls = MTAlgebraic
elif which == "branching":
    kwargs = dict(positional_encoder=dict(dim=4, branching_factor=2,
                                          num_heads=2),
                  mha=dict(num_heads=2, dim=8, dropout_rate=0.0))
    cls = BranchingSelfMHA
else:
    kwargs = dict(dim=16, num_layers=2, num_heads=2, in_channels=3,
                  kernel_size=[3, 3], num_classes=5, mlp_ratio=2)
    cls = None
if cls is None:
    model = CCT(which == "cct", **{**kwargs,
                                  "kernel_size": tuple(kwargs["kernel_size"])})
    name = "AlgebraicCCT" if which == "cct" else "AlgebraicSeqCCT"
elif which == "branching":
    model = cls(**kwargs)
    name = "Branching + SelfMHA"
else:
    model = cls(**{**kwargs, "num_layers": tuple(kwargs["num_layers"])})
    name = cls.__name__
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
elif which == "branching":
    inputs = dict(
        x=rng.normal(0, 1, (2, 9, 8)).astype(np.float32),
        positions=np.array([[1, 2, 3, 4, 5, 6, 7, 13, 0],
                            [3, 7, 15, 31, 8, 2, 1, 40000, -1]]))
elif which in ("cct", "seqcct"):
    inputs = dict(pixel_values=rng.normal(0, 1, (2, 3, 14, 14)).astype(
        np.float32))
else:
    src_mask = np.ones((2, 7), dtype=bool)
    src_mask[1, -2:] = False
    src_ids = np.where(src_mask, rng.integers(0, 20, (2, 7)), -1)
    inputs = dict(source_ids=src_ids, source_mask=src_mask,
                  target_ids=rng.integers(0, 20, (2, 5)),
                  target_mask=dec_mask)


def run(m, dtype):
    # MTAlgebraic.forward is the loss; forward_train gives the logits.
    fn = m.forward_train if which == "mt" else m.forward
    with torch.no_grad():
        out = fn(**{k: torch.from_numpy(v).to(dtype) if v.dtype == np.float32
                    else torch.from_numpy(v) for k, v in inputs.items()})
    outs = out if isinstance(out, tuple) else (out,)
    return [o.to(torch.float64).numpy() for o in outs]


results = run(model, torch.float32)
results64 = run(model.double(), torch.float64)
model.float()
dev = max(float(np.abs(r - r64).max()) for r, r64 in zip(results, results64))
names = ["y", "maps"] if which == "branching" else ["logits"]

_safetensors.write(os.path.join(out, "model.safetensors"),
                   {k: v.numpy() for k, v in model.state_dict().items()})
io = {"input." + k: v if v.dtype == np.float32 else v.astype(np.int64)
      for k, v in inputs.items()}
for n, r in zip(names, results):
    io["output." + n] = r.astype(np.float32)
_safetensors.write(os.path.join(out, "io.safetensors"), io)
config = {
    "name": "ape_branching_selfmha_positions" if which == "branching"
            else "ape_%s_algebraic" % which,
    "module": name,
    "source": "konstantinosKokos/ape eval/models/%s"
              % {"tree": "tree/algebraic.py", "mt": "nmt/algebraic.py",
                 "branching": "tree/algebraic.py's attention (assembled, "
                              "see scripts/ape-golden.py)"}.get(
                  which, "image/cct.py (assembled, see scripts/ape-golden.py)"),
    "kwargs": kwargs,
    "call": {"distance_decay": 0.98} if which == "branching" else {},
    "inputs": {k: {"shape": list(v.shape),
                   "dtype": "float32" if v.dtype == np.float32 else "int64"}
               for k, v in inputs.items()},
    "outputs": {n: {"shape": list(r.shape), "dtype": "float32"}
                for n, r in zip(names, results)},
    "tolerance": {"rtol": 1e-4, "atol": 5e-5},
    "generation": {"seed": seed, "float64_deviation": dev,
                   "torch": torch.__version__},
}
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f, indent=1)
print("wrote %s: %s, float32 vs float64 %.3g"
      % (out, ", ".join("%s %s" % (n, list(r.shape))
                        for n, r in zip(names, results)), dev))
