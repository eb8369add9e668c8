"""Which array owns a tensor's memory (torch's storage), and which owners NumPy shares.

torch cannot resize the storage of a tensor made by ``from_numpy`` or exported by
``numpy()``: NumPy holds the memory. Those owners are recorded here (weakly), and
``resize_`` refuses to grow them as torch does.
"""
from __future__ import annotations

import weakref

_shared_with_numpy: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


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


def share_with_numpy(array) -> None:
    """Record that NumPy holds ``array``'s memory: its storage's size is fixed from now on."""
    owner = storage_of(array)
    _shared_with_numpy[id(owner)] = owner


def shared_with_numpy(array) -> bool:
    """Whether NumPy holds the memory of ``array``'s storage (torch: not resizable)."""
    owner = storage_of(array)
    return _shared_with_numpy.get(id(owner)) is owner
