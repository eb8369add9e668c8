"""torch.nn.functional.interpolate: modes nearest, nearest-exact, linear, bilinear, bicubic,
trilinear and area.

Resampling is separable: one spatial dim at a time, each output element reads one input
element (nearest), two, weighted ``(1 - t, t)`` (linear), or four, weighted by torch's cubic
convolution (bicubic), at torch's source indices; area is adaptive average pooling. Composed
of ``index_select``, ``mul`` and ``add``, the gradients are torch's: every output's gradient
goes back, weighted, to the elements it read.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.memory_format import lay_out, suggested_order
from gradkit.number_arguments import float_list
from gradkit.ops.arithmetic import add, mul
from gradkit.ops.conversion import in_suggested_format
from gradkit.ops.fused import fused_multiply_add
from gradkit.ops.indexing import index_select
from gradkit.ops.interpolate_uint8 import resample_uint8
from gradkit.ops.one_node import one_node
from gradkit.ops.pooling_avg import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from gradkit.ops.unary_helpers import kernel_error, require_real_floating

_LINEAR_MODES = {"linear": 3, "bilinear": 4, "trilinear": 5}
_NEAREST_MODES = ("nearest", "nearest-exact", "area")  # the modes without align_corners
_FIXED_POINT_MODES = ("bilinear", "bicubic", "lanczos")  # uint8 (4-d) in torch's fixed point
_AREA_POOLS = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}
_CUBIC_A = -0.75  # torch's cubic convolution coefficient
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
    product in double of the float32 scale, clamped to the input."""
    scale = np.float64(np.float32(_scale(in_size, out_size, scale_factor, False)))
    src = ((np.arange(out_size) + 0.5) * scale).astype(np.float32)
    return np.minimum(np.floor(src).astype(np.int64), in_size - 1)


def _source_coordinates(in_size, out_size, scale_factor, align_corners, real, cubic):
    """torch's area_pixel_compute_source_index in ``real``: ``scale * (dst + 0.5) - 0.5``
    rounded once as its compiled fma, clamped at 0 except for cubic."""
    if align_corners:
        scale = real(in_size - 1) / real(out_size - 1) if out_size > 1 else real(0)
    else:
        scale = real(1.0 / scale_factor) if scale_factor is not None else \
            real(in_size) / real(out_size)
    dst = np.arange(out_size, dtype=real)
    full = np.full(out_size, scale, dtype=real)
    if align_corners:
        return full * dst
    src = fused_multiply_add(np, full, dst + real(0.5), np.full(out_size, -0.5, dtype=real))
    return src if cubic else np.maximum(src, 0)


def _guard_index_and_lambda(src, in_size, real):
    """torch's guard_index_and_lambda: floorf's index (of src in float32), the fraction
    clamped to [0, 1]."""
    index = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), in_size - 1)
    return index, np.clip(src - index, real(0), real(1))


def _linear_taps(in_size, out_size, scale_factor, align_corners, dtype):
    """(i0, i1, w0, w1): torch's area_pixel_compute_source_index and its two neighbours, in
    its opmath type (float32 below float64), ``scale * (dst + 0.5) - 0.5`` rounded once as
    its compiled fma (so a weight is 3e-17, not 0, where that matters: 0 * inf is NaN)."""
    real = np.float64 if dtype == np.float64 else np.float32
    if in_size == out_size:  # torch's "copy": each element twice, weighted 1 and 0 (inf: NaN)
        same = np.arange(in_size)
        return [(same, np.ones(in_size, real)), (same, np.zeros(in_size, real))]
    src = _source_coordinates(in_size, out_size, scale_factor, align_corners, real, False)
    i0, w1 = _guard_index_and_lambda(src, in_size, real)
    i1 = i0 + (i0 < in_size - 1)
    return [(i0, real(1) - w1), (i1, w1)]


def _cubic_taps(in_size, out_size, scale_factor, align_corners, dtype):
    """torch's four bicubic taps (index - 1 .. index + 2, clamped to the input) and their
    weights, get_cubic_upsample_coefficients with A = -0.75, in its opmath type."""
    real = np.float64 if dtype == np.float64 else np.float32
    src = _source_coordinates(in_size, out_size, scale_factor, align_corners, real, True)
    index, t = _guard_index_and_lambda(src, in_size, real)
    a = real(_CUBIC_A)

    def near(x):  # cubic_convolution1: |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # cubic_convolution2: 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = (far(t + real(1)), near(t), near(real(1) - t), far(real(1) - t + real(1)))
    return [(np.clip(index - 1 + j, 0, in_size - 1), w) for j, w in enumerate(weights)]


def _float16_weights(taps, mode: str):
    """Weights as torch's generic kernel stores them for float16: in float16 (linear's second
    weight first, the first one ``1 - `` that)."""
    if mode == "bicubic":
        return [(index, w.astype(np.float16).astype(np.float32)) for index, w in taps]
    (i0, _), (i1, w1) = taps
    w1 = w1.astype(np.float16).astype(np.float32)
    return [(i0, (1 - w1).astype(np.float16).astype(np.float32)), (i1, w1)]


def _aa_filter(mode: str):
    """torch's antialias filters: the triangle (bilinear), Keys' cubic with a = -0.5 (bicubic,
    PIL's), the Lanczos-3 windowed sinc (lanczos)."""
    def triangle(x):
        return np.where(np.abs(x) < 1, 1 - np.abs(x), 0)

    def cubic(x):
        x, a = np.abs(x), -0.5
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0))
    def lanczos(x):
        return np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0)
    return {"bilinear": triangle, "bicubic": cubic, "lanczos": lanczos}[mode]


def _antialias_taps(in_size, out_size, scale_factor, align_corners, dtype, mode):
    """torch's _compute_indices_min_size_weights_aa: each output reads the inputs under its
    filter, stretched by the scale when downsampling, its weights normalized to sum 1."""
    real = np.float64 if dtype == np.float64 else np.float32
    scale = real(_scale(in_size, out_size, scale_factor, align_corners))
    interp = {"bilinear": 2, "bicubic": 4, "lanczos": 6}[mode]
    support = interp * 0.5 * scale if scale >= 1 else interp * 0.5
    invscale = 1 / scale if scale >= 1 else real(1)
    centers = scale * (np.arange(out_size, dtype=real) + real(0.5))
    low = np.maximum((centers - support + 0.5).astype(np.int64), 0)
    sizes = np.minimum((centers + support + 0.5).astype(np.int64), in_size) - low
    width = int(sizes.max())
    offsets = np.arange(width)[None, :]
    weights = _aa_filter(mode)((offsets + low[:, None] - centers[:, None] + real(0.5))
                               * invscale).astype(real)
    weights = np.where(offsets < sizes[:, None], weights, real(0))
    total = weights.sum(axis=1, keepdims=True)
    weights = np.where(total != 0, weights / np.where(total != 0, total, 1), weights)
    index = np.minimum(low[:, None] + offsets, in_size - 1)
    return [(index[:, j], weights[:, j].astype(real)) for j in range(width)]


def _along(x, dim, values):
    """A constant vector laid along ``dim`` of x, in x's dtype and on its device."""
    shape = [1] * x.ndim
    shape[dim] = len(values)
    xp = get_array_module(x._data)
    return Tensor._make(xp.asarray(np.asarray(values).reshape(shape), dtype=x._data.dtype))


def _index(x, array) -> Tensor:
    return Tensor._make(get_array_module(x._data).asarray(array))


def _is_integer(x) -> bool:
    """torch's check of a size: an int, a NumPy integer or a tensor of integers."""
    if isinstance(x, Tensor):
        return not x.is_floating_point()
    return isinstance(x, (int, np.integer))


def _output_sizes(input, size, scale_factor, spatial):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    sizes = tuple(input.shape[2:])
    if size is not None:
        out = tuple(size) if isinstance(size, (tuple, list)) else (size,) * spatial
        if len(out) != spatial:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {list(sizes)} and output size of {size}. Please "
                "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                "(o1, o2, ...,oK) format.")
        if isinstance(size, (tuple, list)) and not all(map(_is_integer, out)):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            "Tuple[int, int, int], but got size with types "
                            f"{[type(x) for x in out]}")
        return out, (None,) * spatial
    # torch's list of scales, which its kernel's parser reads (``_scales_read``)
    scales = scale_factor if isinstance(scale_factor, (tuple, list)) else [scale_factor] * spatial
    if len(scales) != spatial:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(sizes)} and scale_factor of shape "
            f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format.")
    return None, scales


def _scales_read(input, scales, mode: str, antialias: bool, recompute) -> tuple:
    """(output sizes, scales) from the scale factors as the kernel's parser reads its ``float[]
    scale_factors``; a list it takes no element of is its "invalid combination"."""
    if mode == "area" or recompute:  # torch's Python computes the sizes, the kernel no scale
        read = scales
    else:
        kernel = _kernel_name(mode, len(scales), antialias)
        read = float_list(scales, kernel, "scale_factors")
    if read is None:
        aligned = "" if mode in _NEAREST_MODES else "bool, "
        raise TypeError(f"{kernel}() received an invalid combination of arguments - got (Tensor, "
                        f"NoneType, {aligned}{type(scales).__name__}), but expected one of:")
    sizes = input.shape[2:]
    return tuple(_scaled_size(s * f) for s, f in zip(sizes, read, strict=True)), tuple(read)


def _scaled_size(size: float) -> int:
    """floor(size) as torch's int64 conversion, which refuses a NaN, an infinity and what
    overflows."""
    if not -2.0 ** 63 <= size < 2.0 ** 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return math.floor(size)


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False):
    """Resize the spatial dims of (N, C, *sizes) to ``size`` or by ``scale_factor``.

    >>> interpolate(gradkit.ones(1, 1, 2, 2), scale_factor=2, mode="bilinear").shape
    gradkit.Size([1, 1, 4, 4])
    """
    if mode in _NEAREST_MODES and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    outs, scales = _output_sizes(input, size, scale_factor, input.ndim - 2)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    _check_mode(input, mode, align_corners, antialias)
    if outs is None:
        outs, scales = _scales_read(input, scales, mode, antialias, recompute_scale_factor)
    if not all(map(_is_integer, outs)):  # one float size: refused by the kernel's parser
        raise _parser_refusal(mode, len(outs), antialias, type(outs[0]).__name__)
    outs = tuple(map(int, outs))  # (an int tensor's value)
    if mode == "area":  # torch's: adaptive average pooling to the (floored) output size
        return _AREA_POOLS[input.ndim](input, outs)
    if any(not -2 ** 63 <= n < 2 ** 63 for n in outs):  # torch's checked double -> int64
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if min(outs + tuple(input.shape[2:])) <= 0:  # (a negative scale factor's too)
        names = "DHW"[3 - len(outs):]
        shown = [", ".join(f"{n}: {s}" for n, s in zip(names, sizes, strict=True))
                 for sizes in (input.shape[2:], outs)]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"({shown[0]}){' and' if len(outs) == 1 else ''} output ({shown[1]})")
    if recompute_scale_factor:
        scales = (None,) * len(outs)  # torch then maps indices with in / out
    if input._data.dtype == np.uint8 and mode in _FIXED_POINT_MODES:
        # torch's result takes the input's memory format
        return Tensor._make(lay_out(np, resample_uint8(input._data, outs, scales, align_corners,
                                                       mode, antialias),
                                    suggested_order(input._data)))

    def resample(x):
        half = x._data.dtype == np.float16 and mode not in ("nearest", "nearest-exact")
        if half:  # torch blends float16 in float32 (its opmath type), rounded once at the end
            x = x.to(backend.float32)
        # the last dim first: torch's kernel blends along it innermost (the same rounding)
        for i, (out, scale) in reversed(list(enumerate(zip(outs, scales, strict=True)))):
            dim, in_size = i + 2, x.shape[i + 2]
            if mode in ("nearest", "nearest-exact"):
                index = (_nearest_index if mode == "nearest" else _nearest_exact_index)(
                    in_size, out, scale)
                x = index_select(x, dim, _index(x, index))
                continue
            if antialias:
                taps = _antialias_taps(in_size, out, scale, bool(align_corners),
                                       x._data.dtype, mode)
            else:
                taps = (_cubic_taps if mode == "bicubic" else _linear_taps)(
                    in_size, out, scale, bool(align_corners), x._data.dtype)
                if half and mode != "bilinear":  # (torch's 2-d kernel keeps float32 weights)
                    taps = _float16_weights(taps, mode)
            blended = None
            for index, weight in taps:  # torch's order: the first tap starts the sum
                term = mul(index_select(x, dim, _index(x, index)), _along(x, dim, weight))
                blended = term if blended is None else add(blended, term)
            x = blended
        return in_suggested_format(x.to(backend.float16) if half else x, input)
    # torch's one kernel per mode and dimension: UpsampleBilinear2DBackward0 & co.
    kernel = _KERNEL_NAMES[mode] + f"{len(outs)}D" + ("Aa" if antialias else "")
    return one_node(f"Upsample{kernel}Backward0", resample, (input,),
                    constants=_torch_saved(input, outs, scales, mode, align_corners))


def _torch_saved(input, outs: tuple, scales: tuple, mode: str, align_corners) -> dict:
    """What torch's Upsample*Backward0 node keeps (``node._saved_<name>``): sizes, float
    scales per dim (``scales`` in 1-d, ``scales_h``/``scales_w``... above), align_corners."""
    names = ("scales",) if len(outs) == 1 else tuple("scales_" + d for d in "dhw"[-len(outs):])
    saved = {"output_size": tuple(outs), "self_sym_sizes": tuple(input.shape),
             **{n: None if s is None else float(s) for n, s in zip(names, scales, strict=True)}}
    if mode not in _NEAREST_MODES:
        saved["align_corners"] = bool(align_corners)
    return saved


def _parser_refusal(mode: str, d: int, antialias: bool, found: str) -> TypeError:
    """torch's refusal of a float size (``size=3.0``), by the kernel the mode reaches (the
    first line of its parser's listing)."""
    if mode == "area":
        return TypeError(f"adaptive_avg_pool{d}d(): argument 'output_size' (position 2) must "
                         f"be tuple of ints, but found element of type {found} at pos 0")
    kernel = _kernel_name(mode, d, antialias)
    aligned = "" if mode in _NEAREST_MODES else "bool, "
    return TypeError(f"{kernel}() received an invalid combination of arguments - got (Tensor, "
                     f"list, {aligned}NoneType), but expected one of:")


def _kernel_name(mode: str, d: int, antialias: bool) -> str:
    """The kernel torch's interpolate calls for ``mode`` in ``d`` spatial dims."""
    kernel = {"nearest": f"upsample_nearest{d}d", "nearest-exact": f"_upsample_nearest_exact{d}d",
              "linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d",
              "bicubic": "upsample_bicubic2d", "trilinear": "upsample_trilinear3d",
              "lanczos": "_upsample_lanczos2d"}[mode]
    return f"_{kernel}_aa" if antialias and mode != "lanczos" else kernel


def _check_mode(input, mode: str, align_corners, antialias: bool) -> None:
    """torch's checks that the mode fits the input's rank, lanczos' arguments, then its
    kernels' dtype checks."""
    needed = {**_LINEAR_MODES, "bicubic": 4, "lanczos": 4}.get(mode)
    if mode not in _NEAREST_MODES and needed is None or not 3 <= input.ndim <= 5 or \
            mode in ("bicubic", "lanczos") and input.ndim != 4:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: {_ALL_MODES} (got {mode})")
    if needed is not None and input.ndim != needed:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{needed}D input")
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    dtype = input._data.dtype
    if dtype == np.uint8 and mode in _FIXED_POINT_MODES:
        return  # torch's fixed-point kernel (interpolate_uint8.py)
    if antialias and dtype.kind != "f" or antialias and dtype == np.float16:  # (double/float)
        raise kernel_error("compute_index_ranges_weights")(input._data)
    if mode == "bilinear" and dtype.kind in "biu":  # the 2-d kernel's dtype check comes first
        raise kernel_error("upsample_bilinear2d_channels_last")(input._data)
    if mode in _LINEAR_MODES or mode == "bicubic":
        require_real_floating("compute_indices_weights_" +
                              ("linear" if mode in _LINEAR_MODES else "cubic"), input._data)
    elif mode != "area" and input._data.dtype.kind in "bi":  # uint8 only, of the integers
        raise kernel_error("upsample_nearest2d_channels_last" if input.ndim == 4 else
                           "compute_indices_weights_nearest")(input._data)


_KERNEL_NAMES = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
                 "bilinear": "Bilinear", "bicubic": "Bicubic", "trilinear": "Trilinear",
                 "lanczos": "Lanczos"}
