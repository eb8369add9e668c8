"""Index ops past gather/scatter: masked_select/masked_scatter, take/put, index_add/copy/fill.

Their gradients are written with the indexing ops (``getitem``, ``index_put_into_zeros``), so
they are differentiable to any order. A key ``(:, ..., index)`` addresses ``index`` along a dim.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.creation import zeros
from gradkit.memory_format import in_preserved_layout, preserved_copy
from gradkit.number_arguments import numbers_reader
from gradkit.ops._dispatch_general import broadcast_shape
from gradkit.ops._op import op
from gradkit.ops.arithmetic import remainder
from gradkit.ops.complex import _is_complex
from gradkit.ops.conversion import fitted, fitted_item
from gradkit.ops.dims import dim_among_inputs
from gradkit.ops.indexing import (
    gather, getitem, index_put_into_zeros, index_put_key, index_select)
from gradkit.ops.masked_fill import masked_fill, warns_when_expanded
from gradkit.ops.methods import tensor_method
from gradkit.ops.padding import pad
from gradkit.ops.reduction import sum as sum_
from gradkit.ops.scatter_checks import refuse_outside
from gradkit.ops.shape import _normalize_dim, expand, reshape
from gradkit.ops.unary_helpers import scalar_type_name
from gradkit.tensor_arguments import tensor_parameters


def _raw(a):
    return getattr(a, "_data", a)


def _require_bool_mask(mask, message: str) -> None:
    if mask.dtype.kind != "b":
        raise RuntimeError(message.format(scalar_type_name(mask)))


# -- masked_select / masked_scatter --------------------------------------------------------------

# masked_select and take save x itself, as torch: writing x in place then fails backward
@op(save=("x", "mask"), broadcast=True, method=True)
def masked_select(xp, x, mask):
    """The elements of x where the bool ``mask`` (broadcasting with x) is true, as a 1-D tensor."""
    _require_bool_mask(mask, "masked_select: expected BoolTensor for mask")
    shape = broadcast_shape(mask.shape, x.shape)  # torch names the mask "tensor a"
    return xp.broadcast_to(x, shape)[xp.broadcast_to(mask, shape)]


@op(save="mask", linear=True)
def masked_spread(xp, values, mask, shape=None):
    """Zeros of ``shape`` with ``values`` at the true places of ``mask``, in order."""
    out = xp.zeros(shape, dtype=values.dtype)
    out[xp.broadcast_to(mask, shape)] = values
    return out


masked_spread.defvjp(lambda g, mask, shape: masked_select(g, mask), None)
masked_spread.defjvp(lambda t, mask, shape: masked_spread(t, mask, shape), None)


def _spread_shape(x_shape, mask) -> tuple:
    return broadcast_shape(tuple(x_shape), tuple(mask.shape))


masked_select.defvjp(lambda g, x, mask: masked_spread(g, mask, _spread_shape(x.shape, mask)),
                     None)
masked_select.defjvp(lambda t, x, mask: masked_select(t, mask), None)


@op(save=("x.shape", "mask", "source.shape"), broadcast=True, method=True, inplace=True)
def masked_scatter(xp, x, mask, source):
    """x with the first elements of ``source`` (in order) written where ``mask`` is true."""
    _require_bool_mask(mask, "masked_scatter_ only supports boolean masks, but got mask with "
                             "dtype {}")
    if source.dtype != x.dtype:  # torch's message has no space after "got"
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{scalar_type_name(x)} and {scalar_type_name(source)}")
    shape = broadcast_shape(mask.shape, x.shape)
    out = xp.array(xp.broadcast_to(x, shape), order="C")  # torch's: C order, as index_copy's
    where = xp.broadcast_to(mask, shape)
    count = int(where.sum())
    if source.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[where] = source.reshape(-1)[:count]
    return out


def _source_grad(g, x_shape, mask, source_shape):
    """The gradients of the source elements written (in order), zeros for the rest."""
    picked = masked_select(g, mask)
    numel = int(np.prod(source_shape))
    return reshape(pad(picked, (0, numel - picked.shape[0])), tuple(source_shape))


def _source_tangent(t, x_shape, mask, source_shape):
    """The tangents of the source elements written, spread to where they were written."""
    shape = _spread_shape(x_shape, mask)
    places = _raw(mask)
    count = int(get_array_module(places).broadcast_to(places, shape).sum())
    return masked_spread(getitem(reshape(t, (-1,)), slice(0, count)), mask, shape)


masked_scatter.defvjp(lambda g, x_shape, mask, source_shape: masked_fill(g, mask, 0.0), None,
                      _source_grad)
masked_scatter.defjvp(lambda t, x_shape, mask, source_shape: masked_fill(t, mask, 0.0), None,
                      _source_tangent)


# -- take / put: x read as a flat tensor ---------------------------------------------------------

def _check_long(index, name: str) -> None:
    if index.dtype.name != "int64":
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index)}")


def _check_flat_range(index, numel: int) -> None:
    bad = (index < -numel) | (index >= numel)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(index[bad][0])} on a tensor "
                         f"of {numel} elements.")


@op(save=("x", "index"), method=True)
def take(xp, x, index):
    """The elements of x read as a flat tensor at ``index`` (result shaped as index)."""
    _check_long(index, "take")
    _check_flat_range(index, x.size)
    return x.reshape(-1)[index]


def _flat_key(index):
    return (_raw(index).reshape(-1),)


def _into_flat_zeros(g, x_shape, index):
    flat = index_put_into_zeros(reshape(g, (-1,)), (int(np.prod(x_shape)),), _flat_key(index))
    return reshape(flat, tuple(x_shape))


take.defvjp(lambda g, x, index: _into_flat_zeros(g, x.shape, index), None)
take.defjvp(lambda t, x, index: take(t, index), None)


@op(save=("x.shape", "index", "source.shape"), method=True, inplace=True)
def put(xp, x, index, source, accumulate=False):
    """x with ``source`` written (``accumulate=True``: added) at the flat positions ``index``."""
    _check_long(index, "put_")
    if source.dtype != x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(x)} and source.dtype = "
                           f"{scalar_type_name(source)}")
    if source.size != index.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.size}, index.numel() = "
                         f"{index.size}")
    _check_flat_range(index, x.size)
    out = xp.array(x, order="C")
    flat = out.reshape(-1)  # a view: out is a fresh C-ordered copy
    if accumulate:
        xp.add.at(flat, index.reshape(-1), source.reshape(-1))
    else:
        flat[index.reshape(-1)] = source.reshape(-1)
    return in_preserved_layout(xp, out, x)  # torch's result is its clone of x, written


def _put_kept(g, x_shape, index, source_shape, accumulate):
    """x's gradient: all of g when adding, else g with the overwritten places zeroed."""
    if accumulate:
        return g
    return reshape(index_put_key(reshape(g, (-1,)), 0.0, _flat_key(index)), tuple(x_shape))


put.defvjp(_put_kept, None,
           lambda g, x_shape, index, source_shape, accumulate:
           reshape(take(g, index), tuple(source_shape)))
put.defjvp(_put_kept, None,
           lambda t, x_shape, index, source_shape, accumulate: _into_flat_zeros(t, x_shape, index))


@tensor_method()
@tensor_parameters("indices")
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """x's values at ``indices`` along ``dim`` (the two broadcast in the other dims); with
    ``dim=None`` both are read flat."""
    if indices.dtype.name != "int64":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{scalar_type_name(indices._data)}")
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _normalize_dim(dim, input.ndim)
    size = input.shape[dim]
    if size:  # torch's take_along_dim (not its gather) reads every index modulo the size
        indices = remainder(indices, size)
    common = list(broadcast_shape(*(tuple(1 if d == dim else n for d, n in enumerate(t.shape))
                                     for t in (input, indices))))
    input = expand(input, (*common[:dim], input.shape[dim], *common[dim + 1:]))
    indices = expand(indices, (*common[:dim], indices.shape[dim], *common[dim + 1:]))
    return gather(input, dim, indices)


# -- index_add / index_copy / index_fill: ``index`` along ``dim`` ------------------------------

def _dim_key(dim: int, index, ndim: int) -> tuple:
    return (slice(None),) * _normalize_dim(dim, ndim) + (_raw(index).reshape(-1),)


def _first_or_last_dim_kernel(x, dim: int, alpha) -> bool:
    """Whether torch's index_add takes its kernel for the first or last of 2+ dims at alpha 1
    (measured): it adds float16 in float32, rounding once, and names an index out of bounds;
    its other kernels round each step and say "index out of range in self"."""
    return alpha == 1 and x.ndim > 1 and dim in (0, x.ndim - 1)


def _check_index_add(x, dim: int, index, source, alpha=1) -> None:
    """torch's index_add_ checks, in its order (index_func_meta_impl)."""
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {scalar_type_name(index)} and size: "
                         f"{list(index.shape)}")
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index)}")
    if source.dtype != x.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(x)}) and source "
                           f"({scalar_type_name(source)}) must have the same scalar type")
    if dim and dim >= source.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {dim} is out of bounds of the source "
                           f"tensor with dim {source.ndim}")
    count = source.shape[dim] if source.ndim else 1
    if count != index.size:
        raise RuntimeError(f"index_add_(): Number of indices ({index.size}) should be equal to "
                           f"source.size(dim): ({count}), for dim: {dim}")
    if _sliced(x, dim, x.ndim and source.ndim) != _sliced(source, dim, x.ndim and source.ndim):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} source.shape "
                           f"= {list(source.shape)}")
    size = x.shape[dim] if x.ndim else 1
    if x.size == 0:  # torch's kernels add nothing to an empty self and check no index
        return
    if not _first_or_last_dim_kernel(x, dim, alpha) and ((index < 0) | (index >= size)).any():
        raise IndexError("index out of range in self")
    refuse_outside(index, size, dim)


def _sliced(a, dim: int, drop: bool) -> list:
    """a's sizes without ``dim`` (when ``drop``)."""
    return [n for d, n in enumerate(a.shape) if not (drop and d == dim)]


def _check_index_copy(x, dim: int, index, source) -> None:
    """torch's index_copy_ checks, in its order."""
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if source.ndim == 0 and index.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {index.size})")
    if source.ndim != x.ndim and source.ndim and x.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    _check_long(index, "index_copy_")
    if source.dtype != x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {scalar_type_name(x)} and (source) "
                           f"{scalar_type_name(source)}")
    mine, theirs = _sliced(x, dim, x.ndim > 0), _sliced(source, dim, source.ndim > 0)
    if mine != theirs:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, mine))} at "
                           f"dimension {dim} and source slice shape: "
                           f"{' '.join(map(str, theirs))} at dimension 0.")
    if source.ndim and index.size != source.shape[dim]:
        raise IndexError(f"index_copy_(): Number of indices ({index.size}) should be equal to "
                         f"source.size(dim) ({source.shape[dim]})")
    refuse_outside(index, x.shape[dim] if x.ndim else 1, dim, IndexError, "index_copy_(): ")


def _as_vector(xp, x, source):
    """torch reads a 0-d self (and source) as one element along dim 0."""
    return x.reshape(1) if x.ndim == 0 else x, source.reshape(-1) if source.ndim == 0 else source


@op(save=("dim", "x.shape", "index", "source.shape"), method=True, inplace=True,
    contiguous=True)
def index_add(xp, x, dim, index, source, *, alpha=1):
    """x with ``alpha * source`` added at ``index`` along ``dim`` (repeated indices add up)."""
    dim = dim_among_inputs("index_add", dim, x.ndim)
    _check_index_add(x, dim, index, source, alpha)
    work = xp.float32 if x.dtype == xp.float16 and _first_or_last_dim_kernel(x, dim, alpha) \
        else x.dtype
    out, source = _as_vector(xp, x.astype(work), source.astype(work, copy=False))
    if out.size and source.size:  # (an empty self or source: torch adds nothing, checks nothing)
        if x.dtype.kind in "iu" and type(alpha) is int:  # torch's checked cast: uint8's -1 is 255
            alpha = fitted(alpha, x.dtype)
        elif x.dtype.kind == "f":
            fitted(alpha, x.dtype)
        xp.add.at(out, _dim_key(dim, index, x.ndim), source if alpha == 1 else source * alpha)
    return out.astype(x.dtype, copy=False).reshape(x.shape)


def _source_part(g, dim, x_shape, index, source_shape, alpha=1):
    """The gradient of source: g at the places it was written to (times alpha), read with
    index_select as torch's backward does (its errors for an empty self, too)."""
    picked = index_select(reshape(g, (1,)) if not x_shape else g, dim if x_shape else 0, index)
    return reshape(picked if alpha == 1 else picked * alpha, tuple(source_shape))


def _source_into_zeros(t, dim, x_shape, index, source_shape, alpha=1):
    size = tuple(x_shape) or (1,)
    spread = index_put_into_zeros(t if source_shape else reshape(t, (1,)), size,
                                  _dim_key(dim, index, len(x_shape)))
    return reshape(spread if alpha == 1 else spread * alpha, tuple(x_shape))


index_add.defvjp(lambda g, dim, x_shape, index, source_shape, alpha: g, None, None,
                 _source_part)
index_add.defjvp(lambda t, dim, x_shape, index, source_shape, alpha: t, None, None,
                 _source_into_zeros)
index_add.numbers = numbers_reader("index_add", alpha=None)  # a 0-d tensor: its number


@op(save=("dim", "x.shape", "index", "source.shape"), method=True, inplace=True)
def index_copy(xp, x, dim, index, source):
    """x with ``source`` written at ``index`` along ``dim``."""
    dim = dim_among_inputs("index_copy", dim, x.ndim)
    _check_index_copy(x, dim, index, source)
    out, source = _as_vector(xp, xp.array(x, order="C"), source)
    out[_dim_key(dim, index, x.ndim)] = source
    return out.reshape(x.shape)


def _index_zeroed(g, dim, x_shape, index, *_):
    return index_fill(g, dim, index, 0.0)


index_copy.defvjp(_index_zeroed, None, None, _source_part)
index_copy.defjvp(_index_zeroed, None, None, _source_into_zeros)


@op(save=("dim", "x.shape", "index"), method=True, inplace=True)
def index_fill(xp, x, dim, index, value):
    """x with ``value`` (a number or 0-d tensor) at ``index`` along ``dim``."""
    dim = dim_among_inputs("index_fill", dim, x.ndim, (x, dim, index, value))
    if index.dtype.name != "int64":
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if getattr(value, "ndim", 0):
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    refuse_outside(index, x.shape[dim] if x.ndim else 1, dim, IndexError, negative_ok=True)
    out = preserved_copy(xp, x).reshape(x.shape or (1,))  # torch's clone of x
    if x.dtype.kind != "c" and _is_complex(value):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    out[_dim_key(dim, index, x.ndim)] = fitted_item(value, x.dtype)
    return out.reshape(x.shape)


def _value_grad(g, dim, x_shape, index):
    """Every filled place once (torch reads the unique indices)."""
    index = _raw(index)
    if (index < 0).any():  # torch reads the places with index_select: its error for these
        index_select(g, dim, index)
    size = x_shape[_normalize_dim(dim, len(x_shape))] if x_shape else 1
    places = get_array_module(index).unique(index.reshape(-1) % max(size, 1))
    return sum_(getitem(reshape(g, (1,)) if not x_shape else g,
                        _dim_key(dim, places, len(x_shape))))


def _index_fill_jvp(tangents, dim, x_shape, index):
    t_x, _, _, t_value = tangents
    if t_x is None:
        t_x = zeros(tuple(x_shape), dtype=t_value.dtype, device=t_value.device)
    return index_fill(t_x, dim, index, 0.0 if t_value is None else t_value)


index_fill.defvjp(_index_zeroed, None, None, _value_grad)
index_fill.defjvp_all(_index_fill_jvp)
index_fill.check_overlap = warns_when_expanded("index_fill_", "tensor[mask] = scalar")
