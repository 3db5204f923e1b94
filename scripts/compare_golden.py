#!/usr/bin/env python3
"""Compares a program's outputs with a golden case, like `datc check`.

usage: compare_golden.py CONFIG.json IO.safetensors RESULT.safetensors

For the GPU machine, which has no datc: every `output.<name>` of the case
(config.json's outputs) must match within the case's tolerance
(|got - want| <= atol + rtol*|want|). Prints one line per output and ends
with `PASS <case>` or `FAIL <case>`; exit status 0 only on PASS. Python's
standard library only.
"""
import array
import json
import math
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        if info["dtype"] != "F32":
            continue
        values = array.array("f")
        values.frombytes(data[base + begin:base + end])
        if sys.byteorder != "little":
            values.byteswap()
        out[key] = (tuple(info["shape"]), values)
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    config = json.load(open(sys.argv[1]))
    want, got = load(sys.argv[2]), load(sys.argv[3])
    tol = config.get("tolerance", {})
    rtol, atol = tol.get("rtol", 1e-4), tol.get("atol", 1e-5)
    name = config.get("name", sys.argv[1])
    ok = True
    for out in config["outputs"]:
        key = "output." + out
        if key not in want or key not in got or got[key][0] != want[key][0]:
            print(f"  {out}: missing or of the wrong shape")
            ok = False
            continue
        bad, worst = 0, 0.0
        for g, w in zip(got[key][1], want[key][1]):
            if math.isnan(g) or math.isnan(w):
                good = math.isnan(g) and math.isnan(w)
            elif math.isinf(g) or math.isinf(w):
                good = g == w
            else:
                err = abs(g - w)
                worst = max(worst, err)
                good = err <= atol + rtol * abs(w)
            bad += not good
        print(f"  {out}: {bad} of {len(want[key][1])} outside tolerance "
              f"(rtol {rtol:g}, atol {atol:g}); max abs error {worst:.3g}")
        ok = ok and bad == 0
    print(("PASS " if ok else "FAIL ") + name)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
