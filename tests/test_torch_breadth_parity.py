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
    return [out.detach().resolve_conj().numpy()] + [g.resolve_conj().numpy() for g in grads]


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
    """Complex QR's gradient takes M's real diagonal in copyltu (R's diagonal is real). Its
    gradient is a plain tensor, as torch's right solve with R^H makes it (gradkit's mH of a
    left solve was a conj view: is_conj() and numpy() differed)."""
    def grads(lib):
        x = lib.tensor(_complex(shape), requires_grad=True)
        q, r = lib.linalg.qr(x)
        w_q = lib.tensor(np.cos(np.arange(q.numel())).reshape(tuple(q.shape)) * (1 + 0.5j))
        w_r = lib.tensor(np.sin(np.arange(r.numel())).reshape(tuple(r.shape)) * (0.3 - 1j))
        g, = lib.autograd.grad(((q * w_q).sum() + (r * w_r).sum()).real, x, create_graph=True)
        gg, = lib.autograd.grad((g * g.conj()).real.sum(), x)
        return (q.detach().resolve_conj().numpy(), g.detach().numpy(), gg.numpy(),
                np.array([g.is_conj(), gg.is_conj()]))
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
        mine = [forward_ad.unpack_dual(out).tangent.resolve_conj().numpy() for out in (q, r)]
    for m, th in zip(mine, theirs):
        np.testing.assert_allclose(m, th.numpy(), rtol=1e-9, atol=1e-10)


def _raises_as_torch(fn):
    """torch and gradkit raise the same type with the same message."""
    errors = []
    for lib in (torch, gradkit):
        with pytest.raises(Exception) as info:
            fn(lib)
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name, call", [
    ("sort complex", lambda lib: lib.sort(lib.ones(2, dtype=lib.complex64))),
    ("sort complex stable", lambda lib: lib.ones(2, dtype=lib.complex128).sort(stable=True)),
    ("argsort complex", lambda lib: lib.argsort(lib.ones((), dtype=lib.complex64))),
    ("topk complex", lambda lib: lib.topk(lib.ones(2, dtype=lib.complex64), 1)),
    ("topk bool", lambda lib: lib.topk(lib.ones(2, dtype=lib.bool), 1)),
    ("mse complex", lambda lib: lib.nn.functional.mse_loss(
        lib.ones(2), lib.ones(2, dtype=lib.complex64))),
    ("mse long", lambda lib: lib.nn.functional.mse_loss(
        lib.ones(2, dtype=lib.long), lib.ones(2, dtype=lib.long))),
    ("mse bool", lambda lib: lib.nn.functional.mse_loss(
        lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool))),
    ("layer_norm long", lambda lib: lib.nn.functional.layer_norm(
        lib.ones(0, 2, dtype=lib.long), (2,))),
    ("layer_norm complex", lambda lib: lib.nn.functional.layer_norm(
        lib.ones(2, dtype=lib.complex64), (2,))),
    ("nll_loss bool", lambda lib: lib.nn.functional.nll_loss(
        lib.ones(2, 2, dtype=lib.bool), lib.tensor([0, 1]))),
    ("nll_loss complex", lambda lib: lib.nn.functional.nll_loss(
        lib.ones(2, dtype=lib.complex64), lib.tensor(0))),
    ("linear 0-d input", lambda lib: lib.nn.functional.linear(lib.ones(()), lib.ones(3))),
    ("linear 0-d weight", lambda lib: lib.nn.functional.linear(lib.ones(3), lib.ones(()))),
    ("mv 0-d matrix", lambda lib: lib.mv(lib.ones(()), lib.ones(3))),
    ("mv 0-d vector", lambda lib: lib.mv(lib.ones(2, 2), lib.ones(()))),
    ("mv 3-d matrix", lambda lib: lib.mv(lib.ones(2, 2, 2), lib.ones(2))),
])
def test_dtype_and_rank_errors_as_torch(name, call):
    _raises_as_torch(call)


def test_mse_loss_of_float32_and_int64_is_float32_as_torch():
    _assert_same(lambda lib, x: lib.nn.functional.mse_loss(
        x, lib.tensor([1, 0, 2])), np.array([0.5, 1.5, -1.0], dtype="float32"))


@pytest.mark.parametrize("x_shape, t_shape, x_dtype, t_dtype", [
    ((2,), (), "float32", "float64"), ((), (2,), "float32", "float64"),
    ((3,), (3,), "float32", "float64"), ((3,), (3,), "float64", "float32")])
def test_mse_loss_result_dtype_of_mixed_floats_as_torch(x_shape, t_shape, x_dtype, t_dtype):
    """mse_loss promotes by dtype alone (a 0-d float64 target gives float64)."""
    target = _values(t_shape, t_dtype) * 0.3
    _assert_close(lambda lib, x: lib.nn.functional.mse_loss(x, lib.tensor(target)),
                  _values(x_shape, x_dtype))


@pytest.mark.parametrize("x_dtype, t_dtype", [("float32", "float64"), ("float64", "float32")])
def test_bce_with_logits_takes_the_target_dtype_as_torch(x_dtype, t_dtype):
    target = np.array([0.2, 0.9, 0.5], dtype=t_dtype)
    _assert_close(lambda lib, x: lib.nn.functional.binary_cross_entropy_with_logits(
        x, lib.tensor(target)), _values((3,), x_dtype))


def _assert_close(fn, *arrays):
    """As _assert_same, to single precision (the dtypes are compared exactly)."""
    mine, theirs = _run(gradkit, fn, arrays), _run(torch, fn, arrays)
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 2), (3, 0, 0), (2, 3, 0)])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_of_empty_matrices_as_torch(shape, ord):
    """Max-norms over an empty dim are new zeros (no graph) in torch; min-norms raise."""
    results = []
    for lib in (torch, gradkit):
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        try:
            norm = lib.linalg.matrix_norm(x, ord)
            results.append((norm.tolist(), norm.requires_grad))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            results.append((type(e), str(e)))
    assert results[0] == results[1]


def test_vector_norm_0_has_zero_gradient_at_inf_and_nan():
    _assert_same(lambda lib, x: lib.linalg.vector_norm(x, 0) + x.sum(),
                 np.array([[1.0, np.inf], [np.nan, -0.0]]))


@pytest.mark.parametrize("size, start, length", [(3, 3, 1), (1, 1, 1), (3, 3, 0), (0, 0, 0),
                                                 (3, -3, 3), (3, -1, 2), (3, 2, 1)])
def test_narrow_at_start_equal_to_size_is_not_a_wrap_to_0(size, start, length):
    results = []
    for lib in (torch, gradkit):
        try:
            results.append(list(lib.arange(size).narrow(0, start, length).tolist()))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            results.append((type(e), str(e)))
    assert results[0] == results[1]


@pytest.mark.parametrize("x_shape, y_shape", [((2, 0), (3, 0)), ((0,), (0,)), ((0, 2), (3, 2)),
                                              ((2, 3, 0), (0,)), ((2, 3), (3,))])
def test_inner_of_0_size_inputs(x_shape, y_shape):
    _assert_same(lambda lib, x, y: lib.inner(x, y), _values(x_shape), _values(y_shape))


@pytest.mark.parametrize("x_shape, index", [((3,), []), ((2, 2), [[]]), ((), []), ((3,), [[]])])
def test_scatter_with_an_empty_float_index_writes_nothing(x_shape, index):
    """torch.tensor([]) is float32: torch skips the int64 check for an empty index."""
    def fn(lib, x, src):
        empty = lib.tensor(index)
        return x.scatter(0, empty, src[:0].reshape(empty.shape)) * 2 + \
            x.scatter_add(0, empty, src[:0].reshape(empty.shape)) + x.scatter(0, empty, 0.5)
    _assert_same(fn, _values(x_shape), _values((2,)))
