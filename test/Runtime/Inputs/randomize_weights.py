#!/usr/bin/env python3
"""Rewrites a program's weights file (safetensors, float32 or bfloat16) with seeded
uniform values in [-0.35, 0.35), so that a model built with datc's
--random-weights (small, near-degenerate values) makes varied predictions.
Tensors whose names start with a --keep prefix (derived tables such as the
RoPE tables) are copied unchanged. Tied weights are stored once, so they
stay tied.

usage: randomize_weights.py IN OUT SEED [--keep PREFIX]...
"""
import json
import random
import struct
import sys

src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
keep = [sys.argv[i + 1] for i in range(4, len(sys.argv) - 1) if sys.argv[i] == "--keep"]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = bytearray(raw[8 + n:])
for name, e in header.items():
    if name == "__metadata__" or any(name.startswith(k) for k in keep):
        continue
    b, end = e["data_offsets"]
    rng = random.Random("%d/%s" % (seed, name))
    if e["dtype"] == "BF16":  # the top half of each float32 (truncated)
        count = (end - b) // 2
        values = struct.pack("<%df" % count, *[0.7 * (rng.random() - 0.5) for _ in range(count)])
        data[b:end] = b"".join(values[4 * i + 2:4 * i + 4] for i in range(count))
        continue
    count = (end - b) // 4
    data[b:end] = struct.pack("<%df" % count, *[0.7 * (rng.random() - 0.5) for _ in range(count)])
open(dst, "wb").write(raw[:8 + n] + bytes(data))
