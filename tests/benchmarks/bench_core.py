"""Core engine benchmarks. Run: OPENBLAS_NUM_THREADS=1 python tests/benchmarks/bench_core.py

Prints, in one run: (a) MLP step time vs hand-written NumPy and PyTorch CPU, (b) µs per op on a
1000-op chain vs PyTorch, (c) peak memory of the MLP step at batch 4096 vs hand-written NumPy
(tracemalloc, which sees NumPy's allocations), (d) a 2-layer tanh RNN step (T=50, h=256,
b=64) vs hand-written NumPy and PyTorch.
"""
from __future__ import annotations

import argparse
import gc
import tracemalloc

import numpy as np

import gradkit
from workloads import (best_of, chain_step, mlp_data, mlp_params, mlp_step, mlp_step_numpy,
                       rnn_data, rnn_params, rnn_step, rnn_step_numpy, try_import_torch)


def bench_mlp(torch, batch: int, repeat: int):
    rng = np.random.default_rng(0)
    x, y = mlp_data(rng, batch)
    raw = mlp_params(None, rng)
    ours = [gradkit.tensor(p, requires_grad=True) for p in raw]
    gx, gy = gradkit.tensor(x), gradkit.tensor(y)
    t_numpy = best_of(lambda: mlp_step_numpy(raw, x, y), repeat)
    t_ours = best_of(lambda: mlp_step(gradkit, ours, gx, gy), repeat)
    print(f"(a) MLP step batch {batch}: numpy {t_numpy * 1e3:.2f} ms, gradkit {t_ours * 1e3:.2f} ms"
          f" -> {t_ours / t_numpy:.3f}x numpy")
    if torch is not None:
        theirs = [torch.tensor(p, requires_grad=True) for p in raw]
        tx, ty = torch.tensor(x), torch.tensor(y)
        t_torch = best_of(lambda: mlp_step(torch, theirs, tx, ty), repeat)
        print(f"    torch {t_torch * 1e3:.2f} ms -> gradkit/torch {t_ours / t_torch:.3f}x")


def bench_rnn(torch, repeat: int):
    rng = np.random.default_rng(0)
    raw = rnn_params(None, rng)
    xs = rnn_data(rng)
    ours = [gradkit.tensor(p, requires_grad=True) for p in raw]
    gxs = gradkit.tensor(xs)
    t_numpy = best_of(lambda: rnn_step_numpy(raw, xs), repeat)
    t_ours = best_of(lambda: rnn_step(gradkit, ours, gxs), repeat)
    print(f"(d) RNN step: numpy {t_numpy * 1e3:.2f} ms, gradkit {t_ours * 1e3:.2f} ms"
          f" -> {t_ours / t_numpy:.3f}x numpy")
    if torch is not None:
        theirs = [torch.tensor(p, requires_grad=True) for p in raw]
        t_torch = best_of(lambda: rnn_step(torch, theirs, torch.tensor(xs)), repeat)
        print(f"    torch {t_torch * 1e3:.2f} ms -> gradkit/torch {t_ours / t_torch:.3f}x")


def bench_chain(torch, repeat: int):
    n_ops = 999  # 333 x (mul, add, sin)
    x = gradkit.randn(16, requires_grad=True)
    t_ours = best_of(lambda: chain_step(gradkit, x, n_ops), repeat)
    per_op = t_ours / n_ops * 1e6
    print(f"(b) chain of {n_ops} ops on (16,): gradkit {per_op:.2f} us/op (forward+backward)")
    if torch is not None:
        tx = torch.randn(16, requires_grad=True)
        t_torch = best_of(lambda: chain_step(torch, tx, n_ops), repeat)
        print(f"    torch {t_torch / n_ops * 1e6:.2f} us/op -> "
              f"gradkit/torch {t_ours / t_torch:.3f}x")


def peak_bytes(fn) -> int:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def bench_memory(batch: int):
    rng = np.random.default_rng(0)
    x, y = mlp_data(rng, batch)
    raw = mlp_params(None, rng)
    ours = [gradkit.tensor(p, requires_grad=True) for p in raw]
    gx, gy = gradkit.tensor(x), gradkit.tensor(y)
    mlp_step(gradkit, ours, gx, gy)  # warm-up: .grad buffers exist in both runs below
    p_numpy = peak_bytes(lambda: mlp_step_numpy(raw, x, y))
    p_ours = peak_bytes(lambda: mlp_step(gradkit, ours, gx, gy))
    print(f"(c) peak memory, MLP step batch {batch}: numpy {p_numpy / 2**20:.1f} MiB, gradkit "
          f"{p_ours / 2**20:.1f} MiB -> {p_ours / p_numpy:.3f}x numpy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(1)  # the same single thread as NumPy's BLAS (see the docstring)
    bench_mlp(torch, 256, args.repeat)
    bench_chain(torch, args.repeat)
    bench_memory(4096)
    bench_rnn(torch, args.repeat)


if __name__ == "__main__":
    main()
