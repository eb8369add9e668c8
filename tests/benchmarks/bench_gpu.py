"""GPU benchmark (issue: GPU backend). Run: python tests/benchmarks/bench_gpu.py

One training step of the MLP 784-1024-1024-10 (float32, batch 256: forward, cross-entropy,
backward, SGD update) with gradkit on the GPU (CuPy), gradkit on the CPU (NumPy) and, when
installed, PyTorch on CUDA and on the CPU. GPU work is asynchronous, so every timed step is
bracketed by a device synchronize (``gradkit.cuda.synchronize`` / ``torch.cuda.synchronize``).
Without a GPU it prints the CPU figures and says so.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import gradkit
from workloads import mlp_data, mlp_params, mlp_step, try_import_torch

LR = 0.01


def train_step(lib, params, x, y):
    loss = mlp_step(lib, params, x, y)
    with lib.no_grad():
        for p in params:
            p.sub_(p.grad, alpha=LR)
    return loss


def timed(step, sync, warmup: int, steps: int) -> float:
    """Median seconds per step; ``sync`` waits for the device before reading the clock."""
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _gradkit_setup(device, batch):
    rng = np.random.default_rng(0)
    x, y = mlp_data(rng, batch)
    params = [gradkit.tensor(p, device=device, requires_grad=True) for p in mlp_params(None, rng)]
    return params, gradkit.tensor(x, device=device), gradkit.tensor(y, device=device)


def _torch_setup(torch, device, batch):
    rng = np.random.default_rng(0)
    x, y = mlp_data(rng, batch)
    params = [torch.tensor(p, device=device, requires_grad=True) for p in mlp_params(None, rng)]
    return params, torch.tensor(x, device=device), torch.tensor(y, device=device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    rows = []
    on_gpu = gradkit.cuda.is_available()

    def run(label, lib, params, x, y, sync):
        seconds = timed(lambda: train_step(lib, params, x, y), sync, args.warmup, args.steps)
        rows.append((label, seconds))
        loss = mlp_step(lib, params, x, y).item()
        print(f"{label:<22} {seconds * 1e3:9.3f} ms/step  (loss {loss:.4f})")

    print(f"MLP 784-1024-1024-10 float32, batch {args.batch}: median of {args.steps} steps")
    if on_gpu:
        run("gradkit cuda (CuPy)", gradkit, *_gradkit_setup("cuda", args.batch),
            gradkit.cuda.synchronize)
    else:
        print("no CUDA device visible to CuPy: GPU rows skipped")
    run("gradkit cpu (NumPy)", gradkit, *_gradkit_setup("cpu", args.batch), lambda: None)
    torch = try_import_torch()
    if torch is not None:
        if torch.cuda.is_available():
            run("torch cuda", torch, *_torch_setup(torch, "cuda", args.batch),
                torch.cuda.synchronize)
        run("torch cpu", torch, *_torch_setup(torch, "cpu", args.batch), lambda: None)
    times = dict(rows)
    if "gradkit cuda (CuPy)" in times:
        gpu = times["gradkit cuda (CuPy)"]
        print(f"gradkit cuda is {times['gradkit cpu (NumPy)'] / gpu:.1f}x faster than gradkit cpu")
        if "torch cuda" in times:
            print(f"gradkit cuda / torch cuda = {gpu / times['torch cuda']:.2f}x")


if __name__ == "__main__":
    main()
