"""A small CNN training step on 8x8 images: gradkit vs (if installed) PyTorch, CPU.

conv(1->8, 3x3, pad 1) -> relu -> max_pool 2 -> conv(8->16, 3x3, pad 1) -> relu ->
max_pool 2 -> linear(64->10) -> cross_entropy, batch 64, float32; forward + backward.
Also times conv2d alone (forward, forward + backward). The minimum of many repeats
is kept, so that other load on the machine cancels out.

    OPENBLAS_NUM_THREADS=1 python tests/benchmarks/bench_cnn.py [--repeats 30] [--batch 64]

(On a loaded 2-core machine, multi-threaded OpenBLAS makes every BLAS call 10x+ slower;
one thread gives stable numbers. torch is limited to one thread too.)
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def make(lib, batch):
    rng = np.random.default_rng(0)

    def param(*shape):
        return lib.from_numpy((rng.standard_normal(shape) * 0.1).astype(np.float32)) \
            .requires_grad_()

    params = [param(8, 1, 3, 3), param(8), param(16, 8, 3, 3), param(16), param(10, 64),
              param(10)]
    images = lib.from_numpy(rng.standard_normal((batch, 1, 8, 8)).astype(np.float32))
    labels = lib.from_numpy(rng.integers(0, 10, batch))
    return params, images, labels


def step(functional, params, images, labels):
    c1, b1, c2, b2, w, b = params
    h = functional.max_pool2d(functional.relu(functional.conv2d(images, c1, b1, padding=1)), 2)
    h = functional.max_pool2d(functional.relu(functional.conv2d(h, c2, b2, padding=1)), 2)
    loss = functional.cross_entropy(functional.linear(h.reshape(h.shape[0], -1), w, b), labels)
    loss.backward()
    return loss


def best_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def measure(name, lib, functional, repeats, batch):
    params, images, labels = make(lib, batch)
    x = lib.from_numpy(np.random.default_rng(1).standard_normal((batch, 8, 8, 8))
                       .astype(np.float32)).requires_grad_()
    w = params[2]
    conv_fwd = best_ms(lambda: functional.conv2d(x, w, padding=1), repeats)
    conv_bwd = best_ms(lambda: functional.conv2d(x, w, padding=1).sum().backward(), repeats)
    train = best_ms(lambda: step(functional, params, images, labels), repeats)
    print(f"{name:8s} conv2d fwd {conv_fwd:7.3f} ms   conv2d fwd+bwd {conv_bwd:7.3f} ms   "
          f"CNN step {train:7.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    import gradkit
    import gradkit.nn.functional
    measure("gradkit", gradkit, gradkit.nn.functional, args.repeats, args.batch)
    try:
        import torch
        import torch.nn.functional
    except ImportError:
        return
    torch.set_num_threads(1)
    measure("torch", torch, torch.nn.functional, args.repeats, args.batch)


if __name__ == "__main__":
    main()
