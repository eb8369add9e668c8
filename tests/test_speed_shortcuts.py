"""The sixth round of issue 17's shortcuts (docs/performance.md) give what the general lines
give, and torch's results: the unbroadcast sum of a raw gradient without sum's op call."""
from __future__ import annotations

import numpy as np
import pytest

import gradkit
from gradkit.ops import _dispatch_general
from gradkit.ops._dispatch_general import seam, sum_to_shape

RNG = np.random.default_rng(0)


def _arrays():
    """Raw gradients the shortcut takes (float32/64, complex, C, transposed, strided, a
    batch of several leading dims) and ones it leaves to sum's op (float16, ints)."""
    base = RNG.standard_normal((6, 5, 4))
    yield "float32", base.astype(np.float32), (4,)
    yield "float64 to a matrix", base, (5, 4)
    yield "two leading dims", base.astype(np.float32), (4,)
    yield "complex64", (base + 1j * base[::-1]).astype(np.complex64), (5, 4)
    yield "transposed", base.astype(np.float32).transpose(2, 1, 0), (5, 6)
    yield "strided", base[::2, :, ::2], (5, 2)
    yield "special values", np.array([[np.inf, -0.0], [-np.inf, -0.0], [np.nan, 1.0]]), (2,)
    yield "float16", base.astype(np.float16), (4,)
    yield "int64", (base * 10).astype(np.int64), (4,)


@pytest.mark.parametrize("name,g,shape", list(_arrays()), ids=[a[0] for a in _arrays()])
def test_summing_a_raw_gradient_back_gives_sums_bits(name, g, shape):
    ours = sum_to_shape(g, shape)
    general = seam.sum(g, tuple(range(g.ndim - len(shape))))  # the op's own call
    assert type(ours) is type(general) and ours.dtype == general.dtype
    assert ours.shape == general.shape == shape
    assert ours.tobytes() == general.tobytes()  # the same bits, NaN and -0.0 included
    assert ours.flags.c_contiguous  # as torch allocates a reduction's result


def test_only_float_and_complex_arrays_skip_sums_call(monkeypatch):
    calls = []
    real_sum = seam.sum
    monkeypatch.setattr(seam, "sum", lambda *a, **k: calls.append(a[0].dtype) or real_sum(*a, **k))
    for _, g, shape in _arrays():
        sum_to_shape(g, shape)
    assert calls == [np.dtype(np.float16), np.dtype(np.int64)]
    monkeypatch.setattr(_dispatch_general, "_summed", lambda g, axes: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # the shortcut is what runs for floats
        sum_to_shape(np.ones((2, 3)), (3,))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_bias_gradients_match_torch(dtype):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 7, 5)).astype(dtype)
    b = RNG.standard_normal(5).astype(dtype)
    results = []
    for lib in (gradkit, torch):
        xt, bt = lib.tensor(x, requires_grad=True), lib.tensor(b, requires_grad=True)
        y = xt * bt + bt
        (y * y.conj()).real.sum().backward() if dtype.startswith("complex") else \
            (y * y).sum().backward()
        results.append((bt.grad.numpy(), xt.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
        assert ours.dtype == theirs.dtype
