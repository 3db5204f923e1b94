#!/usr/bin/env python3
"""A/B comparison of pipeline options on CPU suite programs, in one run.

    python3 bench/ab_pipeline.py BENCH_DIR RESULT.json NAME=OPTIONS ... \
        [--entries ID,ID] [--threads 1,2] [--rounds 8]

BENCH_DIR is a CPU suite build (`suite.py build DIR --cpu`): its configs and
inputs are reused. Each entry is compiled once per variant (`datc compile
... --pipeline OPTIONS`, empty OPTIONS: the defaults; seeded random weights,
so every variant runs the same model); the variants then run alternately,
`prog --repeat` per round (at least 5 runs and 200 ms), and the minimum
over the rounds is kept — the
host is shared and noisy, and alternating exposes every variant to the same
moments. Outputs must agree to a relative 1e-5 (checked on the printed sums),
or the run fails. Per-op-group times (`prog --profile`, minimum over three
calls) are recorded too.
"""
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATC = os.path.join(ROOT, "build", "bin", "datc")


def run_prog(prog, inputs, threads, extra):
    r = subprocess.run([prog, "--input", inputs, "--threads", str(threads)] + extra,
                       capture_output=True, text=True, check=True)
    return r.stdout


# Each measurement lasts at least this long: `--repeat 5` of a 1 ms program
# was at the mercy of the host's noise (A/B ratios of 0.4-2x on the small
# models between identical programs).
MIN_MEASURE_MS = 200
REPEATS = {}


def timed(prog, inputs, threads):
    repeat = REPEATS.get((prog, threads), 5)
    out = run_prog(prog, inputs, threads, ["--repeat", str(repeat), "--json"])
    report = json.loads(next(l for l in out.splitlines() if l.startswith("{")))
    sums = [float(m) for m in re.findall(r" sum=(\S+)", out)]
    ms = report["ms_per_run"]
    REPEATS[(prog, threads)] = max(repeat, int(MIN_MEASURE_MS / max(ms, 1e-3)) + 1)
    return ms, sums


def profile(prog, inputs, threads):
    groups = {}
    for _ in range(3):
        out = run_prog(prog, inputs, threads, ["--profile"])
        seen = {}
        for line in out.splitlines():
            m = re.match(r"\s*([\d.]+)\s+[\d.]+\s+\d+\s+[\d.]+\s+\d+\s+(.*)", line)
            if not m:
                continue
            name = m.group(2).strip()
            seen[name] = seen.get(name, 0) + 1
            key = "%s #%d" % (name, seen[name])
            groups[key] = min(groups.get(key, 1e9), float(m.group(1)))
    return groups


def main():
    args = sys.argv[1:]
    opts = {"--entries": None, "--threads": "1,2", "--rounds": "8"}
    rest = []
    while args:
        a = args.pop(0)
        if a in opts:
            opts[a] = args.pop(0)
        else:
            rest.append(a)
    if len(rest) < 3 or any("=" not in v for v in rest[2:]):
        print(__doc__)
        return 2
    bench, result = rest[0], rest[1]
    variants = [v.split("=", 1) for v in rest[2:]]
    entries = sorted(d for d in os.listdir(bench) if d.endswith(".fp32"))
    if opts["--entries"]:
        wanted = opts["--entries"].split(",")
        entries = [e for e in entries if e.rsplit(".", 1)[0] in wanted]
    threads = [int(t) for t in opts["--threads"].split(",")]
    rounds = int(opts["--rounds"])
    work = tempfile.mkdtemp(prefix="dat-ab-")
    records = []
    for entry in entries:
        d = os.path.join(bench, entry)
        inputs = os.path.join(d, "input.safetensors")
        progs = {}
        for name, options in variants:
            prog = os.path.join(work, "%s-%s" % (entry, name))
            cmd = [DATC, "compile", os.path.join(d, "config.json"), "--random-weights", "1",
                   "-o", prog]
            if options:
                cmd += ["--pipeline", options]
            subprocess.run(cmd, check=True)
            progs[name] = prog
        for t in threads:
            best = {n: 1e9 for n in progs}
            sums = {}
            for _ in range(rounds):
                for n, p in progs.items():
                    ms, s = timed(p, inputs, t)
                    best[n] = min(best[n], ms)
                    sums[n] = s
            ref = sums[variants[0][0]]
            for n, s in sums.items():
                for a, b in zip(ref, s):
                    if abs(a - b) > 1e-5 * max(1.0, abs(a)):
                        print("FAIL %s: %s's output sum %g differs from %g" % (entry, n, b, a))
                        return 1
            rec = {"entry": entry, "threads": t, "ms": best,
                   "profile_ms": {n: profile(p, inputs, t) for n, p in progs.items()}}
            records.append(rec)
            base = best[variants[0][0]]
            print("%-36s threads=%d  " % (entry, t) +
                  "  ".join("%s %.2f ms (%.2fx)" % (n, ms, base / ms) for n, ms in best.items()),
                  flush=True)
    with open(result, "w") as f:
        json.dump({"machine": platform.processor() or platform.machine(),
                   "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                                if l.startswith("model name")), ""),
                   "variants": dict(variants), "rounds": rounds,
                   "method": "alternating runs, prog --repeat 5, minimum over rounds",
                   "results": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
