"""Copies and conversions: clone, dtype casts, device moves, fill and copy_ sources."""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._user_frames import warn_once_at_user
from gradkit.memory_format import (channels_last, channels_last_3d, check_format,
                                   copy_with_strides, lay_out, physical_order, preserve_format,
                                   preserved_copy, preserved_strides, suggested_order)
from gradkit.ops._op import op
from gradkit.ops.complex import real
from gradkit.ops.memory_overlap import OVERLAP_MESSAGE, has_internal_overlap, same_data
from gradkit.ops.in_place_overloads import check_output
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.promotion import cast, int_scalar_dtype, overflow
from gradkit.ops.result_layout import empty_like_layout


@op(linear=True, batchable=True)
def clone(xp, x, memory_format=preserve_format):
    """A copy of x with its own memory (the gradient passes through), laid out as torch's:
    ``preserve_format`` keeps x's strides when x is dense (else the order of its strides),
    ``contiguous_format`` C order, channels last its order."""
    if memory_format is preserve_format:
        return preserved_copy(xp, x)
    return lay_out(xp, x, None if memory_format is None else
                   physical_order(x.shape, check_format(memory_format, "clone")))


clone.keyword_only("memory_format")
clone.defvjp(lambda g, memory_format: g)
clone.defjvp(lambda t, memory_format: t)


def in_suggested_format(out, input):
    """``out`` laid out in ``input``'s suggested memory format (channels last where input's
    strides read so), as torch's kernels that allocate their result with it."""
    if suggested_order(input._data) is None:
        return out
    return clone(out, memory_format=channels_last if out.ndim == 4 else channels_last_3d)


@op(save="x.dtype", linear=True, node_name="ToCopyBackward0", batchable=True)
def astype(xp, x, dtype=None):
    """x cast to ``dtype`` (``x.to(dtype)``); the gradient is cast back. An expanded x casts
    into its dims' order by stride, as torch's ``preserve_format`` (NumPy's K order could
    give Fortran strides, and C order is not torch's where the strides order the dims); an
    empty x keeps its strides (torch counts it dense)."""
    out = cast(real_if_cast_to_real(x, dtype), dtype)
    if out is x or type(x) is not np.ndarray or not (has_internal_overlap(x) or x.size == 0):
        return out
    strides = preserved_strides(x.shape, tuple(s // x.itemsize for s in x.strides))
    return out if out.strides == tuple(s * out.itemsize for s in strides) else \
        copy_with_strides(xp, out, strides)


def real_if_cast_to_real(array, target):
    """array, or its real part with torch's warning (once) when cast to a real ``target``
    (NumPy would warn its own ComplexWarning, an error under ``-W error``); a bool is
    whether the complex value is non-zero, as torch."""
    if array.dtype.kind == "c" and np.dtype(target).kind not in "cb":  # bool: non-zero
        warn_once_at_user("Casting complex values to real discards the imaginary part")
        return array.real
    return array


def _cast_back(g, x_dtype):
    g_dtype = getattr(g, "_data", g).dtype  # g is a Tensor under create_graph
    if g_dtype == x_dtype:
        return g
    if g_dtype.kind == "c" and x_dtype.kind != "c":
        g = real(g)  # (torch's real(grad).to(dtype): no copy, no node, where that is all)
        if getattr(g, "_data", g).dtype == x_dtype:
            return g
    return astype(g, x_dtype)


astype.defvjp(lambda g, x_dtype, dtype: _cast_back(g, x_dtype))
astype.defjvp(lambda t, x_dtype, dtype: astype(t, dtype))


@op(save="x", linear=True, node_name="ToCopyBackward0")
def to_device(xp, x, device=None):
    """x copied to ``device`` (``x.to(device)``); the gradient goes back to x's device."""
    return backend.to_device(x, device)


to_device.defvjp(lambda g, x, device: to_device(g, backend.device_of(getattr(x, "_data", x))))
to_device.defjvp(lambda t, x, device: to_device(t, device))


@op(save="x.shape", broadcast=True, node_name="CopyBackwards")
def copy_from(xp, x, src):
    """The value ``x.copy_(src)`` writes: src broadcast to x's shape and cast to x's dtype."""
    src = real_if_cast_to_real(xp.asarray(src), x.dtype)
    try:  # src of more dims or elements than x: torch's output check (a 0-d x included)
        check_output(x, np.broadcast_shapes(x.shape, src.shape), x.dtype)
    except ValueError:  # shapes that do not broadcast: broadcast_to's error, in torch's words
        pass
    return cast(xp.broadcast_to(src, x.shape), x.dtype)  # (a copy: torch's casts, in C order)


def _zeros_of(g):
    return zeros_like(g)


def _copy_onto_itself(target, src) -> bool:
    """copy_ from the same elements in the same layout does nothing, as torch (which returns
    before refusing an expanded target): its recorded write still overlaps."""
    data = getattr(src, "_data", None)
    if data is None or not same_data(target, data):
        raise RuntimeError(OVERLAP_MESSAGE)
    return True


copy_from.check_overlap = _copy_onto_itself
copy_from.reads_conj_itself = True  # torch's conj fallback lets copy_ through (no resolve)
copy_from.defvjp(lambda g, x_shape: _zeros_of(g),
                 lambda g, x_shape: g)
copy_from.defjvp(lambda t, x_shape: _zeros_of(t),
                 lambda t, x_shape: t)


@op(broadcast=True, node_name="FillBackward0")
@empty_like_layout  # (torch's fill: empty_like(x).fill_(value))
def fill(xp, x, value):
    """The value ``x.fill_(value)`` writes (value may be a 0-d tensor)."""
    if value is None or type(value) in (tuple, list, str):  # torch's Scalar and Tensor refuse
        raise TypeError(f"fill() received an invalid combination of arguments - got (Tensor, "
                        f"{type(value).__name__}), but expected one of:")
    if getattr(value, "ndim", 0):  # torch's check before any cast (one element or not)
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    return xp.full(x.shape, fitted(value, x.dtype, x.size == 1), dtype=x.dtype)


# the largest finite value of the narrow floating dtypes (a finite number beyond it is refused)
_FLOAT_MAX = {name: float(np.finfo(name).max) for name in ("float16", "float32")}
_FLOAT_MAX["complex64"] = _FLOAT_MAX["float32"]


def fitted(value, dtype, one_element: bool = False):
    """A Python number written into ``dtype``, as torch's checked conversion: refused out of
    the dtype's range (c10's overflows: a negative integer wraps into an unsigned type, a float
    never does; nan and inf never fit an integer type, a complex number with an imaginary part
    no real one). bool takes anything. ``one_element``: torch's fill of one element (a number
    made a tensor), which does not check float16."""
    kind = dtype.kind
    if type(value) is int:
        int_scalar_dtype(value)  # torch's parse into a Scalar comes first (bool included)
    if kind == "b" and type(value) in (int, float, complex):
        return bool(value)  # any number is True or False (2 ** 63 too, which NumPy refuses)
    if kind == "b" or type(value) not in (int, float, complex):
        return value
    if type(value) is complex and kind != "c":
        if value.imag != 0:  # NaN too
            overflow(dtype)
        value = value.real
    half = dtype.name == "float16" and type(value) is float
    if one_element and dtype.name == "float16":
        return half_through_float(value) if half else value
    if kind in "fc":
        largest = _FLOAT_MAX.get(dtype.name)
        if largest is not None and _beyond(value, largest):
            overflow(dtype)
        return half_through_float(value) if half else value
    info = np.iinfo(dtype)
    if type(value) is float:
        fits = info.min <= value <= info.max
    else:
        lowest = -info.max if kind == "u" else info.min
        fits = lowest <= value <= info.max
    if not fits:
        overflow(dtype)
    wraps = kind == "u" and type(value) is int and value < 0
    return value + info.max + 1 if wraps else value


def half_through_float(value: float) -> float:
    """A Python float rounded to float16 as torch's c10::Half does: through float32 (a value
    just above a float16 midpoint lands on the even side; NumPy's one rounding goes up)."""
    with np.errstate(over="ignore"):
        return float(np.float16(np.float32(value)))


def fitted_item(value, dtype):
    """``fitted`` for a value torch reads with ``.item()`` (masked_fill, index_fill): a number,
    or a one-element array checked and returned as it is."""
    if getattr(value, "size", None) == 1 and hasattr(value, "item"):
        fitted(value.item(), dtype)
        return value
    return fitted(value, dtype)


def _beyond(value, largest: float) -> bool:
    parts = (value.real, value.imag) if type(value) is complex else (value,)
    return any(np.isfinite(part) and abs(part) > largest for part in parts)


fill.defvjp(lambda g: _zeros_of(g),
            lambda g: g)
fill.defjvp(lambda t: _zeros_of(t),
            lambda t: t)


@op(node_name="ZeroBackward0")
def zeros_like_op(xp, x):
    """Zeros of x's shape and dtype: the values ``x.zero_()`` writes."""
    return xp.zeros_like(x)


def _writes_one_value(target, *args) -> bool:
    """fill_ and zero_ write one value everywhere: torch allows them on an expanded tensor
    (its backward then refuses, ops/inplace.py's CopySlices), but not fill_ of a tensor."""
    if args and hasattr(args[0], "_data"):
        raise RuntimeError(OVERLAP_MESSAGE)
    return True


fill.check_overlap = zeros_like_op.check_overlap = _writes_one_value
fill.reads_value_first = True  # torch's fill_ reads a 0-d tensor's value: no overlap check


zeros_like_op.defvjp(lambda g: _zeros_of(g))
zeros_like_op.defjvp(lambda t: _zeros_of(t))
