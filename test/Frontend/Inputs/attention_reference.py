#!/usr/bin/env python3
"""Independent float64 reference for dual_attention's Attention (spec section
2, self-attention) and SymbolicAttention (section 4.1).

usage: attention_reference.py CONFIG MODEL.safetensors IO.safetensors RESULT.safetensors

Attention: key_dim, n_kv_heads, total_n_heads, add_bias_kv, add_bias_out,
is_causal or input.attn_mask, RoPE from input.freqs_cos/sin; compares
output.y and, when present, output.attn_scores. SymbolicAttention: n_heads,
n_symbols and scale; compares output.symbols.
"""
import json
import math
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from reference_io import compare, linear, load  # noqa: E402


def softmax(s):
    top = max(s)
    if top == -math.inf:
        return [0.0] * len(s)
    e = [math.exp(t - top) for t in s]
    return [t / sum(e) for t in e]


def rope(v, i, cos, sin, half):  # interleaved pairs (2m, 2m+1)
    out = list(v)
    for m in range(half):
        c, s = cos[i * half + m], sin[i * half + m]
        a, b = v[2 * m], v[2 * m + 1]
        out[2 * m], out[2 * m + 1] = a * c - b * s, a * s + b * c
    return out


def main():
    cfg = json.load(open(sys.argv[1]))
    W, io, res = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
    kw = cfg["kwargs"]
    g = lambda k: W[k][1] if k in W else None
    (B, L, D), xs = io["input.x"][0], io["input.x"][1]
    x = [[list(xs[(b * L + i) * D:(b * L + i + 1) * D]) for i in range(L)] for b in range(B)]

    if cfg["module"] == "SymbolicAttention":
        H, S = kw["n_heads"], kw["n_symbols"]
        dh = D // H
        c = kw.get("scale") or 1 / math.sqrt(dh)
        keys, vals = g("template_features"), g("symbol_library")
        want = []
        for b in range(B):
            for i in range(L):
                q = linear(x[b][i], g("q_proj.weight"), g("q_proj.bias"), D)
                for h in range(H):
                    a = softmax([c * sum(q[h * dh + e] * keys[s * D + h * dh + e]
                                         for e in range(dh)) for s in range(S)])
                    want += [sum(a[s] * vals[s * D + h * dh + e] for s in range(S))
                             for e in range(dh)]
        compare("symbols", res["output.symbols"][1], want)
        print("matches the independent reference")
        return

    H = kw["n_heads"]
    hd = D // kw.get("total_n_heads", H)
    kd = kw.get("key_dim") or hd
    Hkv = kw.get("n_kv_heads") or H
    bkv, bo = kw.get("add_bias_kv", False), kw.get("add_bias_out", False)
    causal = cfg.get("call", {}).get("is_causal", False)
    mask = io.get("input.attn_mask")
    cos, sin = io.get("input.freqs_cos"), io.get("input.freqs_sin")
    scale = 1 / math.sqrt(hd)  # head_dim, even when key_dim differs
    want_y, want_p = [], []
    probs = [[[None] * L for _ in range(H)] for _ in range(B)]
    for b in range(B):
        q = [linear(x[b][i], g("wq.weight"), None, H * kd) for i in range(L)]
        k = [linear(x[b][i], g("wk.weight"), g("wk.bias") if bkv else None, Hkv * kd)
             for i in range(L)]
        v = [linear(x[b][i], g("wv.weight"), g("wv.bias") if bkv else None, Hkv * hd)
             for i in range(L)]
        o = [[0.0] * (H * hd) for _ in range(L)]
        for h in range(H):
            gk = h // (H // Hkv)
            for i in range(L):
                qi = q[i][h * kd:(h + 1) * kd]
                if cos:
                    qi = rope(qi, i, cos[1], sin[1], kd // 2)
                s = []
                for j in range(L):
                    kj = k[j][gk * kd:(gk + 1) * kd]
                    if cos:
                        kj = rope(kj, j, cos[1], sin[1], kd // 2)
                    ok = (not causal or j <= i) and (not mask or mask[1][i * L + j] != 0)
                    s.append(scale * sum(a * c for a, c in zip(qi, kj)) if ok else -math.inf)
                p = softmax(s)
                probs[b][h][i] = p
                for e in range(hd):
                    o[i][h * hd + e] = sum(p[j] * v[j][gk * hd + e] for j in range(L))
        for i in range(L):
            want_y += linear(o[i], g("wo.weight"), g("wo.bias") if bo else None, H * hd)
    compare("y", res["output.y"][1], want_y)
    if "output.attn_scores" in res:
        compare("attn_scores", res["output.attn_scores"][1],
                [t for b in probs for h in b for row in h for t in row])
    print("matches the independent reference")


if __name__ == "__main__":
    main()
