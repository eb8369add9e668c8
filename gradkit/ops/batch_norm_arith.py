"""batch_norm's float32 and float64 forward in the arithmetic of torch's CPU kernels.

Composed of differentiable ops (casts, a running sum, products), so gradients to any order are
those of ``(x - mean) * rsqrt(var + eps) * weight + bias``, while the values are torch's bit for
bit: the per-channel sums are added in sequence in float64 (ATen's ``acc_type``), the mean and
the sum of squares rounded to the input's dtype, ``invstd`` computed in float64 and rounded, and
the output written as ``x * alpha + beta`` (``alpha = invstd * weight``,
``beta = bias - mean * alpha``) for a contiguous or channels-last input.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.memory_format import channels_last
from gradkit.ops.arithmetic import add, div, mul, neg, sub
from gradkit.ops.conversion import astype
from gradkit.ops.elementwise import rsqrt
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.reduction import cumsum, mean
from gradkit.ops.shape import permute, reshape
from gradkit.ops.slicing import select


def channel_shape(input) -> tuple:
    """(1, C, 1, ...): a per-channel vector broadcast over input."""
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


def _as(t, dtype):
    return t if t._data.dtype == dtype else astype(t, dtype)


def _channel_sums(x):
    """Per-channel float64 sums of (N, C, *), added in sequence over (n, *) as ATen's
    kernels add them (a running sum: NumPy's sum adds in pairs)."""
    rows = permute(x, (1, 0) + tuple(range(2, x.ndim)))
    rows = reshape(rows, (x.shape[1], x.numel() // x.shape[1]))
    return select(cumsum(_as(rows, np.float64), dim=1), 1, -1)


def kernel_layout(input) -> bool:
    """Whether ATen's batch norm runs its fast kernels: the input C-contiguous or
    channels-last contiguous (not channels-last 3d); else its strided loops."""
    return input.is_contiguous() or input.ndim == 4 and input.is_contiguous(
        memory_format=channels_last)


def _two_product(a, b) -> tuple:
    """(a * b rounded, its exact error) of float64 arrays (Dekker's split)."""
    product = a * b
    scaled_a, scaled_b = 134217729.0 * a, 134217729.0 * b  # 2 ** 27 + 1
    a_hi, b_hi = scaled_a - (scaled_a - a), scaled_b - (scaled_b - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return product, ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def fused_multiply_add(a, b, c):
    """``a * b + c`` rounded once, as the FMA instructions ATen's compiled kernels use (its
    CPU build contracts ``x * alpha + beta``): float32 through float64 (the product exact,
    the sum rounded twice, equal but at a rare tie); float64 composed, then corrected by a
    constant (an error-free product and sum), so its derivatives stay ``a * b + c``'s."""
    if a._data.dtype == np.float32:
        wide = add(mul(_as(a, np.float64), _as(b, np.float64)), _as(c, np.float64))
        return _as(wide, np.float32)
    out = add(mul(a, b), c)
    xp = get_array_module(out._data)
    with np.errstate(all="ignore"):
        product, error = _two_product(a._data, b._data)
        total = product + c._data
        part = total - product  # the two-sum: total + tail is product + c exactly
        tail = (product - (total - part)) + (c._data - part)
        exact = total + (tail + error)
        correction = xp.where(xp.isfinite(exact), exact - out._data, 0.0)
    return out if not correction.any() else add(out, Tensor._make(correction))


def batch_statistics(x, eps: float, fast: bool) -> tuple:
    """(mean, sum of squared deviations, invstd) per channel, shape (C,), as ATen computes
    them: ``fast`` (its kernel) the mean from a float64 sum rounded, the deviations in the
    input's dtype and the variance ``var_sum / n`` too; else the mean is torch.mean's and
    the deviations and variance are float64's."""
    dtype = x._data.dtype
    count = x.numel() // x.shape[1]
    if fast:
        mu = _as(div(_channel_sums(x), count), dtype)
        centered = sub(x, reshape(mu, channel_shape(x)))
        var_sum = _as(_channel_sums(mul(centered, centered)), dtype)
        var = _as(div(var_sum, count), np.float64)
    else:
        mu = mean(x, (0,) + tuple(range(2, x.ndim)))
        centered = sub(_as(x, np.float64), reshape(_as(mu, np.float64), channel_shape(x)))
        var_sum = _channel_sums(mul(centered, centered))
        var = div(var_sum, count)
    return mu, var_sum, _as(rsqrt(add(var, eps)), dtype)


def normalized_affine(x, mu, invstd, weight, bias, fast: bool):
    """The output from per-channel (C,) statistics: ``x * alpha + beta`` (ATen's kernels,
    fused, as ``beta = bias - mean * alpha``), or ``(x - mean) * invstd * weight + bias``
    (its strided loop)."""
    shape = channel_shape(x)
    if not fast:
        out = mul(sub(x, reshape(mu, shape)), reshape(invstd, shape))
        out = out if weight is None else mul(out, reshape(weight, shape))
        return out if bias is None else add(out, reshape(bias, shape))
    alpha = invstd if weight is None else mul(invstd, weight)
    bias = zeros_like(alpha) if bias is None else bias
    beta = fused_multiply_add(neg(mu), alpha, bias)
    return fused_multiply_add(x, reshape(alpha, shape), reshape(beta, shape))
