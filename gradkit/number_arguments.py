"""torch's argument parser for a number parameter given a tensor, in one place.

A parameter torch declares ``Scalar`` (its messages say "Number"), ``double`` ("float") or
``int64`` ("int") takes a Python number, or a tensor that it reads as its number: only a 0-d
tensor that does not require grad, and for an ``int`` an integer one (not bool). Anything else
is torch's TypeError, ``full(): argument 'fill_value' (position 2) must be Number, not Tensor``
(no position when the argument was given by keyword). A one-element tensor with dimensions is
refused too, even where NumPy would broadcast it.
"""
from __future__ import annotations

from gradkit._tensor import Tensor


def number_argument(value, function: str, argument: str, position: int | None = None,
                    kind: str = "Number"):
    """``value`` as torch's parser reads a ``kind`` parameter ("Number", "float" or "int";
    "double": a Number the op reads as a C++ double, so a complex one gives its real part)
    named ``argument`` of ``function``: a number passes, a tensor gives its number or raises."""
    where = "" if position is None else f" (position {position})"
    if kind == "float" and isinstance(value, complex):
        raise TypeError(f"{function}(): argument '{argument}'{where} must be float, not complex")
    if isinstance(value, Tensor):
        if not reads_as_number(value, kind):
            raise TypeError(f"{function}(): argument '{argument}'{where} must be "
                            f"{'Number' if kind == 'double' else kind}, not Tensor")
        value = number_if_read(value, kind)
    return _real_part(value) if kind == "double" and isinstance(value, complex) else value


def _real_part(number: complex) -> float:
    """A complex number read as a double, as c10::Scalar::toDouble() reads it."""
    if number.imag:
        raise RuntimeError("value cannot be converted to type double without overflow")
    return number.real


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
    "float", "int" or "double") read as torch reads a Scalar."""
    kinds = {name: spec if isinstance(spec, tuple) else (spec, "Number")
             for name, spec in positions.items()}

    def read(params: dict, positional=()) -> dict:
        for name, (position, kind) in kinds.items():
            if name in params:
                params[name] = number_argument(params[name], function, name,
                                               position if name in positional else None, kind)
        return params
    return read
