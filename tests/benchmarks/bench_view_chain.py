"""A chain of views, unsqueeze(0) then squeeze(0), 10^3 .. 10^6 views long: µs per view in
gradkit and (when installed) PyTorch, interleaved in one run. Each view links to the one it was
made from (ops/views.py), so the cost per view stays flat as the chain grows (issue 19). Run:
python tests/benchmarks/bench_view_chain.py [--lengths 1000,10000,100000,1000000]
"""
from __future__ import annotations

import argparse
import time

import gradkit
from workloads import try_import_torch


def per_view_us(lib, length: int) -> float:
    """µs per view of a chain of ``length`` views of a tensor that requires grad."""
    y = lib.ones(4, requires_grad=True).clone()
    start = time.process_time()
    for _ in range(length // 2):
        y = y.unsqueeze(0).squeeze(0)
    return (time.process_time() - start) / length * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="1000,10000,100000,1000000")
    lengths = [int(n) for n in parser.parse_args().lengths.split(",")]
    torch = try_import_torch()
    for lib in (gradkit, torch):  # warm up: first calls load and cache
        if lib is not None:
            per_view_us(lib, 1000)
    first = None
    print(f"{'views':>9} {'gradkit us/view':>16} {'vs first':>9} {'torch us/view':>14} "
          f"{'ratio':>6}")
    for length in lengths:
        mine = per_view_us(gradkit, length)
        first = first or mine
        theirs = per_view_us(torch, length) if torch is not None else float("nan")
        print(f"{length:>9} {mine:>16.2f} {mine / first:>8.2f}x {theirs:>14.2f} "
              f"{mine / theirs:>5.2f}x", flush=True)


if __name__ == "__main__":
    main()
