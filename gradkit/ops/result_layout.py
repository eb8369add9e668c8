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

from gradkit.memory_format import (
    contiguous_format, copy_with_strides, format_strides, iterator_order, lay_out,
    preserved_strides, suggested_order)
from gradkit.ops.index_layout import _broadcast_strides


def _named(wrapper, forward):
    """``wrapper`` under ``forward``'s name and docstring."""
    wrapper.__name__, wrapper.__doc__ = forward.__name__, forward.__doc__
    wrapper.__wrapped__ = forward
    return wrapper


def forwards(forward, elementwise: bool, contiguous: bool) -> tuple:
    """An op's (forward, kernel, lays_out): its forward with results laid out as torch's, C
    order (``contiguous``: reductions, scans, joins) or an elementwise op's in its inputs'
    order; what the hot paths call, an elementwise op's forward unwrapped, whose result they
    lay out themselves where ``lays_out`` (iterator_layout: no wrapper frame per add or mul)."""
    if contiguous:
        forward = c_ordered(forward)
    elif elementwise:
        return in_iterator_layout(forward), forward, True
    return forward, forward, False


def c_ordered(forward):
    """``forward`` whose array results are C-contiguous (a copy only where they are not):
    torch allocates the results of reductions, scans, joins and the like so; NumPy keeps an
    input's order ("K"), on which ``view`` would fail (docs/numerics.md)."""
    def ordered(xp, *args, **params):
        out = forward(xp, *args, **params)
        if type(out) is tuple:
            return tuple(_c_order(o, args, params) for o in out)
        return _c_order(out, args, params)
    return _named(ordered, forward)


def _c_order(array, args: tuple, params: dict):
    flags = getattr(array, "flags", None)
    if flags is None or not flags.c_contiguous:
        return array if flags is None else array.copy(order="C")
    if params.get("keepdim") is not True or 1 not in array.shape or \
            type(array) is not np.ndarray or not args or type(args[0]) is not np.ndarray or \
            suggested_order(args[0]) is not None:
        return array
    # a keep-dim reduction of an input torch suggests C order for: torch's strides in the
    # result's size-1 dims too (NumPy gives them others; channels last keeps its own), no copy
    strides = _dense_strides(array.shape, array.itemsize)
    return array if array.strides == strides else \
        np.lib.stride_tricks.as_strided(array, strides=strides)


def by_columns(*which: int):
    """A decorator of ``forward``, a LAPACK op's: its results ``which`` (indices; the only
    result when none is named) laid out as torch returns them, as LAPACK wrote them: each
    matrix by columns (strides (..., 1, rows)). NumPy's linalg gives C order, on which
    ``view``, ``is_contiguous()`` and the order of later reductions would differ."""
    def decorate(forward):
        def laid_out(xp, *args, **params):
            out = forward(xp, *args, **params)
            if type(out) is not tuple:
                return columns_first(xp, out)
            return tuple(columns_first(xp, o) if i in which else o for i, o in enumerate(out))
        return _named(laid_out, forward)
    return decorate


def columns_first(xp, a, rows: int = 0):
    """``a`` with each matrix (its last two dims) stored by columns, torch's strides exactly
    (size-1 dims too; a copy only if not); with more ``rows``, the first rows of such a
    buffer (LAPACK's gels leaves the solution in the first rows of the right-hand side's)."""
    if getattr(a, "ndim", 0) < 2:
        return a
    *batch, m, n = a.shape
    rows = max(rows, m)
    swapped = xp.swapaxes(a, -1, -2)
    if a.size == 0 and xp is np:  # (NumPy gives no strides to an empty array: torch's set)
        strides = _dense_strides(swapped.shape, a.itemsize)
        return np.lib.stride_tricks.as_strided(a, strides=(*strides[:-2], *strides[:-3:-1]))
    if rows == m and swapped.strides == _dense_strides(swapped.shape, a.itemsize):
        return a
    buffer = xp.zeros((*batch, n, rows), dtype=a.dtype)
    buffer[..., :m] = swapped
    return xp.swapaxes(buffer, -1, -2)[..., :m, :]


def _dense_strides(shape: tuple, itemsize: int) -> tuple:
    return tuple(itemsize * step for step in format_strides(shape, contiguous_format))


def input_layout(empty_only: bool):
    """A decorator of ``forward`` (an op's whose torch kernel allocates ``empty_like(x)``, x its
    first input): its results of x's shape laid out as that (``preserve_format``: x's strides
    when dense, else dense in their order); ``empty_only``: for an empty x only (torch counts
    it dense, so its strides are kept, a stride 0 too; NumPy's are C), the rest of the op
    laid out otherwise (TensorIterator's order)."""
    def decorate(forward):
        def laid_out(xp, x, *args, **params):
            out = forward(xp, x, *args, **params)
            if type(x) is not np.ndarray or empty_only and x.size:
                return out
            if type(out) is tuple:
                return tuple(laid_out_as(o, x) for o in out)
            return laid_out_as(out, x)
        return _named(laid_out, forward)
    return decorate


empty_like_layout = input_layout(empty_only=True)
preserved_layout = input_layout(empty_only=False)


def laid_out_as(out, x):
    """``out``, of ``x``'s shape, laid out as torch's ``empty_like(x)`` (else ``out`` itself)."""
    if type(out) is not np.ndarray or out.shape != x.shape:
        return out
    strides = preserved_strides(x.shape, tuple(s // x.itemsize for s in x.strides))
    if out.strides == tuple(s * out.itemsize for s in strides):
        return out
    if out.size == 0:  # (any strides will do: no element is read)
        return np.lib.stride_tricks.as_strided(out, strides=tuple(s * out.itemsize
                                                                  for s in strides))
    return copy_with_strides(np, out, strides)


def in_iterator_layout(forward):
    """``forward`` (an elementwise op's) whose array result is laid out as torch's, copied
    only where it is not; C-ordered inputs (the common case) are not looked at further."""
    def laid_out(xp, *args, **params):
        out = forward(xp, *args, **params)
        return iterator_layout(out, args) if type(out) is np.ndarray and out.ndim > 1 else out
    return _named(laid_out, forward)


def iterator_layout(out, args: tuple):
    """An elementwise op's NumPy result ``out`` of two or more dims laid out as torch's
    TensorIterator lays it out from the op's inputs ``args``."""
    for a in args:
        if type(a) is np.ndarray and not a.flags.c_contiguous:
            return _iterator_layout(out, args)
    return out


def _iterator_layout(out, args: tuple):
    if out.size < 2:
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
