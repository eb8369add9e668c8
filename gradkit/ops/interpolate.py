"""torch.nn.functional.interpolate: modes nearest, nearest-exact, linear, bilinear, trilinear.

Resampling is separable: one spatial dim at a time, each output element reads one input
element (nearest) or two, weighted ``(1 - t, t)`` (linear), at torch's source indices. Composed
of ``index_select``, ``mul`` and ``add``, the gradients are torch's: every output's gradient
goes back, weighted, to the elements it read.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.ops.arithmetic import add, mul
from gradkit.ops.fused import fused_multiply_add
from gradkit.ops.indexing import index_select
from gradkit.ops.one_node import one_node
from gradkit.ops.unary_helpers import kernel_error, require_real_floating

_LINEAR_MODES = {"linear": 3, "bilinear": 4, "trilinear": 5}
_ALL_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _scale(in_size, out_size, scale_factor, align_corners):
    """torch's area_pixel_compute_scale (align_corners) / compute_scales_value."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale_factor if scale_factor is not None else in_size / out_size


def _nearest_index(in_size, out_size, scale_factor):
    """torch's nearest_idx: floor(dst * scale) in float32, clamped to the input."""
    if out_size == in_size:
        return np.arange(out_size)
    if out_size == 2 * in_size:
        return np.arange(out_size) >> 1
    scale = np.float32(_scale(in_size, out_size, scale_factor, False))
    index = np.floor(np.arange(out_size, dtype=np.float32) * scale).astype(np.int64)
    return np.minimum(index, in_size - 1)


def _nearest_exact_index(in_size, out_size, scale_factor):
    """torch's nearest_neighbor_exact_compute_source_index: floorf((dst + 0.5) * scale), the
    product in double with a float32 scale, rounded to float32 before the floor."""
    scale = float(np.float32(_scale(in_size, out_size, scale_factor, False)))
    index = np.floor(((np.arange(out_size) + 0.5) * scale).astype(np.float32)).astype(np.int64)
    return np.minimum(index, in_size - 1)


def _linear_taps(in_size, out_size, scale_factor, align_corners, dtype):
    """(i0, i1, w0, w1): torch's area_pixel_compute_source_index and its two neighbours, in
    its opmath type (float32 below float64), ``scale * (dst + 0.5) - 0.5`` rounded once as
    its compiled fma (so a weight is 3e-17, not 0, where that matters: 0 * inf is NaN)."""
    real = np.float64 if dtype == np.float64 else np.float32
    if align_corners:
        scale = real(in_size - 1) / real(out_size - 1) if out_size > 1 else real(0)
    else:
        scale = real(1.0 / scale_factor) if scale_factor is not None else \
            real(in_size) / real(out_size)
    dst = np.arange(out_size, dtype=real)
    full = np.full(out_size, scale, dtype=real)
    src = full * dst if align_corners else np.maximum(
        fused_multiply_add(np, full, dst + real(0.5), np.full(out_size, -0.5, dtype=real)), 0)
    # guard_index_and_lambda: the index is floorf's (of src in float32), the weight clamped
    i0 = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), in_size - 1)
    w1 = np.clip(src - i0, real(0), real(1))
    i1 = i0 + (i0 < in_size - 1)
    return i0, i1, real(1) - w1, w1


def _along(x, dim, values):
    """A constant vector laid along ``dim`` of x, in x's dtype and on its device."""
    shape = [1] * x.ndim
    shape[dim] = len(values)
    xp = get_array_module(x._data)
    return Tensor._make(xp.asarray(np.asarray(values).reshape(shape), dtype=x._data.dtype))


def _index(x, array) -> Tensor:
    return Tensor._make(get_array_module(x._data).asarray(array))


def _output_sizes(input, size, scale_factor, spatial):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    sizes = tuple(input.shape[2:])
    if size is not None:
        out = (size,) * spatial if isinstance(size, int) else tuple(size)
        if len(out) != spatial:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {list(sizes)} and output size of {size}. Please "
                "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                "(o1, o2, ...,oK) format.")
        return out, (None,) * spatial
    scales = (scale_factor,) * spatial if isinstance(scale_factor, (int, float)) \
        else tuple(scale_factor)
    if len(scales) != spatial:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(sizes)} and scale_factor of shape "
            f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format.")
    return tuple(math.floor(s * f) for s, f in zip(sizes, scales, strict=True)), scales


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False):
    """Resize the spatial dims of (N, C, *sizes) to ``size`` or by ``scale_factor``.

    >>> interpolate(gradkit.ones(1, 1, 2, 2), scale_factor=2, mode="bilinear").shape
    gradkit.Size([1, 1, 4, 4])
    """
    if mode in _NEAREST and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode not in tuple(_NEAREST) + tuple(_LINEAR_MODES) or not 3 <= input.ndim <= 5:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: {_ALL_MODES} (got {mode})")
    if mode in _LINEAR_MODES and input.ndim != _LINEAR_MODES[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_MODES[mode]}D input")
    if mode in _LINEAR_MODES:
        require_real_floating("compute_indices_weights_linear", input._data)
    elif input._data.dtype.kind in "bi":  # torch's nearest kernels take uint8, not other ints
        raise kernel_error("upsample_nearest2d_channels_last" if input.ndim == 4 else
                           "compute_indices_weights_nearest")(input._data)
    if antialias:
        raise NotImplementedError("gradkit's interpolate has no antialias")
    outs, scales = _output_sizes(input, size, scale_factor, input.ndim - 2)
    if 0 in outs or 0 in tuple(input.shape[2:]):
        names = "DHW"[3 - len(outs):]
        shown = [", ".join(f"{n}: {s}" for n, s in zip(names, sizes, strict=True))
                 for sizes in (input.shape[2:], outs)]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"({shown[0]}){' and' if len(outs) == 1 else ''} output ({shown[1]})")
    if recompute_scale_factor:
        scales = (None,) * len(outs)  # torch then maps indices with in / out
    def resample(x):
        # the last dim first: torch's kernel blends along it innermost (the same rounding)
        for i, (out, scale) in reversed(list(enumerate(zip(outs, scales, strict=True)))):
            dim, in_size = i + 2, x.shape[i + 2]
            if mode in _NEAREST:
                x = index_select(x, dim, _index(x, _NEAREST[mode](in_size, out, scale)))
                continue
            i0, i1, w0, w1 = _linear_taps(in_size, out, scale, bool(align_corners),
                                          x._data.dtype)
            x = add(mul(index_select(x, dim, _index(x, i0)), _along(x, dim, w0)),
                    mul(index_select(x, dim, _index(x, i1)), _along(x, dim, w1)))
        return x
    # torch's one kernel per mode and dimension: UpsampleBilinear2DBackward0 & co.
    kernel = _KERNEL_NAMES[mode] + f"{len(outs)}D"
    return one_node(f"Upsample{kernel}Backward0", resample, (input,))


_KERNEL_NAMES = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
                 "bilinear": "Bilinear", "trilinear": "Trilinear"}
_NEAREST = {"nearest": _nearest_index, "nearest-exact": _nearest_exact_index}
