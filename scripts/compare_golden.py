#!/usr/bin/env python3
"""Compares a program's outputs with a golden case, like `datc check`.

usage: compare_golden.py [--precision bf16] CONFIG.json IO.safetensors
                         RESULT.safetensors
       compare_golden.py --bf16-inputs IO.safetensors OUT.safetensors

For the GPU machine, which has no datc: every `output.<name>` of the case
(config.json's outputs) must match within the case's tolerance
(|got - want| <= atol + rtol*|want|), or for a bf16 program (BF16 outputs)
within datc check's bf16 tolerance, |got - want| <= 2^-4 (|want| +
rms(want)) (docs/precision.md). Prints one line per output and ends with
`PASS <case>` or `FAIL <case>`; exit status 0 only on PASS.
--bf16-inputs writes the case's input.* tensors with float32 ones rounded
to bfloat16 (to nearest, ties to even), the inputs of a bf16 program.
Python's standard library only.
"""
import array
import json
import math
import struct
import sys


BF16_TOLERANCE = 1.0 / 16


def read_header(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), data, 8 + n


def load(path):
    """Float tensors (F32 or BF16, as floats) by name: (shape, values)."""
    header, data, base = read_header(path)
    out = {}
    for key, info in header.items():
        if key == "__metadata__" or info["dtype"] not in ("F32", "BF16"):
            continue
        begin, end = info["data_offsets"]
        values = array.array("f" if info["dtype"] == "F32" else "H")
        values.frombytes(data[base + begin:base + end])
        if sys.byteorder != "little":
            values.byteswap()
        if info["dtype"] == "BF16":
            values = array.array("f", struct.unpack(
                f"<{len(values)}f",
                struct.pack(f"<{len(values)}I", *(h << 16 for h in values))))
        out[key] = (tuple(info["shape"]), values)
    return out


def to_bf16(bits):
    """float32 bits -> bfloat16 bits, to nearest, ties to even."""
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def write_bf16_inputs(io_path, out_path):
    header, data, base = read_header(io_path)
    tensors = []
    for key, info in sorted(header.items()):
        if not key.startswith("input."):
            continue
        begin, end = info["data_offsets"]
        raw, dtype = data[base + begin:base + end], info["dtype"]
        if dtype == "F32":
            bits = struct.unpack(f"<{len(raw) // 4}I", raw)
            raw = struct.pack(f"<{len(bits)}H", *(to_bf16(b) for b in bits))
            dtype = "BF16"
        tensors.append((key, dtype, info["shape"], raw))
    new_header, offset = {}, 0
    for key, dtype, shape, raw in tensors:
        new_header[key] = {"dtype": dtype, "shape": shape,
                           "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(new_header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(out_path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, _, raw in tensors:
            f.write(raw)


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--bf16-inputs":
        write_bf16_inputs(args[1], args[2])
        return
    bf16 = args[:2] == ["--precision", "bf16"]
    if bf16:
        args = args[2:]
    if len(args) != 3:
        sys.exit(__doc__)
    config = json.load(open(args[0]))
    want, got = load(args[1]), load(args[2])
    tol = config.get("tolerance", {})
    name = config.get("name", args[0])
    ok = True
    for out in config["outputs"]:
        key = "output." + out
        if key not in want or key not in got or got[key][0] != want[key][0]:
            print(f"  {out}: missing or of the wrong shape")
            ok = False
            continue
        rtol, atol = tol.get("rtol", 1e-4), tol.get("atol", 1e-5)
        if bf16:
            finite = [w for w in want[key][1] if math.isfinite(w)]
            rms = math.sqrt(sum(w * w for w in finite) / max(len(finite), 1))
            rtol = max(rtol, BF16_TOLERANCE)
            atol = max(atol, BF16_TOLERANCE * rms)
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
