#!/usr/bin/env python3
"""Writes a float32 safetensors file for the frontend tests (no numpy).

usage: make_safetensors.py OUT NAME=DxD... [NAME=...] [--truncate N] [--tied a,b]
Values are a fixed ramp (0.01 * index), so files are reproducible.
"""
import json
import struct
import sys


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    truncate, tied = None, []
    tensors = []
    i = 0
    while i < len(specs):
        s = specs[i]
        if s == "--truncate":
            truncate = int(specs[i + 1]); i += 2; continue
        if s == "--tied":
            tied.append(specs[i + 1].split(",")); i += 2; continue
        name, shape = s.split("=")
        dims = [int(d) for d in shape.split("x")] if shape else []
        tensors.append((name, dims))
        i += 1
    header, data = {}, b""
    if tied:
        header["__metadata__"] = {"tied": json.dumps(tied)}
    for name, dims in sorted(tensors):
        n = 1
        for d in dims:
            n *= d
        blob = struct.pack("<%df" % n, *[0.01 * k for k in range(n)])
        header[name] = {"dtype": "F32", "shape": dims,
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    raw = struct.pack("<Q", len(text)) + text + data
    if truncate is not None:
        raw = raw[:truncate]
    open(out, "wb").write(raw)


if __name__ == "__main__":
    main()
