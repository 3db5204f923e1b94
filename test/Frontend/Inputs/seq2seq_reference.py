#!/usr/bin/env python3
"""Independent float64 reference for Seq2SeqTransformer (spec section 7.4)
with token or vector embedders, EncoderBlock / DecoderBlock (sections 6.1, 2) and
LayerNorm, pre- or post-norm, relu or gelu FFNs.

usage: seq2seq_reference.py CONFIG MODEL.safetensors IO.safetensors RESULT.safetensors
"""
import json
import math
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from reference_io import compare, layer_norm, linear, load  # noqa: E402


def act(name, t):
    if name == "relu":
        return max(t, 0.0)
    return 0.5 * t * (1 + math.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3)))


def main():
    cfg = json.load(open(sys.argv[1]))
    W, io, res = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
    kw = cfg["kwargs"]
    D = kw["d_model"]
    g = lambda k: W[k][1] if k in W else None

    def attention(q_in, kv_in, prefix, heads, causal):
        dh = D // heads
        q = [linear(v, g(prefix + "wq.weight"), None, D) for v in q_in]
        k = [linear(v, g(prefix + "wk.weight"), None, D) for v in kv_in]
        v = [linear(u, g(prefix + "wv.weight"), None, D) for u in kv_in]
        out = []
        for i in range(len(q)):
            o = [0.0] * D
            for h in range(heads):
                s = [sum(q[i][h * dh + e] * k[j][h * dh + e] for e in range(dh)) / math.sqrt(dh)
                     if not causal or j <= i else -math.inf for j in range(len(k))]
                top = max(s)
                ex = [math.exp(t - top) for t in s]
                a = [t / sum(ex) for t in ex]
                for e in range(dh):
                    o[h * dh + e] = sum(a[j] * v[j][h * dh + e] for j in range(len(k)))
            out.append(linear(o, g(prefix + "wo.weight"), g(prefix + "wo.bias"), D))
        return out

    def ffn(x, prefix, bk):
        h = [[act(bk["activation"], t) for t in linear(v, g(prefix + "ff_block.linear1.weight"),
                                                        g(prefix + "ff_block.linear1.bias"), bk["dff"])]
             for v in x]
        return [linear(v, g(prefix + "ff_block.linear2.weight"), g(prefix + "ff_block.linear2.bias"), D)
                for v in h]

    def sub(x, norm, bk, f):
        if bk.get("norm_first", False):
            n = [layer_norm(v, g(norm + ".weight"), g(norm + ".bias")) for v in x]
            return [[a + b for a, b in zip(u, w)] for u, w in zip(x, f(n))]
        return [layer_norm([a + b for a, b in zip(u, w)], g(norm + ".weight"), g(norm + ".bias"))
                for u, w in zip(x, f(x))]

    def embed(spec, rows, name, pe):
        if spec.get("type", "token") == "token":
            vecs = [g(name + ".weight")[t * D:(t + 1) * D] for t in rows]
        else:
            vecs = [linear(r, g(name + ".weight"), g(name + ".bias"), D) for r in rows]
        return [[v[c] * math.sqrt(D) + pe[i * D + c] for c in range(D)]
                for i, v in enumerate(vecs)]

    def sequence(name, b):  # token ids, or feature vectors, of batch row b
        shape, values = io["input." + name]
        L = shape[1]
        if len(shape) == 2:
            return L, list(values[b * L:(b + 1) * L])
        k = shape[2]
        return L, [list(values[(b * L + i) * k:(b * L + i + 1) * k]) for i in range(L)]

    B = io["input.x"][0][0]
    ek, dk = kw["encoder_kwargs"], kw["decoder_kwargs"]
    want = []
    for b in range(B):
        Ls, xs = sequence("x", b)
        Lt, ys = sequence("y", b)
        x = embed(kw["input_spec"], xs, "layers.source_embedder",
                  g("layers.source_pos_embedder.pe"))
        y = embed(kw["output_spec"], ys, "layers.target_embedder",
                  g("layers.target_pos_embedder.pe"))
        for l in range(kw["n_layers_enc"]):
            p = "layers.encoder_blocks.%d." % l
            x = sub(x, p + "norm1", ek, lambda h: attention(h, h, p + "self_attn.", ek["n_heads"],
                                                            ek.get("causal", False)))
            x = sub(x, p + "norm2", ek, lambda h: ffn(h, p, ek))
        for l in range(kw["n_layers_dec"]):
            p = "layers.decoder_blocks.%d." % l
            y = sub(y, p + "norm1", dk, lambda h: attention(h, h, p + "self_attn.", dk["n_heads"],
                                                            dk.get("causal", False)))
            y = sub(y, p + "norm2", dk, lambda h: attention(h, x, p + "cross_attn.", dk["n_heads"],
                                                            False))
            y = sub(y, p + "norm3", dk, lambda h: ffn(h, p, dk))
        rows = y if res["output.logits"][0][1] == Lt else y[-1:]
        for v in rows:
            want += linear(v, g("layers.final_out.weight"), g("layers.final_out.bias"), kw["out_dim"])
    compare("logits", res["output.logits"][1], want)
    print("matches the independent reference")


if __name__ == "__main__":
    main()
