"""Average pooling (fixed and adaptive, 1-3 dims) and power-average (lp) pooling.

Composed of existing ops over pooling.py's window maps: the input's planes, one zero slot
appended for padded positions, gathered by ``index_select`` into (N, C, *out, K), summed
over K and divided by torch's divisor. Their gradients are torch's (the adjoint of the
gather spreads ``g / divisor`` over each window) and differentiable again.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.ops.activations import relu
from gradkit.ops.grad_edges import input_edge
from gradkit.memory_format import channels_last, suggested_order
from gradkit.ops._op import op
from gradkit.ops.arithmetic import div, mul, neg, pow
from gradkit.ops.conversion import clone
from gradkit.ops.joining import cat
from gradkit.ops.one_node import one_node
from gradkit.ops.indexing import index_select
from gradkit.ops.piecewise import abs as abs_, sign
from gradkit.ops.pooling import (
    adaptive_windows, fixed_windows, max_pool1d, max_pool2d, max_pool3d,
    refuse_empty_grad_output, window_map)
from gradkit.ops.pooling_arguments import (
    adaptive_arguments, check_non_empty, no_stride, ntuple, one_int, pool_geometry, pool_input)
from gradkit.ops.reduction import mean, sum as sum_
from gradkit.ops.half_scalar import HALF
from gradkit.ops.shape import expand, reshape, squeeze, unsqueeze
from gradkit.ops.unary_helpers import kernel_error, require_real_floating


def _constant(like, array) -> Tensor:
    """A constant of ``like``'s dtype on its device."""
    xp = get_array_module(like._data)
    return Tensor._make(xp.asarray(np.asarray(array), dtype=like._data.dtype))


def _window_columns(x, windows):
    """(N, C, *out, K): each window's values, padded slots reading zero."""
    n, c = x.shape[:2]
    plane = math.prod(x.shape[2:])
    flat = reshape(x, (n, c, plane))
    flat = cat([flat, _constant(x, np.zeros((n, c, 1)))], 2)
    key = Tensor._make(get_array_module(x._data).asarray(windows.reshape(-1)))
    cols = index_select(flat, 2, key)
    return reshape(cols, (n, c) + windows.shape)


@op(save=("d0", "d1", "d2", "x.shape"), name="window_means")
def _window_means(xp, x, d0, d1, d2):
    """The windows' (last dim's) sums, added one after another from +0 (float16's in float32),
    then divided by d0, d1 and d2 in turn: torch's pooling loops (NumPy's sum adds in pairs,
    which differs from 8 terms on, and at the range's ends: 1.7e308 - 1.7e308 + 2.5)."""
    wide = np.dtype(np.float32) if x.dtype == HALF else x.dtype
    with np.errstate(invalid="ignore", over="ignore"):  # silent, as torch's
        total = xp.cumsum(x.astype(wide), axis=-1)[..., -1] + wide.type(0)
        return (total / d0 / d1 / d2).astype(x.dtype)


# torch's backward spreads grad / d0 / d1 / d2 over each window (its divisions in order)
_window_means.defvjp(
    lambda g, d0, d1, d2, shape: expand(unsqueeze(div(div(div(g, d0), d1), d2), -1), sizes=shape),
    None, None, None)
_window_means.defjvp(lambda t, d0, d1, d2, shape: _window_means(t, d0, d1, d2))


def _window_sums(x, windows):
    """(N, C, *out): each window's sum (an integer input's; exact but where it wraps)."""
    return sum_(_window_columns(x, windows), -1)


def _averages(x, windows, *divisors):
    """(N, C, *out): each window's sum divided by ``divisors`` in turn (arrays broadcasting
    to the output's spatial shape), as torch's float kernels."""
    ones = [np.ones(())] * (3 - len(divisors))
    return _window_means(_window_columns(x, windows),
                         *(_constant(x, d) for d in (*divisors, *ones)))


def _divisor(sizes, kernel, stride, pads, outs, count_include_pad):
    """torch's per-window divisor: the window clipped to input + padding, or to the input."""
    total = np.ones(())
    for size, k, s, p, o in zip(sizes, kernel, stride, pads, outs, strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        count = end - start if count_include_pad else \
            np.minimum(end, size) - np.maximum(start, 0)
        total = np.multiply.outer(total, count)
    return total


def _batched(input, d: int):
    """(input with a batch dim, whether added): torch's avg_pool2d reads the input's dim -3
    before any check (an IndexError below 3 dims) and refuses more than 4 dims among its
    shape checks; avg_pool3d checks its rank first."""
    if d == 2 and input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got -3)")
    if d == 2 and input.ndim > 4:
        return input, False
    return pool_input(input, d)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, d):
    name = f"avg_pool{d}d"
    x, added = _batched(input, d)
    kernel, stride, pads, _, outs = pool_geometry(x, input.shape, kernel_size, stride, padding,
                                                  1, ceil_mode, d, name, d == 3)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sizes = tuple(x.shape[2:])
    dtype = x._data.dtype
    # torch's CPU kernels: floating types and int64 (its 3-d kernel no float16)
    if not (dtype.kind == "f" and (d == 2 or dtype != np.float16) or dtype == np.int64):
        raise kernel_error("avg_pool3d_out_frame" if d == 3 else name)(x._data)
    windows = window_map([fixed_windows(*args, 1, o) for *args, o in zip(
        sizes, kernel, stride, pads, outs)])
    divisor = divisor_override if divisor_override is not None else \
        _divisor(sizes, kernel, stride, pads, outs, count_include_pad)
    if x._data.dtype.kind in "iu":  # torch divides integers in C++: truncated
        xp = get_array_module(x._data)
        sums = _window_sums(x, windows)
        out = Tensor._make(xp.trunc(sums._data / xp.asarray(np.asarray(divisor))).astype(
            x._data.dtype))
    else:  # torch's AvgPool2DBackward0 saves the input: a zero-derivative edge to it
        out = _averages(input_edge(x, _node=f"AvgPool{d}DBackwardBackward0"), windows,
                        divisor)
    return squeeze(out, 0) if added else keep_channels_last(out, x) if d == 2 else out


def keep_channels_last(out: Tensor, x: Tensor) -> Tensor:
    """``out`` laid out channels last when batched ``x`` is (torch's 2-d pooling kernels
    allocate their output in the input's suggested memory format; the 3-d ones do not)."""
    return out if suggested_order(x._data) is None else clone(out, memory_format=channels_last)


def _avg_pool_node(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                   divisor_override, d):
    """The pooling recorded as torch's one node, AvgPool{d}DBackward0 (saving the input)."""
    def pool(input):
        return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override, d)
    return one_node(f"AvgPool{d}DBackward0", pool, (input,), {"self": 0}, {
        "kernel_size": _as_given(kernel_size, d), "stride": _as_given(stride, d),
        "padding": _as_given(padding, d), "ceil_mode": bool(ceil_mode),
        "count_include_pad": bool(count_include_pad), "divisor_override": divisor_override})


def _as_given(value, d: int) -> tuple:
    """An int[d] argument as torch's node keeps it: an int (a NumPy one, a 0-d tensor)
    repeated, a list as given, None (a stride) as ()."""
    if value is None:
        return ()
    if isinstance(value, (int, np.integer)):
        return (int(value),) * d
    try:  # (what the pool refuses, a str, it refuses after this record)
        return tuple(value)
    except TypeError:  # a 0-d tensor
        return (value,) * d


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True):
    """torch.nn.functional.avg_pool1d on (N, C, L) or (C, L): avg_pool2d over a unit height."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for avg_pool1d)")
    one = [(1,) + one_int(v, "avg_pool1d", what)
           for v, what in ((kernel_size, "kernel_size"), (padding, "padding"))]
    # (no stride: torch's 1-d kernel passes its kernel size on as the stride)
    step = one[0] if no_stride(stride) else (1,) + one_int(stride, "avg_pool1d", "stride")
    out = avg_pool2d(unsqueeze(input, -2), one[0], step, (0,) + one[1][1:], ceil_mode,
                     count_include_pad)
    return squeeze(out, -2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None):
    """torch.nn.functional.avg_pool2d: window means of (N, C, H, W) or (C, H, W).

    >>> avg_pool2d(gradkit.ones(1, 1, 4, 4), 2).tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    return _avg_pool_node(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override, 2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None):
    """torch.nn.functional.avg_pool3d: window means of (N, C, D, H, W) or (C, D, H, W)."""
    return _avg_pool_node(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override, 3)


def _adaptive_avg_pool(input, output_size, d: int):
    name = f"adaptive_avg_pool{d}d"
    x, added, sizes, outs = adaptive_arguments(input, output_size, d, name, "but got ")
    if all(o == 1 for o in outs):  # torch: the mean over the planes (its MeanBackward1, its
        return mean(input, tuple(range(-d, 0)), True)  # dtype rules: complex too, no integers)
    if d == 3:  # (torch's 2-d kernel pools an empty plane to NaN)
        check_non_empty(input, name)
    if d == 2 and x._data.size == 0 and x._data.dtype.kind != "f":  # torch's 2d kernel
        out = x.new_zeros(tuple(x.shape[:2]) + outs)  # checks no dtype of an empty input
        return squeeze(out, 0) if added else out
    require_real_floating(name if d == 2 else f"{name}_cpu", x._data)  # torch's kernel names
    dims = [adaptive_windows(s, o) for s, o in zip(sizes, outs, strict=True)]
    # torch's kernel divides each window's sum by its sizes in turn (sum / kh / kw)
    counts = [valid.sum(1).reshape((-1,) + (1,) * (d - 1 - i))
              for i, (_, valid, _) in enumerate(dims)]

    def pool(input):
        # torch's kernel saves the input (unbatched too): a zero-derivative edge to it
        edge = input_edge(input, _node=f"AdaptiveAvgPool{d}DBackwardBackward0")
        x = unsqueeze(edge, 0) if added else edge
        out = _averages(x, window_map(dims), *counts)
        out = squeeze(out, 0) if added else keep_channels_last(out, x) if d == 2 else out
        return refuse_empty_grad_output(out, name=name) if 0 in tuple(out.shape)[1:] else out
    return one_node(f"AdaptiveAvgPool{d}DBackward0", pool, (input,), {"self": 0})


def adaptive_avg_pool1d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool1d: the mean of each adaptive window."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    size = (1,) + one_int(output_size, "adaptive_avg_pool1d", "output_size")
    return squeeze(_adaptive_avg_pool(unsqueeze(input, -2), size, 2), -2)


def adaptive_avg_pool2d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool2d: windows [floor(i L/out), ceil((i+1) L/out))."""
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool3d."""
    return _adaptive_avg_pool(input, output_size, 3)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, d):
    """torch's composition: (sign(a) relu(|a|) * window size) ^ (1/p), a the mean of x^p."""
    max_pool, avg_pool = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d),
                          3: (max_pool3d, avg_pool3d)}[d]
    if norm_type == math.inf:
        return max_pool(abs_(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return neg(max_pool(neg(abs_(input)), kernel_size, stride, 0, 1, ceil_mode))
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)  # (its errors)
    if d == 1 and not isinstance(kernel_size, (int, np.integer)):  # torch's out.mul(kernel_size)
        raise TypeError("mul(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(kernel_size).__name__}")
    size = math.prod(ntuple(kernel_size, d, f"lp_pool{d}d"))
    return pow(mul(mul(sign(out), relu(abs_(out))), size), 1.0 / norm_type)


def lp_pool1d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """torch.nn.functional.lp_pool1d: the p-norm of each window."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """torch.nn.functional.lp_pool2d: the p-norm of each window."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """torch.nn.functional.lp_pool3d: the p-norm of each window of (N, C, D, H, W) inputs."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
