"""Taking part of a tensor along one dim: narrow, select (views), roll; and the alias view."""
from __future__ import annotations

from gradkit.ops._op import op
from gradkit.ops.indexing import index_put_into_zeros
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim


def _int_of(value) -> int:
    """A Python int from an int or a 0-d integer tensor (torch accepts both for start/index)."""
    return int(value.item()) if hasattr(value, "item") and hasattr(value, "shape") else int(value)


@tensor_method()
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
def select(x, dim: int, index):
    """A view of x at ``index`` along ``dim``, that dim removed (``x[:, index]`` for dim 1)."""
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, x.ndim)
    index, size = _int_of(index), x.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    return _select_index(x, dim=dim, index=index % size)


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@op(linear=True, contiguous=True)
def _roll(xp, x, *, shifts, dims):
    return xp.roll(x, shifts, axis=dims) if x.ndim else x.copy()


_roll.defvjp(lambda g, shifts, dims: _roll(g, shifts=tuple(-s for s in shifts), dims=dims)
             if dims is not None else _roll(g, shifts=-shifts, dims=None))
_roll.defjvp(lambda t, shifts, dims: _roll(t, shifts=shifts, dims=dims))
_roll.name, _roll.node_name, _roll.profiler_name = "roll", "RollBackward0", "gradkit::roll"


@tensor_method()
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
