"""The view ops' fast path (ops/_dispatch_hot.py) gives what the general path gives, and what
torch gives: values, gradients, node names, bases, shared versions, in-place rebasing and
torch's errors for views that refuse in-place writes."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import gradkit
from gradkit.autograd import observers
from gradkit.ops import _dispatch_hot
from gradkit.ops.shape import unsqueeze


class _WatchOps(observers.Observer):
    """Watching ops sends every op down ``_dispatch_general`` (and does nothing else)."""

    def op_exit(self, token, name, inputs, outputs, node, params) -> None:
        pass


def _views(lib, x, z):
    """Every one-output view op, chained, an in-place write through a view and a backward."""
    h = x * 1.0  # a non-leaf base: writes through its views rebase its history
    v = h.unsqueeze(0).squeeze(0).view(4, 3).reshape(2, 6).t().transpose(0, 1)
    e = v[0].unsqueeze(1).expand(6, 2).select(1, 0)
    w = v[1].narrow(0, 1, 4)
    p = h.permute(1, 0)[1:3, ::2]
    d = h.diagonal()
    w.mul_(2.0)
    facts = (w._base is h, e._base is h, p._is_view(), h._version, v._version, d._version,
             lib.int64 is not None and lib.arange(6).view(2, 3)._is_view())
    loss = (h.sin() * 2).sum() + (d * p.sum()).sum() + (v ** 2).sum() + (e * 3).sum() \
        + (z.conj().imag * 3).sum() + z.real.sum()
    names = []
    todo, seen = [loss.grad_fn], set()
    while todo:  # every node of the graph, by name
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        todo.extend(fn for fn, _ in node.next_functions)
    loss.backward()
    return (loss.detach().numpy(), x.grad.numpy(), z.grad.numpy(), w.detach().numpy()), \
        facts, sorted(names)


def _run(lib, observed: bool):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    z = lib.tensor(rng.standard_normal(2) + 1j * rng.standard_normal(2), requires_grad=True)
    if not observed:
        return _views(lib, x, z)
    watcher = _WatchOps()
    observers.attach(watcher)
    try:
        return _views(lib, x, z)
    finally:
        observers.detach(watcher)


def test_view_fast_and_general_paths_agree():
    (fast, fast_facts, fast_names), (general, general_facts, general_names) = \
        _run(gradkit, False), _run(gradkit, True)
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    assert fast_facts == general_facts
    assert fast_names == general_names
    assert "CopySlices" in fast_names  # the write through w rebased its base


def test_view_fast_path_matches_torch():
    torch = pytest.importorskip("torch")
    (ours, our_facts, _), (theirs, their_facts, _) = _run(gradkit, False), _run(torch, False)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert our_facts == their_facts


def test_cpu_view_ops_take_the_fast_path(monkeypatch):
    calls = []
    general = _dispatch_hot._dispatch_general
    monkeypatch.setattr(_dispatch_hot, "_dispatch_general",
                        lambda *args: calls.append(args[0].name) or general(*args))
    x = gradkit.randn(3, 4, requires_grad=True)
    x.unsqueeze(0).squeeze(0).t().t().view(12)[2:].sum().backward()  # and the rules' raw arrays
    x.detach().view(4, 3)  # not recording
    assert calls == []
    assert isinstance(unsqueeze(np.ones(3), dim=0), np.ndarray)  # a raw array stays one
    with gradkit.autograd.detect_anomaly():  # an observer: the general path, always
        x.t()
    assert calls == ["t"]
    with gradkit.inference_mode():
        gradkit.ones(2).unsqueeze(0)
    with pytest.raises(RuntimeError):  # an error: the general path raises it
        x.view(5)
    assert calls == ["t", "unsqueeze", "view"]


def _refusals(lib):
    """torch's errors for in-place writes into views made under no_grad (directly, and a view
    of one) and into a split output; None where the write is allowed."""
    x = lib.ones(2, 3, requires_grad=True)
    base = x * 1.0

    def write(make):
        try:
            make().mul_(2.0)
        except RuntimeError as error:
            return str(error)
        return None
    with lib.no_grad():
        in_no_grad = base[0]
        view_in_no_grad = base.unsqueeze(0)
    return (write(lambda: in_no_grad), write(lambda: view_in_no_grad.squeeze(0)),
            write(lambda: base.split(1)[0].squeeze(0)), write(lambda: base.t()[0]))


def test_views_refusing_writes_give_torchs_errors():
    torch = pytest.importorskip("torch")
    ours = _refusals(gradkit)
    assert ours[0] is not None and ours[0].startswith("A view was created in no_grad mode")
    assert ours[-1] is None
    assert ours == _refusals(torch)


def test_a_chain_of_views_keeps_only_its_records_alive():
    """Each view links to its parent's record, not to the parent tensor: along a chain of views
    the tensors die, and the version counter drops their weak references as it grows."""
    leaf = gradkit.ones(4, requires_grad=True)
    x = leaf.clone()
    y, made = x, []
    for _ in range(500):
        y = y.unsqueeze(0).squeeze(0)
        made.append(weakref.ref(y))
    assert [r() is not None for r in made].count(True) == 1  # only the last view
    assert len(x._vc) <= 64
    assert y._base is x and len(y._view.steps()) == 1000
    y.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), np.ones(4))
