#!/usr/bin/env python3
"""What dynamic dimensions cost: a program compiled once with dynamic_dims
against the programs compiled for each shape, in one run on the same
inputs and weights.

usage: dynamic_dims.py OUT.json [--lengths 200,512,777,1000,1024]
                       [--rounds 4] [--min-ms 200] [--threads N]
                       [--modules attention,...] [--datc PATH]
                       [--before-datc PATH]

For attention (d_model 256, 4 heads), relational attention (d_model 256, 8
heads, per-position symbols) and HYLA (d_model 256, 8 heads, softmax),
batch 1: the dynamic program (seq up
to the largest length) and one static program per length run alternately
(`prog --repeat R --json`, R sized for --min-ms), the minimum over
--rounds kept; their printed output checksums must agree to 1e-4
relative. With --before-datc, the dynamic program that compiler makes (a
build before a change) runs alternately with the two as well. Writes the
rows to OUT.json and prints them. Needs build/bin/datc; standard library
only.
"""
import argparse
import json
import os
import platform
import random
import re
import struct
import subprocess
import tempfile

import safetensors_io

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATC = os.path.join(ROOT, "build", "bin", "datc")

MODULES = {
    "attention": ({"module": "Attention",
                   "kwargs": {"d_model": 256, "n_heads": 4, "dropout": 0.0}},
                  ["x"]),
    "relational-attention": ({"module": "RelationalAttention",
                              "kwargs": {"d_model": 256, "n_heads": 8,
                                         "n_relations": 8, "dropout": 0.0}},
                             ["x", "symbols"]),
    "hyla": ({"module": "MultiHeadDotProductAttention",
              "kwargs": {"num_heads": 8, "qk_features": 256,
                         "v_features": 256, "attention_norm": "softmax",
                         "target_network": "default", "use_bias": True,
                         "dropout_rate": 0.0}},
             ["x"]),
}


def write_inputs(path, names, n, seed):
    rng = random.Random(seed)
    safetensors_io.write(path, {
        "input." + name: ("F32", [1, n, 256], struct.pack(
            "<%df" % (n * 256), *[rng.uniform(-1, 1) for _ in range(n * 256)]))
        for name in names})


def run(prog, inputs, repeat, threads):
    cmd = [prog, "--input", inputs, "--repeat", str(repeat), "--json"]
    if threads:
        cmd += ["--threads", str(threads)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    report = json.loads(next(l for l in out.splitlines() if l.startswith("{")))
    sums = [float(v) for v in re.findall(r"sum=(\S+)", out)]
    return report["ms_per_run"], sums


def compile_config(config, path, prog, datc=None):
    with open(path, "w") as f:
        json.dump(config, f)
    subprocess.run([datc or DATC, "compile", path, "--random-weights", "11",
                    "-o", prog], check=True, stdout=subprocess.DEVNULL)


def main():
    global DATC
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--lengths", default="200,512,777,1000,1024")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--min-ms", type=float, default=200.0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--modules", default=",".join(MODULES))
    ap.add_argument("--datc", default=DATC)
    ap.add_argument("--before-datc")
    args = ap.parse_args()
    DATC = args.datc
    lengths = [int(n) for n in args.lengths.split(",")]
    work = tempfile.mkdtemp(prefix="dat-dynamic-")
    rows = []
    for label in args.modules.split(","):
        base, names = MODULES[label]
        dynamic = dict(base, dynamic_dims={"seq": max(lengths)},
                       inputs={n: {"shape": [1, "seq", 256]} for n in names},
                       outputs={"y": {}})
        dyn_prog = os.path.join(work, label + "-dynamic")
        compile_config(dynamic, dyn_prog + ".json", dyn_prog)
        programs = [("static", None), ("dynamic", dyn_prog)]
        if args.before_datc:
            before = os.path.join(work, label + "-dynamic-before")
            compile_config(dynamic, before + ".json", before,
                           args.before_datc)
            programs.append(("dynamic_before", before))
        for n in lengths:
            static = dict(base, inputs={k: {"shape": [1, n, 256]}
                                        for k in names}, outputs={"y": {}})
            prog = os.path.join(work, "%s-%d" % (label, n))
            compile_config(static, prog + ".json", prog)
            inputs = os.path.join(work, "%s-%d.safetensors" % (label, n))
            write_inputs(inputs, names, n, n)
            ms, _ = run(prog, inputs, 3, args.threads)
            repeat = max(3, int(args.min_ms / max(ms, 1e-3)) + 1)
            best = {kind: float("inf") for kind, _ in programs}
            sums = {}
            for _ in range(args.rounds):
                for kind, p in programs:
                    ms, s = run(p or prog, inputs, repeat, args.threads)
                    best[kind] = min(best[kind], ms)
                    sums[kind] = s
            agree = all(
                len(sums["static"]) == len(sums[kind]) and all(
                    abs(a - b) <= 1e-4 * max(abs(a), abs(b), 1.0)
                    for a, b in zip(sums["static"], sums[kind]))
                for kind, _ in programs)
            row = {"module": label, "seq": n, "max_seq": max(lengths),
                   "static_ms": best["static"], "dynamic_ms": best["dynamic"],
                   "dynamic_over_static": best["dynamic"] / best["static"],
                   "repeat": repeat, "checksums_agree": agree}
            before_text = ""
            if args.before_datc:
                row["dynamic_before_ms"] = best["dynamic_before"]
                row["before_over_static"] = best["dynamic_before"] / \
                    best["static"]
                before_text = "  before %8.3f ms  %5.2fx" % (
                    row["dynamic_before_ms"], row["before_over_static"])
            rows.append(row)
            print("%-22s N=%5d static %8.3f ms  dynamic %8.3f ms  %5.2fx%s  "
                  "checksums agree: %s" % (label, n, row["static_ms"],
                                           row["dynamic_ms"],
                                           row["dynamic_over_static"],
                                           before_text, agree),
                  flush=True)
            if not agree:
                raise SystemExit("the dynamic program disagrees with the "
                                 "static one at N=%d" % n)
    with open(args.out, "w") as f:
        json.dump({"machine": platform.machine(), "processor":
                   platform.processor(), "threads": args.threads or "all",
                   "rounds": args.rounds, "min_ms": args.min_ms,
                   "datc": args.datc, "before_datc": args.before_datc,
                   "method": "alternating runs, minimum over rounds",
                   "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
