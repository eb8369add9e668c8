"""Time the docs/examples scripts and the flagship MLP loop against PyTorch.

Run: OPENBLAS_NUM_THREADS=1 python tests/benchmarks/bench_examples.py [--skip-scripts]

Prints (a) wall time of each example script with default settings (a subprocess each,
one BLAS thread), (b) time of one epoch of the mlp_digits training loop, and of one
Adam step on its parameters, in gradkit and in PyTorch (same model, data and batches).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import gradkit

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SCRIPTS = ("mlp_digits.py", "cnn_digits.py", "char_transformer.py", "newton_chain.py")


def time_scripts() -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for script in SCRIPTS:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True,
                              text=True, env=env)
        elapsed = time.perf_counter() - start
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]
        print(f"(a) {script:22s} {elapsed:6.2f} s   {last[:70]}")


def epoch_time(lib, repeat: int = 3) -> tuple[float, float]:
    """Best-of-``repeat`` seconds for one training epoch and for one optimizer step."""
    with np.load(EXAMPLES / "data" / "digits.npz") as data:
        images = data["images"].reshape(-1, 64).astype(np.float32) / 16
        labels = data["labels"].astype(np.int64)
    model = lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10))
    opt = lib.optim.Adam(model.parameters(), lr=3e-3)
    x, y = lib.tensor(images), lib.tensor(labels)
    order = np.random.default_rng(0).permutation(len(labels))
    batches = [lib.tensor(order[i:i + 64]) for i in range(0, len(order), 64)]
    best_epoch = best_step = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for index in batches:
            loss = lib.nn.functional.cross_entropy(model(x[index]), y[index])
            opt.zero_grad()
            loss.backward()
            opt.step()
        best_epoch = min(best_epoch, time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(100):
            opt.step()
        best_step = min(best_step, (time.perf_counter() - start) / 100)
    return best_epoch, best_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-scripts", action="store_true")
    args = parser.parse_args()
    if not args.skip_scripts:
        time_scripts()
    ours_epoch, ours_step = epoch_time(gradkit)
    print(f"(b) mlp_digits epoch: gradkit {ours_epoch * 1e3:.1f} ms; "
          f"Adam step {ours_step * 1e6:.0f} us")
    try:
        import torch
    except ImportError:
        print("(b) PyTorch not installed: no comparison")
        return
    torch.set_num_threads(1)
    theirs_epoch, theirs_step = epoch_time(torch)
    print(f"(b) mlp_digits epoch: torch   {theirs_epoch * 1e3:.1f} ms; "
          f"Adam step {theirs_step * 1e6:.0f} us  -> gradkit/torch epoch "
          f"{ours_epoch / theirs_epoch:.2f}x, step {ours_step / theirs_step:.2f}x")


if __name__ == "__main__":
    main()
