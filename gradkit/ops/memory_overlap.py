"""torch's memory-overlap rules for in-place writes (ATen's MemOverlap.cpp), on raw arrays.

An in-place op refuses a target whose elements share memory (an expanded tensor), and an input
that shares part, but not all, of the target's memory (``x.add_(x[0])``): it would read values
it has already overwritten. An input laid out exactly as the target (``x.add_(x)``) is fine.
"""
from __future__ import annotations

import numpy as np

from gradkit.backend import get_array_module
from gradkit.storage_owner import storage_of

OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor "
                   "refers to a single memory location. Please clone() the tensor before "
                   "performing the operation.")
PARTIAL_OVERLAP_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation.")


def has_internal_overlap(array) -> bool:
    """torch's MemOverlap::Yes: a dim of more than one element with stride 0 (expanded)."""
    return array.size > 1 and any(
        stride == 0 and n > 1 for n, stride in zip(array.shape, array.strides))


def aliased_copy(array):
    """A writable copy of ``array`` whose elements share memory as ``array``'s do (expanded,
    overlapping windows), so that a kernel adding into one location adds for every element
    there, as torch's do: its strides over fresh memory as long as the span they reach."""
    xp = get_array_module(array)
    if not may_overlap(array) or any(stride < 0 for stride in array.strides):
        return xp.array(array)
    span = 1 + sum((n - 1) * stride for n, stride in zip(array.shape, array.strides)) // \
        array.itemsize
    out = xp.lib.stride_tricks.as_strided(xp.empty(span, dtype=array.dtype), array.shape,
                                          array.strides)
    out[...] = array  # (elements sharing a location hold the same value)
    return out


def may_overlap(array) -> bool:
    """Whether two elements of ``array`` may share memory: a dim's stride shorter than the
    span of the dims with smaller strides (an expanded tensor, overlapping as_strided or unfold
    windows); torch's MemOverlap::TooHard or Yes. An empty array shares nothing (torch: it
    is contiguous)."""
    if array.size == 0:
        return False
    span = array.itemsize
    for stride, n in sorted((abs(s), n) for n, s in zip(array.shape, array.strides) if n > 1):
        if stride < span:
            return True
        span += (n - 1) * stride
    return False


def _address(array) -> int:
    interface = getattr(array, "__array_interface__", None)
    if interface is None:  # CuPy
        interface = array.__cuda_array_interface__
    return interface["data"][0]


def _dense(array) -> bool:
    """torch's is_non_overlapping_and_dense: some order of the dims is contiguous."""
    dims = sorted((stride, n) for n, stride in zip(array.shape, array.strides) if n != 1)
    expected = array.itemsize
    for stride, n in dims:
        if stride != expected:
            return False
        expected *= n
    return True


def share_memory(a, b) -> bool:
    """Whether the memory ranges of ``a`` and ``b`` intersect."""
    a_begin, b_begin = _address(a), _address(b)
    return a.size > 0 and b.size > 0 and a_begin < b_begin + b.nbytes and \
        b_begin < a_begin + a.nbytes


def partially_overlap(a, b) -> bool:
    """torch's MemOverlapStatus::Partial: dense arrays whose memory ranges intersect, other
    than the same range with the same strides (when unsure, torch lets it pass: so do we)."""
    if a is b or a.size == 0 or b.size == 0 or not (_dense(a) and _dense(b)):
        return False
    a_begin, b_begin = _address(a), _address(b)
    a_end, b_end = a_begin + a.nbytes, b_begin + b.nbytes
    if a_begin == b_begin and a_end == b_end:  # the same elements unless laid out otherwise
        # torch compares the strides, in elements, not the shapes: a complex view of a real
        # pair (its one element over the pair's two) is the same memory laid out the same
        same_strides = a.ndim == b.ndim and all(
            x // a.itemsize == y // b.itemsize for x, y in zip(a.strides, b.strides))
        return not (same_strides or a.shape == b.shape and _used_strides(a) == _used_strides(b))
    return a_begin < b_end and b_begin < a_end


def _used_strides(array) -> tuple:
    """The strides of the dims of more than one element. NumPy does not keep torch's stride
    of a one-element dim (``x[0, None]`` gets 0 there, torch the next dim's extent), so
    gradkit compares these only (docs/numerics.md)."""
    return tuple(stride for n, stride in zip(array.shape, array.strides) if n != 1)


def same_data(a, b) -> bool:
    """The same elements in the same layout (torch's copy_ then does nothing)."""
    return a is b or (_address(a) == _address(b) and a.shape == b.shape
                      and a.strides == b.strides and a.dtype == b.dtype)


def storage_offset(array) -> int:
    """torch's storage_offset: how many items into the memory it views ``array`` starts."""
    return (_address(array) - _address(storage_of(array))) // array.itemsize


def same_layout(a, b) -> bool:
    """torch's has_same_meta: the same strides at the same offset into memory of the same size
    (empty arrays always match). Forward AD reuses a tangent as it is only then."""
    if a.size == 0 and b.size == 0:
        return True
    owner_a, owner_b = storage_of(a), storage_of(b)
    return a.strides == b.strides and owner_a.nbytes == owner_b.nbytes and \
        _address(a) - _address(owner_a) == _address(b) - _address(owner_b)


def mirrored(array, base):
    """``array``, a computed view's values (a conj view's, in memory of its own laid out as
    its storage), placed over the storage of ``base``: the memory torch's lazy view reads."""
    owner, own = storage_of(base), storage_of(array)
    if type(array) is not np.ndarray or type(owner) is not np.ndarray or \
            own.nbytes != owner.nbytes or any(stride < 0 for stride in array.strides):
        return array
    return np.ndarray(array.shape, array.dtype, buffer=owner,
                      offset=_address(array) - _address(own), strides=array.strides)


def memory_of(tensor):
    """The memory ``tensor`` reads in torch: a computed (conj) view's lies in its base's."""
    view = getattr(tensor, "_view", None)
    return mirrored(tensor._data, view.base._data) if view is not None and view.computed \
        else tensor._data
