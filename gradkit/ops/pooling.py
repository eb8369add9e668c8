"""Max pooling in 1, 2 or 3 dims, fixed or adaptive windows: one op over a map of windows.

Every pooling here is described by its windows: for each output position, the flat indices
(into the input's spatial plane) of the elements its window reads, with ``S`` (the plane's
size) for a padded slot. ``max_pool_with_indices`` picks torch's element in each: the first
maximum, or the last NaN, as torch's kernels scan (``val > max || isnan(val)``).
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.clamp import clamp
from gradkit.ops.grad_edges import reads_input
from gradkit.ops.indexing import gather, scatter_into_zeros
from gradkit.ops.joining import cat
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.pooling_checks import (  # noqa: F401 - pooling_avg's too
    max_pool1d_arguments, no_stride, ntuple, out_size, pool_geometry, pool_input)
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
                          torch_arguments=None):
    """Window maxima of (N, C, *sizes) and their flat indices into each plane (as torch);
    ``windows`` (*out, K) serve every plane, (N, C, *out, K) one window map per plane.
    ``torch_arguments``: the pooling's arguments in torch's form, for ``node._saved_<name>``."""
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



def _max_pool_vjp(g, x, indices, windows, fallback, kind, torch_arguments=None):
    x_shape = tuple(x.shape)
    n, c = x_shape[:2]
    plane = math.prod(x_shape[2:])
    outs = (n, c, math.prod(indices.shape[2:]))  # explicit: -1 is ambiguous for 0 batches
    if fallback is None:
        flat = scatter_into_zeros(reshape(g, outs), reshape(indices, outs), shape=(n, c, plane),
                                  dim=2)
        return (reads_input(reshape(flat, tuple(x_shape)), x),)
    # an index past the plane (a window of padding only) sends its gradient nowhere
    flat = scatter_into_zeros(reshape(g, outs), reshape(clamp(indices, max=plane), outs),
                              shape=(n, c, plane + 1), dim=2)
    return (reads_input(reshape(narrow(flat, 2, 0, plane), tuple(x_shape)), x),)


def _max_pool_jvp(tangents, x, indices, windows, fallback, kind, torch_arguments=None):
    x_shape = tuple(x.shape)
    n, c = x_shape[:2]
    flat = reshape(tangents[0], (n, c, math.prod(x_shape[2:])))
    outs = (n, c, math.prod(indices.shape[2:]))
    if fallback is None:
        return reshape(gather(flat, 2, reshape(indices, outs)), tuple(indices.shape)), None
    flat = cat([flat, zeros_like(narrow(flat, 2, 0, 1))], 2)
    plane = math.prod(x_shape[2:])
    picked = gather(flat, 2, reshape(clamp(indices, max=plane), outs))
    return reshape(picked, tuple(indices.shape)), None


max_pool_with_indices.defvjp_all(_max_pool_vjp)
max_pool_with_indices.defjvp_all(_max_pool_jvp)


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, d):
    name = f"max_pool{d}d"
    batched_input, added = pool_input(input, d)
    given_stride = stride
    kernel, stride, pads, dilation, outs = pool_geometry(
        batched_input, input.shape, kernel_size, stride, padding, dilation, ceil_mode, d, name,
        "max_pool3d_with_indices_out_cpu_template()")
    # torch's node keeps a stride not given as ()
    arguments = {"kernel_size": kernel, "stride": () if given_stride in (None, [], ()) else stride,
                 "padding": pads, "dilation": dilation, "ceil_mode": ceil_mode}
    if batched_input._data.dtype == np.bool_:
        require_real_floating(name, batched_input._data)
    dims = [fixed_windows(*args) for args in zip(
        batched_input.shape[2:], kernel, stride, pads, dilation, outs)]
    windows = window_map(dims)
    values, indices = max_pool_with_indices(batched_input, windows=windows,
                                            fallback=fallback_map(dims, windows),
                                            kind=f"MaxPool{d}DWithIndices",
                                            torch_arguments=arguments)
    if added:
        values, indices = squeeze(values, 0), squeeze(indices, 0)
    return (values, indices) if return_indices else values


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """torch.nn.functional.max_pool1d on (N, C, L) or (C, L): max_pool2d over a unit height."""
    kernel, step, pad, spread = max_pool1d_arguments(input, kernel_size, stride, padding,
                                                     dilation, ceil_mode, return_indices)
    if input._data.dtype.kind in "biu" and not return_indices:
        # torch's 1-D kernel has floating types only (with indices it runs max_pool2d's)
        raise kernel_error("max_pool1d_impl")(input._data)
    out = max_pool2d(unsqueeze(input, -2), (1, kernel), (1, step), (0, pad), (1, spread),
                     ceil_mode, return_indices)
    return tuple(squeeze(o, -2) for o in out) if return_indices else squeeze(out, -2)


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


def adaptive_arguments(input, output_size, d: int, name: str, got: str) -> tuple:
    """(batched input, whether a batch dim was added, input sizes, output sizes) of an
    adaptive pooling of ``d`` dims, with torch's errors: its Python check of a sequence
    ``output_size`` against the input's rank, then the rank (``got`` ends that text) and the
    sequence's length (average pooling checks the length first)."""
    if not isinstance(output_size, int):  # (torch's Python reads its len(): a NumPy int fails)
        if input.ndim <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = tuple(output_size)
    wrong_length = isinstance(output_size, tuple) and len(output_size) != d
    if wrong_length and name.startswith("adaptive_avg"):
        raise RuntimeError(f"{name}: output_size must be {d}")
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, {got}"
                           f"{list(input.shape)}")
    if wrong_length:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {d}")
    batched, added = (unsqueeze(input, 0), True) if input.ndim == d + 1 else (input, False)
    sizes = tuple(batched.shape[2:])
    outs = tuple(s if o is None else o
                 for o, s in zip(ntuple(output_size, d, name, "output_size"), sizes, strict=True))
    if min(outs) < 0:
        if name.startswith("adaptive_avg"):  # (torch's 3-d text lacks its last space)
            received = ", ".join(map(str, outs[:2])) + "".join(f",{o}" for o in outs[2:])
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                               f"to 0 but received {{{received}}}")
        shape = list(input.shape[:-d]) + list(outs)
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(o for o in outs if o < 0)}: {shape}")
    return batched, added, sizes, outs


def _adaptive_max_pool(input, output_size, return_indices, d):
    name = f"adaptive_max_pool{d}d"
    batched_input, added, sizes, outs = adaptive_arguments(input, output_size, d, name,
                                                           "but got: ")
    # torch names its 3-d CPU kernel in the dtype error
    require_real_floating(name + ("_cpu" if d == 3 else ""), batched_input._data)
    windows = window_map([adaptive_windows(s, o) for s, o in zip(sizes, outs, strict=True)])
    values, indices = max_pool_with_indices(batched_input, windows=windows,
                                            kind=f"AdaptiveMaxPool{d}D")
    if added:
        values, indices = squeeze(values, 0), squeeze(indices, 0)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """torch.nn.functional.adaptive_max_pool1d: adaptive_max_pool2d over a unit height."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    out = _adaptive_max_pool(unsqueeze(input, -2), (1,) + ntuple(
        output_size, 1, "adaptive_max_pool1d", "output_size"), True, 2)
    out = tuple(squeeze(o, -2) for o in out)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """torch.nn.functional.adaptive_max_pool2d: the max of each of torch's adaptive windows."""
    return _adaptive_max_pool(input, output_size, return_indices, 2)


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """torch.nn.functional.adaptive_max_pool3d on (N, C, D, H, W) or (C, D, H, W)."""
    return _adaptive_max_pool(input, output_size, return_indices, 3)
