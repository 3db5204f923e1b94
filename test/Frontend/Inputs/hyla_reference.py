#!/usr/bin/env python3
"""Independent float64 reference for HYLA's MultiHeadDotProductAttention
(spec section 8.2), self-attention, no mask/bias inputs.

usage: hyla_reference.py CONFIG MODEL.safetensors IO.safetensors RESULT.safetensors
"""
import json
import math
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from reference_io import compare, load  # noqa: E402


def main():
    cfg = json.load(open(sys.argv[1]))
    W, io, res = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
    kw = cfg["kwargs"]
    causal = cfg.get("call", {}).get("causal_mask", False)
    (B, L, E), xs = io["input.x"][0], io["input.x"][1]
    H = kw["num_heads"]
    dq = (kw.get("qk_features") or E) // H
    dv = kw["v_features"] // H
    F = kw.get("out_features") or E
    bias = kw.get("use_bias", True)
    norm, net = kw.get("attention_norm", "softmax"), kw.get("target_network", "default")
    g = lambda k: W[k][1] if k in W else None

    def dense(x, name, d):  # x [E] -> [H][d]; kernel [E,H,d], bias [H,d]
        k, b = g(name + ".kernel"), g(name + ".bias") if bias else None
        return [[sum(x[e] * k[(e * H + h) * d + c] for e in range(E)) + (b[h * d + c] if b else 0.0)
                 for c in range(d)] for h in range(H)]

    def ln(v, scale):
        m = sum(v) / len(v)
        var = max(0.0, sum(t * t for t in v) / len(v) - m * m)
        return [(t - m) / math.sqrt(var + 1e-6) * s for t, s in zip(v, scale)]

    want = []
    for b in range(B):
        x = [xs[(b * L + i) * E:(b * L + i + 1) * E] for i in range(L)]
        q = [dense(v, "query", dq) for v in x]
        k = [dense(v, "key", dq) for v in x]
        v = [dense(t, "value", dv) for t in x]
        if kw.get("normalize_qk"):
            q = [[ln(q[i][h], g("query_ln.scale")) for h in range(H)] for i in range(L)]
            k = [[ln(k[i][h], g("key_ln.scale")) for h in range(H)] for i in range(L)]
        s = [[[sum(q[i][h][c] / math.sqrt(dq) * k[j][h][c] for c in range(dq))
               for j in range(L)] for i in range(L)] for h in range(H)]
        for h in range(H):
            for i in range(L):
                for j in range(L):
                    if causal and j > i:
                        s[h][i][j] = -3.4028234663852886e38 if norm == "softmax" else 0.0
        if norm == "softmax":
            for h in range(H):
                for i in range(L):
                    m = max(s[h][i])
                    e = [math.exp(t - m) for t in s[h][i]]
                    s[h][i] = [t / sum(e) for t in e]
        elif norm == "rms_head":
            for i in range(L):
                for j in range(L):
                    r = 1 / math.sqrt(sum(s[h][i][j] ** 2 for h in range(H)) / H + 1e-6)
                    for h in range(H):
                        s[h][i][j] *= r
        o = [[[0.0] * dv for _ in range(H)] for _ in range(L)]
        for i in range(L):
            if net == "default":
                for h in range(H):
                    for c in range(dv):
                        o[i][h][c] = sum(s[h][i][j] * v[j][h][c] for j in range(L))
            else:
                z = [[sum(s[h][i][j] * v[j][h][c] for h in range(H)) for c in range(dv)]
                     for j in range(L)]
                if net == "mlp_relu":
                    z = [[max(t, 0.0) for t in row] for row in z]
                for h in range(H):
                    for c in range(dv):
                        o[i][h][c] = sum(s[h][i][j] * z[j][c] for j in range(L))
        ko, bo = g("out.kernel"), g("out.bias") if bias else None
        for i in range(L):
            for f in range(F):
                want.append(sum(o[i][h][c] * ko[(h * dv + c) * F + f]
                                for h in range(H) for c in range(dv)) + (bo[f] if bo else 0.0))
    compare("y", res["output.y"][1], want)
    print("matches the independent reference")


if __name__ == "__main__":
    main()
