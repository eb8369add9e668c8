"""Regressions found by the fuzzer's breadth class (tests/fuzz/ops_breadth.py), each compared
with torch on the same inputs: values, gradients and errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradkit  # noqa: E402
from gradkit.autograd import forward_ad  # noqa: E402


def _run(lib, fn, arrays):
    """fn's value and the gradients of a weighted sum of it, in ``lib``."""
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
    loss = (out * weights.to(out.dtype)).sum()
    grads = lib.autograd.grad(loss.real if loss.is_complex() else loss, leaves)
    return [out.detach().numpy()] + [g.numpy() for g in grads]


def _assert_same(fn, *arrays):
    mine, theirs = _run(gradkit, fn, arrays), _run(torch, fn, arrays)
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(np.signbit(a.real), np.signbit(b.real))


def _values(shape, dtype="float64"):
    return (np.linspace(-1.0, 1.5, int(np.prod(shape))).reshape(shape) + 0.1).astype(dtype)


@pytest.mark.parametrize("x_shape, w_shape", [
    ((3,), (3,)), ((1,), (1,)), ((2, 3), (3,)), ((4, 2, 3), (3,)),   # 1-D weight
    ((0, 2), (0, 2)), ((2, 0), (3, 0)), ((0, 3), (3,)), ((1, 0, 2), (4, 2)),   # 0-size
])
def test_linear_with_a_vector_weight_or_zero_size_inputs(x_shape, w_shape):
    _assert_same(lambda lib, x, w: lib.nn.functional.linear(x, w),
                 _values(x_shape), _values(w_shape))


def test_linear_with_a_vector_weight_and_a_bias_is_refused_as_torch():
    for lib in (torch, gradkit):
        with pytest.raises(RuntimeError, match="mat2 must be a matrix, got 1-D tensor"):
            lib.nn.functional.linear(lib.ones(2, 3), lib.ones(3), lib.ones(1))


@pytest.mark.parametrize("entry", [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, 1 + 2j])
def test_det_of_1x1_matrices_is_the_entry_with_gradient_one(entry):
    """torch's 1x1 det keeps -0.0 and its gradient is 1 at inf/NaN too (NumPy's LU gives
    +0.0; det * A^{-1} gives NaN)."""
    dtype = "complex128" if isinstance(entry, complex) else "float64"
    batch = np.array([[[entry]], [[2.0]]], dtype=dtype)
    _assert_same(lambda lib, x: lib.linalg.det(x), batch)


def _complex(shape):
    rng = np.random.default_rng(sum(shape))
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3), (1, 1)])
def test_complex_qr_gradients_and_second_derivatives(shape):
    """Complex QR's gradient takes M's real diagonal in copyltu (R's diagonal is real)."""
    def grads(lib):
        x = lib.tensor(_complex(shape), requires_grad=True)
        q, r = lib.linalg.qr(x)
        w_q = lib.tensor(np.cos(np.arange(q.numel())).reshape(tuple(q.shape)) * (1 + 0.5j))
        w_r = lib.tensor(np.sin(np.arange(r.numel())).reshape(tuple(r.shape)) * (0.3 - 1j))
        g, = lib.autograd.grad(((q * w_q).sum() + (r * w_r).sum()).real, x, create_graph=True)
        gg, = lib.autograd.grad((g * g.conj()).real.sum(), x)
        return q.detach().numpy(), g.detach().numpy(), gg.numpy()
    for mine, theirs in zip(grads(gradkit), grads(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_complex_qr_forward_mode_tangents(shape):
    """dR R^{-1} has a real diagonal: Q^H dQ takes the imaginary part of B's diagonal."""
    a = _complex(shape)
    t = np.roll(a, 1) * (0.5 - 0.2j)
    _, theirs = torch.func.jvp(torch.linalg.qr, (torch.tensor(a),), (torch.tensor(t),))
    with forward_ad.dual_level():
        q, r = gradkit.linalg.qr(forward_ad.make_dual(gradkit.tensor(a), gradkit.tensor(t)))
        mine = [forward_ad.unpack_dual(out).tangent.numpy() for out in (q, r)]
    for m, th in zip(mine, theirs):
        np.testing.assert_allclose(m, th.numpy(), rtol=1e-9, atol=1e-10)
