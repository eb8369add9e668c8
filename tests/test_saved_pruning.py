"""Nodes keep only what the rules that will run read (torch saves `other` for `self * other`
only when `self` needs a gradient)."""
import numpy as np
import pytest

import gradkit
from gradkit.ops._op import _entries_read


def leaf(values):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=True)


def test_mul_by_a_constant_tensor_keeps_only_the_constant():
    x = leaf([1.0, 2.0])
    c = gradkit.tensor([3.0, 4.0], dtype=gradkit.float64)
    y = x * c
    count, nbytes = y.grad_fn.saved_tensors_info()
    assert (count, nbytes) == (1, c.nbytes)
    with gradkit.no_grad():
        x_alias = x.detach()
        x_alias.mul_(10)  # x changed in place: y's backward does not need it
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_both_inputs_needing_grads_keep_both():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    assert (x * w).grad_fn.saved_tensors_info()[0] == 2


def test_pow_with_a_scalar_exponent_does_not_keep_its_result():
    x = leaf([0.5, 1.5])
    y = x ** 1.5
    y.add_(1)  # allowed: the base's rule reads x and the exponent only
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * np.array([0.5, 1.5]) ** 0.5)


def test_pruned_values_still_support_double_backward():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (gx,) = gradkit.autograd.grad((x * w * x).sum(), x, create_graph=True)
    (gw,) = gradkit.autograd.grad(gx.sum(), w)
    np.testing.assert_allclose(gw.numpy(), 2 * np.array([1.0, 2.0]))


def test_the_analysis_reads_code_conservatively():
    assert _entries_read(lambda g, x, y: g * y, 2) == frozenset({1})
    assert _entries_read(lambda g, x, y: [g * v for v in (x,)], 2) == frozenset({0})
    assert _entries_read(lambda g, *saved: g, 2) is None       # cannot tell: keep all

    def uses_closure(g, x, y):
        return (lambda: y)() * g
    assert _entries_read(uses_closure, 2) == frozenset({1})


def test_same_program_as_torch_with_in_place_after_a_constant_product():
    torch = pytest.importorskip("torch")

    def program(lib, values):
        x = lib.tensor(values, requires_grad=True)
        h = x * 1.0
        y = h * 3.0        # needs nothing of h
        h.add_(1)          # so this in-place write is fine in torch
        (y.sum() + h.sum()).backward()
        return x.grad.numpy()

    values = np.array([0.5, -1.0])
    np.testing.assert_allclose(program(gradkit, values), program(torch, values))
