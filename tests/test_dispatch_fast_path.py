"""Dispatch's fast path (CPU Tensors, NumPy arrays, Python numbers, no observer) gives what
its general path gives, and what torch gives; graphs hold no reference cycles."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import gradkit
from gradkit.autograd import observers
from gradkit.ops import _dispatch, _dispatch_hot


class _WatchOps(observers.Observer):
    """Watching ops sends every op down ``_dispatch_general`` (and does nothing else)."""

    def op_exit(self, token, name, inputs, outputs, node, params) -> None:
        pass


def _program(lib, x, w, k):
    """Ops of every fast-path kind: tensor/number operands, broadcasting, a non-grad input,
    integer tensors, reductions with a named node (sum), matmul and a view (general)."""
    h = (x * 0.5 + 1).sin() * w - k
    h = (h @ w.reshape(4, 1)).tanh().exp()
    counts = lib.arange(4) * 2 + 1  # integer: no graph
    return h.sum() + (x.t() * 2).mean(), counts


def _run(lib, observed: bool):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = lib.tensor(rng.standard_normal(4), requires_grad=True)
    k = lib.tensor(rng.standard_normal(4))
    if observed:
        watcher = _WatchOps()
        observers.attach(watcher)
        try:
            loss, counts = _program(lib, x, w, k)
        finally:
            observers.detach(watcher)
    else:
        loss, counts = _program(lib, x, w, k)
    names, node = [], loss.grad_fn
    while node is not None:  # the graph's first path, by node names
        names.append(type(node).__name__)
        node = next((fn for fn, _ in node.next_functions if fn is not None), None)
    loss.backward()
    return loss.detach().numpy(), counts.numpy(), x.grad.numpy(), w.grad.numpy(), names


def test_fast_and_general_paths_agree():
    fast, general = _run(gradkit, False), _run(gradkit, True)
    for a, b in zip(fast[:4], general[:4]):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    assert fast[4] == general[4]


def test_fast_path_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _run(gradkit, False), _run(torch, False)
    for a, b in zip(ours[:4], theirs[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert ours[4] == theirs[4]  # the same node names along the graph


def test_cpu_tensor_ops_take_the_fast_path(monkeypatch):
    calls = []
    general = _dispatch._dispatch_general
    for module in (_dispatch, _dispatch_hot):  # the n-ary fast path and the hot paths
        monkeypatch.setattr(module, "_dispatch_general",
                            lambda *args: calls.append(args[0].name) or general(*args))
    x = gradkit.randn(16, requires_grad=True)
    ((x * 0.999 + 0.001).sin() * x).sum().backward()  # forward and the rules' raw arrays
    assert calls == []  # (sum: a NumPy scalar result, made a 0-d tensor without a detour)
    with gradkit.autograd.detect_anomaly():  # an observer: the general path, always
        (x * 2).sin()
    assert calls == ["mul", "sin"]


def test_fast_path_errors_are_the_general_paths():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as ours:
        gradkit.ones(2, requires_grad=True) * gradkit.ones(3)
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, requires_grad=True) * torch.ones(3)
    assert str(ours.value) == str(theirs.value)


def test_numpy_operands_keep_torch_promotion():
    torch = pytest.importorskip("torch")
    x = gradkit.ones(2, dtype=gradkit.float32)
    ours = x + np.array(1.0)  # a 0-d float64 array ranks as a dimensioned operand
    theirs = torch.ones(2) + np.array(1.0)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch", "gradkit")


def test_graphs_hold_no_reference_cycles():
    """A graph dies by reference counting alone: the cyclic GC finds nothing to collect."""
    x = gradkit.randn(16, requires_grad=True)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for backward in (False, True):
            h = x
            for _ in range(100):
                h = (h * 0.999 + 0.001).sin()
            if backward:
                h.sum().backward()
            del h
            assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def _named_and_metadata_ops(lib, observed: bool):
    """Ops whose node name depends on the call (torch's overloads) or that save metadata
    (shapes): since 2026-12-05 the hot paths record them too. Returns each result's node name,
    the shapes its node saved, and the gradients."""
    rng = np.random.default_rng(3)
    a = lib.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    v = lib.tensor(rng.standard_normal(3), requires_grad=True)
    row = lib.tensor(rng.standard_normal((1, 3)), requires_grad=True)
    watcher = _WatchOps()
    if observed:
        observers.attach(watcher)
    try:
        results = [a.sum(0), a.sum(), a.mean(1), row.squeeze(0), row.squeeze(), a.view(3, 2),
                   a @ a.t(), a @ v, v @ v, a.pow(2), 2 ** v, a.pow(a), a.remainder(2.0),
                   a.unsqueeze(1).expand(2, 4, 3)]
    finally:
        if observed:
            observers.detach(watcher)
    names = [type(r.grad_fn).__name__ for r in results]
    sizes = [tuple(getattr(r.grad_fn, "_saved_self_sym_sizes", ())) for r in results]
    sum(r.sum() for r in results).backward()
    return names, sizes, [t.grad.numpy() for t in (a, v, row)]


def test_named_and_metadata_ops_record_alike_on_both_paths(monkeypatch):
    torch = pytest.importorskip("torch")
    calls = []
    general = _dispatch._dispatch_general
    monkeypatch.setattr(_dispatch_hot, "_dispatch_general",
                        lambda *args: calls.append(args[0].name) or general(*args))
    fast = _named_and_metadata_ops(gradkit, observed=False)
    assert calls == []  # every op above took its hot path
    slow = _named_and_metadata_ops(gradkit, observed=True)
    assert calls  # ... and with an op observer the general path
    theirs = _named_and_metadata_ops(torch, observed=False)
    assert fast[0] == slow[0] == theirs[0]
    assert fast[1] == slow[1]
    # torch's MvBackward0 and DotBackward0 keep no self_sym_sizes; the others' are equal
    assert [f for f, t in zip(fast[1], theirs[1]) if t] == [t for t in theirs[1] if t]
    for f, s, t in zip(fast[2], slow[2], theirs[2]):
        assert f.tobytes() == s.tobytes()
        np.testing.assert_allclose(f, t, rtol=1e-12)
