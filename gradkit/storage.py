"""torch's storages: ``x.untyped_storage()`` (the bytes of a tensor's memory) and the deprecated
``x.storage()`` (the same memory as elements of x's dtype), and ``is_storage``.

A tensor's storage is the array that owns its memory (``ops/memory_overlap.storage_of``), so
views of one tensor answer the same storage: ``x.untyped_storage().data_ptr() ==
x[1].untyped_storage().data_ptr()``. A storage object is a window on that memory, not a copy.
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import extend
from gradkit._user_frames import warn_once_at_user
from gradkit.legacy_tensor import type_name
from gradkit.ops.memory_overlap import _address, storage_of
from gradkit.storage_owner import deepcopy_sharing, in_shared_memory, mark_shared_memory

TYPED_STORAGE_DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")


def _memory_bytes(owner):
    """The owner's memory as a 1-d uint8 array in memory order (it shares the memory)."""
    return owner.ravel(order="K").view(np.uint8)


def _index(index, size: int, kind: type, wrap_first: bool) -> int:
    """A Python int index into ``size`` items, with torch's errors (the untyped storage
    reports a negative index after wrapping it, the typed one as given)."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise RuntimeError(f"can't index a {kind} with {type(index)}")
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {wrapped if wrap_first else index} out of range for storage "
                         f"of size {size}")
    return int(wrapped)


def _text(storage, header: str) -> str:
    """torch's print of a storage: one element a line, then a bracketed header."""
    values = " " + "\n ".join(str(value) for value in storage.tolist())
    return f"{values}\n[{type(storage).__module__}.{type(storage).__name__}({header}) of size " \
           f"{len(storage)}]"


class UntypedStorage:
    """The bytes of a tensor's memory (``x.untyped_storage()``)."""

    def __init__(self, memory) -> None:
        self._bytes = memory  # 1-d uint8, on the tensor's memory

    def __deepcopy__(self, memo) -> UntypedStorage:  # shares with tensors copied with it
        return UntypedStorage(deepcopy_sharing(self._bytes, memo))

    @property
    def device(self) -> backend.device:
        return backend.device_of(self._bytes)

    is_cuda = property(lambda self: self.device.type == "cuda")

    def nbytes(self) -> int:
        """How many bytes the memory holds."""
        return int(self._bytes.size)

    size = nbytes  # an untyped storage counts bytes

    def __len__(self) -> int:
        return self.nbytes()

    def __sizeof__(self) -> int:  # the object and its memory, as torch's sys.getsizeof
        return object.__sizeof__(self) + self.nbytes()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        """The address of the memory (0 when empty, as torch)."""
        return _address(self._bytes) if self._bytes.size else 0

    def tolist(self) -> list[int]:
        """The bytes as Python ints."""
        return backend.to_device(self._bytes, backend.CPU).tolist()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return UntypedStorage(self._bytes[index])
        return int(self._bytes[_index(index, self.nbytes(), type(self), wrap_first=True)])

    def untyped(self) -> UntypedStorage:
        return self

    def type(self) -> str:
        return f"{__name__}.{type(self).__name__}"

    def is_shared(self) -> bool:
        """Whether ``share_memory_()`` marked this memory (gradkit moves nothing)."""
        return in_shared_memory(self._bytes)

    def share_memory_(self) -> UntypedStorage:
        """Mark this memory shared and return self (gradkit has no torch.multiprocessing)."""
        mark_shared_memory(self._bytes)
        return self

    def __eq__(self, other) -> bool:  # torch hands out one object per memory
        return isinstance(other, UntypedStorage) and (self.data_ptr(), self.nbytes(),
                                                      self.device) == (other.data_ptr(),
                                                                       other.nbytes(),
                                                                       other.device)

    def __hash__(self) -> int:
        return hash((self.data_ptr(), self.nbytes()))

    def __repr__(self) -> str:
        return _text(self, f"device={self.device}")


class TypedStorage:
    """A tensor's memory as elements of its dtype (``x.storage()``, deprecated in torch)."""

    def __init__(self, memory, dtype: backend.dtype) -> None:
        self._untyped_storage = UntypedStorage(memory)
        self.dtype = dtype

    @property
    def device(self) -> backend.device:
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return self._untyped_storage.is_cuda

    def _elements(self):
        memory = self._untyped_storage._bytes
        usable = memory.size - memory.size % self.dtype.itemsize
        return memory[:usable].view(self.dtype.np)

    def size(self) -> int:
        """How many elements of the dtype the memory holds."""
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + self.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def share_memory_(self) -> TypedStorage:
        self._untyped_storage.share_memory_()
        return self

    def type(self) -> str:
        """torch's legacy name: ``gradkit.FloatStorage``, ``gradkit.ComplexDoubleStorage``...
        (the class's own name for uint16/32/64, which have none)."""
        if self.dtype.name in ("uint16", "uint32", "uint64"):
            return f"{__name__}.{type(self).__name__}"
        return type_name(self).replace("Tensor", "Storage")

    def tolist(self) -> list:
        """The elements as Python numbers."""
        return backend.to_device(self._elements(), backend.CPU).tolist()

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._elements()[_index(index, self.size(), type(self), wrap_first=False)].item()

    def __repr__(self) -> str:
        return _text(self, f"dtype={self.dtype}, device={self.device}")


class _StorageAccess:
    def untyped_storage(self) -> UntypedStorage:
        """The bytes of this tensor's memory: views of one tensor share it."""
        return UntypedStorage(_memory_bytes(storage_of(self._data)))

    def storage(self) -> TypedStorage:
        """This tensor's memory as elements of its dtype (torch's deprecation warning, once)."""
        warn_once_at_user(TYPED_STORAGE_DEPRECATED)
        return TypedStorage(_memory_bytes(storage_of(self._data)), self.dtype)


extend(_StorageAccess)


def is_storage(obj) -> bool:
    """True for a storage (``x.untyped_storage()``, ``x.storage()``)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


__all__ = ["TypedStorage", "UntypedStorage", "is_storage"]
