#!/usr/bin/env python3
"""Checks a program compiled once with dynamic dimensions against programs
compiled for each shape (an independent path: static shapes are what every
golden case checks), at several sizes of those dimensions.

usage: dynamic_dims.py DATC WORKDIR CONFIG NAME=v,v,... [NAME=v,v,...]
    e.g. dynamic_dims.py datc /tmp/w dyn.json batch=1,2,3 seq=1,37,200

Sizes are taken pairwise (the i-th of each list; a list of one is used
for every case). The config's dynamic_dims are replaced by the sizes in a
static copy of it; inputs are seeded random floats (token ids below 10
for int64 inputs). Prints one line per case and exits 1 on the first
disagreement beyond 1e-5 relative to the output's largest magnitude.
Standard library only.
"""
import json
import os
import random
import struct
import subprocess
import sys


def write_inputs(path, tensors):
    """{name: (dtype, shape, values)}, F32 or I64, as a safetensors file."""
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, values) in sorted(tensors.items()):
        blob = struct.pack("<%d%s" % (len(values), "q" if dtype == "I64"
                                      else "f"), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_outputs(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[name] = (v["shape"], struct.unpack("<%df" % ((b - a) // 4),
                                               data[8 + n + a:8 + n + b]))
    return out


def main():
    datc, work, config_path = sys.argv[1:4]
    sizes = {}
    for arg in sys.argv[4:]:
        name, values = arg.split("=")
        sizes[name] = [int(v) for v in values.split(",")]
    cases = max(len(v) for v in sizes.values())
    config = json.load(open(config_path))
    dyn = os.path.join(work, "dynamic")
    subprocess.run([datc, "compile", config_path, "--random-weights", "7",
                    "-o", dyn], check=True)
    for case in range(cases):
        size = {k: v[min(case, len(v) - 1)] for k, v in sizes.items()}
        static = dict(config)
        static.pop("dynamic_dims")
        resolve = lambda shape: [size[d] if isinstance(d, str) else d
                                 for d in shape]
        static["inputs"] = {k: dict(v, shape=resolve(v["shape"]))
                            for k, v in config["inputs"].items()}
        static["outputs"] = {k: ({} if "shape" not in v else
                                 dict(v, shape=resolve(v["shape"])))
                             for k, v in config["outputs"].items()}
        tag = "_".join("%s%d" % kv for kv in sorted(size.items()))
        static_config = os.path.join(work, "static_%s.json" % tag)
        json.dump(static, open(static_config, "w"))
        prog = os.path.join(work, "static_%s" % tag)
        subprocess.run([datc, "compile", static_config, "--random-weights",
                        "7", "-o", prog], check=True)
        rng = random.Random(case)
        tensors = {}
        for name, spec in static["inputs"].items():
            shape = spec["shape"]
            count = 1
            for d in shape:
                count *= d
            if spec.get("dtype") == "int64":
                tensors["input." + name] = ("I64", shape,
                                            [rng.randrange(10) for _ in range(count)])
            else:
                tensors["input." + name] = ("F32", shape,
                                            [rng.uniform(-1, 1) for _ in range(count)])
        inputs = os.path.join(work, "in_%s.safetensors" % tag)
        write_inputs(inputs, tensors)
        results = []
        for p in (dyn, prog):
            out = p + "_%s.out" % tag
            subprocess.run([p, "--input", inputs, "--output", out], check=True,
                           stdout=subprocess.DEVNULL)
            results.append(read_outputs(out))
        for name in sorted(results[1]):
            (sa, va), (sb, vb) = results[0][name], results[1][name]
            scale = max(abs(x) for x in vb) or 1.0
            err = max(abs(x - y) for x, y in zip(va, vb)) / scale
            if sa != sb or err > 1e-5:
                print("FAIL %s %s: dynamic %s, static %s, error %.3g"
                      % (tag, name, sa, sb, err))
                return 1
            print("ok %s %s %s" % (tag, name, sa))
    return 0


if __name__ == "__main__":
    sys.exit(main())
