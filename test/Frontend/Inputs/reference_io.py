"""Shared helpers of the independent float64 references (no numpy).

load(path) -> {name: (shape, values)} for F32 and I64 safetensors tensors;
compare(name, got, want) checks |got - want| <= 1e-4 + 1e-4 |want| element
by element and exits non-zero on any mismatch (or a size mismatch).
"""
import json
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
