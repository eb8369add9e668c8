"""Dim arguments read as torch reads them: wrapped into range, each named once."""
from __future__ import annotations

import operator

import numpy as np


def normalize_dim(dim: int, ndim: int) -> int:
    """``dim`` wrapped into ``[0, ndim)`` (a 0-d tensor takes 0 and -1); torch's errors."""
    if type(dim) is int and 0 <= dim < ndim:  # already in range (the common dim): as it is
        return dim
    try:
        dim = operator.index(dim)
    except TypeError:  # torch's words (it names the function too): a tuple, a float
        raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= dim < n:
        if not -2**63 <= dim < 2**63:  # torch's parser reads an int64 first
            raise ValueError("Overflow when unpacking long long")
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def existing_dim(dim: int, ndim: int) -> int:
    """``dim`` normalized where a 0-d tensor has no dim to name (torch's wrap_scalar=False:
    roll, unique with a dim)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return normalize_dim(dim, ndim)


def distinct_dims(dims, ndim: int) -> list[int]:
    """``dims`` normalized, in order; torch's error for the first dim given twice."""
    seen = []
    for d in dims:
        a = normalize_dim(d, ndim)
        if a in seen:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        seen.append(a)
    return seen


def _given_type(value) -> str:
    """A forward's argument by the type torch's parser saw: an array was a Tensor."""
    return "Tensor" if hasattr(value, "dtype") and hasattr(value, "ndim") else \
        type(value).__name__


def dim_among_inputs(name: str, dim, ndim: int, inputs: tuple | None = None) -> int:
    """``dim`` given between an op's tensors (``gather(x, dim, index)``: the forward gets a
    0-d tensor's array), read as torch's ``int``: an int or a 0-d integer tensor, else its
    TypeError (``inputs``: the op's arguments, listed where torch has several signatures; a
    dim given by keyword is read in missing_inputs.py)."""
    dim = getattr(dim, "_data", dim)
    if not (dim.ndim == 0 and dim.dtype.kind in "iu" if hasattr(dim, "dtype") else
            isinstance(dim, (int, np.integer)) and not isinstance(dim, (bool, np.bool_))):
        if inputs is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments - got ("
                            f"{', '.join(map(_given_type, inputs))}), but expected one of:")
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{_given_type(dim)}")
    return normalize_dim(dim, ndim)
