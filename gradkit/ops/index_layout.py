"""The memory layout of ``x[advanced key]`` as torch allocates it.

torch's index kernel is a TensorIterator over the input restrided to the result's shape (stride
0 in the indexed dims, moved to the front when they are not adjacent) and the index tensors
viewed to that shape (stride 0 in the other dims). The iterator orders the dims by those
operands' strides (the first operand whose strides tell two dims apart decides, else their
order stays) and lays the result out densely in that order. NumPy lays its result out its
own way (``x[:, [0, 1]]`` has the advanced dim outermost in memory), which changes
``stride()``, ``is_contiguous()`` and whether ``view`` works.
"""
from __future__ import annotations

import numpy as np

from gradkit.memory_format import iterator_order
from gradkit.ops.views import copy_in_layout


def in_torch_layout(xp, out, layout: tuple | None):
    """``out`` laid out as ``layout`` says (None: C order with torch's strides, which NumPy's
    own result may lack in its size-1 dims)."""
    if layout is None and out.flags.c_contiguous and out.strides == _contiguous(
            out.shape, out.itemsize):
        return out
    return copy_in_layout(xp, out, layout)


def index_layout(x, key) -> tuple | None:
    """The order of the result's dims in memory, outermost first (None: C order), for an
    advanced ``key`` of only slices that take all, ``...`` and index arrays (None for other
    keys)."""
    if _c_order_for_sure(x, key):
        return None
    indices = _per_dim(x, key)
    if indices is None:
        return None
    shape, strides = list(x.shape), list(x.strides)
    positions = [d for d, k in enumerate(indices) if k is not None]
    if positions != list(range(positions[0], positions[-1] + 1)):  # torch's transposeToFront
        order = positions + [d for d, k in enumerate(indices) if k is None]
        shape, strides = [shape[d] for d in order], [strides[d] for d in order]
        indices = [indices[d] for d in order]
        positions = list(range(len(positions)))
    before, after = positions[0], positions[-1] + 1
    arrays = [indices[d] for d in positions]
    try:
        common = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return None
    out_shape = tuple(shape[:before]) + common + tuple(shape[after:])
    if 0 in out_shape:
        return None
    operands = [tuple(strides[:before]) + (0,) * len(common) + tuple(strides[after:])]
    padded = (1,) * before + common + (1,) * (len(shape) - after)
    for a in arrays:  # torch views each index (broadcast) to the result's rank
        viewed = _view_strides(common, _broadcast_strides(a, common), padded, a.itemsize)
        # TensorIterator: a dim the operand broadcasts over has stride 0
        operands.append(tuple(0 if n == 1 and m != 1 else st
                              for n, m, st in zip(padded, out_shape, viewed)))
    layout = iterator_order(out_shape, operands)
    return None if layout == tuple(range(len(out_shape))) else layout


def _c_order_for_sure(x, key) -> bool:
    """The common keys whose result torch lays out in C order, told cheaply: a dense C-ordered
    x and adjacent one-dimensional indices (a mask gives such indices, one per dim it covers),
    whose strides decide nothing beside the input's."""
    if x.strides != _contiguous(x.shape, x.itemsize):
        return False
    keys = key if type(key) is tuple else (key,)
    arrays = [i for i, k in enumerate(keys) if type(k) is not slice and k is not Ellipsis]
    if not arrays or arrays[-1] - arrays[0] + 1 != len(arrays):
        return False
    for i in arrays:
        k = keys[i]
        if type(k) is list:
            if any(type(j) is not int for j in k):
                return False
        elif getattr(k, "ndim", 0) != 1 and getattr(k, "dtype", None) is not None and \
                k.dtype.kind != "b" or getattr(k, "ndim", None) is None:
            return False
    return True


def _per_dim(x, key) -> list | None:
    """One entry per dim of x: None (a full slice) or its index array (a boolean mask gives
    its nonzero positions, one array per dim it covers, as torch)."""
    keys = key if isinstance(key, tuple) else (key,)
    out = []
    consumed = sum(np.ndim(k) if getattr(k, "dtype", None) is not None and k.dtype.kind == "b"
                   else 0 if k is Ellipsis else 1 for k in keys)
    for k in keys:
        if k is Ellipsis:
            out += [None] * (x.ndim - consumed)
        elif type(k) is slice:
            if len(out) >= x.ndim or k.indices(x.shape[len(out)]) != (0, x.shape[len(out)], 1):
                return None  # (a key of torch's whose slices were applied first)
            out.append(None)
        else:
            k = np.asarray(k) if isinstance(k, list) else k
            if getattr(k, "ndim", 0) == 0 or k.dtype.kind not in "iub":
                return None
            if k.dtype.kind == "b":
                # torch's nonzero(): a (count, ndim) tensor, whose columns it indexes with
                found = np.empty((int(k.sum()), k.ndim), dtype=np.int64)
                out += [found[:, j] for j in range(k.ndim)]
            else:
                out.append(k)
    if len(out) < x.ndim:
        out += [None] * (x.ndim - len(out))
    return out if any(k is not None for k in out) else None


def _broadcast_strides(a, shape: tuple) -> tuple:
    """The strides of ``a`` broadcast to ``shape`` (0 in the dims it is broadcast over)."""
    lead = len(shape) - a.ndim
    return (0,) * lead + tuple(0 if n == 1 and m != 1 else st for n, m, st in
                               zip(a.shape, shape[lead:], a.strides))


def _view_strides(shape: tuple, strides: tuple, new_shape: tuple, itemsize: int) -> tuple:
    """The strides ``reshape`` gives a tensor of ``shape``/``strides`` viewed as ``new_shape``
    (c10's computeStride), or the contiguous ones of a copy when it cannot view."""
    if not shape:
        return _contiguous(new_shape, itemsize)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base, tensor_numel, view_numel = strides[-1], 1, 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and
                             strides[tensor_d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return _contiguous(new_shape, itemsize)
            if tensor_d > 0:
                base, tensor_numel, view_numel = strides[tensor_d - 1], 1, 1
    return tuple(new) if view_d == -1 else _contiguous(new_shape, itemsize)


def _contiguous(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
