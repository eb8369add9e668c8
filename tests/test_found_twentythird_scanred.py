"""Differences found in the twenty-third session by the scan of reductions and normalizations
at the float range's ends (scanred lane): each program run in gradkit and in torch 2.13
(skipped without torch)."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _bits(array) -> list:
    """Each value exactly, a NaN as 'nan' and a zero with its sign."""
    return ["nan" if math.isnan(v) else repr(float(v)) for v in np.asarray(array).ravel()]


def _variance_gradients(lib, name: str, correction: int, dim, upstream: float) -> list:
    x = lib.tensor([1.7e308, -1.7e308, 2.5], dtype=lib.float64, requires_grad=True)
    out = getattr(lib, name)(x, dim, correction=correction)
    outs = out if isinstance(out, tuple) else (out,)
    g, = lib.autograd.grad(outs, x, [lib.full_like(o, upstream) for o in outs])
    fa = lib.autograd.forward_ad
    with fa.dual_level():
        dual = getattr(lib, name)(fa.make_dual(x.detach(), lib.full_like(x, upstream)), dim,
                                  correction=correction)
        duals = dual if isinstance(dual, tuple) else (dual,)
        tangents = [_bits(fa.unpack_dual(d).tangent.numpy()) for d in duals]
    return _bits(g.numpy()) + tangents


@pytest.mark.parametrize("name", ["var", "std", "var_mean"])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dim", [None, 0])
@pytest.mark.parametrize("upstream", [0.0, 1.0])
def test_variance_backward_multiplies_as_torchs(name, correction, dim, upstream):
    """scan: var of [1.7e308, -1.7e308] with a 0 upstream gradient had NaN gradients here and
    0 in torch: torch's var_backward is `(2 / (n - correction)) * grad * (x - mean)` in that
    order, so the 0 is multiplied before 2 (x - mean) overflows; gradkit multiplied the
    overflowing slope last. Its forward AD is var_backward of the tangent, summed."""
    assert _variance_gradients(gradkit, name, correction, dim, upstream) == \
        _variance_gradients(torch, name, correction, dim, upstream)


def _variance_values(lib, name: str, values: list, dtype: str, dim, correction: int) -> list:
    x = lib.tensor(values, dtype=getattr(lib, dtype)).reshape(2, -1)
    out = getattr(lib, name)(x, dim, correction=correction)
    return [_bits(o.numpy()) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("values", [
    [1.7e308, 1.7e308, 2.5, 2.5], [-1.7e308, -0.0, 1.7e308, -40.0, 1e200, -40.0],
    [math.inf, 2.5, 2.5, math.inf], [1e200, -1e200, 1e154, math.nan, 0.0, -40.0]])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_variance_at_the_range_ends_is_torchs_welford_pass(name, values, dtype, dim,
                                                           correction):
    """scan: var_mean of [1.7e308, 1.7e308] had mean inf here (NumPy's sum overflows) and
    1.7e308 in torch, var along a dim of [-1.7e308, -0.0, 1.7e308] inf here and NaN in torch
    (x - mean overflows), var_mean's mean of [inf, 2.5] inf here and NaN in torch. torch's
    var/std along a dim and var_mean/std_mean are one Welford pass in double; gradkit now
    replays it on the rows holding a value beyond 1e150, inf or NaN (elsewhere no step
    overflows, and NumPy's two-pass result is within rounding)."""
    assert _variance_values(gradkit, name, values, dtype, dim, correction) == \
        _variance_values(torch, name, values, dtype, dim, correction)


def _rms_norm_derivatives(lib, values: list, dtype: str, upstream: float) -> list:
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    y = lib.nn.functional.rms_norm(x, (len(values),))
    g, = lib.autograd.grad(y, x, lib.full_like(y, upstream), create_graph=True)
    gg, = lib.autograd.grad(g, x, lib.ones_like(g))
    return _bits(y.detach().numpy()) + _bits(g.detach().numpy()) + _bits(gg.numpy())


@pytest.mark.parametrize("values", [[1.7e308], [2.5, 1.7e308, -0.0], [1.7e308, -1.7e308, -40.0],
                                    [3e38, 1.0], [1e200, 2.5]])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("upstream", [0.0, 1.0])
def test_rms_norm_squares_as_torchs_pow(values, dtype, upstream):
    """scan: rms_norm of [1.7e308] had gradient 0 here and NaN in torch, whatever the upstream
    gradient: torch's composite squares with pow(x, 2), whose backward `grad * (2 x)` is
    0 * inf there; gradkit squared with x * x (backward `grad * x` twice, finite)."""
    assert _rms_norm_derivatives(gradkit, values, dtype, upstream) == \
        _rms_norm_derivatives(torch, values, dtype, upstream)


def _one_result_variance(lib, name: str, values, correction, dim) -> list:
    x = lib.tensor(np.asarray(values, dtype=np.float32))
    return _bits(getattr(lib, name)(x, dim, correction=correction).numpy())


_RANDOM = np.random.default_rng(23)
_ROWS = [(_RANDOM.standard_normal(n) * 10.0 ** _RANDOM.integers(-3, 4) + 100 * k).tolist()
         for n, k in zip(_RANDOM.integers(2, 5, 24), _RANDOM.integers(0, 3, 24))]


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("values", [[1e30] * 3, [3.4e38, 3.4e38], [3e38, 3e38, -1.0]] + _ROWS)
@pytest.mark.parametrize("correction,dim", [(0, None), (1, None), (2, 0), (float("nan"), None)])
def test_float32_variance_of_one_result_is_torchs_two_pass(name, values, correction, dim):
    """scan: the float32 var of three 1e30 was 0 here and inf in torch. torch's var/std with
    one result from 2+ values is two-pass, its mean `x.mean()` rounded to float32 and the
    squared deviations from it summed in double (7.6e22 squared, past float32's range);
    gradkit took its mean in double, so it also missed torch's last bit in about 1 in 7
    random float32 variances."""
    assert _one_result_variance(gradkit, name, values, correction, dim) == \
        _one_result_variance(torch, name, values, correction, dim)


def _batch_norm_statistics(lib, values: np.ndarray) -> list:
    x = lib.tensor(values)
    channels = values.shape[1]
    running_mean = lib.zeros(channels, dtype=x.dtype)
    running_var = lib.ones(channels, dtype=x.dtype)
    y = lib.nn.functional.batch_norm(x, running_mean, running_var, training=True)
    return _bits(y.numpy()) + _bits(running_mean.numpy()) + _bits(running_var.numpy())


_BATCHES = [np.array([[3.4e38], [3.4e38]], dtype=np.float32)] + [
    (_RANDOM.standard_normal(shape) * 10.0 ** _RANDOM.integers(-2, 9, shape)).astype(dtype)
    for shape in [(2, 1), (2, 3), (2, 2, 1, 1)] * 4 for dtype in (np.float32, np.float64)]


@pytest.mark.parametrize("values", _BATCHES)
def test_batch_norm_of_two_rows_sums_in_one_buffer_as_torchs(values):
    """scan: the float32 batch_norm of [[3.4e38], [3.4e38]] was -inf here and NaN in torch.
    ATen's channels-last statistics kernel (an (N, C) input, or one value per image) with
    no more rows than threads sums them all in one buffer of the input's dtype (3.4e38 +
    3.4e38 is inf there); gradkit gave each row its own buffer and added them in double,
    which also missed torch's last bit in about 1 in 10 random two-row batches."""
    assert _batch_norm_statistics(gradkit, values) == _batch_norm_statistics(torch, values)


def _half_product(lib, values: list, shape: tuple, dim) -> list:
    x = lib.tensor(values, dtype=lib.float16, requires_grad=True).reshape(shape)
    y = lib.prod(x) if dim is None else lib.prod(x, dim)
    g, = lib.autograd.grad(y, x, lib.ones_like(y))
    return _bits(y.detach().numpy()) + _bits(g.numpy())


@pytest.mark.parametrize("values", [[300.0, 3000.0, 1e-7, 1.0], [2.5, 6e4, -0.0, 1.0], [2.5] * 6,
                                    [1.1, -2.3, 0.7, 5.9, -3.3, 0.01]])
@pytest.mark.parametrize("shape,dim", [((-1,), None), ((2, -1), None), ((2, -1), 0),
                                       ((2, -1), 1)])
def test_float16_product_rounds_each_step_as_torchs(values, shape, dim):
    """scan: the float16 prod of [300, 3000, 1e-7] was 0.107 here and inf in torch, that of
    [2.5, 6e4, -0.0] -0.0 here and NaN, six 2.5s 244.125 here and 244.0: torch's Half
    multiply rounds each step to float16; NumPy's float16 reduce carried a float."""
    assert _half_product(gradkit, values, shape, dim) == _half_product(torch, values, shape, dim)
