"""clamp: bounds that are numbers (one elementwise op) or broadcasting tensors.

As torch: a NaN input or NaN bound gives NaN, -0.0 stays -0.0 (x is kept unless it lies
outside a bound), x gets the gradient where min <= x <= max, and a tensor bound where x
lies beyond it (with min > max, everything is max's).
"""
from __future__ import annotations

from gradkit.ops._op import op
from gradkit.ops.piecewise import defmask, where
from gradkit.ops.unary import unary
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.promotion import as_dtype, result_type
from gradkit.ops.unary_helpers import CLAMP_COMPLEX, reject_complex


def _limit(xp, x, min, max):  # noqa: A002 - torch's names
    """x clamped (bounds already in x's dtype): x where it lies inside, NaN from any side."""
    if min is not None:
        x = xp.where((x < min) | xp.isnan(min), min, x)
    if max is not None:
        x = xp.where((x > max) | xp.isnan(max), max, x)
    return x


def _inside(x, min, max):  # noqa: A002
    """Where x gets the gradient: min <= x <= max (False at NaN)."""
    if min is None:
        return x <= max
    return x >= min if max is None else (x >= min) & (x <= max)


@unary(save="x", name="clamp", node_name="ClampBackward1", complex_error=CLAMP_COMPLEX)
def _clamp_numbers(xp, x, min=None, max=None):  # noqa: A002
    _check_bounds(min, max)
    dtype = result_type(x, min, max)  # an int tensor with a float bound becomes float
    x = as_dtype(xp, x, dtype)
    return _limit(xp, x, *(None if b is None else as_dtype(xp, b, dtype) for b in (min, max)))


defmask(_clamp_numbers, _inside)


def _check_bounds(min, max):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


@op(save=("x", "lo", "hi"), broadcast=True, batchable=True, name="clamp",
    node_name="ClampBackward0")
def _clamp_tensors(xp, x, lo, hi):
    for v in (x, lo, hi):
        if v is not None:
            reject_complex(v, CLAMP_COMPLEX)
    dtype = result_type(x, lo, hi)
    return _limit(xp, as_dtype(xp, x, dtype),
                  *(None if b is None else as_dtype(xp, b, dtype) for b in (lo, hi)))


def _below_min(x, lo, hi):
    """Where the lower bound gets the gradient: x < min (and min < max when both are given)."""
    return x < lo if hi is None else (x < lo) & (lo < hi)


def _above_max(x, lo, hi):
    """Where the upper bound gets the gradient: x > max, or everywhere max < min."""
    return x > hi if lo is None else (x > hi) | (hi < lo)


_clamp_tensors.defvjp(lambda g, x, lo, hi: where(_inside(x, lo, hi), g, 0.0),
                      lambda g, x, lo, hi: where(_below_min(x, lo, hi), g, 0.0),
                      lambda g, x, lo, hi: where(_above_max(x, lo, hi), g, 0.0))
_clamp_tensors.number_edges = True  # torch's clamp.Tensor: an absent bound keeps its edge
_clamp_tensors.defjvp(lambda t, x, lo, hi: where(_inside(x, lo, hi), t, 0.0),
                      lambda t, x, lo, hi: where(_below_min(x, lo, hi), t, 0.0),
                      lambda t, x, lo, hi: where(_above_max(x, lo, hi), t, 0.0))


@tensor_method(("clamp", "clip"), inplace=True)
def clamp(x, min=None, max=None):  # noqa: A002 - torch's names
    """Limit x to [min, max]; the bounds may be numbers or (broadcasting) tensors."""
    if hasattr(min, "_data") or hasattr(max, "_data"):
        _check_bounds(min, max)
        return _clamp_tensors(x, min, max)
    return _clamp_numbers(x, min, max)


register(clamp, "clip", False, inplace=True)  # x.clip_(...)
