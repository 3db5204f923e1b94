"""Shared helpers of the independent float64 references (no numpy).

load(path) -> {name: (shape, values)} for F32 and I64 safetensors tensors;
compare(name, got, want) checks |got - want| <= 1e-4 + 1e-4 |want| element
by element and exits non-zero on any mismatch (or a size mismatch);
linear(x, w, b, n_out) is x·wᵀ + b for one vector and a flat [n_out, in] w;
layer_norm(v, w, b) is LayerNorm with eps 1e-5 and the biased variance.
"""
import json
import math
import struct
import sys

FORMATS = {"F32": ("f", 4), "I64": ("q", 8)}


def load(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        code, size = FORMATS[e["dtype"]]
        b, end = e["data_offsets"]
        count = (end - b) // size
        out[name] = (e["shape"], struct.unpack("<%d%s" % (count, code), data[b:end]))
    return out


def compare(name, got, want):
    bad = [(n, a, w) for n, (a, w) in enumerate(zip(got, want))
           if not abs(a - w) <= 1e-4 + 1e-4 * abs(w)]
    worst = max((abs(a - w) for a, w in zip(got, want)), default=0.0)
    print("%s: %d values, max abs error %.3g, %d mismatches"
          % (name, len(want), worst, len(bad)))
    if len(got) != len(want) or bad:
        if len(got) != len(want):
            print("  got %d values, want %d" % (len(got), len(want)))
        for n, a, w in bad[:5]:
            print("  element %d: got %.7g want %.7g" % (n, a, w))
        sys.exit(1)


def linear(x, w, b, n_out):
    n_in = len(x)
    return [sum(x[i] * w[o * n_in + i] for i in range(n_in)) + (b[o] if b else 0.0)
            for o in range(n_out)]


def layer_norm(v, w, b):
    m = sum(v) / len(v)
    var = sum((t - m) ** 2 for t in v) / len(v)
    return [(t - m) / math.sqrt(var + 1e-5) * wi + bi for t, wi, bi in zip(v, w, b)]
