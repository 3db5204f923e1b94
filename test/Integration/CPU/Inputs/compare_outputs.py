#!/usr/bin/env python3
"""Compares two programs' float32 outputs element by element.

usage: compare_outputs.py REFERENCE.safetensors RESULT.safetensors TOLERANCE

For each output.<name> of the reference: how many of the result's values
lie within TOLERANCE times the reference's largest magnitude. Prints
"<name>: K of N within T of max |ref| = M"; exits non-zero where any value
does not, where a tensor is missing or its shape differs, or where the
reference is all zeros (a vacuous comparison). Python's standard library
only.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "bench"))
import safetensors_io  # noqa: E402


def values(entry):
    dtype, shape, data = entry
    if dtype != "F32":
        sys.exit("compare_outputs.py: %s tensors are not compared" % dtype)
    return shape, struct.unpack("<%df" % (len(data) // 4), data)


def main():
    ref, got, tol = (safetensors_io.read(sys.argv[1]),
                     safetensors_io.read(sys.argv[2]), float(sys.argv[3]))
    failed = False
    for name in sorted(ref):
        if not name.startswith("output."):
            continue
        if name not in got:
            print("%s: missing from %s" % (name, sys.argv[2]))
            failed = True
            continue
        shape, want = values(ref[name])
        got_shape, have = values(got[name])
        if shape != got_shape:
            print("%s: shape %s, expected %s" % (name, got_shape, shape))
            failed = True
            continue
        scale = max(abs(v) for v in want)
        within = sum(abs(a - b) <= tol * scale for a, b in zip(want, have))
        print("%s: %d of %d within %g of max |ref| = %g" % (
            name[len("output."):], within, len(want), tol, scale))
        failed |= scale == 0 or within != len(want)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
