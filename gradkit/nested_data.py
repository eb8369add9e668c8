"""The Python data ``tensor()`` reads: nested sequences walked with torch's checks (its
warning for a list of NumPy arrays, its errors for ragged data, where NumPy's would say
"inhomogeneous shape"), and the dtype torch infers when NumPy arrays, NumPy scalars or tensors
sit among the numbers.

torch promotes the elements' own dtypes (a Python float counts as the default dtype, an int
as int64, a NumPy float64 array as float64), where ``np.asarray`` of the whole would read
every float as float64 and leave the default dtype to win.
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit._user_frames import warn_once_at_user
from gradkit.interop import check_numpy_array
from gradkit.ops import promotion

LIST_OF_ARRAYS = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
    "converting the list to a single numpy.ndarray with numpy.array() before converting to a "
    "tensor.")


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

    def __init__(self, scalar_depth: int | None = None, dtype: np.dtype | None = None):
        self.scalar_depth = scalar_depth  # where torch's sizes end (None: not known)
        self.dtype = dtype          # the dtype asked for (None: inferred)
        self.depth = 0              # how many sequences deep the walk is
        self.open_ids: set = set()  # the sequences being walked (self-reference check)
        self.dtypes: dict = {}      # every element's dtype, in the order met (torch promotes so)
        self.typed = False          # an array, a NumPy scalar or a tensor was met

    def values(self, data):
        number = _number_dtype(data)
        if number is not None:
            self.dtypes[number] = None
            return data
        if isinstance(data, Tensor):
            self.typed = True
            self.dtypes[data._data.dtype] = None
            array = backend.to_device(data._data, backend.CPU)
            if self.scalar_depth is None or self.depth < self.scalar_depth:
                return array  # where torch's sizes want a sequence, it is one
            if array.size != 1:  # torch reads it as one number, as item()
                raise ValueError("only one element tensors can be converted to Python scalars")
            return array.reshape(())
        if isinstance(data, (np.ndarray, np.generic)):
            if isinstance(data, np.ndarray) or data.dtype not in self.dtypes:
                check_numpy_array(np.asarray(data))  # torch's refusal of strings, dates, objects
            if data.ndim and self.scalar_depth is not None and self.depth >= self.scalar_depth:
                raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
            self.typed = True
            self.dtypes[data.dtype] = None
            return data
        if isinstance(data, (str, bytes)):
            if self.depth and self.dtype is not None:
                raise unstorable(data, self.dtype.kind)
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if isinstance(data, (list, tuple)) or (hasattr(data, "__len__") and hasattr(
                data, "__getitem__") and not isinstance(data, dict)):
            return self._sequence(data)
        if self.dtype is not None:
            raise unstorable(data, self.dtype.kind)
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
        if any(isinstance(item, np.ndarray) for item in data):
            warn_once_at_user(LIST_OF_ARRAYS)
        self.open_ids.add(id(data))
        self.depth += 1
        try:
            values = [self.values(d) for d in data]  # a tuple kept: torch's errors name it
            return tuple(values) if isinstance(data, tuple) else values
        finally:
            self.depth -= 1
            self.open_ids.discard(id(data))


def _scalar_depth(data) -> int | None:
    """How many dimensions torch's compute_sizes finds: through lists and tuples by their
    first element, stopping at a tensor (which it then reads as a number) or a number; None
    for other sequences (gradkit then reads a tensor among them as a sequence)."""
    depth = 0
    while isinstance(data, (list, tuple)):
        depth += 1
        if not data:
            return depth
        data = data[0]
    if isinstance(data, np.ndarray):
        return depth + data.ndim
    return depth if isinstance(data, (Tensor, np.generic, int, float, complex)) else None


def nested_values(data, dtype: np.dtype | None = None) -> tuple[object, np.dtype | None]:
    """``data`` with tensors as arrays and sequences as lists, checked as torch checks them
    (for ``dtype`` when one is asked for); with the dtype torch infers when a typed element
    (array, NumPy scalar, tensor) is among them, else None (the plain numbers' inference
    applies)."""
    walk = _Walk(_scalar_depth(data), dtype)
    values = walk.values(data)
    if not walk.typed or not walk.dtypes:
        return values, None
    inferred = None
    for element in walk.dtypes:
        inferred = element if inferred is None else promotion.promote_types(inferred, element)
    return values, np.dtype(inferred)


def infer_dtype(values) -> np.ndarray:
    """torch's inference for plain Python numbers: floats -> default dtype, ints -> int64,
    complex -> the default's complex twin, bools stay."""
    array = np.asarray(values)
    if array.dtype == object or array.dtype == np.uint64:  # an int past int64's range
        array = _beyond_int64(array)
    kind = array.dtype.kind
    if kind == "f":
        return array.astype(backend.get_default_dtype().np, copy=False)
    if kind == "c":
        return array.astype(backend.get_default_dtype().to_complex().np, copy=False)
    if kind in "iu":
        return array.astype(np.int64, copy=False)
    if kind == "b":
        return array
    raise TypeError(f"Could not infer dtype of {type(values).__name__}")


def _beyond_int64(array: np.ndarray) -> np.ndarray:
    """Python numbers holding an int past int64's range, as torch reads them: into floats
    (or complex numbers) beside a float (a complex), where Python's conversion may overflow;
    else refused, as its unpacking of an int64."""
    items = array.ravel().tolist()
    kinds = {type(item) for item in items}
    if complex in kinds:
        return np.array([complex(item) for item in items]).reshape(array.shape)
    if float in kinds:
        return np.array([float(item) for item in items]).reshape(array.shape)
    raise ValueError("Overflow when unpacking long long")


def _is_sequence(value) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def _shape(nested) -> list:
    """torch's compute_sizes: the lengths of the first element at each depth."""
    sizes = []
    while _is_sequence(nested) and not (isinstance(nested, np.ndarray) and nested.ndim == 0):
        sizes.append(len(nested))
        if not sizes[-1]:
            break
        nested = nested[0]
    return sizes


def _check_lengths(nested, sizes: list, dim: int, kind: str) -> None:
    """torch's recursive_store, depth first: each sequence at ``dim`` of length sizes[dim],
    each element past the sizes one a ``kind`` dtype stores (a number, not a sequence)."""
    if dim == len(sizes):
        if _is_sequence(nested) and not (isinstance(nested, np.ndarray) and nested.ndim == 0) \
                or isinstance(nested, complex) and kind in "fiu":
            raise unstorable(nested, kind)
        return
    if not _is_sequence(nested) or (isinstance(nested, np.ndarray) and nested.ndim == 0):
        raise TypeError("not a sequence")
    if len(nested) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(nested)})")
    for item in nested:
        _check_lengths(item, sizes, dim + 1, kind)


def unstorable(value, kind: str) -> TypeError:
    """torch's error for an element a ``kind`` dtype cannot store (a list, a complex)."""
    name = type(value).__name__
    if kind in "fc":
        return TypeError(f"must be real number, not {name}")
    return TypeError(f"'{name}' object cannot be interpreted as an integer")


def _inferred(nested) -> np.dtype:
    """torch's infer_scalar_type of nested data: its elements' dtypes promoted, an empty
    sequence counting as the default dtype."""
    if isinstance(nested, np.ndarray) and nested.ndim or isinstance(nested, (list, tuple)):
        dtypes = [_inferred(item) for item in nested] if len(nested) else []
        if isinstance(nested, np.ndarray) or not dtypes:
            return nested.dtype if isinstance(nested, np.ndarray) else \
                backend.get_default_dtype().np
        inferred = dtypes[0]
        for dtype in dtypes[1:]:
            inferred = promotion.promote_types(inferred, dtype)
        return np.dtype(inferred)
    number = _number_dtype(nested)
    return number if number is not None else np.asarray(nested).dtype


def ragged_array(nested, dtype: np.dtype | None) -> np.ndarray:
    """Raise torch's error for ragged ``nested`` data (for ``dtype``, None: inferred); when
    its sizes hold no element, torch stores nothing, so checks nothing: the empty array."""
    sizes = _shape(nested)
    dtype = _inferred(nested) if dtype is None else dtype
    if 0 in sizes:
        return np.empty(sizes, dtype)
    _check_lengths(nested, sizes, 0, np.dtype(dtype).kind)
    return None


def checked_array(nested, dtype: np.dtype) -> np.ndarray:
    """``np.array(nested, dtype)`` with torch's checks for an integer dtype: a float out of its
    range (NaN, inf) and an integer beyond it are refused, a negative integer wraps into an
    unsigned type (NumPy would raise, or cast a float to garbage). A complex number is
    refused for a real dtype, in the words of torch's unpacking."""
    if isinstance(nested, np.ndarray):  # an array is cast as a tensor is (uint8 via int64)
        return promotion.cast(nested, np.dtype(dtype))
    if np.dtype(dtype).kind not in "iu":
        try:  # torch converts a double to half through float; one too large is inf, silently
            with np.errstate(over="ignore"):
                return np.array(nested, dtype=np.float32).astype(np.float16) \
                    if np.dtype(dtype) == np.float16 else np.array(nested, dtype=dtype)
        except TypeError as error:  # (NumPy's float() of a complex)
            if "not 'complex'" in str(error):
                raise TypeError("must be real number, not complex") from None
            raise
    values = np.array(nested)
    if values.dtype.kind == "c":
        raise TypeError("'complex' object cannot be interpreted as an integer")
    if values.dtype == object or values.dtype == np.uint64 != dtype:  # beyond int64
        raise ValueError("Overflow when unpacking long long")
    if dtype == np.uint64 and values.dtype.kind == "i" and (values < 0).any():
        raise OverflowError("can't convert negative int to unsigned")  # no wrap, as torch
    if values.dtype.kind in "fiu" and values.size:
        info = np.iinfo(dtype)
        lowest = -int(info.max) if values.dtype.kind in "iu" and info.min == 0 else info.min
        with np.errstate(invalid="ignore"):
            fits = (values >= lowest) & (values <= info.max)
        if not fits.all():
            raise RuntimeError(f"value cannot be converted to type {np.dtype(dtype).name} "
                               "without overflow")
    return values.astype(dtype)
