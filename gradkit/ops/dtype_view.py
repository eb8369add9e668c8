"""``Tensor.view(dtype)``: the same memory read as another dtype, as torch's.

torch records no graph for it and does not make it an autograd view: the result never
requires grad, and it shares the source's version counter, so a write through either shows
in both and is seen by saved tensors of the other.
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.ops.complex import is_conjugated_view, is_negative_view
from gradkit.ops.promotion import SCALAR_TYPE_NAMES

# torch reads Python types as its double, long, bool and complex double here
_PYTHON_TYPES = {float: np.dtype(np.float64), int: np.dtype(np.int64),
                 bool: np.dtype(np.bool_), complex: np.dtype(np.complex128)}


def is_dtype_argument(value) -> bool:
    """Whether ``x.view(value)`` asks for a dtype (not a size)."""
    return isinstance(value, backend.dtype) or (isinstance(value, type) and value in _PYTHON_TYPES)


def view_dtype(x: Tensor, dtype) -> Tensor:
    """``x``'s memory as ``dtype``: the last dim scales by the ratio of element sizes."""
    data = x._data
    target = _PYTHON_TYPES.get(dtype) or backend.to_numpy_dtype(dtype)
    # torch refuses (even to the same dtype): its memory holds the values before conj/neg
    for lazy, what in ((is_conjugated_view, "conjugate view tensors"),
                       (is_negative_view, "tensors with negative bit set")):
        if lazy(x):
            raise RuntimeError(f"torch.Tensor.view is not supported for {what} when "
                               "converting to a different dtype.")
    if target.itemsize != data.itemsize:
        _check_resizable(x, target)
    if data.size == 0:  # nothing to share: a fresh empty array has torch's C strides
        shape = data.shape[:-1] + (data.shape[-1] * data.itemsize // target.itemsize,) \
            if data.ndim else ()
        out = Tensor._make(backend.get_array_module(data).empty(shape, dtype=target))
    else:
        out = Tensor._make(data.view(target))
    out._vc = x._vc
    return out


def _check_resizable(x: Tensor, target: np.dtype) -> None:
    """torch's checks, in its order, for elements of another size."""
    data = x._data
    names = (SCALAR_TYPE_NAMES.get(data.dtype.name, data.dtype.name),
             SCALAR_TYPE_NAMES.get(target.name, target.name))
    what = "to view {} as {} (different element sizes)".format(*names)
    if data.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    strides = x.stride()  # torch's, also for empty tensors
    ratio = target.itemsize // data.itemsize
    if ratio > 1:  # wider elements: the last dim and the offset must hold whole ones
        if data.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, "
                               f"but got {data.shape[-1]}")
        offset = x.storage_offset()
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                               f"but got {offset}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    for dim, stride in enumerate(strides[:-1] if ratio > 1 else ()):
        if stride % ratio:
            raise RuntimeError(f"self.stride({dim}) must be divisible by {ratio} {what}, "
                               f"but got {stride}")
