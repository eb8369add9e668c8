"""Cost of anomaly mode: plain run vs detect_anomaly(), for gradkit and (if installed) PyTorch.

Two workloads, forward + backward each: a chain of 1000 tiny ops on shape (16,), and
one MLP step (784-1024-1024-10, batch 256, relu + cross-entropy). Targets for gradkit:
<= 1.3x on the chain, <= 1.05x on the MLP. Plain and anomaly runs are interleaved and
the minimum of many repeats is kept; the default clock is this process's CPU time
(all its threads), which other processes sharing the cores barely disturb.

    python tests/benchmarks/bench_anomaly.py [--repeats 15] [--clock process|wall]
"""
from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np


def chain_step(lib, x):
    y = x
    for _ in range(1000):
        y = y * 1.0001
    y.sum().backward()


def make_mlp(lib):
    rng = np.random.default_rng(0)

    def param(*shape):
        data = (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
        return lib.from_numpy(data).requires_grad_()

    params = [param(784, 1024), param(1024, 1024), param(1024, 10)]
    inputs = lib.from_numpy(rng.standard_normal((256, 784)).astype(np.float32))
    labels = lib.from_numpy(rng.integers(0, 10, (256, 1)))
    return params, inputs, labels


def mlp_step(lib, params, inputs, labels):
    w1, w2, w3 = params
    logits = (((inputs @ w1).relu() @ w2).relu()) @ w3
    loss = -lib.log_softmax(logits, 1).gather(1, labels).mean()
    for p in params:
        p.grad = None
    loss.backward()


CLOCKS = {"process": time.process_time, "wall": time.perf_counter}
clock = time.process_time


def best_ratio(step, anomaly, repeats: int, inner: int) -> tuple[float, float]:
    """min seconds per step (plain, anomaly), interleaving the two to share the noise."""
    plain_best = anomaly_best = float("inf")
    for _ in range(2):  # warm-up
        step()
        with anomaly():
            step()
    for _ in range(repeats):
        start = clock()
        for _ in range(inner):
            step()
        plain_best = min(plain_best, (clock() - start) / inner)
        with anomaly():
            start = clock()
            for _ in range(inner):
                step()
            anomaly_best = min(anomaly_best, (clock() - start) / inner)
    return plain_best, anomaly_best


class _NoOpObserver:
    """A do-nothing observer: the floor that any observer pays on gradkit's observed path."""

    def __enter__(self):
        from gradkit.autograd import observers
        self.observer = observers.Observer()
        observers.attach(self.observer)

    def __exit__(self, *exc):
        from gradkit.autograd import observers
        observers.detach(self.observer)


def measure(lib, name: str, repeats: int) -> None:
    import warnings
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    anomaly = lib.autograd.detect_anomaly
    x = lib.randn(16, requires_grad=True)
    if name == "gradkit":
        plain, floor = best_ratio(lambda: chain_step(lib, x), _NoOpObserver, repeats, 3)
        print(f"{name:8s} chain, no-op observer (floor)                 ratio "
              f"{floor / plain:5.2f}x")
    plain, with_anomaly = best_ratio(lambda: chain_step(lib, x), anomaly, repeats, 3)
    print(f"{name:8s} chain 1000x(16,)  plain {plain * 1e3:8.2f} ms  anomaly "
          f"{with_anomaly * 1e3:8.2f} ms  ratio {with_anomaly / plain:5.2f}x")
    params, inputs, labels = make_mlp(lib)
    plain, with_anomaly = best_ratio(lambda: mlp_step(lib, params, inputs, labels), anomaly,
                                     repeats, 1)
    print(f"{name:8s} MLP step          plain {plain * 1e3:8.2f} ms  anomaly "
          f"{with_anomaly * 1e3:8.2f} ms  ratio {with_anomaly / plain:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
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
