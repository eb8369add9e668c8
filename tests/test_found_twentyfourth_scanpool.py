"""Differences found in the twenty-fourth session by the scan of pooling, convolution,
resampling and padding at the float range's ends (scanpool lane): each program run in gradkit
and in torch 2.13 (skipped without torch)."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")

EXTREMES = [0.0, -0.0, 1e-310, 0.5, -2.5, 40.0, 1e154, 1e200, 1.7e308, -1.7e308, math.inf,
            -math.inf, math.nan]


def _bits(array) -> list:
    """Each value exactly, a NaN as 'nan' and a zero with its sign."""
    return ["nan" if math.isnan(v) else repr(float(v)) for v in np.asarray(array).ravel()]


def _derivatives(lib, fn, values, shape, dtype: str) -> list:
    """fn's value, its gradient under an upstream of a few values and its tangent."""
    x = lib.tensor(np.asarray(values, dtype=dtype).reshape(shape), requires_grad=True)
    y = fn(lib, x)
    up = lib.tensor(np.resize(np.array([1.0, -0.5, 3.0], dtype=dtype), tuple(y.shape)))
    g, = lib.autograd.grad(y, x, up)
    fa = lib.autograd.forward_ad
    with fa.dual_level():
        t = lib.tensor(np.resize(np.array([0.5, 2.0, -1.0], dtype=dtype), shape))
        tangent = fa.unpack_dual(fn(lib, fa.make_dual(x.detach(), t))).tangent
    return [_bits(y.detach().numpy()), _bits(g.numpy()), _bits(tangent.numpy())]


F = {
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, True),
    "avg_pool2d_excluding_pads": lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 1, 1, True,
                                                                              False),
    "avg_pool3d": lambda lib, x: lib.nn.functional.avg_pool3d(x, 2, 2, 1, False, False, 3),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 3),
    "adaptive_avg_pool3d": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 2),
}
SHAPES = {"avg_pool2d": (1, 1, 4, 5), "avg_pool2d_excluding_pads": (1, 1, 4, 5),
          "avg_pool3d": (1, 1, 2, 3, 4), "adaptive_avg_pool2d": (1, 1, 7, 5),
          "adaptive_avg_pool3d": (1, 1, 3, 5, 3)}


@pytest.mark.parametrize("name", list(F))
@pytest.mark.parametrize("values", ["extremes", "ties", "random"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_average_pools_add_each_window_in_order(name, values, dtype):
    """scan: avg_pool2d(k=3, s=2, p=1, ceil_mode) of [.., 0.5, -2.5 / .., 1.7e308, -1.7e308]
    was -0.222 here and 0 in torch, and 9-element windows of random values differed in the
    last bit at most windows: torch's kernels add a window's values one after another from
    +0, then divide (the adaptive ones by each window size in turn, sum / kh / kw; float16
    in float32), where NumPy's sum adds in pairs from 8 terms on. Their backward spreads
    grad / kh / kw the same way."""
    shape = SHAPES[name]
    n = math.prod(shape)
    if dtype == "float16" and name.endswith("3d"):
        pytest.skip("torch's 3-d average pools have no float16 kernel")
    if values == "extremes":
        data = [EXTREMES[i % len(EXTREMES)] for i in range(n)]
    elif values == "ties":
        data = [(1.7e308, 1.7e308, -1.7e308, -0.0)[i % 4] for i in range(n)]
    else:
        data = np.random.default_rng(n).standard_normal(n) * 10.0
    assert _derivatives(gradkit, F[name], data, shape, dtype) == \
        _derivatives(torch, F[name], data, shape, dtype)


def _product_tangent(lib, name: str, dual: str, dtype: str) -> list:
    """The tangent of a convolution or linear layer whose operands named in ``dual`` carry
    tangents, the others none, at an input holding inf and NaN and a weight holding 1e308."""
    fa = lib.autograd.forward_ad
    d = 1 if name.endswith("1d") or name == "linear" else 2
    x = lib.tensor(np.resize(np.array([math.inf, -0.0, 2.0, math.nan, 1e308, 0.5], dtype=dtype),
                             (1, 2, 6) if d == 1 else (1, 2, 3, 2)))
    w = lib.tensor(np.resize(np.array([1.0, -0.0, 1e308, -1.0, 0.5], dtype=dtype),
                             (2, 6) if name == "linear" else (2, 2) + (2,) * d))
    b = lib.tensor(np.array([-0.0, 3.0], dtype=dtype))
    with fa.dual_level():
        if "x" in dual:
            x = fa.make_dual(x, lib.full_like(x, -0.0) if "w" in dual else lib.ones_like(x))
        if "w" in dual:
            w = fa.make_dual(w, lib.full_like(w, 2.0))
        if "b" in dual:
            b = fa.make_dual(b, lib.tensor(np.array([-0.0, 1.0], dtype=dtype)))
        if name == "linear":
            out = lib.nn.functional.linear(x.reshape(2, 6), w, b)
        else:
            out = getattr(lib.nn.functional, name)(x, w, b, padding=1)
        return _bits(fa.unpack_dual(out).tangent.numpy())


@pytest.mark.parametrize("name", ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
                                  "linear"])
@pytest.mark.parametrize("dual", ["x", "w", "b", "xw", "xwb"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_missing_tangent_of_a_convolution_or_linear_is_zeros(name, dual, dtype):
    """scan: conv1d of a dual input holding inf with a plain weight had a finite tangent here
    and NaN in torch: torch's convolution_jvp is conv(x_t, w) + conv(x, w_t, b_t) with a
    missing tangent materialized as zeros (0 * inf), as its mm, addmm and linear formulas
    (gradkit's matmul already did so; its linear's mm and addmm skipped the term)."""
    assert _product_tangent(gradkit, name, dual, dtype) == \
        _product_tangent(torch, name, dual, dtype)


def _forward_ad_outcome(lib, name: str):
    """The tangent of ``name`` with a dual input, or the error's type and text."""
    fa = lib.autograd.forward_ad
    F = lib.nn.functional
    x = lib.arange(16.0, dtype=lib.float64).reshape(1, 1, 4, 4)
    grid = lib.zeros(1, 2, 2, 2, dtype=lib.float64) + 0.3
    with fa.dual_level():
        try:
            if name == "grid_sample_input":
                out = F.grid_sample(fa.make_dual(x, lib.ones_like(x)), grid, align_corners=False)
            elif name == "grid_sample_grid":
                out = F.grid_sample(x, fa.make_dual(grid, lib.ones_like(grid)), "bicubic",
                                    align_corners=True)
            elif name == "grid_sample_3d":
                out = F.grid_sample(fa.make_dual(x[None], lib.ones_like(x[None])),
                                    lib.zeros(1, 1, 1, 1, 3, dtype=lib.float64),
                                    align_corners=False)
            elif name == "embedding_bag_psw":  # torch names its kernel for no gradient
                w = lib.arange(12.0, dtype=lib.float64).reshape(4, 3)
                psw = lib.ones(4, dtype=lib.float64)
                out = F.embedding_bag(lib.tensor([0, 2, 1, 3]), w, lib.tensor([0, 2]),
                                      mode="sum", per_sample_weights=fa.make_dual(psw, psw))
            else:
                w = lib.arange(12.0, dtype=lib.float64).reshape(4, 3)
                out = F.embedding_bag(lib.tensor([0, 2, 1, 3]), fa.make_dual(w, lib.ones_like(w)),
                                      lib.tensor([0, 2]), mode=name.split("_")[-1])
            return _bits(fa.unpack_dual(out).tangent.numpy())
        except Exception as e:  # noqa: BLE001 (the outcome compared is the error)
            return type(e).__name__, str(e)


@pytest.mark.parametrize("name", ["grid_sample_input", "grid_sample_grid", "grid_sample_3d",
                                  "embedding_bag_sum", "embedding_bag_max",
                                  "embedding_bag_psw"])
def test_grid_sample_and_embedding_bag_refuse_forward_ad_as_torch(name):
    """scan: torch 2.13 has no forward formula for grid_sampler_2d/3d and _embedding_bag
    ("Trying to use forward AD with grid_sampler_2d that does not support it ..."; with only
    per_sample_weights dual and nothing requiring grad, _embedding_bag_forward_only); gradkit's
    composites computed a tangent. They refuse now, after their forward, as torch's."""
    assert _forward_ad_outcome(gradkit, name) == _forward_ad_outcome(torch, name)


def _grid_gradient(lib, padding_mode: str, upstream: float, dtype: str) -> list:
    image = lib.tensor(np.arange(9.0, dtype=dtype).reshape(1, 1, 3, 3) - 4)
    grid = lib.tensor(np.array([1.7e308, 1.7e308, -math.inf, 0.5, 1e154, -0.25, 0.3, -0.2],
                               dtype=dtype).reshape(1, 2, 2, 2), requires_grad=True)
    out = lib.nn.functional.grid_sample(image, grid, "bilinear", padding_mode, False)
    g, = lib.autograd.grad(out, grid, lib.full_like(out, upstream))
    return _bits(out.detach().numpy()) + _bits(g.numpy())


@pytest.mark.parametrize("padding_mode", ["border", "zeros"])
@pytest.mark.parametrize("upstream", [math.nan, 1.0, 0.0])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sample_border_keeps_a_nan_gradient_at_an_infinite_coordinate(padding_mode, upstream,
                                                                          dtype):
    """scan: grid_sample with border padding at a grid point whose pixel coordinate is
    infinite (1.7e308, -inf) gave its grid gradient 0 under a NaN upstream gradient here, NaN
    in torch: torch's clip multiplies the gradient by 0 there (NaN * 0), gradkit cut it.
    (Kept off NaN grid points and reflection, which reflects an infinite coordinate to NaN:
    torch reads memory by an undefined int cast there, and its backward can crash.)"""
    assert _grid_gradient(gradkit, padding_mode, upstream, dtype) == \
        _grid_gradient(torch, padding_mode, upstream, dtype)


def _scaled_sum_tangent(lib, name: str, dual: str, beta: float, alpha: float) -> list:
    """The tangent of addmm & co. whose operands named in ``dual`` carry tangents, at a first
    factor holding inf and 1e300."""
    fa = lib.autograd.forward_ad
    a = lib.tensor([[math.inf, -0.0], [2.0, 1e300]], dtype=lib.float64)
    b = lib.tensor([[1.0, -0.0], [0.5, -1.0]] if name != "addmv" else [1.0, -0.0],
                   dtype=lib.float64)
    x = lib.tensor([-0.0, 3.0], dtype=lib.float64)
    if name in ("baddbmm", "addbmm"):
        a, b = a[None].expand(2, 2, 2).clone(), b[None].expand(2, 2, 2).clone()
    with fa.dual_level():
        if "x" in dual:
            x = fa.make_dual(x, lib.tensor([-0.0, 1.0], dtype=lib.float64))
        if "a" in dual:
            a = fa.make_dual(a, lib.full_like(a, -0.0) if "b" in dual else lib.ones_like(a))
        if "b" in dual:
            b = fa.make_dual(b, lib.full_like(b, 2.0))
        out = getattr(lib, name)(x, a, b, beta=beta, alpha=alpha)
        return _bits(fa.unpack_dual(out).tangent.numpy())


@pytest.mark.parametrize("name", ["addmm", "addmv", "baddbmm", "addbmm"])
@pytest.mark.parametrize("dual", ["x", "a", "b", "ab", "xab"])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0, 2), (0.5, -1)])
def test_a_missing_factor_tangent_of_a_scaled_product_is_zeros(name, dual, beta, alpha):
    """Found beside the convolutions' (scan): torch's addmm, addmv, baddbmm and addbmm
    formulas, ``beta x_t + alpha a_t @ b + alpha a @ b_t``, multiply a missing factor tangent
    as zeros (NaN at an inf of the other factor); gradkit's skipped the term."""
    assert _scaled_sum_tangent(gradkit, name, dual, beta, alpha) == \
        _scaled_sum_tangent(torch, name, dual, beta, alpha)
