"""Max pooling in 1, 2 or 3 dims, fixed or adaptive windows: one op over a map of windows.

Every pooling here is described by its windows: for each output position, the flat indices
(into the input's spatial plane) of the elements its window reads, with ``S`` (the plane's
size) for a padded slot. ``max_pool_with_indices`` picks torch's element in each: the first
maximum, or the last NaN, as torch's kernels scan (``val > max || isnan(val)``).
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.memory_format import lay_out, suggested_order
from gradkit.ops._op import op
from gradkit.ops.clamp import clamp
from gradkit.ops.grad_edges import backward_of, reads_input
from gradkit.ops.indexing import gather, scatter_into_zeros
from gradkit.ops.joining import cat
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.pooling_arguments import (
    adaptive_arguments, check_non_empty, no_stride, one_int, out_size, pool_geometry,
    pool_input, read_ints)
from gradkit.ops.shape import reshape, squeeze, unsqueeze
from gradkit.ops.slicing import narrow
from gradkit.ops.unary_helpers import kernel_error, require_real_floating


def window_map(dims) -> np.ndarray:
    """(*out, K) flat input indices from per-dim (positions (out, k), valid (out, k), size);
    an invalid slot in any dim holds the plane's size (a padded slot)."""
    d = len(dims)
    sizes = [size for _, _, size in dims]
    flat, valid = 0, True
    for i, (positions, ok, _) in enumerate(dims):
        shape = [1] * (2 * d)
        shape[i], shape[d + i] = positions.shape
        flat = flat + positions.reshape(shape) * math.prod(sizes[i + 1:])
        valid = valid & ok.reshape(shape)
    out_shape = tuple(p.shape[0] for p, _, _ in dims)
    flat = np.where(valid, flat, math.prod(sizes))
    # (the window length spelled out: -1 is ambiguous when an output size is 0)
    return np.broadcast_to(flat, out_shape + flat.shape[d:]).reshape(
        out_shape + (math.prod(flat.shape[d:]),))


def fallback_map(dims, windows) -> np.ndarray | None:
    """torch's index for a window that reads only padding (dilation can make one): its first
    position at or past 0 in each dim, flattened (possibly past the plane); None if no such
    window."""
    plane = math.prod(size for _, _, size in dims)
    if (windows < plane).any(-1).all():
        return None
    flat, sizes = 0, [size for _, _, size in dims]
    for i, (positions, _, _) in enumerate(dims):
        first = np.take_along_axis(positions, np.argmax(positions >= 0, 1)[:, None], 1)[:, 0]
        shape = [1] * len(dims)
        shape[i] = len(first)
        flat = flat + first.reshape(shape) * math.prod(sizes[i + 1:])
    return np.broadcast_to(flat, windows.shape[:-1])


def fixed_windows(size, kernel, stride, pad, dilation, out):
    """One dim of a strided window: (positions, valid, size)."""
    positions = (np.arange(out)[:, None] * stride - pad + np.arange(kernel)[None, :] * dilation)
    return positions, (positions >= 0) & (positions < size), size


def adaptive_windows(size, out):
    """One dim of torch's adaptive windows: [floor(i L / out), ceil((i + 1) L / out))."""
    starts = np.arange(out) * size // out
    ends = -(-(np.arange(1, out + 1) * size) // out)
    width = int((ends - starts).max()) if out else 1
    positions = starts[:, None] + np.arange(width)[None, :]
    return positions, positions < ends[:, None], size


# x itself is saved (not just its shape), as torch's node saves self: a write into it before
# backward is refused
@op(save=("x", "result1"), outputs=2, differentiable_outputs=(0,),
    node_name="MaxPool2DWithIndicesBackward0")
def max_pool_with_indices(xp, x, windows=None, fallback=None, kind="MaxPool2DWithIndices",
                          torch_arguments=None, unbatched=False):
    """Window maxima of (N, C, *sizes) (``unbatched``: (C, *sizes), one node as torch's) and
    their flat indices into each plane (as torch); ``windows`` (*out, K) serve every plane,
    (N, C, *out, K) one window map per plane.
    ``torch_arguments``: the pooling's arguments in torch's form, for ``node._saved_<name>``."""
    if unbatched:
        values, indices = _window_maxima(xp, x[None], windows, fallback)
        return values[0], indices[0]
    values, indices = _window_maxima(xp, x, windows, fallback)
    order = suggested_order(x) if kind in _KEEP_LAYOUT else None
    if order is not None:  # torch's 2-d kernels (and max_pool3d's) keep channels last
        values, indices = lay_out(xp, values, order), lay_out(xp, indices, order)
    return values, indices


_KEEP_LAYOUT = ("MaxPool2DWithIndices", "MaxPool3DWithIndices", "AdaptiveMaxPool2D")


def _window_maxima(xp, x, windows, fallback):
    """max_pool_with_indices of a batched x, on arrays."""
    n, c = x.shape[:2]
    plane = math.prod(x.shape[2:])
    lowest = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
    flat = x.reshape(n, c, plane)
    padded = bool((windows == plane).any())
    if padded:  # padded slots read the lowest value, from one slot past the plane
        flat = xp.concatenate([flat, xp.full((n, c, 1), lowest, dtype=x.dtype)], axis=2)
    if windows.ndim == x.ndim + 1:  # per-plane windows (N, C, *out, K): fractional pooling
        by_slot = xp.asarray(np.moveaxis(windows, -1, 2))  # (N, C, K, *out)
        slots = by_slot.reshape(n, c, math.prod(by_slot.shape[2:]))  # explicit: N may be 0
        cols = xp.take_along_axis(flat, slots, 2).reshape(by_slot.shape)
    else:
        by_slot = np.ascontiguousarray(np.moveaxis(windows, -1, 0))  # (K, *out): slot-major
        cols = xp.take(flat, xp.asarray(by_slot), axis=2)  # (N, C, K, *out)
    values = xp.max(cols, axis=2)  # NaN propagates
    tie_with_padding = padded and bool((values == lowest).any())
    best = xp.zeros(values.shape, dtype=xp.int64)
    for slot in reversed(range(cols.shape[2])):  # the first maximum: the lowest slot wins
        hit = cols[:, :, slot] == values
        if tie_with_padding:  # a padded slot never wins
            hit = hit & xp.asarray(by_slot[slot] < plane)
        best = xp.where(hit, slot, best)
    if x.dtype.kind == "f" and bool(xp.isnan(x).any()):  # a NaN wins, the last one scanned
        for slot in range(cols.shape[2]):
            best = xp.where(xp.isnan(cols[:, :, slot]), slot, best)
    # the value at the index: a tie of -0.0 and 0.0 gives the first's sign, as torch
    values = xp.take_along_axis(cols, best[:, :, None], axis=2)[:, :, 0]
    where = xp.broadcast_to(xp.asarray(by_slot), cols.shape)
    indices = xp.take_along_axis(where, best[:, :, None], axis=2)[:, :, 0]
    if fallback is not None:
        indices = xp.where(xp.asarray(windows < plane).any(-1), indices, xp.asarray(fallback))
    return values, indices.astype(xp.int64)


max_pool_with_indices.node_name_rule = lambda params, datas: params["kind"] + "Backward0"



def empty_grad_output_error(shape: tuple, name: str) -> RuntimeError | None:
    """torch's refusal, in an adaptive pooling's backward, of an output with an empty dim
    other than the batch (None if it has none)."""
    for dim in range(1, len(shape)):
        if shape[dim] == 0:
            return RuntimeError(f"{name}_backward(): Expected grad_output to have non-zero size "
                                f"for non-batch dimensions, but grad_output has sizes "
                                f"{list(shape)} with dimension {dim} being empty")
    return None


@op(node_name="EmptyOutputBackward0")
def refuse_empty_grad_output(xp, x, name=""):
    """``x``, an adaptive pooling's empty output, behind a node whose backward raises torch's
    error (average pooling is composed: this is its backward's check)."""
    return x.copy()


def _refuse(g, name):
    raise empty_grad_output_error(tuple(g.shape), name)


refuse_empty_grad_output.defvjp(_refuse)
refuse_empty_grad_output.defjvp(lambda t, name: t)


def _planes(x_shape: tuple, indices_shape: tuple, unbatched: bool) -> tuple:
    """(N, C, plane size, outputs per plane) of a pooling, a missing batch dim read as 1
    (spelled out: -1 is ambiguous for 0 batches)."""
    shape = ((1,) if unbatched else ()) + x_shape
    spatial = len(shape) - 2
    return (*shape[:2], math.prod(shape[2:]),
            math.prod(indices_shape[len(indices_shape) - spatial:]))


def _max_pool_vjp(g, x, indices, windows, fallback, kind, torch_arguments=None,
                  unbatched=False):
    x_shape = tuple(x.shape)
    refused = kind.startswith("Adaptive") and empty_grad_output_error(
        tuple(indices.shape), "adaptive_max_pool" + kind[-2:].lower())
    if refused:
        raise refused
    n, c, plane, count = _planes(x_shape, tuple(indices.shape), unbatched)
    outs = (n, c, count)
    node = backward_of(kind + "Backward0")
    if fallback is None:
        flat = scatter_into_zeros(reshape(g, outs), reshape(indices, outs), shape=(n, c, plane),
                                  dim=2)
        return (reads_input(reshape(flat, tuple(x_shape)), x, _node=node),)
    # an index past the plane (a window of padding only) sends its gradient nowhere
    flat = scatter_into_zeros(reshape(g, outs), reshape(clamp(indices, max=plane), outs),
                              shape=(n, c, plane + 1), dim=2)
    return (reads_input(reshape(narrow(flat, 2, 0, plane), tuple(x_shape)), x, _node=node),)


def _max_pool_jvp(tangents, x, indices, windows, fallback, kind, torch_arguments=None,
                  unbatched=False):
    n, c, plane, count = _planes(tuple(x.shape), tuple(indices.shape), unbatched)
    flat = reshape(tangents[0], (n, c, plane))
    outs = (n, c, count)
    if fallback is None:
        return reshape(gather(flat, 2, reshape(indices, outs)), tuple(indices.shape)), None
    flat = cat([flat, zeros_like(narrow(flat, 2, 0, 1))], 2)
    picked = gather(flat, 2, reshape(clamp(indices, max=plane), outs))
    return reshape(picked, tuple(indices.shape)), None


max_pool_with_indices.defvjp_all(_max_pool_vjp)
max_pool_with_indices.defjvp_all(_max_pool_jvp)


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, d):
    name = f"max_pool{d}d"
    for value, what in ((kernel_size, "kernel_size"), (stride, "stride"), (padding, "padding"),
                        (dilation, "dilation")):  # torch's parser, before the input's rank
        if what != "stride" or not no_stride(value):
            read_ints(value, name, what)
    batched_input, added = pool_input(input, d)
    given_stride = stride
    kernel, stride, pads, dilation, outs = pool_geometry(
        batched_input, input.shape, kernel_size, stride, padding, dilation, ceil_mode, d, name)
    # torch's node keeps a stride not given as ()
    arguments = {"kernel_size": kernel, "stride": () if no_stride(given_stride) else stride,
                 "padding": pads, "dilation": dilation, "ceil_mode": ceil_mode}
    if batched_input._data.dtype.kind in "bc":  # (torch's kernels take integers, not these)
        require_real_floating(name, batched_input._data)
    dims = [fixed_windows(*args) for args in zip(
        batched_input.shape[2:], kernel, stride, pads, dilation, outs)]
    windows = window_map(dims)
    values, indices = max_pool_with_indices(input, windows=windows,
                                            fallback=fallback_map(dims, windows),
                                            kind=f"MaxPool{d}DWithIndices",
                                            torch_arguments=arguments, unbatched=added)
    return (values, indices) if return_indices else values


def _max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode):
    """torch's max_pool1d_with_indices: max_pool2d over a unit height (its checks)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for max_pool1d)")
    kernel, pad, spread = (one_int(v, "max_pool1d", what, "max_pool1d_with_indices") for v, what
                           in ((kernel_size, "kernel_size"), (padding, "padding"),
                               (dilation, "dilation")))
    step = kernel if no_stride(stride) else one_int(stride, "max_pool1d", "stride",
                                                    "max_pool1d_with_indices")
    out = max_pool2d(unsqueeze(input, -2), (1,) + kernel, (1,) + step, (0,) + pad,
                     (1,) + spread, ceil_mode, True)
    return tuple(squeeze(o, -2) for o in out)


# torch's max_pool1d words for each argument's length
_1D_ANY = "an int, list of ints or tuple of ints"
_1D_LENGTHS = {"stride": "None, an int, list of ints, or tuple of ints",
               "padding": "an int, list of ints, or tuple of ints"}


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """torch.nn.functional.max_pool1d on (N, C, L) or (C, L): max_pool2d over a unit height.
    With ``return_indices`` torch runs max_pool1d_with_indices (max_pool2d's checks and words),
    else its 1-d checks."""
    if return_indices:
        return _max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    if input.ndim not in (2, 3) or 0 in tuple(input.shape)[input.ndim - 2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")

    def one(value, what):
        value = read_ints(value, "max_pool1d", what)
        if len(value) != 1:
            raise RuntimeError(f"max_pool1d() {what} must be {_1D_LENGTHS.get(what, _1D_ANY)} "
                               f"of size 1 but got size {len(value)}")
        return value[0]
    kernel = one(kernel_size, "kernel_size")
    step = kernel if no_stride(stride) else one(stride, "stride")
    pad, spread = one(padding, "padding"), one(dilation, "dilation")
    for value, what in ((kernel, "kernel_size"), (step, "stride")):
        if value <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {value}")
    if pad < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {pad}")
    if pad > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={pad} and kernel_size={kernel}")
    if spread <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {spread}")
    size = out_size(input.shape[-1], pad, spread * (kernel - 1) + 1, step, ceil_mode)
    if size < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    if input._data.dtype.kind in "biuc":  # torch's 1-D kernel has real floating types only
        raise kernel_error("max_pool1d_impl")(input._data)
    return squeeze(max_pool2d(unsqueeze(input, -2), (1, kernel), (1, step), (0, pad),
                              (1, spread), ceil_mode), -2)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """torch.nn.functional.max_pool2d on (N, C, H, W) or (C, H, W).

    >>> max_pool2d(gradkit.randn(1, 1, 4, 4), 2).shape
    gradkit.Size([1, 1, 2, 2])
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """torch.nn.functional.max_pool3d on (N, C, D, H, W) or (C, D, H, W)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _adaptive_max_pool(input, output_size, return_indices, d):
    name = f"adaptive_max_pool{d}d"
    batched_input, added, sizes, outs = adaptive_arguments(input, output_size, d, name,
                                                           "but got: ")
    check_non_empty(input, name)
    # torch names its 3-d CPU kernel in the dtype error
    require_real_floating(name + ("_cpu" if d == 3 else ""), batched_input._data)
    windows = window_map([adaptive_windows(s, o) for s, o in zip(sizes, outs, strict=True)])
    values, indices = max_pool_with_indices(input, windows=windows, kind=f"AdaptiveMaxPool{d}D",
                                            unbatched=added)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """torch.nn.functional.adaptive_max_pool1d: adaptive_max_pool2d over a unit height."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    check_non_empty(input, "adaptive_max_pool1d")
    out = _adaptive_max_pool(unsqueeze(input, -2), (1,) + one_int(
        output_size, "adaptive_max_pool1d", "output_size"), True, 2)
    out = tuple(squeeze(o, -2) for o in out)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """torch.nn.functional.adaptive_max_pool2d: the max of each of torch's adaptive windows."""
    return _adaptive_max_pool(input, output_size, return_indices, 2)


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """torch.nn.functional.adaptive_max_pool3d on (N, C, D, H, W) or (C, D, H, W)."""
    return _adaptive_max_pool(input, output_size, return_indices, 3)
