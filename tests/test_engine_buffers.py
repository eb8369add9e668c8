"""The engine adds gradients into a buffer in place only when nothing else sees the buffer's
array (engine._add_to_buffer): aliased gradients, hooks' captures, retained gradients and
the user's seeds keep their values, and the results are torch's."""
from __future__ import annotations

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _both(program):
    """Run ``program(lib)`` on gradkit and torch; return both results as NumPy lists."""
    return [[np.asarray(v.detach().numpy()) for v in program(lib)] for lib in (gradkit, torch)]


def _assert_same(program):
    ours, theirs = _both(program)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):  # float64: only the last bits of tanh/exp may differ
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)


def test_one_gradient_object_reaching_a_node_twice():
    def program(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * 2
        (y + y + y).sum().backward()  # add's gradient is the same array for both inputs
        return [x.grad]
    _assert_same(program)


def test_a_gradient_shared_by_two_buffers_is_not_added_into():
    def program(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y, z = x * 2, x * 3
        u = y * 5
        s = y + z  # its node runs first and hands y and z the same gradient array
        c = lib.tensor([1.0, 2.0, 4.0], dtype=lib.float64)
        ((s + u) * c).sum().backward()  # (* c: a fresh array); then u's node adds into y's
        return [x.grad]
    _assert_same(program)


def test_hooks_keep_the_gradients_they_captured():
    def program(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * 3
        captured = []
        y.register_hook(lambda g: captured.append(g))
        z = (y * y + y.sin() + y).sum()
        w = x.exp()
        w.register_hook(lambda g: captured.append(g))
        (z + (w * 2).sum() + (w * 5).sum()).backward()
        return [x.grad, *captured]
    _assert_same(program)


def test_retained_gradients_are_not_changed_by_later_accumulation():
    def program(lib):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        y = x * 2
        y.retain_grad()
        h = y.tanh()
        h.retain_grad()
        (h * 3 + h * 4 + y * 5).sum().backward()
        return [x.grad, y.grad, h.grad]
    _assert_same(program)


def test_the_users_seed_gradients_are_not_written():
    seeds = [np.array([1.0, 2.0]), np.array([10.0, 20.0])]

    def program(lib):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        z = x * 3
        grads = [lib.tensor(s, dtype=lib.float64) for s in seeds]
        lib.autograd.backward([z, z], grads)
        return [x.grad, *grads]
    _assert_same(program)
    ours = _both(program)[0]
    np.testing.assert_array_equal(ours[1], seeds[0])
    np.testing.assert_array_equal(ours[2], seeds[1])


def test_autograd_grad_results_of_a_shared_input():
    def program(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = x @ x
        out = (y * y).sum() + (y.exp()).sum() + y.sum()
        return list(lib.autograd.grad(out, [x, y]))
    _assert_same(program)


def test_accumulation_in_place_keeps_the_sum_of_a_long_rnn_like_chain():
    def program(lib):
        w = lib.tensor(np.linspace(-1, 1, 16).reshape(4, 4), dtype=lib.float64, requires_grad=True)
        h = lib.tensor(np.ones((2, 4)), dtype=lib.float64)
        for _ in range(20):  # w's gradient is the sum of 20 contributions
            h = (h @ w).tanh()
        h.sum().backward()
        return [w.grad]
    _assert_same(program)
