"""Cost of anomaly mode: plain run vs detect_anomaly(), for gradkit and (if installed) PyTorch.

Two workloads, forward + backward each: a chain of 1000 tiny ops on shape (16,), and
one MLP step (784-1024-1024-10, batch 256, relu + cross-entropy). Targets for gradkit:
<= 1.3x on the chain, <= 1.05x on the MLP. Plain and anomaly runs are interleaved and
the minimum of many repeats is kept; the default clock is this process's CPU time
(all its threads), which other processes sharing the cores barely disturb.

    python tests/benchmarks/bench_anomaly.py [--repeats 40] [--clock process|wall]
"""
from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np

from workloads import (
    NoOpObserver, chain_step, interleaved_best, mlp_data, mlp_params, mlp_step)


CLOCKS = {"process": time.process_time, "wall": time.perf_counter}
clock = time.process_time


def best_ratio(step, anomaly, repeats: int, inner: int) -> tuple[float, float]:
    """min seconds per step (plain, anomaly), interleaving the two to share the noise."""
    best = interleaved_best(step, {"anomaly": anomaly}, repeats, inner, clock)
    return best["plain"], best["anomaly"]


def measure(lib, name: str, repeats: int) -> None:
    import warnings
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    anomaly = lib.autograd.detect_anomaly
    x = lib.randn(16, requires_grad=True)
    if name == "gradkit":
        plain, floor = best_ratio(lambda: chain_step(lib, x), NoOpObserver, repeats, 3)
        print(f"{name:8s} chain, no-op observer (floor)                 ratio "
              f"{floor / plain:5.2f}x")
    plain, with_anomaly = best_ratio(lambda: chain_step(lib, x), anomaly, repeats, 3)
    print(f"{name:8s} chain 1000x(16,)  plain {plain * 1e3:8.2f} ms  anomaly "
          f"{with_anomaly * 1e3:8.2f} ms  ratio {with_anomaly / plain:5.2f}x")
    rng = np.random.default_rng(0)
    params = mlp_params(lib, rng)
    x_data, y_data = mlp_data(rng, 256)
    inputs, labels = lib.tensor(x_data), lib.tensor(y_data)
    plain, with_anomaly = best_ratio(lambda: mlp_step(lib, params, inputs, labels), anomaly,
                                     repeats, 1)
    print(f"{name:8s} MLP step          plain {plain * 1e3:8.2f} ms  anomaly "
          f"{with_anomaly * 1e3:8.2f} ms  ratio {with_anomaly / plain:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    args = parser.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    import gradkit
    measure(gradkit, "gradkit", args.repeats)
    with contextlib.suppress(ImportError):
        import torch
        measure(torch, "torch", args.repeats)


if __name__ == "__main__":
    main()
