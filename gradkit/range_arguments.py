"""The numbers ``arange``, ``linspace``, ``logspace`` and ``range`` take, read as torch
2.13's parser reads them: the first three have several signatures, so a missing, extra or
ill-typed argument (``None`` included) is its "received an invalid combination of
arguments"; only ``arange``'s one-number form names the argument, and ``range`` (one
signature) is refused argument by argument, as is ``full``."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.int_arguments import (
    int_list_argument, invalid_combination, reads_as_int, type_name)
from gradkit.number_arguments import number_argument, reads_as_number
from gradkit.signature_errors import bind

_NUMBERS = (int, float, complex, np.number, np.bool_)  # (bool is an int)
_REALS = (int, float, np.integer, np.floating, np.bool_)


def _bound(args: tuple, keywords: dict, names: tuple) -> dict | None:
    """{name: value} of arguments given by position or by name; None when they do not bind
    (too many, an unknown name, one given twice)."""
    if len(args) > len(names) or any(k not in names for k in keywords) or any(
            name in keywords for name in names[:len(args)]):
        return None
    return dict(zip(names, args)) | keywords


def _is_number(value) -> bool:
    return isinstance(value, (_NUMBERS, Tensor))


def arange_arguments(args: tuple, keywords: dict) -> tuple:
    """(start, end, step) of ``arange(end)`` or ``arange(start, end, step=1)``, each a number
    or a 0-d tensor's (a complex one's real part, as torch reads a double)."""
    if len(args) + len(keywords) == 1 and (args or "end" in keywords):
        end = args[0] if args else keywords["end"]
        position = 1 if args else None
        if not _is_number(end):  # the one signature of one number: torch names the argument
            where = "" if position is None else f" (position {position})"
            raise TypeError(f"arange(): argument 'end'{where} must be Number, not "
                            f"{type_name(end)}")
        return 0, number_argument(end, "arange", "end", position, "double"), 1
    bound = _bound(args, keywords, ("start", "end", "step"))
    if bound is None or "start" not in bound or "end" not in bound or not all(
            isinstance(v, _NUMBERS) or isinstance(v, Tensor) and reads_as_number(v)
            for v in bound.values()):  # (a tensor that is no Scalar: no signature takes it)
        raise invalid_combination("arange", args, keywords)
    return tuple(number_argument(bound.get(name, 1), "arange", name, position, "double")
                 for position, name in enumerate(("start", "end", "step"), 1))


def spaced_call(function: str, args: tuple, keywords: dict) -> tuple:
    """(start, end, steps, base) of ``linspace(start, end, steps)`` or ``logspace(start, end,
    steps, base=10.0)``: numbers or 0-d tensors for the ends, an int for steps, a real number
    for the base."""
    names = ("start", "end", "steps", "base") if function == "logspace" else (
        "start", "end", "steps")
    bound = _bound(args, keywords, names)
    base = 10.0 if bound is None else bound.get("base", 10.0)
    if bound is None or not {"start", "end", "steps"} <= bound.keys() or not (
            _is_number(bound["start"]) and _is_number(bound["end"])
            and reads_as_int(bound["steps"]) and (isinstance(base, _REALS) or isinstance(
                base, Tensor) and reads_as_number(base) and base._data.dtype.kind != "c")):
        raise invalid_combination(function, args, keywords)
    steps = bound["steps"]
    steps = int(steps.item()) if isinstance(steps, Tensor) else int(steps)
    return bound["start"], bound["end"], steps, float(number_argument(base, function, "base"))


def _number_check(function: str):
    def check(name: str, value, position: int | None) -> None:
        if not _is_number(value):
            where = "" if position is None else f" (position {position})"
            raise TypeError(f"{function}(): argument '{name}'{where} must be Number, not "
                            f"{type_name(value)}")
        return value
    return check


def range_arguments(args: tuple, keywords: dict) -> tuple:
    """(start, end, step) of ``range(start, end, step=1)``, numbers (0-d tensors' values)."""
    bound = bind("range", ("start", "end", "step"), 2, args, keywords, _number_check("range"))
    return tuple(number_argument(bound.get(name, 1), "range", name, position)
                 for position, name in enumerate(("start", "end", "step"), 1))


def _full_check(name: str, value, position: int | None):
    if name == "size":
        return int_list_argument(value, "full", "size", position, symint=True)
    _number_check("full")(name, value, position)
    return number_argument(value, "full", "fill_value", position)


def full_arguments(args: tuple, keywords: dict) -> tuple:
    """(size, fill_value) of ``full(size, fill_value)`` (one signature in torch)."""
    bound = bind("full", ("size", "fill_value"), 2, args, keywords, _full_check)
    return bound["size"], bound["fill_value"]
