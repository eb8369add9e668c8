"""Hooks, graph edges and transposes against torch, on the programs the differential fuzzer
(tests/fuzz, classes ``hooks`` and ``mixed``) found wrong: each program runs in torch and in
gradkit and must give the same values, gradients and errors (see ``assert_same_as_torch``)."""
import math

import pytest

from test_torch_numerics import assert_same_as_torch

torch = pytest.importorskip("torch")


def _relu_second_backward_reaches_output_hook(m):
    # relu's gradient keeps torch's (zero) edge to relu's output: the second backward reaches
    # relu's node, whose output hook turns the zero into one
    x = m.tensor([-0.79], requires_grad=True)
    y = m.relu(x @ x)
    y.register_hook(lambda g: g + 1)
    g, = m.autograd.grad(y * 0.5, x, create_graph=True)
    return (g,) + m.autograd.grad(g.sum(), x)


def _relu_second_backward_reaches_leaf_hook(m):
    x = m.tensor(1.1, dtype=m.float64, requires_grad=True)
    x.register_hook(lambda g: g + 1)
    g, = m.autograd.grad(m.relu(x) * 0.3, x, create_graph=True)
    assert g.requires_grad
    return (g,) + m.autograd.grad(g, x)


def _relu_second_derivative_through_nan(m):
    x = m.tensor(0.8, dtype=m.float64, requires_grad=True)
    g, = m.autograd.grad(m.relu(math.nan * x), x, create_graph=True)
    return (g,) + m.autograd.grad(g, x)


def _detached_leaf_gets_no_grad(m):
    x = m.tensor(0.5, dtype=m.float64, requires_grad=True)
    y = x.clone()
    x.detach_()
    (y * 2).backward()
    assert x.grad is None and not x.requires_grad
    return y


def _view_hook_before_write(m, write):
    a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.clone()
    v = b[1:]
    v.register_hook(lambda g: g * 10)  # torch's CopySlices bypasses it: it never runs
    write(v)
    (b * m.tensor([1.0, 2.0, 3.0])).sum().backward(retain_graph=True)
    first = a.grad.clone()
    (v * m.tensor([1.0, 2.0])).sum().backward()
    return first, a.grad


def _transposed_view_hook_copy_of_itself(m):
    # fuzz edge seed 93044: the hook negates the gradient on the source's path only
    a = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
    v = a.clone().t()
    v.register_hook(lambda g: -g)
    v.copy_(v)
    (v * m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64)).sum().backward()
    return a.grad


def _scalar(m):
    return m.tensor(2.0, requires_grad=True)


def _transposed_0d_grad(m):
    x = _scalar(m)
    return m.autograd.grad(x.transpose(-1, 0) * 3, x)


PROGRAMS = [
    # the fuzzer's gram(x) = x @ x.transpose(-1, -2): a 0-d x has dims -1 and 0 only
    ("gram_of_0d", lambda m: _scalar(m) @ _scalar(m).transpose(-1, -2)),
    ("transpose_0d_dim_1", lambda m: _scalar(m).transpose(0, 1)),
    ("transpose_0d_in_range", lambda m: _transposed_0d_grad(m)),
    ("mT_of_1d", lambda m: m.ones(2).mT),
    ("mH_of_1d", lambda m: m.ones(2).mH),
    ("mT_of_0d", lambda m: _scalar(m).mT * 3),
    ("grad_of_an_unused_input", lambda m: m.autograd.grad(_scalar(m) * 2, _scalar(m))),
    ("relu_second_backward_reaches_output_hook", _relu_second_backward_reaches_output_hook),
    ("relu_second_backward_reaches_leaf_hook", _relu_second_backward_reaches_leaf_hook),
    ("relu_second_derivative_through_nan", _relu_second_derivative_through_nan),
    ("detached_leaf_gets_no_grad", _detached_leaf_gets_no_grad),
    ("view_hook_before_add_", lambda m: _view_hook_before_write(m, lambda v: v.add_(2))),
    ("view_hook_before_mul_", lambda m: _view_hook_before_write(m, lambda v: v.mul_(2))),
    # the view's old value read by the write itself still goes through the view's hook
    ("view_hook_before_copy_of_itself", lambda m: _view_hook_before_write(m, lambda v: v.copy_(v))),
    ("view_hook_before_add_of_itself", lambda m: _view_hook_before_write(m, lambda v: v.add_(v))),
    ("view_hook_before_use_then_write", lambda m: _view_hook_before_write(
        m, lambda v: (v.mul(3).sum().backward(retain_graph=True), v.mul_(2)))),
    ("transposed_view_hook_copy_of_itself", _transposed_view_hook_copy_of_itself),
]


@pytest.mark.parametrize("program", [p for _, p in PROGRAMS], ids=[n for n, _ in PROGRAMS])
def test_hooks_and_graph_edges_match_torch(program):
    assert_same_as_torch(program, rtol=1e-6)
