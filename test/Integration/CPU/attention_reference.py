#!/usr/bin/env python3
"""Independent reference for test/Integration/CPU/attention.mlir.

Rebuilds the test's inputs from the same closed-form formulas (rounding each
step to float32 as the MLIR code does), computes attention in float64 with
plain Python, reads the memrefs that mlir-runner printed on stdin and checks
every element. Exits non-zero, naming the case and index, on any mismatch.
"""
import math
import re
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def wave(shape, freq, phase, amp):
    """x[flat] = amp * sin(freq * flat + phase), each op rounded to f32."""
    b, h, n, d = shape
    freq, phase, amp = f32(freq), f32(phase), f32(amp)
    out = {}
    for flat in range(b * h * n * d):
        y = f32(f32(float(flat) * freq) + phase)
        out[flat] = f32(f32(math.sin(y)) * amp)
    idx = lambda i0, i1, i2, i3: ((i0 * h + i1) * n + i2) * d + i3
    return lambda i0, i1, i2, i3: out[idx(i0, i1, i2, i3)]


def attention(q, k, v, qshape, kshape, dv, scale, allowed):
    """Returns the output flattened row-major over [B,H,Nq,Dv]."""
    B, H, Nq, D = qshape
    _, Hkv, Nk, _ = kshape
    group = H // Hkv
    out = []
    for b in range(B):
        for h in range(H):
            g = h // group
            for i in range(Nq):
                s = []
                for j in range(Nk):
                    if not allowed(i, j):
                        s.append(None)
                        continue
                    s.append(scale * sum(q(b, h, i, x) * k(b, g, j, x) for x in range(D)))
                live = [x for x in s if x is not None]
                if not live:  # fully masked row: zeros by definition
                    out.extend([0.0] * dv)
                    continue
                m = max(live)
                p = [0.0 if x is None else math.exp(x - m) for x in s]
                l = sum(p)
                for e in range(dv):
                    out.append(sum(p[j] * v(b, g, j, e) for j in range(Nk)) / l)
    return out


def parse_memrefs(text):
    blocks = text.split("Unranked Memref")[1:]
    result = []
    for blk in blocks:
        sizes = [int(x) for x in re.search(r"sizes = \[([^\]]*)\]", blk).group(1).split(",")]
        data = blk.split("data =", 1)[1]
        nums = [float(x) for x in re.findall(r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)", data)]
        result.append((sizes, nums))
    return result


def main():
    got = parse_memrefs(sys.stdin.read())
    if len(got) != 2:
        sys.exit("expected 2 printed memrefs, got %d" % len(got))

    # Case A: GQA 4 over 2, causal with query_offset 2.
    qa = wave((2, 4, 5, 6), 0.31, 0.5, 2.0)
    ka = wave((2, 2, 7, 6), 0.17, 0.2, 2.0)
    va = wave((2, 2, 7, 3), 0.23, -0.3, 1.0)
    want_a = attention(qa, ka, va, (2, 4, 5, 6), (2, 2, 7, 6), 3,
                       f32(0.408248305), lambda i, j: j <= i + 2)
    # Case B: mask (i + 2j) % 3 != 0, row 1 fully masked.
    qb = wave((1, 3, 4, 8), 0.31, 0.5, 3.0)
    kb = wave((1, 3, 6, 8), 0.17, 0.2, 1.0)
    vb = wave((1, 3, 6, 8), 0.23, -0.3, 2.0)
    want_b = attention(qb, kb, vb, (1, 3, 4, 8), (1, 3, 6, 8), 8, 0.75,
                       lambda i, j: (i + 2 * j) % 3 != 0 and i != 1)

    failures = 0
    for name, (sizes, nums), want, shape in (("A", got[0], want_a, [2, 4, 5, 3]),
                                             ("B", got[1], want_b, [1, 3, 4, 8])):
        if sizes != shape or len(nums) != len(want):
            sys.exit("case %s: expected shape %s (%d values), got %s (%d values)"
                     % (name, shape, len(want), sizes, len(nums)))
        worst = 0.0
        for n, (a, w) in enumerate(zip(nums, want)):
            err = abs(a - w)
            worst = max(worst, err)
            if not err <= 1e-5 + 1e-5 * abs(w):
                failures += 1
                if failures <= 10:
                    print("case %s element %d: got %.7g, want %.7g" % (name, n, a, w))
        print("case %s: %d values, max abs error %.3g" % (name, len(want), worst))
    if failures:
        sys.exit("%d mismatches" % failures)
    print("attention CPU execution matches the reference")


if __name__ == "__main__":
    main()
