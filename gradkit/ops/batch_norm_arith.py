"""batch_norm's float32 and float64 forward in the arithmetic of torch's CPU kernels.

Composed of differentiable ops (casts, a running sum, products), so gradients to any order are
those of ``(x - mean) * rsqrt(var + eps) * weight + bias``, while the values are torch's bit for
bit: the per-channel sums are added in sequence in float64 (ATen's ``acc_type``), the mean and
the sum of squares rounded to the input's dtype, ``invstd`` computed in float64 and rounded, and
the output written as ``x * alpha + beta`` (``alpha = invstd * weight``,
``beta = bias - mean * alpha``) for a contiguous or channels-last input.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit import backend

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.memory_format import channels_last
from gradkit.ops.arithmetic import add, div, mul, neg, sub
from gradkit.ops.conversion import astype
from gradkit.ops.elementwise import rsqrt
from gradkit.ops.fused import fused_multiply_add as _fma_arrays
from gradkit.ops.padding import pad
from gradkit.ops.piecewise import where, zeros_like
from gradkit.ops.reduction import cumsum, mean
from gradkit.ops.shape import permute, reshape
from gradkit.ops.slicing import select


def channel_shape(input) -> tuple:
    """(1, C, 1, ...): a per-channel vector broadcast over input."""
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


def _as(t, dtype):
    return t if t._data.dtype == dtype else astype(t, dtype)


def _rows(x):
    """(C, M): each channel's values in the order ATen's kernels read them, (n, *)."""
    rows = permute(x, (1, 0) + tuple(range(2, x.ndim)))
    return reshape(rows, (x.shape[1], x.numel() // x.shape[1]))


def _running_sums(rows):
    """The float64 sums of the last dim, added in sequence (a running sum: NumPy's sum
    adds in pairs)."""
    return select(cumsum(_as(rows, np.float64), dim=-1), -1, -1)


def _buffer_sums(chunks):
    """The sums of the last dim in the chunks' own dtype, each addition rounded (a thread's
    buffer; torch's float32 cumsum carries float64, so its composition is made these values
    by a constant)."""
    data = chunks._data
    value = get_array_module(data).cumsum(data, axis=-1, dtype=data.dtype)[..., -1]
    return _with_value(select(cumsum(chunks, dim=-1), -1, -1), value)


def _per_thread(rows, threads: int):
    """(C, threads, chunk): the rows split as ATen's parallel_for splits them among its
    threads, the last chunks padded with zeros (which leave a sum from +0 unchanged)."""
    count = rows.shape[1]
    chunk = -(-count // threads)
    return reshape(pad(rows, (0, threads * chunk - count)), (rows.shape[0], threads, chunk))


def kernel_layout(input) -> str | None:
    """Which statistics kernel ATen's batch norm runs: "contiguous" (C order with more than
    one value per image), "channels_last" (channels-last contiguous, not 3d, or C order with
    one value per image), or None (its strided loops)."""
    if input.is_contiguous():
        return "contiguous" if math.prod(input.shape[2:]) > 1 else "channels_last"
    return "channels_last" if input.ndim == 4 and input.is_contiguous(
        memory_format=channels_last) else None


def _with_value(t, value):
    """``t`` plus the constant that makes it ``value`` (a few ulps away: exact), so its
    derivatives stay those of ``t``'s composition; where no constant can (a NaN or infinite
    composition that the fused value is not), the value itself."""
    xp = get_array_module(value)
    with np.errstate(invalid="ignore"):
        correction = value - t._data
        lost = ~xp.isfinite(t._data) & (value != t._data) & ~(xp.isnan(value) & xp.isnan(t._data))
        correction = xp.where(xp.isnan(correction), 0.0, correction)  # equal infinities
    if correction.any():
        t = add(t, Tensor._make(correction.astype(value.dtype)))
    return where(Tensor._make(lost), Tensor._make(value), t) if lost.any() else t


def fused_multiply_add(a, b, c):
    """``a * b + c`` rounded once, as the FMA instructions ATen's compiled kernels use (its
    CPU build contracts ``x * alpha + beta``): float32 composed through float64; float64
    composed, then made the fused value by a constant."""
    if a._data.dtype == np.float32:
        wide = add(mul(_as(a, np.float64), _as(b, np.float64)), _as(c, np.float64))
        return _as(wide, np.float32)
    values = _fma_arrays(get_array_module(a._data), a._data, b._data, c._data)
    return _with_value(add(mul(a, b), c), values)


def _threaded_statistics(rows, dtype, threads: int) -> tuple:
    """(mean, var_sum) of ATen's channels-last kernel on ``threads`` threads: each
    thread sums its rows into a buffer of the input's dtype (the squares fused), the
    buffers are added in float64. The fused buffer is a recurrence: computed as values,
    made the composed sum's by a constant."""
    count = rows.shape[1]
    parts = _buffer_sums(_per_thread(rows, threads))
    mu = _as(div(_running_sums(parts), count), dtype)
    centered = sub(rows, reshape(mu, (rows.shape[0], 1)))
    var_sum = _as(_running_sums(mul(centered, centered)), dtype)
    buffers = _fused_square_sums(_per_thread(centered, threads)._data)
    value = _running_sums(Tensor._make(buffers))._data.astype(dtype)
    return mu, _with_value(var_sum, value)


def _fused_square_sums(deviations):
    """The sums of squares along the last dim of an array, each square added fused, from
    +0 in sequence (ATen's compiled loops)."""
    xp = get_array_module(deviations)
    total = xp.zeros_like(deviations[..., 0])
    for k in range(deviations.shape[-1]):
        total = _fma_arrays(xp, deviations[..., k], deviations[..., k], total)
    return total


def batch_statistics(x, eps: float, layout: str | None) -> tuple:
    """(mean, sum of squared deviations, invstd) per channel, shape (C,), as ATen computes
    them: its kernels the mean from a float64 sum rounded, the deviations in the input's
    dtype and the variance ``var_sum / n`` too; its strided loop the mean torch.mean's, the
    deviations and the variance float64's."""
    dtype = x._data.dtype
    count = x.numel() // x.shape[1]
    rows = _rows(x)
    threads = backend.threads[0]
    if layout == "channels_last":  # no more rows than threads: one thread's buffer has all
        mu, var_sum = _threaded_statistics(rows, dtype, threads if count > threads else 1)
    elif layout:
        mu = _as(div(_running_sums(rows), count), dtype)
        centered = sub(rows, reshape(mu, (x.shape[1], 1)))
        var_sum = _as(_running_sums(mul(centered, centered)), dtype)
    else:
        mu = mean(x, (0,) + tuple(range(2, x.ndim)))
        centered = sub(_as(rows, np.float64), reshape(_as(mu, np.float64), (x.shape[1], 1)))
        var_sum = _running_sums(mul(centered, centered))
    var = _as(div(var_sum, count), np.float64)  # the kernels divide in the input's dtype
    return mu, var_sum, _as(rsqrt(add(var, eps)), dtype)


def normalized_affine(x, mu, invstd, weight, bias, layout: str | None):
    """The output from per-channel (C,) statistics: ``x * alpha + beta`` (ATen's kernels,
    fused, as ``beta = bias - mean * alpha``), or ``(x - mean) * invstd * weight + bias``
    (its strided loop, which adds a missing bias's 0: a -0.0 becomes 0.0)."""
    shape = channel_shape(x)
    if layout is None:
        out = mul(sub(x, reshape(mu, shape)), reshape(invstd, shape))
        out = out if weight is None else mul(out, reshape(weight, shape))
        return add(out, 0.0 if bias is None else reshape(bias, shape))
    alpha = invstd if weight is None else mul(invstd, weight)
    bias = zeros_like(alpha) if bias is None else bias
    beta = fused_multiply_add(neg(mu), alpha, bias)
    return fused_multiply_add(x, reshape(alpha, shape), reshape(beta, shape))
