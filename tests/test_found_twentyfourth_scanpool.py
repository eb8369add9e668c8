"""Differences found in the twenty-fourth session by the scan of pooling, convolution,
resampling and padding at the float range's ends (scanpool lane): each program run in gradkit
and in torch 2.13 (skipped without torch)."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

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
