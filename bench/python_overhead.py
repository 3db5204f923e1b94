"""What calling a compiled model costs from Python, beyond its compute.

Compiles one model twice (a library for the dat package, an executable for
the file round trip) and times, in the same run: the program's own time per
forward pass (`prog --repeat N --json`), an in-process call through
`dat.CompiledModel` (numpy in, numpy out), and the round trip the package
replaces (write input.safetensors, run the program, read the outputs).

    PYTHONPATH=python python3 bench/python_overhead.py [CONFIG] [--results F]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import dat  # noqa: E402
from dat import _safetensors  # noqa: E402


def mean_ms(fn, runs):
    """The mean, like the program's --repeat: comparable with it."""
    start = time.perf_counter()
    for _ in range(runs):
        fn()
    return (time.perf_counter() - start) * 1e3 / runs


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    ap = argparse.ArgumentParser()
    ap.add_argument("config", nargs="?",
                    default=os.path.join(root, "examples", "tiny-dat-lm.json"))
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--results")
    args = ap.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    m = dat.compile(args.config, random_weights=1)
    rng = np.random.default_rng(0)
    inputs = {}
    for name, (shape, dtype) in m.inputs.items():
        inputs[name] = rng.integers(0, 32, shape) if dtype == "I64" \
            else rng.standard_normal(shape).astype(np.float32)
    m(**inputs)  # warm up
    in_process = mean_ms(lambda: m(**inputs), args.runs * 4)

    work = tempfile.mkdtemp(prefix="dat-overhead-")
    prog = os.path.join(work, "prog")
    subprocess.run([dat.find_datc(), "compile", args.config,
                    "--random-weights", "1", "-o", prog], check=True)
    src = os.path.join(work, "in.safetensors")
    out = os.path.join(work, "out.safetensors")
    _safetensors.write(src, {"input." + k: v for k, v in inputs.items()})
    rep = subprocess.run([prog, "--input", src, "--repeat",
                          str(args.runs * 4), "--json"],
                         capture_output=True, text=True, check=True)
    compute = json.loads([line for line in rep.stdout.splitlines()
                          if line.startswith("{")][0])["ms_per_run"]

    def round_trip():
        _safetensors.write(src, {"input." + k: v for k, v in inputs.items()})
        subprocess.run([prog, "--input", src, "--output", out], check=True)
        _safetensors.read(out)
    files = mean_ms(round_trip, max(5, args.runs // 5))
    result = {
        "model": config.get("name", os.path.basename(args.config)),
        "machine": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "runs": args.runs,
        "program_ms_per_run": compute,
        "in_process_call_ms": in_process,
        "file_round_trip_ms": files,
        "in_process_overhead_ms": in_process - compute,
    }
    print(json.dumps(result, indent=1))
    if args.results:
        with open(args.results, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
