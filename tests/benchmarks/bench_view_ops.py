"""µs per call of common view ops on a (3, 4) tensor that requires grad, in gradkit and (when
installed) PyTorch, best of 7 repeats of CPU time, one process (docs/performance.md). Run:
OPENBLAS_NUM_THREADS=1 python tests/benchmarks/bench_view_ops.py [--calls 5000]
"""
from __future__ import annotations

import argparse
import time
import timeit

import gradkit
from workloads import try_import_torch

CASES = {  # name: a call on x (3, 4) or c (1, 4)
    "x.unsqueeze(0)": lambda x, c: x.unsqueeze(0),
    "c.squeeze(0)": lambda x, c: c.squeeze(0),
    "x.view(4, 3)": lambda x, c: x.view(4, 3),
    "x.reshape(-1)": lambda x, c: x.reshape(-1),
    "x.t()": lambda x, c: x.t(),
    "x.transpose(0, 1)": lambda x, c: x.transpose(0, 1),
    "x[0]": lambda x, c: x[0],
    "x[:, 1]": lambda x, c: x[:, 1],
    "x.select(1, 2)": lambda x, c: x.select(1, 2),
    "x.expand(2, 3, 4)": lambda x, c: x.expand(2, 3, 4),
    "x.exp() (no view)": lambda x, c: x.exp(),
}


def per_call_us(lib, case, calls: int) -> float:
    x = lib.ones(3, 4, requires_grad=True).clone()
    c = lib.ones(1, 4, requires_grad=True).clone()
    best = min(timeit.repeat(lambda: case(x, c), number=calls, repeat=7, timer=time.process_time))
    return best / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    calls = parser.parse_args().calls
    torch = try_import_torch()
    print(f"{'op':>18} {'gradkit us':>11} {'torch us':>9} {'ratio':>6}")
    for name, case in CASES.items():
        mine = per_call_us(gradkit, case, calls)
        theirs = per_call_us(torch, case, calls) if torch is not None else float("nan")
        print(f"{name:>18} {mine:>11.2f} {theirs:>9.2f} {mine / theirs:>5.2f}x", flush=True)


if __name__ == "__main__":
    main()
