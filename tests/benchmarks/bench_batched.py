"""Vectorized is_grads_batched vs one backward pass per row.

The jacobian of one MLP layer, tanh(W x + b) with x of 64 and W of 64 x 64, with
respect to x and W: functional.jacobian(vectorize=True) (one batched backward
pass of 64 rows) against vectorize=False (64 backward passes), plus torch's
jacobian on the same program for scale. Results are checked against each other
before timing. Minimum of several repeats, so other load on the machine cancels out.

    python tests/benchmarks/bench_batched.py [--width 64] [--repeats 7]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's convention


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def layer(lib, functional, b):
    return lambda x, w: lib.tanh(functional.linear(x, w, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = args.width
    x0, w0, b0 = rng.standard_normal(n), rng.standard_normal((n, n)) / n, rng.standard_normal(n)
    inputs = (gradkit.tensor(x0), gradkit.tensor(w0))
    f = layer(gradkit, F, gradkit.tensor(b0))

    def jacobian(vectorize):
        return gradkit.autograd.functional.jacobian(f, inputs, vectorize=vectorize)

    for a, b in zip(jacobian(True), jacobian(False), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)
    looped = best_of(args.repeats, lambda: jacobian(False))
    vectorized = best_of(args.repeats, lambda: jacobian(True))
    print(f"jacobian of tanh(linear) {n}->{n} w.r.t. x and W (float64), best of {args.repeats}:")
    print(f"  one pass per row (vectorize=False): {looped * 1e3:8.2f} ms")
    print(f"  vectorized       (vectorize=True):  {vectorized * 1e3:8.2f} ms"
          f"   ({looped / vectorized:.1f}x faster)")
    try:
        import torch
    except ImportError:
        return
    tf = layer(torch, torch.nn.functional, torch.tensor(b0))
    t_inputs = (torch.tensor(x0), torch.tensor(w0))
    for vectorize in (False, True):
        t = best_of(args.repeats, lambda v=vectorize: torch.autograd.functional.jacobian(
            tf, t_inputs, vectorize=v))
        print(f"  torch {'vectorize=True ' if vectorize else 'vectorize=False'}:           "
              f"{t * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
