"""clamp: bounds that are numbers (one elementwise op) or broadcasting tensors.

As torch: a NaN input or NaN bound gives NaN, -0.0 stays -0.0 (x is kept unless it lies
outside a bound), x gets the gradient where min <= x <= max, and a tensor bound where x
lies beyond it (with min > max, everything is max's).
"""
from __future__ import annotations

import numpy as np

from gradkit.int_arguments import invalid_combination
from gradkit.number_arguments import (number_argument, number_parameters, python_number,
                                      reads_as_number)
from gradkit.ops._op import op
from gradkit.ops.conversion import fitted
from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.piecewise import defmask, where
from gradkit.ops.unary import unary
from gradkit.ops.methods import tensor_method
from gradkit.ops.promotion import PY_SCALARS, as_dtype, category, result_type
from gradkit.ops.unary_helpers import (
    CLAMP_COMPLEX, c_type_name, kernel_error, reject_complex, scalar_type_name)


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


def clamped_by_numbers(xp, x, min, max, kernel: str):  # noqa: A002
    """x clamped by number bounds in their promoted dtype (an int tensor with a float bound
    becomes float); torch's ``kernel`` has no bool one."""
    for bound in (min, max):  # torch's parser reads an int Scalar as int64 or uint64
        if type(bound) is int and bound >= 2**64:
            raise OverflowError("int too big to convert")
        if type(bound) is int and bound < -2**63:
            raise OverflowError("can't convert negative int to unsigned")
    dtype = result_type(x, min, max)
    if dtype.kind == "b":
        raise kernel_error(kernel)(x)
    x = as_dtype(xp, x, dtype)
    # each bound converted as torch's checked conversion: refused beyond the dtype's range
    # (-1 wraps into an unsigned dtype, as c10's)
    return _limit(xp, x, *(None if b is None else as_dtype(xp, fitted(b, dtype), dtype)
                           for b in (min, max)))


@unary(save="x", name="clamp", node_name="ClampBackward1", complex_error=CLAMP_COMPLEX)
def _clamp_numbers(xp, x, min=None, max=None):  # noqa: A002
    _check_bounds(min, max)
    kernel = "clamp_max" if min is None else "clamp_min" if max is None else "clamp"
    return clamped_by_numbers(xp, x, min, max, f"{kernel}_scalar_cpu")  # torch's one-sided


defmask(_clamp_numbers, _inside)


def number_bound(x, bound):
    """A bound as torch's clamp reads a number: a NumPy scalar as a Python number; a complex
    one as a C++ double for a floating x (its real part; c10's overflow error when it has an
    imaginary part), refused for an integer or bool x, whose result would be complex."""
    bound, kind = python_number(bound), getattr(x, "_data", x).dtype.kind  # (a tensor or array)
    if not isinstance(bound, complex) or kind == "c":
        return bound  # (a complex x: the op's own complex error)
    if kind != "f":
        raise CLAMP_COMPLEX(None)
    return number_argument(bound, "clamp", "min", kind="double")


def _check_bounds(min, max):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


@op(save=("x", "lo", "hi"), broadcast=True, elementwise=True, batchable=True, name="clamp",
    node_name="ClampBackward0")
def _clamp_tensors(xp, x, lo, hi):
    # torch's clamp_cpu has no bool kernel; one bound runs maximum/minimum's, which has. A
    # complex bound of a real x reaches the kernel: none of the three has a complex one
    kernel = "maximum_cpu" if hi is None else "minimum_cpu" if lo is None else "clamp_cpu"
    dtype = result_type(x, lo, hi)
    if dtype.kind == "c" and x.dtype.kind != "c" or dtype.kind == "b" and kernel == "clamp_cpu":
        raise kernel_error(kernel)(np.empty(0, dtype))
    return clamped_by_tensors(xp, x, lo, hi)


def clamped_by_tensors(xp, x, lo, hi):
    """x clamped by tensor bounds (or None), all in their promoted dtype; no complex."""
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


def _clamp_jvp(tangents, x, lo, hi):
    """torch's clamp_jvp, a select among the tangents (a missing one 0): x's unless x is below
    min or above max, so a NaN bound passes x's tangent (the backward gives x none there)."""
    t_x, t_lo, t_hi = (0.0 if t is None else t for t in tangents)
    if lo is not None and hi is not None:
        return where(lo > hi, t_hi, where(x < lo, t_lo, where(x > hi, t_hi, t_x)))
    return where(x > lo, t_x, t_lo) if hi is None else where(x < hi, t_x, t_hi)


_clamp_tensors.defjvp_all(_clamp_jvp)


def _clamp_signature(input=None, min=None, max=None, *more, **unknown) -> bool:  # noqa: A002
    """Whether one of torch's clamp signatures takes the arguments: a tensor, then bounds that
    are numbers (a 0-d tensor reads as one) or tensors, not a str nor a tensor beside a number
    (clamp.Tensor's bounds); no other argument (``out=`` passes on, to Python's error)."""
    # any array (an in-place target, a rule's NumPy scalar): only numbers, lists and the like
    tensor = hasattr(input, "_data") or hasattr(input, "dtype") and hasattr(input, "shape")
    if more or not tensor or unknown.keys() - {"out"}:
        return False
    bounds = [bound for bound in (min, max) if bound is not None]
    if not all(type(python_number(b)) in PY_SCALARS or hasattr(b, "_data") for b in bounds):
        return False
    tensors = [bound for bound in bounds if hasattr(bound, "_data")]
    return len(tensors) in (0, len(bounds)) or all(reads_as_number(t) for t in tensors)


def _named(name: str):
    """clamp as torch parses it under ``name`` (clamp, or its alias clip, whose errors say
    clip), with its in-place form (``x.clip_``) and that form's checks."""
    @number_parameters(name, True, signature=_clamp_signature)
    def function(input, min=None, max=None):  # noqa: A002 - torch's names
        """Limit x to [min, max]; the bounds may be numbers or (broadcasting) tensors."""
        return _clamp(input, min, max, _clamp_tensors, _clamp_numbers)

    @number_parameters(name + "_", True, signature=_clamp_signature)
    def in_place(input, min=None, max=None):  # noqa: A002 - torch's names
        """As ``x.clamp_(...)`` runs it: its event named as torch's, clamp_."""
        return _clamp(input, min, max, in_place_form(_clamp_tensors),
                      in_place_form(_clamp_numbers))

    def check_in_place(target, *args, **kwargs) -> None:
        """torch's structured kernel names the target's C type when the result cannot be
        written into it ("... to the desired output type bool"); a complex bound of a floating
        target is read first (its real part, or c10's overflow error). Bounds no signature
        takes are its "invalid combination" (the method's listing: no self)."""
        if not _clamp_signature(target, *args, **kwargs):
            raise invalid_combination(name + "_", args, kwargs)
        _check_numbers(target, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.check_in_place, function.in_place = check_in_place, in_place
    return tensor_method(inplace=True)(function)


def _check_numbers(target, min=None, max=None, **_) -> None:  # noqa: A002
    """The result's cast into the target, checked before the kernel (a complex tensor bound:
    this error, not the kernel's); the number kernel names the target's C type."""
    min, max = _read_mixed(min, max)  # noqa: A001
    if target.dtype.kind == "f":
        min, max = number_bound(target, min), number_bound(target, max)  # noqa: A001
    if (min, max) != (None, None):
        dtype = result_type(target, *(getattr(b, "_data", b) for b in (min, max)))
        tensors = hasattr(min, "_data") or hasattr(max, "_data")
        if category(dtype) > category(target.dtype):
            raise RuntimeError(f"result type {scalar_type_name(np.empty(0, dtype))} can't be "
                               "cast to the desired output type "
                               f"{scalar_type_name(target) if tensors else c_type_name(target)}")


def _read_mixed(min, max):  # noqa: A002 - torch's names
    """A 0-d tensor beside a number bound is torch's Scalar signature's: its value, which
    takes no gradient (a complex one for a floating x: its real part or c10's overflow)."""
    tensors = [hasattr(bound, "_data") for bound in (min, max)]
    if min is None or max is None or tensors[0] == tensors[1]:
        return min, max
    return tuple(b.item() if t else b for b, t in zip((min, max), tensors))


def _clamp(input, min, max, by_tensors, by_numbers):  # noqa: A002 - torch's names
    """clamp's work with its two ops (or their in-place forms)."""
    min, max = _read_mixed(min, max)  # noqa: A001
    min, max = number_bound(input, min), number_bound(input, max)  # noqa: A001
    if hasattr(min, "_data") or hasattr(max, "_data"):
        _check_bounds(min, max)
        return by_tensors(input, min, max)
    return by_numbers(input, min, max)


clamp, clip = _named("clamp"), _named("clip")
