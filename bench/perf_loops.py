#!/usr/bin/env python3
"""A function's `perf` samples grouped by its innermost loops.

usage: perf annotate -i perf.data --stdio -s SYMBOL > ann.txt
       python3 bench/perf_loops.py ann.txt [--top N]

Each backward jump in the annotated code closes a loop (its target to the
jump); every sampled instruction counts toward the innermost loop holding
it. Prints per loop its share of the function's samples, its size and its
FMAs, broadcasts and shuffles: which loop of a tile the time is in when no
single instruction stands out. Python's standard library only.
"""
import argparse
import re


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("annotate")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    rows = []
    for line in open(args.annotate):
        m = re.match(r"\s+([0-9.]+)\s*:\s+([0-9a-f]+):\s+(.*)", line)
        if m:
            rows.append((float(m.group(1)), int(m.group(2), 16), m.group(3).strip()))
    loops = []
    for _, at, ins in rows:
        m = re.match(r"j\w+\s+([0-9a-f]+)", ins)
        if m and int(m.group(1), 16) < at:
            loops.append((int(m.group(1), 16), at))

    def innermost(at):
        inside = [l for l in loops if l[0] <= at <= l[1]]
        return min(inside, key=lambda l: l[1] - l[0]) if inside else None

    groups = {}
    for share, at, ins in rows:
        g = groups.setdefault(innermost(at), [0.0, 0, 0, 0, 0])
        g[0] += share
        g[1] += 1
        g[2] += "fmadd" in ins
        g[3] += "bcst" in ins or "broadcast" in ins
        g[4] += any(s in ins for s in ("perm", "shuf", "unpck", "insert", "extract"))
    for loop, g in sorted(groups.items(), key=lambda kv: -kv[1][0])[:args.top]:
        where = "%x-%x" % loop if loop else "outside loops"
        print("%6.2f%%  %-13s  %3d instructions, %2d FMA, %2d broadcasts, %2d shuffles"
              % (g[0], where, g[1], g[2], g[3], g[4]))


if __name__ == "__main__":
    main()
