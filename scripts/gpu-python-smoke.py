#!/usr/bin/env python3
"""The Python package's CUDA path on a GPU machine (scripts/gpu-session.sh
runs it): a saved CUDA model (the example DAT LM, fp32) loaded with
dat.load, called on numpy arrays and on torch CUDA tensors, and decoding
with its KV cache.

    gpu-python-smoke.py MODEL_DIR

MODEL_DIR (gpu-session.sh prepare makes it): the saved model (model.so,
its weights, dat-model.json), tokens.safetensors (input.idx) and
cpu-logits.safetensors, the CPU program's output on those tokens. Checks:
the forward pass against the CPU program's logits (relative error <= 1e-4);
torch CUDA tensors in give CUDA tensors out, equal to the numpy call; the
decode step's logits at every position against the forward pass's (the KV
cache); each greedily decoded token is the argmax of a full forward pass
over the tokens before it. Prints one line per check
and exits non-zero if one fails.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "python"))
import dat  # noqa: E402
from dat import _safetensors  # noqa: E402


def main(directory):
    failed = 0

    def report(name, ok, detail):
        nonlocal failed
        failed += 0 if ok else 1
        print("python-cuda %s: %s (%s)" % (name, "PASS" if ok else "FAIL", detail))

    m = dat.load(directory)
    tokens = _safetensors.read(os.path.join(directory, "tokens.safetensors"))[0]["input.idx"]
    want = _safetensors.read(os.path.join(directory, "cpu-logits.safetensors"))[0]["output.logits"]
    got = m(idx=tokens)
    err = float(np.abs(got - want).max() / np.abs(want).max())
    report("forward", got.shape == want.shape and err <= 1e-4,
           "%s, max relative error %.2g against the CPU program" % (m, err))

    try:
        import torch
        t = m(idx=torch.from_numpy(tokens.copy()).cuda())
        same = t.is_cuda and np.array_equal(t.cpu().numpy(), got)
        report("torch", same, "CUDA tensor in, %s out on %s" % (
            type(t).__name__, t.device))
    except ImportError:
        print("python-cuda torch: SKIPPED (no torch)")
    except Exception as e:  # noqa: BLE001 — a CUDA error, reported
        report("torch", False, "%s: %s" % (type(e).__name__, str(e)[:200]))

    # The KV cache: step by step, each position's logits against the
    # forward pass's.
    m.reset()
    steps = np.stack([np.asarray(m.step(tokens[:, i]))
                      for i in range(tokens.shape[1])], axis=1)
    err = float(np.abs(steps - got).max() / np.abs(got).max())
    report("step", err <= 1e-4, "%d steps, max relative error %.2g against the "
           "forward pass" % (tokens.shape[1], err))

    # What a call costs with the results' host copies page-locked (the
    # default) and pageable (DAT_PINNED_RESULTS=0, read when a copy is
    # made; a fresh model releases the old copies). Reported, not checked.
    costs, before = {}, os.environ.get("DAT_PINNED_RESULTS")
    for pinned in ("1", "0"):
        os.environ["DAT_PINNED_RESULTS"] = pinned
        timed = dat.load(directory)
        timed(idx=tokens)
        start = time.perf_counter()
        for _ in range(20):
            timed(idx=tokens)
        costs[pinned] = (time.perf_counter() - start) / 20 * 1e3
        del timed
    if before is None:
        del os.environ["DAT_PINNED_RESULTS"]
    else:
        os.environ["DAT_PINNED_RESULTS"] = before
    print("python-cuda call: %.3f ms with page-locked result copies, %.3f ms "
          "with pageable ones (%s logits, %.1f MB)" % (
              costs["1"], costs["0"], "x".join(map(str, got.shape)),
              got.nbytes / 1e6))

    m.reset()
    prompt = tokens[:, :8]
    out = np.asarray(m.generate(prompt, 8))
    full = [int(np.argmax(m(idx=out[:, :n])[0, n - 1])) for n in range(8, 16)]
    report("generate", out[0, 8:].tolist() == full,
           "decoded %s, full-pass argmax %s" % (out[0, 8:].tolist(), full))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
