"""torch's argument parser for a number parameter given a tensor, in one place.

A parameter torch declares ``Scalar`` (its messages say "Number"), ``double`` ("float") or
``int64`` ("int") takes a Python number, or a tensor that it reads as its number: only a 0-d
tensor that does not require grad, and for an ``int`` an integer one (not bool). Anything else
is torch's TypeError, ``full(): argument 'fill_value' (position 2) must be Number, not Tensor``
(no position when the argument was given by keyword). A one-element tensor with dimensions is
refused too, even where NumPy would broadcast it.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor


def python_number(value):
    """A NumPy scalar as torch's parser reads a number: its Python number, a NumPy bool as a
    float (``int64 tensor + np.True_`` is float32 in torch); anything else as it is."""
    if isinstance(value, np.generic):
        return float(value) if isinstance(value, np.bool_) else value.item()
    return value


def number_argument(value, function: str, argument: str, position: int | None = None,
                    kind: str = "Number", optional: bool = True):
    """``value`` as torch's parser reads a ``kind`` parameter ("Number", "float" or "int";
    "double": a Number the op reads as a C++ double, so a complex one gives its real part)
    named ``argument`` of ``function``: a number passes, a tensor gives its number or raises.
    None passes where ``optional`` (an "int" never takes it)."""
    where = "" if position is None else f" (position {position})"
    value = python_number(value)
    if kind == "float" and isinstance(value, complex) or type(value) in _NEVER_NUMBERS or \
            value is None and (kind == "int" or not optional) or \
            kind == "int" and type(value) in (bool, float, complex):
        raise TypeError(f"{function}(): argument '{argument}'{where} must be "
                        f"{'Number' if kind in _SCALARS else kind}, not {type(value).__name__}")
    if isinstance(value, Tensor):
        if not reads_as_number(value, kind):
            raise TypeError(f"{function}(): argument '{argument}'{where} must be "
                            f"{'Number' if kind in _SCALARS else kind}, not Tensor")
        value = number_if_read(value, kind)
    return _real_part(value) if kind == "double" and isinstance(value, complex) else value


# what no number parameter takes (NumPy would make an array of it); an "int" refuses None, a
# bool, a float and a complex too
_NEVER_NUMBERS = frozenset((tuple, list, str, dict, set))
# Scalars (parsed as "Number") that the op converts: to a double, or to its input's dtype
_SCALARS = ("double", "input")
# c10's names of the types a Scalar converts to, in its overflow error
# (half-precision inputs compute in float, so most kernels convert to that; hardshrink does not)
_CPP_TYPES = {"float32": "float", "float16": "float", "bfloat16": "float",
              "bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
              "int32": "int", "int64": "int64_t"}


_FLOAT_MAX = float(np.finfo(np.float32).max)


def _real_part(number: complex, cpp_type: str = "double") -> float:
    """A complex number read as a real ``cpp_type``, as c10::Scalar's conversions read it."""
    if number.imag:
        raise RuntimeError(f"value cannot be converted to type {cpp_type} without overflow")
    return number.real


def scalar_for(value, input):
    """A Scalar as the op converts it to a floating ``input``'s dtype: a complex number is its
    real part (c10's overflow error, naming the type, when its imaginary part is not 0). For
    integer inputs the op's own checks come first (torch's kernels convert last):
    ``scalar_as`` there."""
    if isinstance(input, Tensor) and input._data.dtype.kind == "f":
        return scalar_as(value, input._data.dtype)
    return value


def scalar_as(value, dtype):
    """A Scalar converted to ``dtype`` as c10 converts it (see scalar_for): a complex one to
    its real part, a finite real one beyond float's range (to a float kernel) refused with
    c10's overflow error; infinities and NaN convert."""
    cpp_type = _CPP_TYPES.get(str(dtype), "double")
    if isinstance(value, complex) and dtype.kind != "c":
        value = _real_part(value, cpp_type)  # then checked as a real one
    if cpp_type == "float" and isinstance(value, (int, float)) and math.isfinite(value) \
            and abs(value) > _FLOAT_MAX:
        raise RuntimeError("value cannot be converted to type float without overflow")
    return value


def number_if_read(value, kind: str = "Number"):
    """``value``'s number where torch's parser reads the tensor ``value`` as a ``kind``
    number; anything else unchanged (for the signatures whose refusal is another message)."""
    if not isinstance(value, Tensor) or not reads_as_number(value, kind):
        return value
    number = value._data.item()
    if kind == "float" and isinstance(number, complex):  # its real part, as item<double>()
        return _real_part(number)
    return float(number) if kind == "float" else number


def reads_as_number(value, kind: str = "Number") -> bool:
    """Whether torch's parser takes the tensor ``value`` for a ``kind`` parameter: 0-d, not
    requiring grad, of an integer dtype for an "int"."""
    data = value._data
    return not data.ndim and not value.requires_grad and (
        kind != "int" or data.dtype.kind in "iu")


def numbers_reader(function: str, **positions):
    """An op's ``numbers`` (ops/_op.py): its parameters named in ``positions`` (their position
    in torch's signature, None for a keyword-only one, or a (position, kind) pair for a
    "float", "int", "double" or "input": a Scalar the op converts to its real input's dtype)
    read as torch reads a Scalar."""
    kinds = {name: spec if isinstance(spec, tuple) else (spec, "Number")
             for name, spec in positions.items()}

    def read(params: dict, positional=(), inputs=()) -> dict:
        for name, (position, kind) in kinds.items():
            if name in params:
                value = number_argument(params[name], function, name,
                                        position if name in positional else None, kind)
                params[name] = scalar_for(value, inputs[0]) if kind == "input" and inputs \
                    else value
        return params
    return read
