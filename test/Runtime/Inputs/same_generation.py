#!/usr/bin/env python3
"""Compares two `--generate` outputs: the same tokens, and winning logits
equal to 1e-4 relative (the CPU code reassociates its dot products for
vector lanes, so the cached step and the full pass, whose sums run over
different lengths, may differ in the last bits).

usage: same_generation.py A B    (exit 0 when they agree)
"""
import sys


def read(path):
    lines = open(path).read().splitlines()[1:]  # after the header line
    tokens = [l for l in lines if l.startswith("tokens[")]
    logits = [[float(v) for v in l.split(":", 1)[1].split()]
              for l in lines if l.startswith("logits[")]
    return tokens, logits


def main():
    (ta, la), (tb, lb) = read(sys.argv[1]), read(sys.argv[2])
    if ta != tb or not ta:
        print("tokens differ:\n  %s\n  %s" % ("\n  ".join(ta), "\n  ".join(tb)))
        return 1
    for ra, rb in zip(la, lb):
        for x, y in zip(ra, rb):
            if abs(x - y) > 1e-4 * max(abs(x), abs(y)) + 1e-6:
                print("logits differ: %g vs %g" % (x, y))
                return 1
    return 0 if len(la) == len(lb) else 1


if __name__ == "__main__":
    sys.exit(main())
