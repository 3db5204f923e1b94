#!/usr/bin/env python3
"""Independent reference for test/Integration/CPU/exp.mlir.

Reads the bit patterns of x and exp(x) that mlir-runner printed (pairs of
i32 memrefs) and checks each result against exp(x) in float64, rounded to
float32: within 2 ulp of it where it is a normal float; exact where it is
1, 0 or +inf (exp(0), exp(-inf), overflow); NaN for NaN; zero or a
subnormal below 2^-126. Exits non-zero naming each failing input.
"""
import math
import re
import struct
import sys

SMALLEST_NORMAL = 2.0 ** -126


def as_float(bits):
    return struct.unpack("<f", struct.pack("<i", bits))[0]


def to_f32(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.inf


def ulp(y):
    return 2.0 ** (math.frexp(y)[1] - 24)


def check(x, y):
    """An error message, or None."""
    if math.isnan(x):
        return None if math.isnan(y) else "NaN gave %r" % y
    if math.isnan(y):
        return "NaN result"
    exact = math.exp(x) if x < 700 else math.inf
    want = to_f32(exact)
    if x == 0 or x == -math.inf or want == math.inf:
        return None if y == want else "want exactly %r" % want
    if y < 0:
        return "negative result %r" % y
    if exact < SMALLEST_NORMAL:
        return None if y <= SMALLEST_NORMAL else "want 0 or subnormal"
    err = abs(y - exact) / ulp(want)
    return None if err <= 2.0 else "%.2f ulp from %r" % (err, exact)


def main():
    arrays = [[int(v) for v in re.findall(r"-?\d+", body)]
              for body in re.findall(r"data =\s*\[([^\]]*)\]", sys.stdin.read())]
    if len(arrays) != 4 or len(arrays[0]) != 40000 or len(arrays[2]) != 37:
        sys.exit("expected 4 memrefs (40000, 40000, 37, 37 values), got %s"
                 % [len(a) for a in arrays])
    failures = 0
    worst = 0.0
    for xs, ys in ((arrays[0], arrays[1]), (arrays[2], arrays[3])):
        for xb, yb in zip(xs, ys):
            x, y = as_float(xb), as_float(yb)
            message = check(x, y)
            if message:
                failures += 1
                if failures <= 20:
                    print("exp(%r) = %r: %s" % (x, y, message))
            elif y > SMALLEST_NORMAL and not math.isinf(y) and x < 88.3:
                worst = max(worst, abs(y - math.exp(x)) / ulp(y))
    if failures:
        sys.exit("%d of %d results wrong" % (failures,
                                             len(arrays[0]) + len(arrays[2])))
    print("exp: 40037 inputs, worst %.2f ulp" % worst)


main()
