"""torch's CPU linspace kernel, value for value (torch.linspace, and histogram's bin edges).

torch does not scale ``i / (steps - 1)`` as NumPy: it steps from the start for the first half
and back from the end for the rest, each value one fused multiply-add, so a float32 linspace
from NumPy is an ulp off torch's at a third of its values.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops.conversion import fitted
from gradkit.ops.fused import fused_multiply_add


def linspace_values(xp, start, end, steps: int, dtype):
    """``steps`` values from the numbers ``start`` to ``end`` in ``dtype``, as torch's kernel:
    ``start + step * i`` below ``steps // 2``, ``end - step * (steps - 1 - i)`` from there, with
    ``step = (end - start) / (steps - 1)``. Floats compute in their dtype (float16 rounds every
    operation, float32 and float64 fuse each multiply-add), integer dtypes in float64 from the
    truncated ends, truncating each value; complex numbers part by part."""
    dtype = np.dtype(dtype)
    if steps < 2:  # torch fills the start (its step would divide by zero), checks no end
        return xp.full(steps, _in_dtype(start, dtype) if steps else 0, dtype=dtype)
    start, end = _in_dtype(start, dtype), _in_dtype(end, dtype)
    if dtype.kind == "c":
        part = np.finfo(dtype).dtype
        out = xp.empty(steps, dtype)
        out.real[...] = linspace_values(xp, complex(start).real, complex(end).real, steps, part)
        out.imag[...] = linspace_values(xp, complex(start).imag, complex(end).imag, steps, part)
        return out
    compute = np.dtype(np.float64) if dtype.kind in "iu" else dtype
    number = compute.type
    first, last = number(start), number(end)
    step = number(number(last - first) / number(steps - 1))
    index = xp.arange(steps)
    from_start, from_end = index.astype(compute), (steps - 1 - index).astype(compute)
    with np.errstate(all="ignore"):  # an infinite end: inf * 0 is NaN, as in torch
        if compute == np.float16:  # c10::Half rounds each product and sum
            values = xp.where(index < steps // 2, first + step * from_start,
                              last - step * from_end)
        else:
            values = xp.where(index < steps // 2,
                              fused_multiply_add(xp, xp.full(steps, step), from_start, first),
                              fused_multiply_add(xp, xp.full(steps, -step), from_end, last))
    return (xp.trunc(values) if dtype.kind in "iu" else values).astype(dtype)


def _in_dtype(value, dtype):
    """A number as torch's checked Scalar conversion makes it: refused out of range, truncated
    toward zero for an integer dtype."""
    value = fitted(value, dtype)
    return math.trunc(value) if dtype.kind in "iu" and type(value) is float else value
