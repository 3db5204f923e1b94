#!/usr/bin/env python3
"""Independent float64 reference for RelationalAttention (spec section 3).

usage: ra_reference.py CONFIG MODEL.safetensors IO.safetensors RESULT.safetensors

Recomputes the module from the config's kwargs and the weights with plain
Python loops and compares every element of output.y with the program's
result (|got - want| <= 1e-4 + 1e-4 |want|). Covers the kwargs the golden
cases leave at their defaults: n_relations, rel_proj_dim, n_kv_heads,
key_dim, biases, every rel_activation, symmetric_rels, causal, and
position-relative symbols given whole ([L, L, d_model], shared by the batch).
"""
import json
import math
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from reference_io import compare, load  # noqa: E402


def linear(x, w, b, n_out):
    """x: list of vectors; w: flat [out, in]."""
    n_in = len(x[0])
    return [[sum(v[i] * w[o * n_in + i] for i in range(n_in)) + (b[o] if b else 0.0)
             for o in range(n_out)] for v in x]


def act(name, v):
    if name == "relu":
        return max(v, 0.0)
    if name == "sigmoid":
        return 1 / (1 + math.exp(-v))
    if name == "tanh":
        return math.tanh(v)
    if name == "silu":
        return v / (1 + math.exp(-v))
    if name == "gelu":
        return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    return v


def main():
    cfg = json.load(open(sys.argv[1]))
    W, io, res = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
    kw, causal = cfg["kwargs"], cfg.get("call", {}).get("is_causal", False)
    D, H = kw["d_model"], kw["n_heads"]
    hd = D // kw.get("total_n_heads", H)
    kd = kw.get("key_dim") or hd
    Hkv = kw.get("n_kv_heads") or H
    R = kw.get("n_relations") or H
    dr = kw.get("rel_proj_dim") or (hd * H) // R
    a_name = kw.get("rel_activation", "identity")
    bkv = kw.get("add_bias_kv", False)
    bo = kw.get("add_bias_out", False)
    g = lambda k: W[k][1] if k in W else None
    (B, L, _), xs = io["input.x"][0], io["input.x"][1]
    ss = io["input.symbols"][1]
    per_pair = kw.get("use_relative_positional_symbols", False)
    if per_pair:  # sv[i][j] = wv(symbols[i, j])
        svp = [linear([list(ss[(i * L + j) * D:(i * L + j + 1) * D]) for j in range(L)],
                      g("wv.weight"), g("wv.bias") if bkv else None, Hkv * hd)
               for i in range(L)]
    want = []
    for b in range(B):
        x = [list(xs[(b * L + i) * D:(b * L + i + 1) * D]) for i in range(L)]
        s = x if per_pair else [list(ss[(b * L + i) * D:(b * L + i + 1) * D]) for i in range(L)]
        qa = linear(x, g("wq_attn.weight"), None, H * kd)
        ka = linear(x, g("wk_attn.weight"), g("wk_attn.bias") if bkv else None, Hkv * kd)
        qr = linear(x, g("wq_rel.weight"), None, R * dr)
        wk_rel = g("wq_rel.weight") if kw.get("symmetric_rels") else g("wk_rel.weight")
        kr = linear(x, wk_rel, None, R * dr)
        sv = None if per_pair else linear(s, g("wv.weight"), g("wv.bias") if bkv else None,
                                          Hkv * hd)
        rel = [[[sum(qr[i][l * dr + c] * kr[j][l * dr + c] for c in range(dr)) / math.sqrt(dr)
                 for l in range(R)] for j in range(L)] for i in range(L)]
        if a_name == "softmax":  # over keys j, for each (i, l)
            for i in range(L):
                for l in range(R):
                    m = max(rel[i][j][l] for j in range(L))
                    e = [math.exp(rel[i][j][l] - m) for j in range(L)]
                    for j in range(L):
                        rel[i][j][l] = e[j] / sum(e)
        else:
            rel = [[[act(a_name, v) for v in r] for r in row] for row in rel]
        wr = g("wr")
        o = [[0.0] * (H * hd) for _ in range(L)]
        for h in range(H):
            gk = h // (H // Hkv)
            for i in range(L):
                sc = [sum(qa[i][h * kd + c] * ka[j][gk * kd + c] for c in range(kd)) / math.sqrt(hd)
                      if (not causal or j <= i) else None for j in range(L)]
                m = max(v for v in sc if v is not None)
                e = [0.0 if v is None else math.exp(v - m) for v in sc]
                alpha = [v / sum(e) for v in e]
                for d in range(hd):
                    sym = (lambda j: svp[i][j][gk * hd + d]) if per_pair else (
                        lambda j: sv[j][gk * hd + d])
                    o[i][h * hd + d] = sum(alpha[j] * sym(j) for j in range(L)) + sum(
                        sum(alpha[j] * rel[i][j][l] for j in range(L)) * wr[(h * hd + d) * R + l]
                        for l in range(R))
        y = linear(o, g("wo.weight"), g("wo.bias") if bo else None, H * hd)
        for row in y:
            want.extend(row)
    compare("y", res["output.y"][1], want)
    print("matches the independent reference")


if __name__ == "__main__":
    main()
