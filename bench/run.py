#!/usr/bin/env python3
"""Runs the benchmark suite built by suite.py, each program next to its
PyTorch baselines in the same process run (../shared/guide/benchmarks.md).

usage: run.py DIR [--device cuda|cpu] [--only ID,...] [--repeat N]
                 [--baselines NAME,...|none]
              [--results FILE.json]
       run.py --prepare ENTRY_DIR   writes one entry's weights and inputs
                                    (for a profiler run of its program)

--only runs the named entries (directory names) in the order given.
--baselines runs only the named baselines (eager, compile, sdpa, flex, jax)
of each entry's, or none: a quick A/B of dat's variants on a device lease
(with none, the output is not checked: the golden programs check it).

For each DIR/<id>: makes the weights the build left behind (seeded random
values, like datc --random-weights: norm scales 1, biases 0, the rest
N(0, 0.02²); RoPE tables computed) and seeded random inputs; times the program (`prog --repeat`,
median of several runs, each at least 300 ms long); times the baselines from dat_torch.py — eager,
torch.compile, F.scaled_dot_product_attention and FlexAttention (compiled,
torch >= 2.5) for standard attention, and JAX `jit` of dat_jax.py for HYLA —
with CUDA events (median of several measurements after warm-up) on the same
weights and inputs (measured once for an entry's generated and cuBLAS
variants, which share them; the second's result names the first in
"baselines_measured_with"), in the program's dtype (bf16 programs: the baselines'
weights and inputs are the same bf16 values); compares the program's output
with the baseline's (fp32: eager's, a relative error above 1e-3 fails the
run; bf16: both against eager in fp32 on the same bf16-valued weights and
inputs, and dat's error above 2^-5, or above 1.25 times the bf16
baseline's own error where that is larger, fails the run — the run is also a
check of the GPU code); records the program's peak memory (what its model allocated, plus the device
copies of its weights and inputs) and the baseline's; on the GPU, the
program's own per-kernel profile of one call (`prog --profile`,
"dat_profile"). Writes the results as JSON after every entry (a run cut
short keeps what it measured; a program run that outlasts
DAT_BENCH_TIMEOUT seconds, default 120, fails its entry) and prints a
Markdown table for BENCHMARKS.md.

`--device cpu` runs the same flow with CPU programs: the CPU suite
(suite.py build DIR --cpu) against eager, torch.compile and SDPA on this
machine's cores, and first measures this machine's fp32 FMA peak
(cpu/fma_peak.c, built with cc -O3 -march=native -fopenmp) in the same run,
and again right after each entry's program is timed: dat's GFLOP/s are
reported as a fraction of the peak measured next to them (a shared host's
speed drifts during a run; the table's header line gives the range). It also measures the
streaming read bandwidth of memory (cpu/read_bandwidth.c, the roofline of
memory-bound entries), recorded with the machine. (On the smoke suite the
times mean nothing.)
"""
import datetime
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dat_torch  # noqa: E402
import safetensors_io  # noqa: E402

PEAK_FP32 = 67e12  # H200 CUDA-core fp32, guide/benchmarks.md
PEAK_BF16 = 790e12  # H200 dense bf16 tensor cores, measured
# Errors are relative to the output's largest magnitude. fp32: dat against
# eager, both fp32. bf16: dat (bf16 storage, fp32 arithmetic) against eager
# run in fp32 on the same bf16-valued weights and inputs; bf16 rounding of
# every stored activation costs ~2^-8 per layer.
# A program that hangs (a GPU kernel that never ends) fails its entry
# instead of the whole run.
PROGRAM_TIMEOUT_S = int(os.environ.get("DAT_BENCH_TIMEOUT", "120"))
NUMERICS_LIMIT = {"fp32": 1e-3, "bf16": 2.0 ** -5}
# A deep bf16 model's logits drift past 2^-5 in PyTorch's bf16 too (M1, 24
# layers: eager bf16 3.6e-2 against eager fp32): there dat fails only past
# this factor of the bf16 baseline's own error.
BF16_BASELINE_FACTOR = 1.25
TORCH_DTYPE = {"fp32": torch.float32, "bf16": torch.bfloat16}


# Baseline measurements by (suite id, precision, weights): on the GPU the
# generated and library-GEMM variants of an entry share their baselines
# (same module, weights and inputs), measured once per run: a device
# session's minutes go to dat's programs rather than to compiling the same
# torch.compile graph twice. (On the CPU each variant measures its own, next
# to it: the shared host's speed drifts.)
BASELINES = {}
BASELINE_KEYS = ("_ms", "_peak_bytes", "_error")


def weights_digest(path):
    """What the baselines' weights depend on: the file's bytes where small,
    else its header (larger files are regenerated from it with one seed)."""
    if os.path.getsize(path) <= 64 << 20:
        with open(path, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return hashlib.sha1(f.read(n)).hexdigest()


def is_baseline_value(key, names):
    """Whether result[key] is a baseline's own measurement (its time,
    memory, error or numerics against eager), not one relative to dat."""
    if key == "baseline_rel_error_vs_eager_fp32":
        return True
    name, _, what = key.partition("_")
    return (name in names and what != "rel_error_vs_dat"
            and (key.endswith(BASELINE_KEYS) or what.startswith("rel_error_vs_")))


def profile_program(prog, inputs):
    """The program's own per-kernel (GPU) or per-op-group (CPU) profile of
    one call: its table's lines."""
    r = subprocess.run([prog, "--input", inputs, "--profile"], capture_output=True,
                       text=True, timeout=PROGRAM_TIMEOUT_S)
    if r.returncode != 0:
        return ["--profile failed: " + r.stderr.strip()[:200]]
    return [line for line in r.stdout.splitlines()
            if not line.startswith("output.")][:40]


def random_weights(spec, seed):
    """Seeded weights for a header {name: {dtype, shape}} (F32 or BF16: the
    same values, rounded for BF16)."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, info in sorted(spec.items()):
        shape = info["shape"]
        if name in ("rope.freqs_cos", "rope.freqs_sin"):
            # Derived by datc from nothing but the shape: the real tables.
            cos, sin = dat_torch.rope_tables(2 * shape[1], shape[0], "cpu")
            t = cos if name.endswith("cos") else sin
        elif len(shape) == 1 and name.endswith((".weight", ".scale")):
            t = torch.ones(shape)
        elif len(shape) == 1 and name.endswith(".bias"):
            t = torch.zeros(shape)
        else:
            t = torch.randn(shape, generator=g) * 0.02
        if info["dtype"] == "BF16":
            t = t.to(torch.bfloat16)
        out[name] = safetensors_io.from_torch(t)
    return out


def make_inputs(entry, seed, precision):
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, info in entry["inputs"].items():
        shape, fill = info["shape"], info.get("fill", "")
        if info.get("dtype", "float32") == "int64":
            if fill == "arange":
                t = torch.arange(shape[-1]).expand(shape).contiguous()
            else:
                vocab = int(fill.split(":")[1]) if fill.startswith("tokens:") else 2
                t = torch.randint(0, vocab, shape, generator=g)
            out["input." + name] = ("I64", shape, t.numpy().tobytes())
        else:
            t = torch.randn(shape, generator=g).to(TORCH_DTYPE[precision])
            out["input." + name] = safetensors_io.from_torch(t)
    return out


CPU_PEAK_GFLOPS = None  # measured by measure_cpu_peak() in a CPU run
CPU_READ_GBS = None  # measured by measure_cpu_bandwidth() in a CPU run


def run_c_probe(name, pattern):
    """Builds bench/cpu/NAME.c (cc -O3 -march=native -fopenmp), runs it and
    returns the match of `pattern` in its output, or None."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu",
                       name + ".c")
    exe = os.path.join("/tmp", "dat-%s-%d" % (name, os.getpid()))
    try:
        subprocess.run(["cc", "-O3", "-march=native", "-fopenmp", src, "-o",
                        exe], check=True, capture_output=True)
        out = subprocess.run([exe], check=True, capture_output=True,
                             text=True).stdout
        return re.search(pattern, out)
    except (OSError, subprocess.CalledProcessError):
        return None
    finally:
        if os.path.exists(exe):
            os.remove(exe)


def measure_cpu_peak():
    """(GFLOP/s, threads) of the FMA kernel on every core, or (None, 0)."""
    m = run_c_probe("fma_peak", r"([0-9.]+) GFLOP/s on (\d+) threads")
    return (float(m.group(1)), int(m.group(2))) if m else (None, 0)


def measure_cpu_bandwidth():
    """GB/s of a streaming read of 256 MiB on every core (the roofline of
    memory-bound entries), or None."""
    m = run_c_probe("read_bandwidth", r"([0-9.]+) GB/s")
    return float(m.group(1)) if m else None


# Each measurement lasts at least this long (a small model's few calls
# would otherwise time thread wake-ups and the machine's noise): the
# repeat count of both sides grows to fill it.
MIN_MEASURE_MS = 300.0


def enough(repeat, ms_per_call):
    """`repeat`, raised so that a measurement lasts MIN_MEASURE_MS."""
    if ms_per_call <= 0:
        return repeat
    return max(repeat, min(100000, int(MIN_MEASURE_MS / ms_per_call) + 1))


def time_program(prog, inputs, repeat, runs=3):
    """(median ms per run, peak bytes): the peak is what the model allocated
    plus its arguments' device copies (weights and inputs, which a
    baseline's max_memory_allocated counts too)."""
    probe = subprocess.run([prog, "--input", inputs, "--repeat", "1",
                            "--json"], capture_output=True, text=True,
                           timeout=PROGRAM_TIMEOUT_S)
    if probe.returncode == 0:
        report = json.loads(next(line for line in probe.stdout.splitlines()
                                 if line.startswith('{"runs"')))
        repeat = enough(repeat, report["ms_per_run"])
    times, peak = [], 0
    for _ in range(runs):
        r = subprocess.run([prog, "--input", inputs, "--repeat", str(repeat),
                            "--json"], capture_output=True, text=True,
                           timeout=PROGRAM_TIMEOUT_S)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip() or r.stdout.strip())
        report = json.loads(next(line for line in r.stdout.splitlines()
                                 if line.startswith('{"runs"')))
        times.append(report["ms_per_run"])
        peak = max(peak, report["peak_bytes"] + report["argument_bytes"])
    return statistics.median(times), peak


def time_fn(fn, device, repeat, runs=5):
    """Median ms per call of fn() over `runs` measurements of `repeat` calls
    (raised so that each lasts MIN_MEASURE_MS)."""
    for _ in range(2):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    if device == "cuda":
        torch.cuda.synchronize()
    repeat = enough(repeat, (time.perf_counter() - t0) * 1e3)
    times = []
    for _ in range(runs):
        if device == "cuda":
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(repeat):
                fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / repeat)
        else:
            t0 = time.perf_counter()
            for _ in range(repeat):
                fn()
            times.append((time.perf_counter() - t0) * 1e3 / repeat)
    return statistics.median(times)


def time_jax(entry, W, io, out, device, repeat, precision, runs=5):
    """JAX `jit` of dat_jax's module on the same weights and inputs: (median
    ms per call, peak device bytes or None, the output as a torch tensor).
    Wall clock around block_until_ready (JAX has no CUDA events)."""
    import jax
    import jax.numpy as jnp
    import dat_jax
    fn = dat_jax.MODULES[entry["module"]]
    dev = jax.devices("gpu" if device == "cuda" else "cpu")[0]
    dtype = jnp.bfloat16 if precision == "bf16" else jnp.float32

    def put(t):
        a = t.float().cpu().numpy()
        return jax.device_put(jnp.asarray(a, dtype=dtype), dev)
    Wj = {k: put(v) for k, v in W.items()}
    ioj = {k: put(v) for k, v in io.items()}
    kw, call = entry["kwargs"], entry.get("call", {})
    jitted = jax.jit(lambda W, io: fn(W, kw, call, io)[out])
    y = jitted(Wj, ioj).block_until_ready()
    t0 = time.perf_counter()
    jitted(Wj, ioj).block_until_ready()
    repeat = enough(repeat, (time.perf_counter() - t0) * 1e3)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(repeat):
            y = jitted(Wj, ioj)
        y.block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3 / repeat)
    stats = dev.memory_stats() if hasattr(dev, "memory_stats") else None
    peak = stats.get("peak_bytes_in_use") if stats else None
    return statistics.median(times), peak, torch.from_numpy(
        jnp.asarray(y, dtype=jnp.float32).__array__().copy())


def prepare_entry(d):
    """Writes the entry's weights (where the build left only their header)
    and its inputs; returns (entry, program, weights path, inputs path)."""
    entry = json.load(open(os.path.join(d, "entry.json")))
    prog = os.path.join(d, "prog")
    weights_path = prog + ".weights"
    if not os.path.exists(weights_path):
        spec = json.load(open(os.path.join(d, "weights.json")))
        safetensors_io.write(weights_path, random_weights(spec, 1))
    inputs_path = os.path.join(d, "input.safetensors")
    safetensors_io.write(inputs_path, make_inputs(entry, 2, entry.get("precision", "fp32")))
    return entry, prog, weights_path, inputs_path


def progress(started, what):
    """One line per step on stderr, so that a run cut short says where its
    time went (a device lease cut K4-ape-seq three times after "running")."""
    print("  %s (%.1f s)" % (what, time.time() - started), file=sys.stderr,
          flush=True)


def run_entry(d, device, repeat, baselines=None):
    started = time.time()
    entry, prog, weights_path, inputs_path = prepare_entry(d)
    precision = entry.get("precision", "fp32")
    result = {"id": entry["id"], "module": entry["module"], "dtype": precision,
              "gemm": entry.get("gemm", "generated"),
              "label": entry.get("label"), "pipeline": entry.get("pipeline"),
              "inputs": {k: v["shape"] for k, v in entry["inputs"].items()},
              "flops": entry.get("flops"), "flop_formula": entry.get("flop_formula")}
    if entry.get("min_bytes"):  # what the entry must read at least once
        result["min_bytes"] = entry["min_bytes"]
        result["min_bytes_formula"] = entry.get("min_bytes_formula")

    out_path = os.path.join(d, "output.safetensors")
    try:
        r = subprocess.run([prog, "--input", inputs_path, "--output", out_path],
                           capture_output=True, text=True, timeout=PROGRAM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        result["error"] = "no result after %d s" % PROGRAM_TIMEOUT_S
        return result
    if r.returncode != 0:
        result["error"] = r.stderr.strip()
        return result
    progress(started, "first run")
    result["dat_ms"], result["dat_peak_bytes"] = time_program(prog, inputs_path, repeat)
    progress(started, "dat %.3f ms" % result["dat_ms"])
    result["device"] = device
    if entry.get("flops") and device == "cpu":
        result["dat_gflops"] = entry["flops"] / (result["dat_ms"] * 1e-3) / 1e9
        # The peak next to this measurement (the host's speed drifts). Its
        # share is of the higher of that and the run's first probe: a probe
        # that ran while something else held a core reads about half the
        # peak (254.7 of 505.8 once, session 51) and would credit dat with
        # more than the hardware does (137%).
        near = measure_cpu_peak()[0]
        peak = max((p for p in (near, CPU_PEAK_GFLOPS) if p), default=None)
        if peak:
            result["fma_peak_gflops"] = near or peak
            result["dat_fraction_of_fma_peak"] = result["dat_gflops"] / peak
    elif entry.get("flops"):
        result["dat_tflops"] = entry["flops"] / (result["dat_ms"] * 1e-3) / 1e12
        result["dat_fraction_of_fp32_peak"] = result["dat_tflops"] * 1e12 / PEAK_FP32
        result["dat_fraction_of_bf16_peak"] = result["dat_tflops"] * 1e12 / PEAK_BF16
    if entry.get("min_bytes") and device == "cpu":
        # The memory roofline: the bytes it must read over its time, as a
        # share of the streaming read measured at the run's start.
        result["dat_min_bytes_gbs"] = entry["min_bytes"] / (result["dat_ms"] * 1e-3) / 1e9
        if CPU_READ_GBS:
            result["dat_fraction_of_read_bandwidth"] = result["dat_min_bytes_gbs"] / CPU_READ_GBS

    if device == "cuda":  # where the time goes, per kernel
        result["dat_profile"] = profile_program(prog, inputs_path)
        progress(started, "profile")

    fn = dat_torch.MODULES.get(entry["module"])
    if baselines is not None:  # --baselines
        entry["baselines"] = [b for b in entry.get("baselines", []) if b in baselines]
        if not entry["baselines"]:
            result["baselines"] = "none run (--baselines)"
            return result
    if fn is None or not entry.get("baselines"):
        result["baselines"] = "none yet"
        return result
    W = {k: safetensors_io.to_torch(v, device) for k, v in
         safetensors_io.read(weights_path).items()}
    shared = True
    for name, shape in entry.get("baseline_weights", {}).items():
        if name not in W:  # the program holds a derived form instead
            W[name] = (torch.randn(shape, device=device) * 0.02).to(
                TORCH_DTYPE[precision])
            shared = False
    io = {k[len("input."):]: safetensors_io.to_torch(v, device)
          for k, v in safetensors_io.read(inputs_path).items()}
    kw, call = entry["kwargs"], entry.get("call", {})
    out = next(iter(entry["outputs"]))
    variants = {"eager": lambda: fn(W, kw, call, io)[out]}
    if baselines is not None and "eager" not in baselines:
        variants = {}
    if "compile" in entry["baselines"] and hasattr(torch, "compile"):
        compiled = torch.compile(lambda: fn(W, kw, call, io)[out])
        variants["compile"] = compiled
    if "sdpa" in entry["baselines"] and hasattr(torch.nn.functional,
                                                "scaled_dot_product_attention"):
        variants["sdpa"] = lambda: fn(W, kw, call, io, sdpa=True)[out]
    if "flex" in entry["baselines"]:  # fails (recorded) before torch 2.5
        variants["flex"] = lambda: fn(W, kw, call, io, flex=True)[out]
    # Only on the GPU (see BASELINES), where the key's hash is worth it.
    key = (entry["id"], precision, weights_digest(weights_path)) \
        if shared and device == "cuda" else None
    measured = BASELINES.get(key) if key else None
    if measured is not None:
        # Measured in this run for another variant of the entry.
        for k, v in measured["values"].items():
            result[k] = v
            if k.endswith("_ms"):
                result[k[:-3] + "_speedup_of_dat"] = v / result["dat_ms"]
        result["baselines_measured_with"] = measured["variant"]
        with torch.no_grad():
            check_numerics(result, variants, fn, W, kw, call, io, out, out_path,
                           precision, others=False)
        return result
    with torch.no_grad():
        for name, f in variants.items():
            try:
                if device == "cuda":
                    torch.cuda.empty_cache()
                    torch.cuda.reset_peak_memory_stats()
                result[name + "_ms"] = time_fn(f, device, max(1, repeat // 2))
                progress(started, "%s %.3f ms" % (name, result[name + "_ms"]))
                result[name + "_speedup_of_dat"] = result[name + "_ms"] / result["dat_ms"]
                if device == "cuda":
                    result[name + "_peak_bytes"] = torch.cuda.max_memory_allocated()
            except Exception as e:  # out of memory, no compiler, ...
                result[name + "_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
                progress(started, "%s failed" % name)
        if "jax" in entry["baselines"]:
            try:
                ms, peak, y = time_jax(entry, W, io, out, device,
                                       max(1, repeat // 2), precision)
                result["jax_ms"] = ms
                result["jax_speedup_of_dat"] = ms / result["dat_ms"]
                if peak:
                    result["jax_peak_bytes"] = peak
                got = safetensors_io.to_torch(
                    safetensors_io.read(out_path)["output." + out])
                result["jax_rel_error_vs_dat"] = rel_error(y, got.float())
            except Exception as e:  # no JAX, no GPU backend, out of memory
                result["jax_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
        if shared:
            check_numerics(result, variants, fn, W, kw, call, io, out, out_path,
                           precision)
        else:
            result["max_rel_error_vs_eager"] = "n/a (dat folds weights the baseline draws afresh)"
    if key:
        BASELINES[key] = {
            "variant": os.path.basename(d),
            "values": {k: v for k, v in result.items()
                       if is_baseline_value(k, list(variants) + ["jax"])}}
    return result


def rel_error(got, want):
    got, want = got.float().cpu().reshape(want.shape), want.float().cpu()
    return float((got - want).abs().max() / want.abs().max().clamp_min(1e-30))


def check_numerics(result, variants, fn, W, kw, call, io, out, out_path,
                   precision, others=True):
    """fp32: dat against eager, or the first baseline that ran (eager's N×N
    tensors may not fit). bf16: dat and that baseline against eager in fp32
    on the same (bf16-valued) weights and inputs. `others`: the other
    baselines too (not where they were checked for another variant)."""
    ran = [n for n in variants if n + "_ms" in result]
    if not ran:
        result["max_rel_error_vs_eager"] = "n/a (no baseline ran)"
        return
    got = safetensors_io.to_torch(safetensors_io.read(out_path)["output." + out])
    if precision == "fp32":
        want, against = variants[ran[0]](), ran[0]
    else:
        try:
            wide = lambda t: t.float() if t.is_floating_point() else t
            want = fn({k: wide(v) for k, v in W.items()}, kw, call,
                      {k: wide(v) for k, v in io.items()})[out]
        except Exception as e:  # eager in fp32 does not fit
            result["max_rel_error_vs_eager"] = "n/a (fp32 eager: %s)" % type(e).__name__
            return
        against = "eager-fp32"
    # Every other baseline is checked too (SDPA, FlexAttention, compile).
    for name in ran if others else []:
        if name != against:
            result[name + "_rel_error_vs_" + against] = rel_error(variants[name](), want)
    if precision == "bf16" and others:  # the first baseline's own bf16 error
        result["baseline_rel_error_vs_eager_fp32"] = result[ran[0] + "_rel_error_vs_eager-fp32"]
    err = rel_error(got, want)
    result["max_rel_error_vs_" + against] = err
    result["max_rel_error_vs_eager"] = err if against.startswith("eager") else \
        "%.2g (vs %s)" % (err, against)
    limit = NUMERICS_LIMIT[precision]
    own = result.get(ran[0] + "_rel_error_vs_eager-fp32")
    if precision == "bf16" and isinstance(own, float):
        limit = max(limit, BF16_BASELINE_FACTOR * own)
    if not err <= limit:
        result["error"] = "dat and %s differ: max relative error %.3g (limit %.3g)" % (
            against, err, limit)


def variant(r):
    """The dtype cell: "bf16", or "bf16 cuBLAS" with the library GEMM, and
    the label of a pipeline variant (suite.py --pipeline-variant)."""
    library = "OpenBLAS" if r.get("device") == "cpu" else "cuBLAS"
    return r.get("dtype", "?") + (" " + library if r.get("gemm") == "library" else "") + \
        (" " + r["label"] if r.get("label") else "")


def table(results):
    rows = ["| id | dtype (GEMM) | dat ms | TFLOP/s (fp32 / bf16 peak) | eager ms (×) "
            "| compile ms (×) | SDPA ms (×) | Flex ms (×) | JAX jit ms (×) "
            "| peak MiB dat / eager | max rel err |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        if "dat_ms" not in r:
            rows.append("| %s | %s | error: %s | | | | | | | | |" % (
                r["id"], variant(r), r["error"][:80]))
            continue

        def base(name):
            if name + "_ms" in r:
                return "%.3f (%.2f×)" % (r[name + "_ms"], r[name + "_speedup_of_dat"])
            return r.get(name + "_error", "—")[:40]
        tf = ("%.1f (%.1f%% / %.1f%%)" % (r["dat_tflops"], 100 * r["dat_fraction_of_fp32_peak"],
                                            100 * r["dat_fraction_of_bf16_peak"])
              if "dat_tflops" in r else "—")
        if "dat_gflops" in r:  # CPU: GFLOP/s and the share of the FMA peak
            tf = "%.1f GFLOP/s (%.0f%% of FMA peak)" % (
                r["dat_gflops"], 100 * r.get("dat_fraction_of_fma_peak", 0))
            if "dat_fraction_of_read_bandwidth" in r:  # memory-bound entries
                tf += "; input read at %.1f GB/s (%.0f%% of streaming)" % (
                    r["dat_min_bytes_gbs"], 100 * r["dat_fraction_of_read_bandwidth"])
        peak = r.get("eager_peak_bytes")
        err = r.get("max_rel_error_vs_eager", "—")
        if "error" in r:
            err = "**%s**" % r["error"]
        elif isinstance(err, float):
            err = "%.2g" % err
            if "baseline_rel_error_vs_eager_fp32" in r:  # bf16: the baseline's own
                err += " (bf16 baseline: %.2g)" % r["baseline_rel_error_vs_eager_fp32"]
        rows.append("| %s | %s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["id"], variant(r), r["dat_ms"], tf, base("eager"), base("compile"), base("sdpa"),
            base("flex"), base("jax"),
            "%.1f / %s" % (r["dat_peak_bytes"] / 2**20,
                           "%.1f" % (peak / 2**20) if peak else "—"), err))
    return "\n".join(rows)


def write_results(path, machine, results):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(), "machine": machine,
                   "results": results}, f, indent=1)
    os.replace(path + ".tmp", path)


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--prepare":
        prepare_entry(args[1])
        return 0
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    root, device, only, repeat, baselines = args[0], "cuda", None, 10, None
    results_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                datetime.date.today().isoformat() + "-suite.json")
    rest = args[1:]
    while rest:
        key, value, rest = rest[0], rest[1] if len(rest) > 1 else None, rest[2:]
        if key == "--device":
            device = value
        elif key == "--only":
            only = value.split(",")
        elif key == "--repeat":
            repeat = int(value)
        elif key == "--baselines":
            baselines = [] if value == "none" else value.split(",")
        elif key == "--results":
            results_path = value
        else:
            print(__doc__)
            return 2
    machine = {"device": device, "torch": torch.__version__,
               "torch_threads": torch.get_num_threads()}
    if device == "cpu":
        global CPU_PEAK_GFLOPS, CPU_READ_GBS
        CPU_PEAK_GFLOPS, threads = measure_cpu_peak()
        machine["fma_peak_gflops"], machine["fma_peak_threads"] = CPU_PEAK_GFLOPS, threads
        CPU_READ_GBS = machine["read_bandwidth_gbs"] = measure_cpu_bandwidth()
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                machine["cpu"] = line.split(":", 1)[1].strip()
                break
        print("FMA peak: %s GFLOP/s on %d threads" % (CPU_PEAK_GFLOPS, threads),
              file=sys.stderr)
    if device == "cuda":
        machine["gpu"] = torch.cuda.get_device_name()
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True)
        machine["driver"] = smi.stdout.strip()
    results = []
    # In --only's order (a device session's most wanted first), else sorted.
    names = only if only else sorted(os.listdir(root))
    for name in names:
        d = os.path.join(root, name)
        if not os.path.isfile(os.path.join(d, "entry.json")):
            if only:
                print("no suite entry %s under %s" % (name, root), file=sys.stderr)
            continue
        print("running %s" % name, file=sys.stderr, flush=True)
        try:
            results.append(run_entry(d, device, repeat, baselines))
        except Exception as e:  # a timed-out timing run, a crashed baseline
            results.append({"id": name, "error": "%s: %s" % (type(e).__name__,
                                                             str(e)[:300])})
        # After every entry: a run cut short keeps what it measured.
        write_results(results_path, machine, results)
    if device == "cpu":
        peaks = [r["fma_peak_gflops"] for r in results if "fma_peak_gflops" in r]
        span = (" (again next to each entry: %.1f to %.1f; each entry's share is of the higher"
                " of its own and this)"
                % (min(peaks), max(peaks))) if peaks else ""
        print("Machine: %s, %s threads; fp32 FMA peak measured in this run: %s GFLOP/s%s; "
              "streaming read bandwidth: %s GB/s; PyTorch %s on %d threads.\n" % (
                  machine.get("cpu"), machine.get("fma_peak_threads"),
                  CPU_PEAK_GFLOPS, span, machine.get("read_bandwidth_gbs"),
                  torch.__version__, torch.get_num_threads()))
    print(table(results))
    print("\nresults: %s" % results_path, file=sys.stderr)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
