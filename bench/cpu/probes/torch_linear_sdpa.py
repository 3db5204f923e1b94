#!/usr/bin/env python3
"""PyTorch's own pieces of the attention entries on this CPU: nn.Linear
(MKL's GEMM) and F.scaled_dot_product_attention (the CPU flash kernel) at
the shapes of cpu-K1-attn-d80-n1000, -d128-n900 and -d96-n1200, on THREADS
threads (the best of 5 measurements). Compare with `prog --profile
--threads THREADS` of the same entries (their projection and attention
groups). Needs the bench venv (scripts/bench-venv.sh).

usage: build/bench-venv/bin/python bench/cpu/probes/torch_linear_sdpa.py THREADS
"""
import sys
import time

import torch


def best_ms(fn, calls, rounds=5):
    for _ in range(3):
        fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best * 1e3


def main():
    torch.set_num_threads(int(sys.argv[1]))
    print("torch %s, %d threads" % (torch.__version__, torch.get_num_threads()))
    with torch.no_grad():
        for n, d, heads in ((1000, 640, 8), (900, 1024, 8), (1200, 768, 8)):
            x = torch.randn(n, d)
            linear = torch.nn.Linear(d, d)
            ms = best_ms(lambda: linear(x), 20)
            print("Linear [%d, %d] x [%d, %d]: %.3f ms, %.1f GFLOP/s"
                  % (n, d, d, d, ms, 2 * n * d * d / ms / 1e6))
            q = torch.randn(1, heads, n, d // heads)
            sdpa = torch.nn.functional.scaled_dot_product_attention
            ms = best_ms(lambda: sdpa(q, q, q), 5)
            print("  SDPA core [1, %d, %d, %d] (not causal): %.3f ms, %.1f GFLOP/s"
                  % (heads, n, d // heads, ms, 4 * n * n * d / ms / 1e6))


if __name__ == "__main__":
    main()
