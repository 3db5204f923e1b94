#!/usr/bin/env python3
"""Sets element INDEX of float32 tensor NAME of a safetensors file to VALUE
(a float, nan, inf or -inf), in place.

usage: set_value.py FILE NAME INDEX VALUE
"""
import json
import struct
import sys

path, name, index, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
raw = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
begin = json.loads(raw[8:8 + n])[name]["data_offsets"][0]
at = 8 + n + begin + 4 * index
raw[at:at + 4] = struct.pack("<f", value)
open(path, "wb").write(bytes(raw))
