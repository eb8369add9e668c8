"""The Python data ``tensor()`` reads: nested sequences walked with torch's checks, and the
dtype torch infers when NumPy arrays, NumPy scalars or tensors sit among the numbers.

torch promotes the elements' own dtypes (a Python float counts as the default dtype, an int
as int64, a NumPy float64 array as float64), where ``np.asarray`` of the whole would read
every float as float64 and leave the default dtype to win.
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.ops import promotion


def _number_dtype(value) -> np.dtype | None:
    """The dtype torch gives a Python number (bool before int: bool is an int; NumPy's
    float64 and complex128 scalars, Python subclasses, are typed elements instead)."""
    if isinstance(value, np.generic):
        return None
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return backend.get_default_dtype().np
    if isinstance(value, complex):
        return backend.get_default_dtype().to_complex().np
    return None


class _Walk:
    """One walk over nested data: the plain values, and whether typed elements were met."""

    def __init__(self):
        self.open_ids: set = set()  # the sequences being walked (self-reference check)
        self.dtypes: set = set()    # every element's dtype, torch's way
        self.typed = False          # an array, a NumPy scalar or a tensor was met

    def values(self, data):
        number = _number_dtype(data)
        if number is not None:
            self.dtypes.add(number)
            return data
        if isinstance(data, Tensor):
            self.typed = True
            self.dtypes.add(data._data.dtype)
            return backend.to_device(data._data, backend.CPU)
        if isinstance(data, (np.ndarray, np.generic)):
            self.typed = True
            self.dtypes.add(data.dtype)
            return data
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if isinstance(data, (list, tuple)) or (hasattr(data, "__len__") and hasattr(
                data, "__getitem__") and not isinstance(data, dict)):
            return self._sequence(data)
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")

    def _sequence(self, data):
        if id(data) in self.open_ids:
            raise TypeError("new(): self-referential lists are incompatible")
        if not isinstance(data, (list, tuple)):
            try:
                data = [data[i] for i in range(len(data))]
            except Exception:  # torch reads any sequence; one it cannot index has no shape
                raise ValueError(f"could not determine the shape of object type "
                                 f"'{type(data).__name__}'") from None
        if data and isinstance(data[0], str):  # torch sizes by the first element
            raise ValueError("too many dimensions 'str'")
        self.open_ids.add(id(data))
        try:
            return [self.values(d) for d in data]
        finally:
            self.open_ids.discard(id(data))


def nested_values(data) -> tuple[object, np.dtype | None]:
    """``data`` with tensors as arrays and sequences as lists, checked as torch checks them;
    with the dtype torch infers when a typed element (array, NumPy scalar, tensor) is among
    them, else None (the plain numbers' inference applies)."""
    walk = _Walk()
    values = walk.values(data)
    if not walk.typed or not walk.dtypes:
        return values, None
    inferred = None
    for element in walk.dtypes:
        inferred = element if inferred is None else promotion.promote_types(inferred, element)
    return values, np.dtype(inferred)
