"""torch's ``finfo`` and ``iinfo``: the limits of a floating (complex: its parts') or integer
dtype, with torch's fields and text."""
from __future__ import annotations

import builtins

import numpy as np

from gradkit import backend


# torch reads Python's number types as their dtypes
_PYTHON_TYPES = {float: backend.float64, int: backend.int64, complex: backend.complex128,
                 bool: backend.bool_}


def _dtype(function: str, type) -> backend.dtype:  # noqa: A002 - torch's argument name
    """The gradkit dtype ``type`` names, or torch's TypeError."""
    if isinstance(type, backend.dtype):
        return type
    if type in _PYTHON_TYPES:
        return _PYTHON_TYPES[type]
    raise TypeError(f"{function}(): argument 'type' (position 1) must be torch.dtype, not "
                    f"{builtins.type(type).__name__}")


def _short(value) -> str:
    """A number as torch's reprs show it (C's ``%g``: 6 significant digits)."""
    return f"{value:g}"


_NO_TYPE = object()  # torch's finfo() means the default dtype; finfo(None) is a TypeError


class _Limits:
    """torch's read-only info objects: equal when their fields are, and (as torch's)
    unhashable."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def _set(self, **fields) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        if name in self.__slots__:
            raise AttributeError(f"attribute '{name}' of 'torch.{type(self).__name__}' objects "
                                 f"is not writable")
        raise AttributeError(f"'torch.{type(self).__name__}' object has no attribute '{name}'")

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)


class finfo(_Limits):  # noqa: N801 - torch's name
    """Machine limits of a floating dtype (the default dtype when none is given): ``bits``,
    ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``, ``dtype``."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=_NO_TYPE) -> None:  # noqa: A002 - torch's argument name
        gradkit_dtype = (backend.get_default_dtype() if type is _NO_TYPE
                         else _dtype("finfo", type))
        if backend.to_numpy_dtype(gradkit_dtype).kind not in "fc":
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = np.finfo(backend.to_numpy_dtype(gradkit_dtype))
        tiny = float(info.smallest_normal)
        self._set(bits=int(info.bits), eps=float(info.eps), max=float(info.max),
                  min=float(info.min), tiny=tiny, smallest_normal=tiny,
                  resolution=10.0 ** -int(info.precision),  # exact in Python's float, as torch's
                  dtype=info.dtype.name)  # torch's field is the name of the (real) dtype

    def __repr__(self) -> str:
        return (f"finfo(resolution={_short(self.resolution)}, min={_short(self.min)}, "
                f"max={_short(self.max)}, eps={_short(self.eps)}, "
                f"smallest_normal={_short(self.smallest_normal)}, tiny={_short(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo(_Limits):  # noqa: N801 - torch's name
    """Machine limits of an integer dtype: ``bits``, ``max``, ``min``, ``dtype``."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type=_NO_TYPE) -> None:  # noqa: A002 - torch's argument name
        if type is _NO_TYPE:
            raise TypeError('iinfo() missing 1 required positional arguments: "type"')
        type = _dtype("iinfo", type)
        if type is backend.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if backend.to_numpy_dtype(type).kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(backend.to_numpy_dtype(type))
        self._set(bits=int(info.bits), max=int(info.max), min=int(info.min),
                  dtype=info.dtype.name)

    def __repr__(self) -> str:
        return f"iinfo(min={_short(self.min)}, max={_short(self.max)}, dtype={self.dtype})"
