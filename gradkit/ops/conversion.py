"""Copies and conversions: clone, dtype casts, device moves, fill and copy_ sources."""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit.ops._op import op
from gradkit.ops.complex import real
from gradkit.ops.memory_overlap import OVERLAP_MESSAGE, same_data
from gradkit.ops.piecewise import zeros_like


@op(linear=True, batchable=True)
def clone(xp, x):
    """A copy of x with its own memory (the gradient passes through)."""
    return x.copy()


clone.defvjp(lambda g: g)
clone.defjvp(lambda t: t)


@op(save="x.dtype", linear=True, node_name="ToCopyBackward0", batchable=True)
def astype(xp, x, dtype=None):
    """x cast to ``dtype`` (``x.to(dtype)``); the gradient is cast back."""
    return x.astype(dtype)


def _cast_back(g, x_dtype):
    g_dtype = getattr(g, "_data", g).dtype  # g is a Tensor under create_graph
    if g_dtype == x_dtype:
        return g
    if g_dtype.kind == "c" and x_dtype.kind != "c":
        g = real(g)
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
    return xp.broadcast_to(xp.asarray(src), x.shape).astype(x.dtype, copy=True)


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
copy_from.defvjp(lambda g, x_shape: _zeros_of(g),
                 lambda g, x_shape: g)
copy_from.defjvp(lambda t, x_shape: _zeros_of(t),
                 lambda t, x_shape: t)


@op(broadcast=True, node_name="FillBackward0")
def fill(xp, x, value):
    """The value ``x.fill_(value)`` writes (value may be a 0-d tensor)."""
    return xp.full(x.shape, fitted(value, x.dtype), dtype=x.dtype)


_C_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                 "int64": "int64_t"}


def fitted(value, dtype):
    """A Python number written into an integer dtype, as torch: refused out of the dtype's range
    (c10's overflows: a negative integer wraps into an unsigned type, a float never does; nan
    and inf never fit)."""
    if dtype.kind not in "iu" or type(value) not in (int, float):
        return value
    info = np.iinfo(dtype)
    if type(value) is float:
        fits = info.min <= value <= info.max
    else:
        lowest = -info.max if dtype.kind == "u" else info.min
        fits = lowest <= value <= info.max
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[dtype.name]} "
                           "without overflow")
    wraps = dtype.kind == "u" and type(value) is int and value < 0
    return value + info.max + 1 if wraps else value


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
