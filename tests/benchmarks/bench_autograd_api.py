"""Costs of the autograd API layer: checkpoint memory/time, Function.apply, forward AD.

1. An MLP-like stack of 8 tanh layers (batch 256, width 512), forward + backward:
   saved-for-backward bytes (counted through saved-tensor hooks) and time, plain
   vs each layer checkpointed.
2. 1000 calls of a custom Function vs the same built-in op (forward + backward).
3. A jvp of a 200-op chain: forward AD vs plain forward.
Minimum of several repeats, so other load on the machine cancels out.

    python tests/benchmarks/bench_autograd_api.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import gradkit
import gradkit.autograd.forward_ad as fwAD  # noqa: N812 - torch's idiom
from gradkit.autograd import Function
from gradkit.autograd.graph import saved_tensors_hooks
from gradkit.utils.checkpoint import checkpoint


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def layer(h, w):
    return (h @ w).tanh()


def stack_step(weights, x, checkpointed):
    packed = []
    with saved_tensors_hooks(lambda t: packed.append(t.nbytes) or t, lambda t: t):
        h = x
        for w in weights:
            h = checkpoint(layer, h, w) if checkpointed else layer(h, w)
        loss = h.sum()
    loss.backward()
    return sum(packed)


class Scale(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0001

    @staticmethod
    def backward(ctx, g):
        return g * 1.0001


def function_chain(use_function, x):
    y = x
    for _ in range(1000):
        y = Scale.apply(y) if use_function else y * 1.0001
    y.sum().backward()


def op_chain(x):
    y = x
    for _ in range(100):
        y = (y * 0.999).sin()
    return y


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    rng = np.random.default_rng(0)
    weights = [gradkit.tensor(rng.standard_normal((512, 512)) / 23, requires_grad=True)
               for _ in range(8)]
    x = gradkit.tensor(rng.standard_normal((256, 512)))
    for checkpointed in (False, True):
        saved = stack_step(weights, x, checkpointed)
        seconds = best_of(repeats, lambda c=checkpointed: stack_step(weights, x, c))
        print(f"8-layer stack, checkpoint={checkpointed!s:5}: saved {saved / 2**20:6.2f} MiB, "
              f"{seconds * 1e3:7.1f} ms/step")

    small = gradkit.ones(16, requires_grad=True)
    builtin = best_of(repeats, lambda: function_chain(False, small))
    custom = best_of(repeats, lambda: function_chain(True, small))
    print(f"1000-op chain fwd+bwd: built-in {builtin * 1e3:.1f} ms, custom Function "
          f"{custom * 1e3:.1f} ms ({custom / builtin:.2f}x)")

    primal, tangent = gradkit.ones(64), gradkit.ones(64)
    plain = best_of(repeats, lambda: op_chain(primal))

    def dual_run():
        with fwAD.dual_level():
            fwAD.unpack_dual(op_chain(fwAD.make_dual(primal, tangent)))
    dual = best_of(repeats, dual_run)
    print(f"200-op chain forward: plain {plain * 1e3:.1f} ms, with tangents {dual * 1e3:.1f} ms "
          f"({dual / plain:.2f}x)")


if __name__ == "__main__":
    main()
