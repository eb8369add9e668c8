"""Tensor.apply_, map_ and map2_: a Python function over the elements, in place (CPU only).

Each element goes to the function as a Python number and comes back converted as torch
converts it (a float to an integer tensor is truncated); the tensor is written in place without
a version bump and without autograd, so a tensor that requires grad is refused, as torch does.
"""
from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from gradkit._tensor import Tensor
from gradkit.ops.methods import tensor_method
from gradkit.ops.unary_helpers import scalar_type_name


def _to_real(value) -> float:
    if isinstance(value, str) or not hasattr(value, "__float__"):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return float(value)


def _to_integer(value, dtype: np.dtype) -> int:
    """torch's unpacking of a Python value for an integer (or bool) element."""
    number = int(value) if isinstance(value, float) else operator.index(
        value.item() if isinstance(value, Tensor) else value)
    if dtype.kind == "b":
        return bool(number)
    if dtype == np.uint8:  # torch wraps uint8 around
        return number & 0xFF
    if not -(1 << 63) <= number < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    info = np.iinfo(dtype)
    if not info.min <= number <= info.max:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    return number


def _converter(dtype: np.dtype) -> Callable:
    if dtype.kind == "c":
        return complex
    if dtype.kind == "f":
        return _to_real
    return lambda value: _to_integer(value, dtype)


def _refuse_graph(name: str, *tensors: Tensor) -> None:
    if any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    if tensors[0].device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _write(x: Tensor, values: list) -> Tensor:
    """Store ``values`` (x's elements in order) into x's memory, seen by its views too."""
    x._data[...] = np.asarray(values, dtype=x._data.dtype).reshape(x._data.shape)
    return x


@tensor_method()
def apply_(x: Tensor, callable: Callable) -> Tensor:  # noqa: A002 - torch's argument name
    """Replace each element v of x by ``callable(v)``, in place; returns x."""
    _refuse_graph("apply_", x)
    convert = _converter(x._data.dtype)
    return _write(x, [convert(callable(v)) for v in x._data.reshape(-1).tolist()])


@tensor_method()
def map_(x: Tensor, tensor: Tensor, callable: Callable) -> Tensor:  # noqa: A002
    """Replace each element a of x by ``callable(a, b)``, b the matching element of ``tensor``
    (broadcast to x's shape), in place; returns x."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"map_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    _refuse_graph("map_", x, tensor)
    if tensor.dtype != x.dtype:
        raise TypeError(f"map_: expected gradkit.{scalar_type_name(x)}Tensor for 'other' (got "
                        f"gradkit.{scalar_type_name(tensor)}Tensor)")
    convert = _converter(x._data.dtype)
    others = tensor.expand(*x.shape)._data.reshape(-1).tolist()
    return _write(x, [convert(callable(a, b))
                      for a, b in zip(x._data.reshape(-1).tolist(), others)])


@tensor_method()
def map2_(x: Tensor, x1: Tensor, x2: Tensor, callable: Callable) -> Tensor:  # noqa: A002
    """Replace each element a of x by ``callable(a, b, c)``, b and c the matching elements of
    ``x1`` and ``x2`` (broadcast to x's shape), in place; returns x."""
    for position, (name, other) in enumerate((("x", x1), ("y", x2)), start=1):
        if not isinstance(other, Tensor):
            raise TypeError(f"map2_(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(other).__name__}")
    _refuse_graph("map2_", x, x1, x2)
    for name, other in (("y", x2), ("x", x1)):  # torch checks the second one first
        if other.dtype != x.dtype:
            raise TypeError(f"map2_: expected gradkit.{scalar_type_name(x)}Tensor for argument "
                            f"'{name}' (got gradkit.{scalar_type_name(other)}Tensor)")
    convert = _converter(x._data.dtype)
    firsts = x1.expand(*x.shape)._data.reshape(-1).tolist()
    seconds = x2.expand(*x.shape)._data.reshape(-1).tolist()
    return _write(x, [convert(callable(a, b, c))
                      for a, b, c in zip(x._data.reshape(-1).tolist(), firsts, seconds)])
