"""``make_tensor``: torch.testing's random test tensor of a shape, dtype and value range.

The values come from gradkit's generator (``gradkit.manual_seed``), so they are not torch's
numbers for the same seed; ranges, dtypes, strides and errors are torch's.
"""
from __future__ import annotations

import collections.abc
import functools
import math
import operator
import warnings

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.creation import empty, randint
from gradkit.dtype_info import finfo, iinfo
from gradkit.ops.complex_views import view_as_real

_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
_FLOATING_OR_COMPLEX = ("float16", "bfloat16", "float32", "float64", "complex32", "complex64",
                        "complex128")


def _low_high(low, high, dtype, *, lowest_inclusive, highest_exclusive, default_low,
              default_high):
    """The range to draw from: the defaults for None, clamped to what the dtype holds, with
    torch's errors; integer bounds ceiled (randint's high is exclusive)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.name in _FLOATING_OR_COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if dtype.name == "bool" or dtype.name in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform_(tensor: Tensor, low: float, high: float) -> Tensor:
    """uniform_ over [low, high), halved and doubled when the width overflows the dtype."""
    if high - low >= finfo(tensor.dtype).max:
        return tensor.uniform_(low / 2, high / 2).mul_(2)
    return tensor.uniform_(low, high)


def make_tensor(*shape, dtype: backend.dtype, device, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format=None) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)`` (defaults by
    dtype: bool [0, 2), unsigned [0, 10), signed [-9, 10), floating and complex [-9, 9)), as
    ``torch.testing.make_tensor``. ``noncontiguous`` gives a strided view (for 2+ elements),
    ``memory_format`` a clone in that format, ``exclude_zero`` replaces zeros by 1 (integers) or
    the dtype's tiny.

    >>> gradkit.testing.make_tensor(2, 3, dtype=gradkit.float32, device="cpu").shape
    gradkit.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    integral = dtype.name == "bool" or dtype.name in _INTEGRAL
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and functools.reduce(operator.mul, shape, 1) > 1
    if noncontiguous:  # twice the last size, so the strided view picks distinct values
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype.name == "bool":
        low, high = _low_high(low, high, dtype, lowest_inclusive=0, highest_exclusive=2,
                              default_low=0, default_high=2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif integral:
        info = iinfo(dtype)
        # randint's bounds pass through int64: 2**63 - 1 itself cannot be drawn
        low, high = _low_high(low, high, dtype, lowest_inclusive=info.min,
                              highest_exclusive=info.max + (dtype.name != "int64"),
                              default_low=-9, default_high=10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype.name in _FLOATING_OR_COMPLEX:
        info = finfo(dtype)
        low, high = _low_high(low, high, dtype, lowest_inclusive=info.min,
                              highest_exclusive=info.max, default_low=-9, default_high=9)
        result = empty(shape, device=device, dtype=dtype)
        _uniform_(view_as_real(result) if dtype.is_complex else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]  # offset by one, to catch offset bugs too
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else finfo(dtype).tiny
    if not integral:
        result.requires_grad = requires_grad
    return result
