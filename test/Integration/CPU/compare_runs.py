#!/usr/bin/env python3
"""Compares the memrefs that mlir-runner printed in several runs of one test.

usage: compare_runs.py REFERENCE RUN [RUN...]

Each file holds the same sequence of printed memrefs ("data = [...]"). Every
value of every run must agree with the reference's within 1e-5 of the
largest magnitude of its output (f32 sums in another order), and every
output must have a nonzero value (a vacuous all-zero result fails). Prints
"N outputs of A, B, ... values agree"; exits non-zero naming the first
mismatch.
"""
import re
import sys

NUMBER = r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)"


def outputs(path):
    text = open(path).read()
    found = []
    for block in re.split(r"Unranked Memref", text)[1:]:
        data = block.split("data =", 1)[1]
        found.append([float(v) for v in re.findall(NUMBER, data)])
    return found


def main():
    reference, runs = outputs(sys.argv[1]), sys.argv[2:]
    if not reference:
        sys.exit("%s: no printed memref" % sys.argv[1])
    for run in runs:
        got = outputs(run)
        if [len(o) for o in got] != [len(o) for o in reference]:
            sys.exit("%s: outputs of %s values, the reference has %s" % (
                run, [len(o) for o in got], [len(o) for o in reference]))
        for index, (want, have) in enumerate(zip(reference, got)):
            scale = max(abs(v) for v in want)
            if scale == 0:
                sys.exit("%s: output %d is all zeros" % (sys.argv[1], index))
            for i, (w, h) in enumerate(zip(want, have)):
                if not abs(w - h) <= 1e-5 * scale:
                    sys.exit("%s: output %d, value %d: %r, the reference %r"
                             % (run, index, i, h, w))
    print("%d outputs of %s values agree" % (
        len(reference), ", ".join(str(len(o)) for o in reference)))


main()
