"""The tensors a function reaches without its arguments, to catch vmap's in-place writes.

vmap runs its function once per sample, so an in-place write into a captured tensor would
repeat for every sample; torch refuses it (when the written value depends on the mapped
inputs). vmap compares these tensors' version counters around each sample.
"""
from __future__ import annotations

import functools
import inspect
import types

from gradkit._tensor import Tensor
from gradkit.nn.module import Module

_DEPTH = 3  # how many functions deep (closures, globals they name) the search goes


def captured_tensors(func) -> list[Tensor]:
    """Tensors in ``func``'s closure, defaults and the globals it names (nested functions
    and modules included: a module's parameters and buffers), not its arguments."""
    found: dict[int, Tensor] = {}
    _collect(func, found, set(), _DEPTH)
    return list(found.values())


def _collect(obj, found: dict, seen: set, depth: int) -> None:
    if isinstance(obj, Tensor):
        found[id(obj)] = obj
        return
    if id(obj) in seen or depth < 0:
        return
    seen.add(id(obj))
    if isinstance(obj, (tuple, list, set, frozenset)):
        for value in obj:
            _collect(value, found, seen, depth)
    elif isinstance(obj, dict):
        for value in obj.values():
            _collect(value, found, seen, depth)
    elif isinstance(obj, Module):
        for tensor in [*obj.parameters(), *obj.buffers()]:
            found[id(tensor)] = tensor
    elif isinstance(obj, functools.partial):
        for value in (obj.func, obj.args, obj.keywords):
            _collect(value, found, seen, depth)
    elif inspect.ismethod(obj):
        _collect(obj.__self__, found, seen, depth)
        _collect(obj.__func__, found, seen, depth)
    elif isinstance(obj, types.FunctionType):
        for cell in obj.__closure__ or ():
            try:
                _collect(cell.cell_contents, found, seen, depth - 1)
            except ValueError:  # a cell not yet filled
                pass
        _collect(obj.__defaults__ or (), found, seen, depth - 1)
        names = obj.__globals__
        for name in obj.__code__.co_names:
            value = names.get(name)
            if isinstance(value, (Tensor, Module, types.FunctionType, functools.partial)):
                _collect(value, found, seen, depth - 1)
