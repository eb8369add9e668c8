"""Taking part of a tensor along one dim: narrow, select (views), roll; and the alias view."""
from __future__ import annotations

from gradkit.ops._op import op
from gradkit.ops.indexing import getitem, index_put_into_zeros
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.shape import _normalize_dim


def _int_of(value) -> int:
    """A Python int from an int or a 0-d integer tensor (torch accepts both for start/index)."""
    return int(value.item()) if hasattr(value, "item") and hasattr(value, "shape") else int(value)


@numpy_keywords
def narrow(x, dim: int, start, length: int):
    """A view of ``length`` elements of x along ``dim`` from ``start`` (SliceBackward0)."""
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, x.ndim)
    start, length, size = _int_of(start), int(length), x.shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    start %= size if size else 1
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return getitem(x, (slice(None),) * dim + (slice(start, start + length),))


@op(save="x.shape", linear=True, view=True, name="select", node_name="SelectBackward0")
def _select_index(xp, x, *, key):
    return x[key]  # the key ends with an Ellipsis: always a view, never a NumPy scalar


_select_index.defvjp(lambda g, x_shape, key: index_put_into_zeros(g, x_shape, key))
_select_index.defjvp(lambda t, x_shape, key: _select_index(t, key=key))


@numpy_keywords
def select(x, dim: int, index):
    """A view of x at ``index`` along ``dim``, that dim removed (``x[:, index]`` for dim 1)."""
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, x.ndim)
    index, size = _int_of(index), x.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    return _select_index(x, key=(slice(None),) * dim + (index % size, Ellipsis))


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@op(linear=True)
def _roll(xp, x, *, shifts, dims):
    return xp.roll(x, shifts, axis=dims) if x.ndim else x.copy()


_roll.defvjp(lambda g, shifts, dims: _roll(g, shifts=tuple(-s for s in shifts), dims=dims)
             if dims is not None else _roll(g, shifts=-shifts, dims=None))
_roll.defjvp(lambda t, shifts, dims: _roll(t, shifts=shifts, dims=dims))
_roll.name, _roll.node_name, _roll.profiler_name = "roll", "RollBackward0", "gradkit::roll"


@numpy_keywords
def roll(x, shifts, dims=None):
    """x with its elements shifted by ``shifts`` along ``dims`` (the flattened x without dims)."""
    if dims is None:
        shifts = _as_tuple(shifts)
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return _roll(x, shifts=int(shifts[0]), dims=None)
    shifts, dims = _as_tuple(shifts), _as_tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    dims = tuple(_normalize_dim(d, x.ndim) for d in dims)
    return _roll(x, shifts=tuple(int(s) for s in shifts), dims=dims)


@op(linear=True, view=True, node_name="AliasBackward0")
def _alias(xp, x):
    """Another tensor on the same memory and version counter (torch.Tensor(t))."""
    return x.view()


_alias.defvjp(lambda g: g)
_alias.defjvp(lambda t: t)
