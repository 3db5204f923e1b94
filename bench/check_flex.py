#!/usr/bin/env python3
"""Checks the FlexAttention baseline (dat_torch._flex_attention, run.py's
"flex" variant of standard attention) against
F.scaled_dot_product_attention: no mask, causal, an explicit boolean mask,
and both, in float32 (to 1e-5) and bfloat16 (to 2^-5 of the output's
scale). FlexAttention runs uncompiled here (its compiled CPU kernels need
AVX2 in inductor; on the GPU machine run.py compiles it).

usage: check_flex.py    (needs torch >= 2.5)
"""
import os
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import flex_attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dat_torch  # noqa: E402


def main():
    warnings.filterwarnings("ignore", category=UserWarning)  # "uncompiled"
    torch.manual_seed(0)
    ok = True
    for causal in (False, True):
        for masked in (False, True):
            for dtype, limit in ((torch.float32, 1e-5), (torch.bfloat16, 2.0 ** -5)):
                q, k, v = (torch.randn(2, 4, 40, 16).to(dtype) for _ in range(3))
                mask = None
                if masked:  # every row keeps its diagonal: no empty rows
                    mask = (torch.rand(40, 40) > 0.3) | torch.eye(40, dtype=torch.bool)
                dat_torch._FLEX.clear()
                dat_torch._FLEX["fn"] = flex_attention
                got = dat_torch._flex_attention(q, k, v, mask, causal, 0.25).float()
                full = mask if mask is not None else torch.ones(40, 40, dtype=torch.bool)
                if causal:
                    full = full.tril()
                want = F.scaled_dot_product_attention(
                    q.float(), k.float(), v.float(), attn_mask=full, scale=0.25)
                err = float((got - want).abs().max() / want.abs().max())
                good = err <= limit
                ok &= good
                print("%s causal=%s mask=%s %s: max relative error %.2g" % (
                    "PASS" if good else "FAIL", causal, masked,
                    str(dtype).split(".")[1], err))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
