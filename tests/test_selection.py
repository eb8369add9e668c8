"""ops/selection.py's branch-free ``zero_where`` is ``np.where(drop, 0, values)`` bit for bit,
and relu built on it gives torch's bits (NaN, inf, -0.0 included)."""
from __future__ import annotations

import numpy as np
import pytest

import gradkit
from gradkit.ops.selection import zero_where

SPECIAL = [-0.0, 0.0, np.nan, -np.nan, -np.inf, np.inf, -1.5, 2.0, 1e-45, -1e-45]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "int64",
                                   "uint8", "bool", "complex64"])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4), (4, 6)])
def test_zero_where_is_wheres_bits(dtype, shape):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape) * 4
    if values.size >= len(SPECIAL) and np.dtype(dtype).kind in "fc":
        values.flat[:len(SPECIAL)] = SPECIAL
    values = values.astype(dtype)
    drop = rng.random(shape) < 0.5
    if shape == (4, 6):  # non-contiguous operands
        values, drop = values[:, ::2].T, drop[:, ::2].T
    mine, numpy = zero_where(np, drop, values), np.where(drop, 0, values)
    assert mine.dtype == numpy.dtype and mine.shape == numpy.shape
    assert np.ascontiguousarray(mine).tobytes() == np.ascontiguousarray(numpy).tobytes()


def test_zero_where_broadcasts_like_where():
    values = np.arange(6.0).reshape(2, 3)
    drop = np.array([True, False, True])
    np.testing.assert_array_equal(zero_where(np, drop, values), np.where(drop, 0, values))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_and_its_gradient_give_torchs_bits(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal(64).astype(dtype)
    g = rng.standard_normal(64).astype(dtype)
    x[:len(SPECIAL)] = SPECIAL
    g[5:5 + len(SPECIAL)] = SPECIAL  # NaN/inf gradients where relu drops them, and keeps
    ours, theirs = gradkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours.relu(), theirs.relu()
    assert y.detach().numpy().tobytes() == ty.detach().numpy().tobytes()
    y.backward(gradkit.tensor(g))
    ty.backward(torch.tensor(g))
    assert ours.grad.numpy().tobytes() == theirs.grad.numpy().tobytes()
