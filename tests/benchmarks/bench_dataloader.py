"""One DataLoader epoch, gradkit against (if installed) torch: docs/data.md's "Speed" figures.

10,000 samples of 32 float32 features and an int label, batch 64, three ways: a
TensorDataset batched sample by sample (torch's default path: one index per sample and
tensor, then stack), a list of dicts of a NumPy row and an int (default_collate's walk), and
a TensorDataset handed whole batches of indices (one indexing op per batch). Median of the
repeats, wall clock, one thread; ``--workers 2`` loads in two worker processes (the epoch
time includes starting and stopping them).

    python tests/benchmarks/bench_dataloader.py [--repeats 5] [--workers 0]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import gradkit  # noqa: E402 - this checkout's gradkit
import gradkit.utils.data  # noqa: E402

FEATURES = np.random.default_rng(0).standard_normal((10_000, 32)).astype(np.float32)
LABELS = np.arange(10_000) % 10


def loaders(lib, data, workers: int) -> dict:
    tensors = data.TensorDataset(lib.from_numpy(FEATURES), lib.from_numpy(LABELS))
    rows = [{"x": FEATURES[i], "y": int(LABELS[i])} for i in range(len(LABELS))]
    batches = data.BatchSampler(data.SequentialSampler(tensors), 64, False)
    return {"TensorDataset, per sample": data.DataLoader(tensors, batch_size=64,
                                                         num_workers=workers),
            "dicts of NumPy + int": data.DataLoader(rows, batch_size=64, num_workers=workers),
            "TensorDataset, per batch": data.DataLoader(tensors, sampler=batches,
                                                        batch_size=None, num_workers=workers)}


def epoch_seconds(loader) -> float:
    start = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=0)
    arguments = parser.parse_args()
    repeats, workers = arguments.repeats, arguments.workers
    libraries = [("gradkit", gradkit, gradkit.utils.data)]
    try:
        import torch
        import torch.utils.data
        torch.set_num_threads(1)
        libraries.append(("torch", torch, torch.utils.data))
    except ImportError:
        pass
    for name, lib, data in libraries:
        for workload, loader in loaders(lib, data, workers).items():
            median = statistics.median(epoch_seconds(loader) for _ in range(repeats))
            print(f"{name:8s} {workload:26s} {median * 1000:7.1f} ms per epoch")


if __name__ == "__main__":
    main()
