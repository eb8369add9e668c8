"""Python data for ``gradkit.tensor`` (nested lists and tuples of numbers, arrays and tensors)
read as torch reads it: the dtype torch infers, torch's warning for a list of NumPy arrays,
and its errors for ragged data (NumPy's would say "inhomogeneous shape")."""
from __future__ import annotations

import functools

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit._user_frames import warn_once_at_user
from gradkit.ops.promotion import promote_types

LIST_OF_ARRAYS = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
    "converting the list to a single numpy.ndarray with numpy.array() before converting to a "
    "tensor.")


def to_nested(data):
    """``data`` with its tensors as host arrays (lists for tuples), for ``np.array``."""
    if isinstance(data, Tensor):
        return backend.to_device(data._data, backend.CPU)
    if isinstance(data, (list, tuple)):
        if any(isinstance(item, np.ndarray) for item in data):
            warn_once_at_user(LIST_OF_ARRAYS)
        return [to_nested(item) for item in data]
    return data


def _is_sequence(value) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def _shape(nested) -> list:
    """torch's compute_sizes: the lengths of the first element at each depth."""
    sizes = []
    while _is_sequence(nested) and not (isinstance(nested, np.ndarray) and nested.ndim == 0):
        sizes.append(len(nested))
        if not sizes[-1]:
            break
        nested = nested[0]
    return sizes


def _check_lengths(nested, sizes: list, dim: int) -> None:
    """torch's recursive_store, depth first: each sequence at ``dim`` of length sizes[dim]."""
    if dim == len(sizes):
        return
    if not _is_sequence(nested) or (isinstance(nested, np.ndarray) and nested.ndim == 0):
        raise TypeError("not a sequence")
    if len(nested) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(nested)})")
    for item in nested:
        _check_lengths(item, sizes, dim + 1)


def check_ragged(nested) -> None:
    """Raise torch's error for ragged ``nested`` data (it does not raise for other data)."""
    _check_lengths(nested, _shape(nested), 0)


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
