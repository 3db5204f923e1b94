#!/usr/bin/env python3
"""Writes seeded N(0, 1) float32 inputs for a model config.

usage: random_inputs.py CONFIG.json OUT.safetensors [SEED]

Every input of the config (float32 only) as input.<name>. Python's
standard library only.
"""
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "bench"))
import safetensors_io  # noqa: E402


def main():
    config, out = sys.argv[1], sys.argv[2]
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    tensors = {}
    for name, spec in json.load(open(config))["inputs"].items():
        if spec.get("dtype", "float32") != "float32":
            sys.exit("random_inputs.py: input %s is not float32" % name)
        count = 1
        for n in spec["shape"]:
            count *= n
        data = struct.pack("<%df" % count,
                           *(rng.gauss(0.0, 1.0) for _ in range(count)))
        tensors["input." + name] = ("F32", spec["shape"], data)
    safetensors_io.write(out, tensors)


if __name__ == "__main__":
    main()
