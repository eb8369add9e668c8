"""Tensors on other libraries' memory and back: ``from_numpy``, ``frombuffer`` (Python's
buffer protocol), ``from_dlpack``/``to_dlpack`` and ``Tensor.__dlpack__`` (DLPack, which NumPy
and CuPy speak).

Each shares memory, as torch's: writes through the tensor reach the buffer or the other
library's array.
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor, extend
from gradkit._user_frames import warn_once_at_user
from gradkit.storage_owner import share_with_numpy

_DLPACK_CUDA = 2  # DLPack's device type of a CUDA GPU (1 is the CPU)
_NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable "
    "tensors. This means writing to this tensor will result in undefined behavior. You may "
    "want to copy the array to protect its data or make it writable before converting it to "
    "a tensor. This type of warning will be suppressed for the rest of this program.")


def check_numpy_array(array: np.ndarray) -> None:
    """torch's checks of an array it reads as a tensor (from_numpy, as_tensor, tensor), in its
    order: strides whole elements and not negative, native byte order, a supported dtype."""
    if any(stride % array.itemsize for stride in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    if any(stride < 0 for stride in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around this "
            "by making a copy of your array  with array.copy().) ")
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    try:
        backend.tensor_dtype(array.dtype)
    except TypeError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{array.dtype.type.__name__}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, "
            "int32, int16, int8, uint64, uint32, uint16, uint8, and bool.") from None


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (whose size NumPy then fixes: ``resize_``
    cannot grow it), with torch's checks and its warning for a read-only array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if not array.flags.writeable:
        warn_once_at_user(_NOT_WRITABLE)
    check_numpy_array(array)
    share_with_numpy(array)
    return Tensor._make(array)


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-d tensor of ``dtype`` on the memory of an object with Python's buffer protocol
    (``count`` elements from byte ``offset``; -1: all that is left), with torch's errors."""
    try:
        length = memoryview(buffer).nbytes
        readonly = memoryview(buffer).readonly
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    np_dtype = backend.to_numpy_dtype(dtype)
    size = np_dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                            f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                                f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                            f"({offset} bytes) must not be greater than actual buffer length "
                            f"({length} bytes)")
    if readonly:  # torch's warning; NumPy keeps such memory read-only, so writes raise here
        warn_once_at_user(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.")
    tensor = Tensor._make(np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset))
    return tensor._set_requires_grad(True, factory=True) if requires_grad else tensor


class _Capsule:
    """A bare DLPack capsule (``to_dlpack``'s) as the object ``from_dlpack`` consumers take."""

    def __init__(self, capsule) -> None:
        self.capsule = capsule

    def __dlpack__(self, stream=None, **options):
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # a bare capsule does not say; gradkit's capsules of CPU memory


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor on the memory of an object with ``__dlpack__`` (a NumPy, CuPy or torch array,
    a gradkit tensor) or of a DLPack capsule (NumPy makes that one read-only)."""
    if isinstance(ext_tensor, Tensor):
        return Tensor._make(ext_tensor._data)
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor "
                           "capsules can be consumed only once, so you might have already "
                           "constructed a tensor from it once.")
    if ext_tensor.__dlpack_device__()[0] == _DLPACK_CUDA:
        return Tensor._make(backend.array_module(backend.device("cuda")).from_dlpack(ext_tensor))
    return Tensor._make(np.from_dlpack(ext_tensor))


def _exportable(tensor: Tensor):
    if tensor._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    return tensor._data


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of the tensor's memory (consumed once, by ``from_dlpack``); unlike
    ``__dlpack__``, also of a tensor that requires grad, as torch's."""
    if not isinstance(tensor, Tensor):
        raise TypeError("_to_dlpack(): argument 'data' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor._data.__dlpack__()


class _DLPackMethods:
    def __dlpack__(self, stream=None, **options):
        """The DLPack protocol: a capsule of this tensor's memory (not of one requiring grad)."""
        return _exportable(self).__dlpack__(stream=stream, **options)

    def __dlpack_device__(self) -> tuple[int, int]:
        """DLPack's (device type, index) of this tensor's memory."""
        return self._data.__dlpack_device__()


extend(_DLPackMethods)
