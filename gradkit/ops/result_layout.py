"""The memory layout torch gives an op's result: C order (``Op(contiguous=True)``) or, for an
elementwise op, its inputs' order.

torch's TensorIterator sorts the dims by the inputs' strides (``memory_format.iterator_order``)
and lays the result out densely in that order: a transposed input gives a transposed result.
NumPy's ufuncs mostly do the same (order "K"), but not a result computed in pieces (complex
log1p and division, polar), through a generic kernel (erf, zeta) or from a stride-0 input, and
such a result came out in C order: other strides, ``is_contiguous()`` and ``view``.
"""
from __future__ import annotations

import numpy as np

from gradkit.memory_format import iterator_order, lay_out, suggested_order
from gradkit.ops.index_layout import _broadcast_strides


def _finishing(forward, finish):
    """``forward`` whose result goes through ``finish(result, args, params)``."""
    def finished(xp, *args, **params):
        return finish(forward(xp, *args, **params), args, params)
    finished.__name__, finished.__doc__ = forward.__name__, forward.__doc__
    finished.__wrapped__ = forward
    return finished


def c_ordered(forward):
    """``forward`` whose array results are C-contiguous (a copy only where they are not):
    torch allocates the results of reductions, scans, joins and the like so; NumPy keeps an
    input's order ("K"), on which ``view`` would fail (docs/numerics.md)."""
    return _finishing(forward, lambda out, args, params: tuple(
        _c_order(o, _standard_size_one(args, params)) for o in out) if type(out) is tuple
        else _c_order(out, _standard_size_one(args, params)))


def _standard_size_one(args: tuple, params: dict) -> bool:
    """Whether torch gives the result's size-1 dims C order's strides: a keep-dim reduction
    of an input it suggests C order for (channels last's for a channels-last one)."""
    return params.get("keepdim") is True and bool(args) and type(args[0]) is np.ndarray and \
        suggested_order(args[0]) is None


def _c_order(array, standard_size_one: bool = False):
    flags = getattr(array, "flags", None)
    if flags is None or not flags.c_contiguous:
        return array if flags is None else array.copy(order="C")
    if not standard_size_one or type(array) is not np.ndarray or 1 not in array.shape:
        return array
    # a keep-dim reduction's result with torch's strides in its size-1 dims too (NumPy
    # gives them others), without a copy
    strides, step = [], array.itemsize
    for n in reversed(array.shape):
        strides.append(step)
        step *= max(n, 1)
    strides = tuple(reversed(strides))
    return array if array.strides == strides else \
        np.lib.stride_tricks.as_strided(array, strides=strides)


def in_iterator_layout(forward):
    """``forward`` (an elementwise op's) whose array result is laid out as torch's, copied
    only where it is not; C-ordered inputs (the common case) are not looked at further."""
    return _finishing(forward, _iterator_layout)


def _iterator_layout(out, args: tuple, _params: dict):
    if type(out) is not np.ndarray or out.ndim < 2 or out.size < 2 or all(
            type(a) is not np.ndarray or a.flags.c_contiguous for a in args):
        return out
    inputs = [a for a in args if type(a) is np.ndarray]
    if any(np.may_share_memory(out, a) for a in inputs):  # an alias of its input: kept
        return out
    order = iterator_order(out.shape, [_broadcast_strides(a, out.shape) for a in inputs])
    strides, step = [0] * out.ndim, out.itemsize
    for dim in reversed(order):
        strides[dim] = step
        step *= out.shape[dim]
    return out if out.strides == tuple(strides) else lay_out(np, out, order)
