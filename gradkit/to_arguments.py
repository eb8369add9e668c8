"""How ``Tensor.to`` reads its arguments: torch's three overloads, with its TypeError for any
other combination (``x.to("cpu", "cpu")``, ``x.to(float64, float32)``, an unknown keyword).

    to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format)
    to(dtype, non_blocking=False, copy=False, *, memory_format)
    to(other, non_blocking=False, copy=False, *, memory_format)
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit import memory_format as memory_formats
from gradkit._tensor import Tensor
from gradkit.int_arguments import type_name

_FLAGS = ("non_blocking", "copy")


def _is_dtype(value) -> bool:
    return isinstance(value, backend.dtype) or value in (float, int, bool, complex)


def _is_device(value) -> bool:
    return isinstance(value, (str, backend.device)) or (
        isinstance(value, int) and not isinstance(value, bool))


def _name(value) -> str:
    """A value's type as torch's parser names it (``torch.dtype``, with gradkit's prefix)."""
    if isinstance(value, (backend.dtype, backend.device, memory_formats.memory_format)):
        return f"gradkit.{type(value).__name__}"
    return type_name(value)


def _invalid(args: tuple, kwargs: dict) -> TypeError:
    got = [_name(a) for a in args] + [f"{k}={_name(v)}" for k, v in reversed(kwargs.items())]
    listing = ", ".join(got) + ("" if args or not kwargs else ", ")
    return TypeError(f"to() received an invalid combination of arguments - got ({listing}), "
                     f"but expected one of:")


def to_arguments(args: tuple, kwargs: dict) -> tuple:
    """``(device, dtype, copy, memory_format)`` of a ``to(*args, **kwargs)`` call (None: keep
    the tensor's own; a copy of None was not given)."""
    first = args[0] if args else None
    if isinstance(first, Tensor):
        device, dtype, flags, named = first.device, first.dtype, args[1:], ()
    elif args and _is_dtype(first):
        device, dtype, flags, named = None, first, args[1:], ()
    elif not args or first is None or _is_device(first):
        rest, named = args[1:], ("device",) if not args else ()
        dtype = None
        if rest and (rest[0] is None or _is_dtype(rest[0])):
            dtype, rest = rest[0], rest[1:]
        elif rest:  # the second positional of to(device, dtype, ...) is the dtype
            raise _invalid(args, kwargs)
        else:
            named += ("dtype",)
        device, flags = first, rest
    else:
        raise _invalid(args, kwargs)
    allowed = set(named) | set(_FLAGS[len(flags):]) | {"memory_format"}
    given_dtype = kwargs.get("dtype")
    if len(flags) > 2 or not set(kwargs) <= allowed or not all(
            isinstance(f, (bool, np.bool_)) for f in flags) or not (
            given_dtype is None or _is_dtype(given_dtype)):
        raise _invalid(args, kwargs)
    layout = kwargs.get("memory_format", memory_formats.preserve_format)
    if not isinstance(layout, memory_formats.memory_format):
        raise _invalid(args, kwargs)
    copy = flags[1] if len(flags) > 1 else kwargs.get("copy")  # None: not given
    return kwargs.get("device", device), kwargs.get("dtype", dtype), copy, layout
