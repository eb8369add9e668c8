"""``as_strided_scatter`` (a copy of x with ``src`` written where ``as_strided`` of the copy
reads) and the tensors made with given strides: ``empty_strided``, ``new_empty_strided``."""
from __future__ import annotations

import numpy as np

from gradkit import backend, creation
from gradkit._tensor import Tensor
from gradkit.ops._op import op
from gradkit.ops.indexing import _index, index_put_into_zeros
from gradkit.ops.memory_overlap import OVERLAP_MESSAGE, has_internal_overlap
from gradkit.ops.memory_overlap import storage_offset as offset_in_storage
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import reshape
from gradkit.ops.strided import (
    _contiguous_geometry, check_geometry, int_tuples, element_strides, positions,
    storage_elements, strided_array, times_constant, whole_storage_copy)


def _copied_geometry(x: Tensor) -> tuple:
    """torch's clone_preserve_strides of x: (strides, storage offset, storage length) of a
    copy of x's whole storage viewed as x is; an expanded x is cloned contiguous instead."""
    data = x._data
    if has_internal_overlap(data):
        return _contiguous_geometry(data.shape)[1], 0, data.size
    return element_strides(data), offset_in_storage(data), storage_elements(data)


def _written(shape, source, size, stride, offset) -> np.ndarray:
    """The flat (C-order) index in a tensor of ``shape`` at ``source`` = (strides, offset,
    storage length) of each storage position the view ``(size, stride, offset)`` reads; the
    tensor's size where no element of it sits there."""
    numel = int(np.prod(shape, dtype=np.int64))
    logical = np.full(max(source[2], 1), numel, dtype=np.int64)
    logical[positions(shape, source[0], source[1]).reshape(-1)] = np.arange(numel)
    return logical[positions(size, stride, offset)]


def _kept(g, shape, written):
    """``g`` with zeros where the scatter overwrote x."""
    numel = int(np.prod(shape, dtype=np.int64))
    mask = np.ones(numel + 1, dtype=bool)
    mask[written.reshape(-1)] = False
    return times_constant(g, factor=mask[:numel].reshape(shape))


def _read_at(g, shape, written):
    """The elements of ``g`` (shaped as x) at ``written``; 0 where no element of x is."""
    numel = int(np.prod(shape, dtype=np.int64))
    padded = index_put_into_zeros(reshape(g, (-1,)), (numel + 1,), (np.arange(numel),))
    return _index(padded, (written,))


def _placed(t, shape, written):
    """Zeros shaped as x with ``t`` at the elements ``written`` (those of x it holds)."""
    numel = int(np.prod(shape, dtype=np.int64))
    flat = index_put_into_zeros(reshape(t, (-1,)), (numel + 1,), (written.reshape(-1),))
    return reshape(_index(flat, (np.arange(numel),)), tuple(shape))


@op(save="x.shape", linear=True, node_name="AsStridedScatterBackward0")
def _as_strided_scatter(xp, x, src, *, size, stride, storage_offset, source):
    layout, start, length = source
    if has_internal_overlap(x):  # cloned contiguous
        out = strided_array(xp.empty(max(length, 1), dtype=x.dtype), x.shape, layout, start)
        out[...] = x
    else:
        out = whole_storage_copy(x)
    strided_array(out, size, stride, storage_offset)[...] = src
    return out


_as_strided_scatter.defvjp(
    lambda g, x_shape, size, stride, storage_offset, source:
        _kept(g, x_shape, _written(x_shape, source, size, stride, storage_offset)),
    lambda g, x_shape, size, stride, storage_offset, source:
        _read_at(g, x_shape, _written(x_shape, source, size, stride, storage_offset)))
# the tangents by the same indices (the op on them would read their own, other storage)
_as_strided_scatter.defjvp(
    lambda t, x_shape, size, stride, storage_offset, source:
        _kept(t, x_shape, _written(x_shape, source, size, stride, storage_offset)),
    lambda t, x_shape, size, stride, storage_offset, source:
        _placed(t, x_shape, _written(x_shape, source, size, stride, storage_offset)))
_as_strided_scatter.name, _as_strided_scatter.profiler_name = \
    "as_strided_scatter", "gradkit::as_strided_scatter"


@tensor_method()
def as_strided_scatter(input: Tensor, src: Tensor, size, stride,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of x with ``src`` written where ``as_strided(size, stride, storage_offset)``
    of the copy reads. As torch's, the copy is of x's whole storage, viewed as x (same
    strides and offset; ``storage_offset`` defaults to x's): positions outside x are written
    but not seen."""
    size, stride = int_tuples("as_strided_scatter", 3, size, stride)
    source = _copied_geometry(input)
    offset = source[1] if storage_offset is None else int(storage_offset)
    check_geometry(size, stride, offset, input.itemsize, source[2] * input.itemsize)
    if tuple(src.shape) != size:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    if 0 not in size and any(s == 0 and n > 1 for n, s in zip(size, stride)):  # copy_'s
        # refusal; an empty slice has no element to write twice
        raise RuntimeError(OVERLAP_MESSAGE)
    return _as_strided_scatter(input, src, size=size, stride=stride, storage_offset=offset,
                               source=source)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor with the given sizes and strides over fresh memory just large enough (torch
    leaves it uninitialised; here it is zeros)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    length = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if length * backend.to_numpy_dtype(dtype or backend.get_default_dtype()).itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    storage = creation.zeros(length, dtype=dtype, device=device)._data
    tensor = Tensor._make(strided_array(storage, size, stride, 0))
    return tensor._set_requires_grad(True, factory=True) if requires_grad else tensor


@tensor_method()
def new_empty_strided(x: Tensor, size, stride, *, dtype=None, device=None,
                      requires_grad: bool = False) -> Tensor:
    """``empty_strided`` with x's dtype and device unless given."""
    return empty_strided(size, stride, dtype=dtype or x.dtype, device=device or x.device,
                         requires_grad=requires_grad)
