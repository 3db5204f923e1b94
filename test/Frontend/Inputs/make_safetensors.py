#!/usr/bin/env python3
"""Writes a float32 safetensors file for the frontend tests (no numpy).

usage: make_safetensors.py OUT NAME=DxD... [NAME=DxD=v,v,...] [--truncate N]
                           [--tied a,b] [--random SEED]
Values are a fixed ramp (0.01 * index), or with --random uniform in
[-0.5, 0.5) from a seeded generator; files are reproducible either way.
NAME=DxD=v,v,... writes the given integers as an int64 tensor.
"""
import json
import random
import struct
import sys


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    truncate, tied, seed = None, [], None
    tensors = []
    i = 0
    while i < len(specs):
        s = specs[i]
        if s == "--truncate":
            truncate = int(specs[i + 1]); i += 2; continue
        if s == "--random":
            seed = int(specs[i + 1]); i += 2; continue
        if s == "--tied":
            tied.append(specs[i + 1].split(",")); i += 2; continue
        name, shape, *ints = s.split("=")
        dims = [int(d) for d in shape.split("x")] if shape else []
        tensors.append((name, dims, [int(v) for v in ints[0].split(",")]
                        if ints else None))
        i += 1
    header, data = {}, b""
    if tied:
        header["__metadata__"] = {"tied": json.dumps(tied)}
    for name, dims, ints in sorted(tensors):
        n = 1
        for d in dims:
            n *= d
        if ints is not None:
            assert len(ints) == n, "%s: %d values for %d elements" % (
                name, len(ints), n)
            blob = struct.pack("<%dq" % n, *ints)
            header[name] = {"dtype": "I64", "shape": dims,
                            "data_offsets": [len(data), len(data) + len(blob)]}
            data += blob
            continue
        if seed is None:
            values = [0.01 * k for k in range(n)]
        else:
            rng = random.Random("%d/%s" % (seed, name))
            values = [rng.random() - 0.5 for _ in range(n)]
        blob = struct.pack("<%df" % n, *values)
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
