"""Reading torch's index keys (``x[key]``): tensors in a key become arrays, integer and boolean
scalars apply before the advanced indices as torch applies them, uint8 tensors are masks."""
from __future__ import annotations

import warnings

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.graph import SavedTensor
from gradkit.backend import get_array_module
from gradkit.ops.unary_helpers import scalar_type_name
from gradkit.ops.conversion import fitted_item

_BASIC = (int, slice, type(None), type(Ellipsis))


def _raw_key(key):
    """Tensors inside an index become their arrays, as torch reads them: a 0-d integer tensor
    is an integer (so ``x[t]`` is a view), a short list holding tensors, sequences, slices,
    ``...`` or None is a tuple of indices (torch's deprecated reading, with its warning)."""
    if isinstance(key, list) and _sequence_as_tuple(key, Tensor):
        warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=4)
        key = tuple(key)
    if isinstance(key, tuple):
        return tuple(_raw_index(k, Tensor) for k in key)
    return _raw_index(key, Tensor)


def _raw_index(k, tensor_type):
    if isinstance(k, tensor_type):
        data = k._data
        if data.dtype == np.uint8:  # torch's deprecated reading: a uint8 tensor is a mask
            if data.ndim:  # (a 0-d one is a boolean scalar, without a warning)
                warnings.warn(_UINT8_WARNING, UserWarning, stacklevel=5)
            return data != 0
        if data.dtype.kind in "fcV":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return int(data) if data.ndim == 0 and data.dtype.kind in "iu" else data
    if isinstance(k, (tuple, range)):  # a sequence inside the key: an index tensor (torch)
        return np.asarray(k) if len(k) else np.zeros(0, dtype=np.int64)
    if isinstance(k, list) and any(isinstance(i, tensor_type) for i in k):
        return [_raw_index(i, tensor_type) for i in k]
    if isinstance(k, np.integer):  # an integer like any other (x[np.int64(1)] is a view)
        return int(k)
    return k


_UINT8_WARNING = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                  "torch.bool instead.")
_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
    "or a different result")


def _sequence_as_tuple(key: list, tensor_type) -> bool:
    return len(key) < 32 and any(
        isinstance(k, (tensor_type, list, tuple, range, slice, np.ndarray)) or k is None
        or k is Ellipsis for k in key)


def _split_key(key, ndim: int):
    """torch applies the basic indices (integers, slices, None, and boolean scalars as new dims)
    before the advanced ones, as views (``x[1:, [0, 1]]`` records SliceBackward0 then
    IndexBackward0); NumPy counts integers among the advanced ones (which moves the advanced
    dims first when a slice separates them): ``(basic, advanced)`` keys whose successive
    application is torch's ``key``, else None (no basic index takes a step)."""
    if not isinstance(key, tuple):
        return None
    if not any(map(_is_bool_scalar, key)) and not (any(map(_is_array_index, key)) and any(
            _is_int(k) or k is None or type(k) is slice and k != slice(None) for k in key)):
        return None
    consumed = sum(_dims_consumed(k) for k in key if k is not Ellipsis) if any(
        k is Ellipsis for k in key) else 0  # (only an Ellipsis needs it)
    basic, advanced = [], []
    for k in key:
        if k is Ellipsis:
            basic.append(k)
            advanced += [slice(None)] * (ndim - consumed)
        elif _is_int(k):
            basic.append(k)
        elif _is_bool_scalar(k):  # torch: a new dim, then a mask on it (empty when False)
            basic.append(None)
            advanced.append([bool(k)])
        elif _is_array_index(k):
            basic += [slice(None)] * _dims_consumed(k)
            advanced.append(k)
        else:  # None or a slice
            basic.append(k)
            advanced.append(slice(None))
    return tuple(basic), tuple(advanced)


def _is_int(k) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _is_bool_scalar(k) -> bool:
    return isinstance(k, (bool, np.bool_)) or (
        getattr(k, "ndim", None) == 0 and k.dtype.kind == "b")


def _is_array_index(k) -> bool:
    return isinstance(k, list) or getattr(k, "ndim", 0) > 0


def _dims_consumed(k) -> int:
    if _is_int(k) or isinstance(k, slice) or k is Ellipsis:
        return 1
    if _is_array_index(k):
        k = np.asarray(k) if isinstance(k, list) else k
        return k.ndim if k.dtype.kind == "b" else 1
    return 0  # None and boolean scalars add a dim instead


def _located(array, key):
    """``array[key]`` with torch's meaning of ``key``, for writing into (a view, or the
    (array, key) pair to write through when the key is advanced)."""
    parts = _split_key(key, array.ndim)
    return (array, key) if parts is None else (array[parts[0]], parts[1])


def _is_basic(key) -> bool:
    if isinstance(key, tuple):
        return all(type(k) in _BASIC for k in key)
    return type(key) in _BASIC


def selects_all(shape: tuple, key) -> bool:
    """Whether basic ``key`` is only full slices and an Ellipsis: torch's slicing then returns
    the tensor itself (no view), so ``x[key] = v`` is x's own copy_ or fill_."""
    keys = key if isinstance(key, tuple) else (key,)
    if not all(type(k) is slice or k is Ellipsis for k in keys) or \
            sum(k is Ellipsis for k in keys) > 1 or len(keys) - (Ellipsis in keys) > len(shape):
        return False
    split = keys.index(Ellipsis) if Ellipsis in keys else len(keys)
    after = keys[split + 1:]
    dims = list(enumerate(keys[:split])) + \
        [(len(shape) - len(after) + i, k) for i, k in enumerate(after)]
    return all(k.indices(shape[d]) == (0, shape[d], 1) for d, k in dims)


def _index_dtype(index):
    """An index's dtype without moving a device array to the host (lists: NumPy's)."""
    dtype = getattr(index, "dtype", None)
    return dtype if dtype is not None else np.asarray(index).dtype


def check_index_put(x, raw_key, value, key) -> None:
    """torch writes ``x[advanced key] = value`` with index_put_, which refuses a value of another
    dtype, except for one element under a single mask (masked_fill_, which casts and refuses
    uint8 masks). Keys without tensors or lists copy, casting as copy_ does."""
    keys = raw_key if isinstance(raw_key, tuple) else (raw_key,)
    indices = [k for k in keys if _is_array_index(k) or _is_bool_scalar(k)]
    if not indices:
        return
    if (not isinstance(value, Tensor) or value.numel() == 1) and len(indices) == 1 \
            and not _is_bool_scalar(indices[0]) and _index_dtype(indices[0]).kind == "b":
        if any(isinstance(k, Tensor) and k.dtype.name == "uint8" and k.ndim
               for k in (key if isinstance(key, (tuple, list)) else (key,))):
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               "dtype unsigned char")
        if isinstance(value, Tensor):  # masked_fill_ reads it with .item() (a number: setitem_)
            fitted_item(value._data, x._data.dtype)
        return
    if not isinstance(value, Tensor) or value._data.dtype == x._data.dtype:
        return
    try:  # torch reports a wrong key, or a value of the wrong shape, before the dtype
        xp = get_array_module(x._data)
        target, inner = _located(xp.broadcast_to(xp.zeros((), bool), x.shape), raw_key)
        if not _broadcasts_to(value.shape, target[inner].shape):
            return
    except IndexError as error:  # torch checks the bounds later, in its kernel
        if "out of bounds" not in str(error):
            return
    raise RuntimeError(
        "Index put requires the source and destination dtypes match, got "
        f"{scalar_type_name(x._data)} for the destination and {scalar_type_name(value._data)} "
        "for the source.")


def _broadcasts_to(shape, target) -> bool:
    """Whether a value of ``shape`` fills ``target`` (leading size-1 dims dropped, as torch)."""
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(tuple(target))))


def clipped_key(xp, x, key):
    """``key`` with its out-of-range integer index arrays clipped into range, and torch's
    message for the first index out of range (None if none is). torch gathers nothing for an
    empty result, so it checks no bound then."""
    keys = key if isinstance(key, tuple) else (key,)
    consumed = sum(_dims_consumed(k) for k in keys if k is not Ellipsis)
    dim, position, message, clipped = 0, 0, None, []
    for k in keys:
        k = xp.asarray(k) if isinstance(k, list) else k
        if k is Ellipsis:
            dim += x.ndim - consumed
        elif getattr(k, "ndim", 0) > 0 and k.dtype.kind in "iu":
            size = x.shape[dim]
            outside = (k < -size) | (k >= size)
            if message is None and outside.any():
                message = (f"index {int(k[outside][0])} is out of bounds for dimension "
                           f"{position} with size {size}" if size else
                           "index is out of bounds for dimension with size 0")
            k = xp.clip(k, -size, size - 1) if size else k
            position += 1
        elif getattr(k, "ndim", 0) > 0:  # a bool mask: one index tensor per dim it covers
            position += k.ndim
        dim += 0 if k is Ellipsis else _dims_consumed(k)
        clipped.append(k)
    return (tuple(clipped) if isinstance(key, tuple) else clipped[0]), message


def check_masks(shape: tuple, key) -> None:
    """torch's IndexError for a boolean mask whose shape is not that of the dims it covers."""
    keys = key if isinstance(key, tuple) else (key,)
    dim = 0
    for k in keys:
        if k is Ellipsis:
            dim += len(shape) - sum(_dims_consumed(j) for j in keys if j is not Ellipsis)
            continue
        if getattr(k, "ndim", 0) and k.dtype.kind == "b":
            for j, n in enumerate(k.shape):
                if dim + j < len(shape) and shape[dim + j] != n:
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor {list(shape)} "
                                     f"at index {dim + j}")
        dim += _dims_consumed(k) if k is not None else 0


def index_tensors(key) -> tuple:
    """The index tensors of a key (integers and masks), which torch's IndexBackward0 saves (a
    0-d one is a number there; gradkit saves no tensor for a nested sequence)."""
    keys = key if isinstance(key, tuple) else (key,)
    return tuple(k for k in keys if isinstance(k, Tensor) and k._data.ndim and
                 k._data.dtype.kind in "iub")


def save_index_tensors(out, tensors: tuple, index_op):
    """``out`` whose indexing node (``index_op``'s) also saves the key's index ``tensors``, so
    that one written in place before backward is refused with torch's version error."""
    node = getattr(out, "grad_fn", None)  # (an array where a backward rule indexes one)
    if tensors and node is not None and node.op is index_op:
        node.saved = (*node.saved, *(SavedTensor(t, False) for t in tensors))
    return out
