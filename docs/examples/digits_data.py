"""The 8x8 handwritten digits of data/digits.npz, split and scaled for the examples."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import gradkit

DATA = Path(__file__).resolve().parent / "data" / "digits.npz"


def load_digits(test_fraction: float = 0.2, seed: int = 0):
    """(train_images, train_labels, test_images, test_labels) as gradkit tensors.

    Images are float32 of shape (N, 1, 8, 8) scaled to [0, 1]; labels are int64.
    """
    with np.load(DATA) as data:
        images = data["images"].astype(np.float32)[:, None] / 16.0
        labels = data["labels"].astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return (gradkit.from_numpy(images[train]), gradkit.from_numpy(labels[train]),
            gradkit.from_numpy(images[test]), gradkit.from_numpy(labels[test]))


def batches(n: int, batch_size: int, rng: np.random.Generator):
    """Shuffled index arrays covering range(n) once (one epoch)."""
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield gradkit.from_numpy(order[start:start + batch_size])


def accuracy(logits: gradkit.Tensor, labels: gradkit.Tensor) -> float:
    return (logits.argmax(1) == labels).float().mean().item()
