"""The 1000-op chain (forward + backward) against torch, alternated in one process.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=<a gradkit tree> python tests/benchmarks/bench_chain_ratio.py

Prints the median of five gradkit/torch ratios, each from the best of 7 steps of each, so that
two trees (PYTHONPATH) can be compared in one sitting of a busy machine.
"""
from __future__ import annotations

import statistics

import gradkit
from workloads import best_of, chain_step, try_import_torch


def main() -> None:
    torch = try_import_torch()
    if torch is None:
        raise SystemExit("bench_chain_ratio needs torch (the reference)")
    torch.set_num_threads(1)
    x, tx = gradkit.randn(16, requires_grad=True), torch.randn(16, requires_grad=True)
    ratios = [best_of(lambda: chain_step(gradkit, x, 999), 7) /
              best_of(lambda: chain_step(torch, tx, 999), 7) for _ in range(5)]
    print(f"{gradkit.__file__}: chain gradkit/torch median {statistics.median(ratios):.3f} "
          f"({', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
