#!/usr/bin/env python3
"""Differential test of the compiler on the repository's model configs.

    differential-sweep.py [--gpu-mapping] [--precision bf16] [--only NAME,...]
                          [--lengths 1,7,65,100] [--flash-tiles Q,K]
                          [--datc PATH] [--work DIR] [--golden DIR]

For every config (test/Frontend/Inputs/*/config.json, the golden cases'
(--golden, default ../shared/golden),
examples/*.json except the benchmark-size M1/M2), at its own shapes and
with its sequence length (the first input's dimension 1, wherever it occurs
in the inputs' and outputs' shapes) set to each of --lengths, compiles two
CPU programs: the default (flash tiles, vector layer, threads) or, with
--gpu-mapping, the GPU's block/thread mapping emulated
(--emulate-gpu-tiles), with --flash-tiles Q,K passed to it (the warp-row
programs take tiles of at most 8 warps: 16 rows per head each); and the N x N reference lowering (--no-flash). Runs
both on the same seeded random inputs (from each program's own manifest)
and compares every output. Prints one line per variant: "ok", or
"MISMATCH" when the largest difference exceeds 1e-4 of the output's
largest magnitude (with --precision bf16, both programs in bf16: 3e-2,
which bf16 rounding stays well inside and a wrong mask or a lost key
block does not). Compiler crashes, internal errors and failing runs are
printed too. A config that a variant makes invalid is skipped (the frontend
refused it, with a diagnostic naming the config); if every variant is
skipped, the sweep fails. Exits 1 if any line is not "ok".
Needs numpy. With all configs it takes a few minutes on 2 cores.
"""
import copy
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from dat import _safetensors  # noqa: E402


def configs(only, golden):
    found = sorted(glob.glob(os.path.join(ROOT, "test/Frontend/Inputs/*/config.json")) +
                   glob.glob(os.path.join(golden, "*", "config.json")) +
                   [g for g in glob.glob(os.path.join(ROOT, "examples", "*.json"))
                    if not os.path.basename(g).startswith(("m1-", "m2-"))])
    for c in found:
        name = os.path.basename(os.path.dirname(c)) if c.endswith("config.json") \
            else os.path.basename(c)[:-5]
        if not only or name in only:
            yield name, c


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None


def manifest(prog):
    """(name, dtype, shape, lo, hi) of each input, from the program's --help."""
    specs = []
    for line in run([prog, "--help"]).stdout.splitlines():
        m = re.match(r"\s+input\.(\S+): (\w+) \[([^\]]*)\](?:, values (\S+) to (\S+))?", line)
        if m:
            shape = [int(x) for x in m.group(3).split(",") if x.strip()]
            specs.append((m.group(1), m.group(2), shape, m.group(4), m.group(5)))
    return specs


def write_inputs(specs, path):
    rng = np.random.default_rng(5)
    tensors = {}
    for name, dtype, shape, lo, hi in specs:
        if dtype == "I64":
            low, high = (int(lo), int(hi)) if lo is not None else (0, 3)
            tensors["input." + name] = rng.integers(low, high + 1, size=shape).astype(np.int64)
        elif dtype in ("BOOL", "U8"):
            mask = rng.random(shape) < 0.8
            tensors["input." + name] = mask if dtype == "BOOL" else mask.astype(np.uint8)
        elif dtype == "BF16":
            values = rng.standard_normal(shape).astype(np.float32)
            tensors["input." + name] = ("BF16", shape,
                                        _safetensors.bf16_bits(values).tobytes())
        else:
            tensors["input." + name] = rng.standard_normal(shape).astype(np.float32)
    _safetensors.write(path, tensors)


def as_float(values):
    """An output as float64 (BF16 outputs are read as their uint16 bits)."""
    if values.dtype == np.uint16:
        values = _safetensors.bf16_to_float32(values)
    return values.astype(np.float64)


def variants(cfg, lengths):
    yield "own", cfg
    first = next(iter(cfg.get("inputs", {}).values()), None)
    if not first or len(first.get("shape", [])) < 2:
        return
    n = first["shape"][1]
    for new in lengths:
        if new == n:
            continue
        v = copy.deepcopy(cfg)
        for section in ("inputs", "outputs"):
            for spec in v.get(section, {}).values():
                if "shape" in spec:
                    spec["shape"] = [new if i >= 1 and d == n else d
                                     for i, d in enumerate(spec["shape"])]
        yield "n=%d" % new, v


def check(datc, work, config_path, cfg, tag, flags, common, tolerance):
    path = os.path.join(work, "config.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    weights = os.path.join(os.path.dirname(config_path), "model.safetensors")
    wargs = ["--weights", weights] if tag == "own" and os.path.exists(weights) \
        else ["--random-weights", "1"]
    outputs = {}
    for mode, extra in (("test", flags), ("reference", ["--no-flash"])):
        prog = os.path.join(work, mode)
        r = run([datc, "compile", path, "-o", prog] + wargs + common + extra)
        if r is None:
            return "COMPILE TIMEOUT (%s)" % mode
        if r.returncode != 0:
            # A refusal names the config (the frontend's diagnostic); any
            # other failure (an internal error, a missing runtime library)
            # is the compiler's.
            if r.returncode > 1 or "internal error" in r.stderr or \
                    "Stack dump" in r.stderr or path not in r.stderr:
                return "COMPILE FAILED (%s, exit %d): %s" % (mode, r.returncode,
                                                           r.stderr.strip()[-300:])
            return None  # refused with a diagnostic
        if mode == "test":
            write_inputs(manifest(prog), os.path.join(work, "in.safetensors"))
        out = os.path.join(work, mode + ".safetensors")
        r = run([prog, "--input", os.path.join(work, "in.safetensors"), "--output", out])
        if r is None or r.returncode != 0:
            return "RUN FAILED (%s): %s" % (mode, "timeout" if r is None
                                             else r.stderr.strip()[-300:])
        outputs[mode] = _safetensors.read(out)[0]
    worst = 0.0
    for key, got in outputs["test"].items():
        want = as_float(outputs["reference"][key])
        scale = max(float(np.abs(want).max()), 1e-30)
        worst = max(worst, float(np.abs(as_float(got) - want).max()) / scale)
    return ("ok %.2g" if worst <= tolerance else "MISMATCH %.3g") % worst


def main(argv):
    flags, only, lengths = [], None, [1, 7, 65, 100]
    common, tolerance = [], 1e-4
    datc = os.path.join(ROOT, "build", "bin", "datc")
    work = os.path.join(ROOT, "build", "differential-sweep")
    golden = os.path.join(ROOT, "..", "shared", "golden")
    it = iter(argv)
    for a in it:
        if a == "--gpu-mapping":
            flags = flags + ["--emulate-gpu-tiles"]
        elif a == "--flash-tiles":
            flags = flags + ["--flash-tiles", next(it)]
        elif a == "--precision":
            precision = next(it)
            if precision != "fp32":
                common, tolerance = ["--precision", precision], 3e-2
        elif a == "--only":
            only = set(next(it).split(","))
        elif a == "--lengths":
            lengths = [int(x) for x in next(it).split(",")]
        elif a == "--datc":
            datc = next(it)
        elif a == "--work":
            work = next(it)
        elif a == "--golden":
            golden = next(it)
        else:
            sys.stderr.write(__doc__)
            return 2
    os.makedirs(work, exist_ok=True)
    bad = ran = 0
    for name, path in configs(only, golden):
        with open(path) as f:
            cfg = json.load(f)
        if "module" not in cfg:
            continue
        for tag, v in variants(cfg, lengths):
            verdict = check(datc, work, path, v, tag, flags, common, tolerance)
            if verdict is None:
                continue
            ran += 1
            bad += not verdict.startswith("ok")
            print("%s (%s): %s" % (name, tag, verdict), flush=True)
    if not ran:
        print("differential sweep: nothing ran (every variant was refused)")
        return 1
    print("differential sweep: %s" % ("all agree" if not bad else "%d failed" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
