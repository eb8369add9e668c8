"""Which array owns a tensor's memory (torch's storage), and which owners NumPy shares.

torch cannot resize the storage of a tensor made by ``from_numpy`` or exported by
``numpy()``: NumPy holds the memory. Those owners are recorded here (weakly), and
``resize_`` refuses to grow them as torch does. ``copy.deepcopy`` copies each owner once, so
tensors and storages copied together keep sharing memory as torch's do.
"""
from __future__ import annotations

import copy
import weakref

import numpy as np

_shared_with_numpy: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
# owners marked by share_memory_ (by id, while they live): torch's is_shared() is the storage's
_shared_memory: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def storage_of(array):
    """The array that owns ``array``'s memory (itself when it owns it): torch's storage. The
    wrapper objects NumPy's ``as_strided`` leaves in a ``.base`` chain are looked through."""
    while True:
        base = getattr(array, "base", None)
        if base is not None and not hasattr(base, "strides"):
            base = getattr(base, "base", None)  # as_strided's DummyArray holds the array
        if base is None or not hasattr(base, "strides"):
            return array
        array = base


def _mark(table: weakref.WeakValueDictionary, array) -> None:
    owner = storage_of(array)
    table[id(owner)] = owner


def _marked(table: weakref.WeakValueDictionary, array) -> bool:
    owner = storage_of(array)
    return table.get(id(owner)) is owner


def share_with_numpy(array) -> None:
    """Record that NumPy holds ``array``'s memory: its storage's size is fixed from now on."""
    _mark(_shared_with_numpy, array)


def shared_with_numpy(array) -> bool:
    """Whether NumPy holds the memory of ``array``'s storage (torch: not resizable)."""
    return _marked(_shared_with_numpy, array)


def mark_shared_memory(array) -> None:
    """``share_memory_()``: gradkit has no torch.multiprocessing, so the memory stays where it
    is; only ``is_shared()`` answers True from now on."""
    _mark(_shared_memory, array)


def in_shared_memory(array) -> bool:
    """Whether ``share_memory_()`` marked the storage of ``array``."""
    return _marked(_shared_memory, array)


def _address(array) -> int:
    return array.__array_interface__["data"][0]


def deepcopy_sharing(array, memo: dict):
    """A deep copy of ``array`` that views the copy of its owner: one copy of each owner per
    ``copy.deepcopy`` call (``memo``), so views copied together still share memory, as torch's
    deepcopy keeps a storage shared (``deepcopy([x, x.view(-1)])``). CuPy arrays and owners not
    laid out densely are copied on their own."""
    owner = storage_of(array)
    if not isinstance(owner, np.ndarray) or array.size == 0:
        return copy.deepcopy(array, memo)
    new_owner = memo.get(id(owner))
    if new_owner is None:
        new_owner = memo[id(owner)] = owner.copy(order="K")
        memo.setdefault(id(memo), []).append(owner)  # alive while memo keys on its id
    if new_owner.strides != owner.strides:  # not dense: no shared layout to rebuild
        return copy.deepcopy(array, memo)
    memory = new_owner.ravel(order="K").view(np.uint8)
    result = np.ndarray(array.shape, array.dtype, buffer=memory, strides=array.strides,
                        offset=_address(array) - _address(owner))
    result.flags.writeable = array.flags.writeable
    return result
