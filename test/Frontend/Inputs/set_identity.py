#!/usr/bin/env python3
"""Overwrites float32 tensor NAME ([..., d, d]) of a safetensors file with
identity matrices, in place (APE's frozen `positional_encoder.identity`).

usage: set_identity.py FILE NAME
"""
import json
import struct
import sys

path, name = sys.argv[1], sys.argv[2]
raw = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
entry = json.loads(raw[8:8 + n])[name]
d = entry["shape"][-1]
begin, end = entry["data_offsets"]
count = (end - begin) // 4
values = [1.0 if (k % (d * d)) // d == k % d else 0.0 for k in range(count)]
raw[8 + n + begin:8 + n + end] = struct.pack("<%df" % count, *values)
open(path, "wb").write(bytes(raw))
