"""Python data read as ``torch.tensor`` reads it: nested lists (of numbers, NumPy values and
tensors) as one array, of the dtype torch infers for them."""
from __future__ import annotations

import functools

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.ops.promotion import promote_types


def infer_dtype(data) -> np.ndarray:
    """torch's inference for Python data: floats -> default dtype, ints -> int64, ...; with
    NumPy values (or tensors) among them, each element's own dtype, promoted as torch's."""
    array = np.asarray(data)
    numpy_dtypes, python_types = _element_dtypes(data) if isinstance(data, list) else ((), ())
    if numpy_dtypes and array.dtype != object:
        dtypes = list(numpy_dtypes) + [_python_number_dtype(t) for t in python_types]
        return array.astype(functools.reduce(promote_types, dtypes), copy=False)
    kind = array.dtype.kind
    if kind == "f":
        return array.astype(backend.get_default_dtype().np, copy=False)
    if kind == "c":
        return array.astype(backend.get_default_dtype().to_complex().np, copy=False)
    if kind in "iu":
        return array.astype(np.int64, copy=False)
    if kind == "b":
        return array
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _element_dtypes(data: list) -> tuple[set, set]:
    """The dtypes of the NumPy values (scalars, arrays, tensors' data) in nested lists, and the
    types of the Python numbers beside them."""
    types = set(map(type, data))
    numpy_dtypes = {item.dtype for item in data if isinstance(item, (np.generic, np.ndarray))} \
        if any(issubclass(t, (np.generic, np.ndarray)) for t in types) else set()
    python_types = types & _PYTHON_NUMBERS
    for item in data if types & {list, tuple} else ():
        if isinstance(item, (list, tuple)):
            inner_numpy, inner_python = _element_dtypes(list(item))
            numpy_dtypes |= inner_numpy
            python_types |= inner_python
    return numpy_dtypes, python_types


_PYTHON_NUMBERS = frozenset({bool, int, float, complex})


def _python_number_dtype(kind: type) -> np.dtype:
    """The dtype torch's tensor() gives a Python number of type ``kind``."""
    default = backend.get_default_dtype()
    return {bool: np.dtype(bool), int: np.dtype(np.int64), float: default.np,
            complex: default.to_complex().np}[kind]


def to_nested(data):
    if isinstance(data, Tensor):
        return backend.to_device(data._data, backend.CPU)
    if isinstance(data, (list, tuple)):
        return [to_nested(d) for d in data]
    return data
