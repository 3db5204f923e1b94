#!/usr/bin/env python3
"""Same-run A/B of two builds of the CPU suite's programs (before/after a
compiler change).

usage: ab_old_new.py OLD NEW OUT.json --inputs DIR [--only ID,...]
                     [--min-ms 200] [--rounds 4] [--threads N]

OLD and NEW are suite directories built by `suite.py build DIR --cpu` from
the two compilers (`DATC=OTHER_BUILD/bin/datc suite.py build ...` for the
one that is not build/). DIR is a suite directory that `run.py` has run, or
whose entries `run.py --prepare ENTRY_DIR` has prepared (it holds each
entry's input.safetensors and prog.weights); both programs read those same
files. The two programs run alternately, each measurement long enough
(--repeat chosen for at least --min-ms), and the minimum over --rounds is
kept. The outputs' checksums (the programs' own printout) are compared.
Writes the rows to OUT.json and prints them. Python's standard library only.
"""
import argparse
import json
import os
import platform
import subprocess


def run(prog, entry_inputs, repeat, threads):
    cmd = [prog, "--input", os.path.join(entry_inputs, "input.safetensors"),
           "--weights", os.path.join(entry_inputs, "prog.weights"),
           "--repeat", str(repeat), "--json"]
    if threads:
        cmd += ["--threads", str(threads)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    report = json.loads(next(l for l in out.splitlines() if l.startswith("{")))
    sums = [l for l in out.splitlines() if "sum=" in l]
    return report["ms_per_run"], sums


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("out")
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--min-ms", type=float, default=200.0)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    rows = []
    for entry in sorted(os.listdir(args.old)):
        inputs = os.path.join(args.inputs, entry)
        if not entry.endswith(".fp32") or (
                only and not any(s in entry for s in only)) or \
                not os.path.exists(os.path.join(inputs, "input.safetensors")):
            continue
        progs = {k: os.path.join(d, entry, "prog")
                 for k, d in (("old", args.old), ("new", args.new))}
        # (Weights over 1 MiB are written by `run.py --prepare DIR`.)
        missing = [p for p in list(progs.values()) +
                   [os.path.join(inputs, "prog.weights")] if not os.path.exists(p)]
        if missing:
            print("%-45s skipped: no %s" % (entry, ", ".join(missing)), flush=True)
            continue
        # One short run sizes --repeat.
        ms, _ = run(progs["old"], inputs, 3, args.threads)
        repeat = max(3, int(args.min_ms / max(ms, 1e-3)) + 1)
        best, sums = {"old": float("inf"), "new": float("inf")}, {}
        for _ in range(args.rounds):
            for k in ("old", "new"):
                ms, s = run(progs[k], inputs, repeat, args.threads)
                best[k] = min(best[k], ms)
                sums[k] = s
        row = {"entry": entry, "old_ms": best["old"], "new_ms": best["new"],
               "speedup": best["old"] / best["new"], "repeat": repeat,
               "same_checksums": sums["old"] == sums["new"]}
        rows.append(row)
        print("%-45s old %9.3f new %9.3f  %5.2fx  same checksums: %s" % (
            entry, row["old_ms"], row["new_ms"], row["speedup"],
            row["same_checksums"]), flush=True)
    with open(args.out, "w") as f:
        json.dump({"machine": platform.machine(), "threads": args.threads or
                   "all", "rounds": args.rounds, "min_ms": args.min_ms,
                   "method": "alternating runs, minimum over rounds",
                   "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
