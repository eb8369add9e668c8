"""``x[key] = value``: torch's copy into the region's view for a basic key (a partial write
records CopySlices on x), index_put_ for an advanced one."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import records_graph
from gradkit.creation import tensor
from gradkit.ops.conversion import copy_from, fill, fitted
from gradkit.ops.index_keys import (
    _is_array_index, _is_basic, _is_bool_scalar, _raw_key, _split_key, check_index_put, selects_all)
from gradkit.ops.indexing import ZERO_DIM_INDEX, _check_bounds, getitem, index_put_key
from gradkit.ops.inplace import inplace
from gradkit.ops.promotion import overflow
from gradkit.ops.memory_overlap import (
    PARTIAL_OVERLAP_MESSAGE, has_internal_overlap, memory_of, share_memory)
from gradkit.ops.setitem_checks import check_assignable, check_expands_to_region
from gradkit.ops.shape import reshape


def setitem_(x, key, value):
    """``x[key] = value`` in place (bumps the version; rebases x's history when recording)."""
    check_assignable(x, value)
    if type(key) is int and not x.ndim:
        raise IndexError(ZERO_DIM_INDEX)
    if key is False:  # torch writes nothing (and bumps no version) for x[False] = v
        return x
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:  # torch reads an int as int64
        raise ValueError("Overflow when unpacking long long")
    if type(value) is complex and value.imag != 0 and x._data.dtype == np.float16:
        overflow(np.dtype(np.float64))  # torch reads it as a double first there
    value = fitted(value, x._data.dtype, one_element=True)  # torch makes a number a tensor
    raw = _raw_key(key)
    _check_bounds(x, raw)  # torch's slicing checks integers first, before the in-place checks
    if getattr(value, "ndim", 0) and (_is_basic(raw) or raw is True):
        check_expands_to_region(x, raw, value)  # a view's copy_ in torch (True: unsqueeze)
    check_index_put(x, raw, value, key)
    if _is_basic(raw) and (selects_all(x.shape, raw) or _copies_into_view(x, value)):
        _copy_to_region(x, key, raw, value)
        return x
    parts = _split_key(raw, x.ndim) if type(raw) is tuple and any(
        _is_array_index(k) or _is_bool_scalar(k) for k in raw) else None
    if parts is not None and not selects_all(x.shape, parts[0]) and _copies_into_view(x, value):
        # torch's index_put_ into the view its basic indices make: CopySlices on x
        inplace(getitem(x, parts[0]), index_put_key, value, parts[1])
        return x
    # unrecorded, a write through index_put_ leaves what torch's writes into views leave
    return inplace(x, index_put_key, value, raw)


def _copies_into_view(x, value) -> bool:
    """Whether ``x[basic key] = value`` needs torch's copy into the region's view: it is
    recorded (inplace's test; a view's base counts), or memory is shared (torch's copy_
    checks the region's own elements and the value's)."""
    view = getattr(x, "_view", None)
    return records_graph() and x._data.dtype.kind in "fcV" and (
        x._requires_grad or (view is not None and view.base._requires_grad) or
        getattr(value, "_requires_grad", False)) or has_internal_overlap(x._data) or (
        hasattr(value, "_data") and share_memory(x._data, memory_of(value)))


def _copy_to_region(x, key, raw, value) -> None:
    """``x[basic key] = value`` as torch's setitem: the value is copied into the region's view
    (x itself for full slices), so a partial write records CopySlices on x. As torch's copy_to:
    a value of the region's shape is copied, a 0-d one (a number becomes one) fills, any other
    is viewed without its leading 1-dims and expanded to the region where the shapes differ."""
    region = x if selects_all(x.shape, raw) else getitem(x, key)
    if not isinstance(value, Tensor):
        value = tensor(value, dtype=x.dtype, device=x.device)
    if value.shape == region.shape:
        inplace(region, copy_from, value)
        return
    if value.ndim == 0:
        inplace(region, fill, value)
        return
    first = next((k for k, n in enumerate(value.shape) if n != 1), value.ndim)
    shape = tuple(value.shape[first:])
    if not shape and region.ndim and region.numel() == 1 and any(region._data.strides) and \
            share_memory(region._data, value._data):
        # one element, expanded with strides 0 in torch: laid out unlike the region's
        raise RuntimeError(PARTIAL_OVERLAP_MESSAGE)
    value = reshape(value, shape)
    if shape != tuple(region.shape):
        value = value.expand(tuple(region.shape))
    inplace(region, copy_from, value)
