"""Taking part of a tensor along one dim: narrow, select (views), roll; the alias view; and
``x[key]`` of a basic key as torch applies it, one of these views per index."""
from __future__ import annotations

import operator

from gradkit._tensor import Tensor
from gradkit.int_arguments import (
    INT64, UNPACK_OVERFLOW, int_parameters, invalid_combination, reads_as_int, reads_as_symint)
from gradkit.ops import indexing
from gradkit.ops._op import Op, op
from gradkit.ops.dims import existing_dim
from gradkit.ops.indexing import index_put_into_zeros
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim, unsqueeze
from gradkit.ops.result_layout import empty_like_layout


def _int_of(value) -> int:
    """A Python int from an int or a 0-d integer tensor (torch accepts both for start/index);
    an int beyond int64 is torch's unpacking error."""
    if hasattr(value, "item") and hasattr(value, "shape"):
        return int(value.item())
    if type(value) is int and not -INT64 <= value < INT64:
        raise ValueError(UNPACK_OVERFLOW)
    return int(value)


@tensor_method()
@numpy_keywords
@int_parameters("narrow", True, dim=(1, "int"), length=(3, "SymInt"))
def narrow(x, dim: int, start, length: int):
    """A view of ``length`` elements of x along ``dim`` from ``start`` (SliceBackward0)."""
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, x.ndim)
    if isinstance(start, Tensor) and not reads_as_int(start):  # torch's narrow.Tensor overload
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    if not isinstance(start, Tensor) and not reads_as_symint(start):
        raise invalid_combination("narrow", (dim, start, length), {})
    start, length, size = _int_of(start), int(length), x.shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if start < 0:  # (start == size is in range: an empty narrow at the end, not a wrap to 0)
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(x, dim=dim, start=start, end=start + length, step=1)


def _slice_key(dim, start, end, step):
    return (slice(None),) * dim + (slice(start, end, step),)


# parameters under torch's names: node._saved_dim, _saved_start, _saved_end, _saved_step
@op(save="x.shape", linear=True, view=True, name="narrow", node_name="SliceBackward0")
def _slice(xp, x, *, dim, start, end, step):
    return x[_slice_key(dim, start, end, step)]


_slice.defvjp(lambda g, x_shape, dim, start, end, step:
              index_put_into_zeros(g, x_shape, _slice_key(dim, start, end, step)))
_slice.defjvp(lambda t, x_shape, dim, start, end, step:
              _slice(t, dim=dim, start=start, end=end, step=step))


def _select_key(dim, index):
    return (slice(None),) * dim + (index, Ellipsis)  # Ellipsis: a view, never a NumPy scalar


# parameters under torch's names: node._saved_dim, _saved_index
@op(save="x.shape", linear=True, view=True, name="select", node_name="SelectBackward0")
def _select_index(xp, x, *, dim, index):
    return x[_select_key(dim, index)]


_select_index.defvjp(lambda g, x_shape, dim, index:
                     index_put_into_zeros(g, x_shape, _select_key(dim, index)))
_select_index.defjvp(lambda t, x_shape, dim, index: _select_index(t, dim=dim, index=index))


@tensor_method()
@numpy_keywords
@int_parameters("select", dim=(1, "int"), index=(2, "SymInt"))
def select(x, dim: int, index):
    """A view of x at ``index`` along ``dim``, that dim removed (``x[:, index]`` for dim 1)."""
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, x.ndim)
    index, size = _int_of(index), x.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    return _select_index(x, dim=dim, index=index)  # saved as given, as torch's


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@op(linear=True, contiguous=True)
@empty_like_layout  # (torch clones an empty x: its strides kept)
def _roll(xp, x, *, shifts, dims):
    return xp.roll(x, shifts, axis=dims) if x.ndim else x.copy()


_roll.defvjp(lambda g, shifts, dims: _roll(g, shifts=tuple(-s for s in shifts), dims=dims)
             if dims is not None else _roll(g, shifts=-shifts, dims=None))
_roll.defjvp(lambda t, shifts, dims: _roll(t, shifts=shifts, dims=dims))
_roll.name, _roll.node_name, _roll.profiler_name = "roll", "RollBackward0", "gradkit::roll"


@tensor_method()
@numpy_keywords
@int_parameters("roll", shifts=(1, "SymInt[1]"), dims=(2, "int[1]?"))
def roll(x, shifts, dims=None):
    """x with its elements shifted by ``shifts`` along ``dims`` (the flattened x without dims)."""
    if not _as_tuple(shifts):
        raise RuntimeError("`shifts` required")
    if dims is None or not _as_tuple(dims):  # no dims: the flattened x
        shifts = _as_tuple(shifts)
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return _roll(x, shifts=int(shifts[0]), dims=None)
    shifts, dims = _as_tuple(shifts), _as_tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    dims = tuple(existing_dim(d, x.ndim) for d in dims)
    return _roll(x, shifts=tuple(int(s) for s in shifts), dims=dims)


@op(linear=True, view=True, node_name="AliasBackward0")
def _alias(xp, x):
    """Another tensor on the same memory and version counter (torch.Tensor(t))."""
    return x.view()


_alias.defvjp(lambda g: g)
_alias.defjvp(lambda t: t)


# x[1:]: torch's aten::slice (narrow's node too, but its own name in the profiler)
_slice_step = Op(_slice.forward, name="slice", save="x.shape", linear=True, view=True,
                 node_name="SliceBackward0")
_slice_step.defvjp(*_slice.vjps)
_slice_step.defjvp(*_slice.jvps)
_NO_STOP = 2 ** 63 - 1  # torch's end of a slice without a stop (INT64_MAX)


def _slice_index(bound) -> int:
    """One bound of a slice as an int; a bound without ``__index__`` gets Python's slice
    message, which torch's key parser gives (operator.index words it for the type)."""
    if not hasattr(type(bound), "__index__"):
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    return operator.index(bound)


def _slice_bounds(k: slice) -> tuple:
    """(start, end, step) of a slice in an index, None read as torch reads it."""
    step = 1 if k.step is None else _slice_index(k.step)
    if step <= 0:
        raise ValueError("step must be greater than zero" if step else
                         "slice step cannot be zero")
    return (0 if k.start is None else _slice_index(k.start),
            _NO_STOP if k.stop is None else _slice_index(k.stop), step)


def basic_index(x, key):
    """``x[key]`` for a key of ints, slices, None and ``...`` (its bounds checked), as torch
    applies it: one view per index, left to right (SelectBackward0, SliceBackward0,
    UnsqueezeBackward0 nodes); in a tuple a slice that takes a whole dim is skipped, and a key
    that takes no step gives an alias (AliasBackward0)."""
    if type(key) is int:
        return _select_index(x, dim=0, index=key)
    if type(key) is slice:  # a lone slice is a step even when it takes everything (torch's)
        start, end, step = _slice_bounds(key)
        return _slice_step(x, dim=0, start=start, end=end, step=step)
    if key is None:
        return unsqueeze(x, dim=0)
    if key is Ellipsis:
        return _alias(x)
    out, dim = x, 0
    for k in key:
        if type(k) is int:
            out = _select_index(out, dim=dim, index=k)
        elif type(k) is slice:
            start, end, step = _slice_bounds(k)
            if k.start not in (None, 0) or step != 1 or end < out.shape[dim]:
                out = _slice_step(out, dim=dim, start=start, end=end, step=step)
            dim += 1
        elif k is None:
            out = unsqueeze(out, dim=dim)
            dim += 1
        else:  # the dims ... stands for
            dim += x.ndim - sum(type(j) is int or type(j) is slice for j in key)
    return _alias(x) if out is x else out


indexing.basic_index = basic_index
