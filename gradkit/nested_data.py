"""Python data for ``gradkit.tensor`` (nested lists and tuples of numbers, arrays and tensors)
read as torch reads it: torch's warning for a list of NumPy arrays, and its errors for ragged
data (NumPy's would say "inhomogeneous shape")."""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit._user_frames import warn_once_at_user

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
