#!/usr/bin/env python3
"""Writes an Attention test case: DIR/config.json, DIR/w.safetensors and
DIR/io.safetensors, with seeded uniform values in [-0.5, 0.5) and the input
scaled by SCALE (a large SCALE makes large logits).

usage: attention_case.py DIR B L HEADS KV_HEADS HEAD_DIM CAUSAL(0|1) SCALE
"""
import json
import random
import struct
import sys


def write(path, tensors):
    header, data = {}, b""
    for name, shape, values in tensors:
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)


def rand(name, n, scale=1.0):
    rng = random.Random(name)
    return [scale * (rng.random() - 0.5) for _ in range(n)]


out, B, L, H, Hkv, hd, causal, scale = sys.argv[1], *map(int, sys.argv[2:8]), float(sys.argv[8])
D = H * hd
json.dump({"module": "Attention",
           "kwargs": {"d_model": D, "n_heads": H, "n_kv_heads": Hkv, "dropout": 0.0},
           "call": {"is_causal": bool(causal)},
           "inputs": {"x": {"shape": [B, L, D]}},
           "outputs": {"y": {"shape": [B, L, D]}}}, open(out + "/config.json", "w"))
write(out + "/w.safetensors", [
    ("wq.weight", [D, D], rand("wq", D * D)),
    ("wk.weight", [Hkv * hd, D], rand("wk", Hkv * hd * D)),
    ("wv.weight", [Hkv * hd, D], rand("wv", Hkv * hd * D)),
    ("wo.weight", [D, D], rand("wo", D * D))])
write(out + "/io.safetensors", [("input.x", [B, L, D], rand("x", B * L * D, scale))])
