"""The benchmark workloads, shared by every bench_*.py script (one definition each).

- ``mlp_step``: MLP 784-1024-1024-10, float32, relu + cross-entropy, forward+backward;
- ``chain``: 1000 tiny elementwise ops on shape (16,), forward+backward;
each written for gradkit, for PyTorch (when installed) and, for the MLP, by hand in NumPy.
"""
from __future__ import annotations

import time

import numpy as np

SIZES = (784, 1024, 1024, 10)


def mlp_params(lib, rng, dtype="float32"):
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        w = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(dtype)
        b = np.zeros(fan_out, dtype=dtype)
        params += [w, b]
    if lib is None:
        return params
    return [lib.tensor(p, requires_grad=True) for p in params]


def mlp_data(rng, batch):
    x = rng.standard_normal((batch, SIZES[0])).astype("float32")
    y = rng.integers(0, SIZES[-1], batch)
    return x, y


def mlp_step(lib, params, x, y):
    """One forward+backward with gradkit or torch (same code: the torch API)."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i < len(params) - 2:
            h = h.relu()
    logp = h.log_softmax(1)
    loss = -logp.gather(1, y.unsqueeze(1)).mean()
    for p in params:
        p.grad = None
    loss.backward()
    return loss


def mlp_step_numpy(params, x, y):
    """The same step written by hand in NumPy (the baseline: no autograd at all)."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    n = x.shape[0]
    loss = -logp[np.arange(n), y].mean()
    g = np.exp(logp)
    g[np.arange(n), y] -= 1
    g /= n
    gw3, gb3 = h2.T @ g, g.sum(0)
    g = (g @ w3.T) * (z2 > 0)
    gw2, gb2 = h1.T @ g, g.sum(0)
    g = (g @ w2.T) * (z1 > 0)
    gw1, gb1 = x.T @ g, g.sum(0)
    return loss, (gw1, gb1, gw2, gb2, gw3, gb3)


def chain_step(lib, x, n_ops: int = 1000):
    """n_ops tiny elementwise ops (mul/add/sin cycle) and a backward through all of them."""
    h = x
    for _ in range(n_ops // 3):
        h = (h * 0.999 + 0.001).sin()
    h.sum().backward()
    x.grad = None


def best_of(fn, repeat: int = 5, number: int = 1, clock=time.process_time) -> float:
    """Best time in seconds of ``number`` calls, over ``repeat`` rounds.

    The default clock is this process's CPU time: other processes sharing the cores barely
    disturb it (run with OPENBLAS_NUM_THREADS=1 so that BLAS threads do not spin on it).
    """
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            fn()
        best = min(best, (clock() - start) / number)
    return best


def interleaved_best(step, contexts: dict, repeats: int, inner: int,
                     clock=time.process_time) -> dict:
    """Best seconds per step, plain and inside each context, interleaving them round by round.

    Each round times ``inner`` plain steps, then, for every context, opens it, runs one untimed
    step (the session's warm-up) and times ``inner`` steps inside it: drift of a shared machine
    then hits plain and observed runs alike, and the ratios of the minima are stable.
    Returns ``{"plain": s, name: s, ...}``.
    """
    best = dict.fromkeys(["plain", *contexts], float("inf"))

    def timed(label):
        start = clock()
        for _ in range(inner):
            step()
        best[label] = min(best[label], (clock() - start) / inner)

    step()
    for _ in range(repeats):
        timed("plain")
        for label, context in contexts.items():
            with context():
                step()
                timed(label)
    return best


class NoOpObserver:
    """An observer watching ops and nodes that does nothing there: the floor that any observer
    of those points pays on gradkit's observed path (one that watches none pays nothing)."""

    def __enter__(self):
        from gradkit.autograd import observers

        class Watching(observers.Observer):  # overriding a point is what makes it watched
            def op_exit(self, *point) -> None:
                pass

            def node_enter(self, *point):
                return None

            def node_exit(self, *point) -> None:
                pass

        self.observer = Watching()
        observers.attach(self.observer)

    def __exit__(self, *exc):
        from gradkit.autograd import observers
        observers.detach(self.observer)


def try_import_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch
