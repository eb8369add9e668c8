"""Train a small convolutional network on the 8x8 handwritten digits.

Two 3x3 convolutions with max pooling, then a linear classifier: the same data
as mlp_digits.py (data/digits.npz), reaching about 97 % test accuracy in a few
epochs. Uses Conv2d, MaxPool2d, Dropout and AdamW.

    python docs/examples/cnn_digits.py [--epochs 6]
"""
from __future__ import annotations

import argparse

import numpy as np
from digits_data import accuracy, batches, load_digits

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - PyTorch's usual name
from gradkit import nn


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(), nn.Dropout(0.1), nn.Linear(32 * 2 * 2, 10))


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description="CNN on the 8x8 digits")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-3)
    args = parser.parse_args(argv)

    gradkit.manual_seed(0)
    train_x, train_y, test_x, test_y = load_digits()
    model = make_model()
    optimizer = gradkit.optim.AdamW(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(0)
    print(model)
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for index in batches(len(train_y), args.batch_size, rng):
            loss = F.cross_entropy(model(train_x[index]), train_y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(index)
        model.eval()
        with gradkit.no_grad():
            test_accuracy = accuracy(model(test_x), test_y)
        print(f"epoch {epoch + 1:2d}  train loss {total / len(train_y):.4f}  "
              f"test accuracy {test_accuracy:.3f}")
    return test_accuracy


if __name__ == "__main__":
    main()
