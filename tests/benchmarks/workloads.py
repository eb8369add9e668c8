"""The benchmark workloads, shared by every bench_*.py script (one definition each).

- ``mlp_step``: MLP 784-1024-1024-10, float32, relu + cross-entropy, forward+backward;
- ``chain``: 1000 tiny elementwise ops on shape (16,), forward+backward;
- ``rnn_step``: a 2-layer tanh RNN, T=50 steps, hidden 256, batch 64, float32, forward+backward
  through time (issue 17's RNN);
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


RNN_T, RNN_HIDDEN, RNN_BATCH = 50, 256, 64


def rnn_params(lib, rng, layers: int = 2, dtype="float32"):
    """Per layer: input weights, recurrent weights, bias (inputs have the hidden size)."""
    params = []
    for _ in range(layers):
        for shape in ((RNN_HIDDEN, RNN_HIDDEN), (RNN_HIDDEN, RNN_HIDDEN), (RNN_HIDDEN,)):
            scale = 1 / np.sqrt(RNN_HIDDEN) if len(shape) == 2 else 0.0
            params.append((rng.standard_normal(shape) * scale).astype(dtype))
    if lib is None:
        return params
    return [lib.tensor(p, requires_grad=True) for p in params]


def rnn_data(rng):
    return rng.standard_normal((RNN_T, RNN_BATCH, RNN_HIDDEN)).astype("float32")


def rnn_step(lib, params, xs):
    """h_l = tanh(h_{l-1} @ W_l + h_l @ U_l + b_l) for each layer over T steps; loss = the mean
    of the last hidden state squared; backward through time (the torch API: same code)."""
    hidden = [lib.zeros(RNN_BATCH, RNN_HIDDEN) for _ in range(len(params) // 3)]
    for t in range(RNN_T):
        h = xs[t]
        for layer in range(len(hidden)):
            w, u, b = params[3 * layer: 3 * layer + 3]
            h = hidden[layer] = (h @ w + hidden[layer] @ u + b).tanh()
    loss = (h * h).mean()
    for p in params:
        p.grad = None
    loss.backward()
    return loss


def rnn_step_numpy(params, xs):
    """The same step by hand in NumPy: forward keeping each layer's states, then BPTT."""
    layers = len(params) // 3
    states = [[np.zeros((RNN_BATCH, RNN_HIDDEN), np.float32)] for _ in range(layers)]
    inputs = [[] for _ in range(layers)]
    for t in range(RNN_T):
        h = xs[t]
        for layer in range(layers):
            w, u, b = params[3 * layer: 3 * layer + 3]
            inputs[layer].append(h)
            h = np.tanh(h @ w + states[layer][-1] @ u + b)
            states[layer].append(h)
    loss = (h * h).mean()
    grads = [np.zeros_like(p) for p in params]
    g_top = [None] * RNN_T  # gradient reaching each step's output of the layer above
    g_top[-1] = 2 * h / h.size
    for layer in reversed(range(layers)):
        w, u, _ = params[3 * layer: 3 * layer + 3]
        gw, gu, gb = grads[3 * layer: 3 * layer + 3]
        g_next = None  # gradient from step t+1 through U
        g_below = [None] * RNN_T
        for t in reversed(range(RNN_T)):
            g = g_top[t] if g_next is None else g_next if g_top[t] is None else g_top[t] + g_next
            if g is None:
                continue
            g = g * (1 - states[layer][t + 1] ** 2)
            gw += inputs[layer][t].T @ g
            gu += states[layer][t].T @ g
            gb += g.sum(0)
            g_next = g @ u.T
            g_below[t] = g @ w.T
        g_top = g_below
    return loss, grads


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
