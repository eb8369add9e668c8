"""index_reduce: the slices of ``source`` reduced into ``x`` at ``index`` along ``dim``.

It is scatter_reduce with the index spread over source's other dimensions, so it runs
scatter_reduce's forward and its (torch's) derivative formulas, declared again under torch's
node name (IndexReduceBackward0) after index_reduce's own checks.
"""
from __future__ import annotations

import warnings

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.ops._op import Op
from gradkit.ops.methods import tensor_method
from gradkit.ops.scatter_reduce import INDEX_REDUCE_VJP, _scatter_reduce
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.unary_helpers import scalar_type_name

BETA_WARNING = "index_reduce() is in beta and the API may change at any time."

_index_reduce = Op(_scatter_reduce.forward, name="index_reduce",
                   save=("x", "dim", "index", "src", "result"))
_index_reduce.defvjp_all(INDEX_REDUCE_VJP)
_index_reduce.edge_inputs = _scatter_reduce.edge_inputs
_index_reduce.defjvp_all(_scatter_reduce.jvp_all)


def _checked(x: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str) -> int:
    """torch's checks, in its order; dim made non-negative."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = _normalize_dim(dim, x.dim())
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index)}")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {scalar_type_name(index)} and size: "
                         f"{list(index.shape)}")
    source_length = source.shape[dim] if source.dim() else 1
    if index.numel() != source_length:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be "
                           f"equal to source.size(dim): ({source_length}), for dim: {dim}")
    if x.dtype != source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_type_name(x)}) and source "
                           f"({scalar_type_name(source)}) must have the same scalar type")
    others = [n for d, n in enumerate(x.shape) if d != dim]
    if x.dim() != source.dim() or others != [n for d, n in enumerate(source.shape) if d != dim]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(source.shape)}")
    return dim


def _check_kernels(x: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                   include_self: bool) -> None:
    """What torch's CPU kernels and autograd refuse, in their order: complex and bool tensors
    in the pass that leaves self out and in the kernel for vectors, an empty self left out,
    the index range, then the complex and bool cases of the reductions."""
    kind = scalar_type_name(x)
    odd = x.is_complex() or x.dtype.name == "bool"
    if not include_self and odd:
        raise NotImplementedError(f"\"index_reduce_func_exclude_input_init\" not implemented "
                                  f"for '{kind}'")
    if x.dim() <= 1 and odd:
        raise NotImplementedError(f"\"index_func_\" not implemented for '{kind}'")
    length = x.shape[dim] if x.dim() else 1
    if not include_self and length == 0 and source.numel():
        _refuse_empty(x, dim, source)
    if index.numel():  # else nothing is reduced: the reductions' own kernels do not run
        if not bool(((index >= 0) & (index < length)).all()):
            raise IndexError("index out of range in self")
        if x.is_complex() and reduce in ("amax", "amin"):
            kernel = "maximum" if reduce == "amax" else "minimum"
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{kind}'")
        if x.dtype.name == "bool" and reduce == "mean":
            raise NotImplementedError(f"\"div_floor_cpu\" not implemented for '{kind}'")
    if x.is_complex() and is_grad_enabled() and (x.requires_grad or source.requires_grad):
        raise RuntimeError("index_reduce does not support automatic differentiation for "
                           "outputs with complex dtype.")


def _refuse_empty(x: Tensor, dim: int, source: Tensor) -> None:
    """torch's kernel views an empty x with source's sizes (its dim's stride 0): the storage
    check of that view refuses it."""
    itemsize = x._data.itemsize
    strides = [1] * x.dim()  # an empty tensor's are the contiguous ones (sizes 0 read as 1)
    for d in range(x.dim() - 2, -1, -1):
        strides[d] = strides[d + 1] * max(x.shape[d + 1], 1)
    strides[dim] = 0
    needed = (1 + sum((n - 1) * s for n, s in zip(source.shape, strides))) * itemsize
    raise RuntimeError(f"setStorage: sizes {list(source.shape)}, strides {strides}, storage "
                       f"offset 0, and itemsize {itemsize} requiring a storage size of {needed} "
                       f"are out of bounds for storage of size 0")


@tensor_method(inplace=True)
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """x with each slice ``source[..., i, ...]`` (along ``dim``) reduced into
    ``x[..., index[i], ...]``: ``reduce`` is "prod", "mean", "amax" or "amin";
    ``include_self=False`` leaves x's own values out where written."""
    warnings.warn(BETA_WARNING, UserWarning, stacklevel=2)
    dim = _checked(input, dim, index, source, reduce)
    _check_kernels(input, dim, index, source, reduce, include_self)
    if input.dim() == 0:
        return _index_reduce(input, 0, index.reshape(()), source.reshape(()), reduce,
                             include_self=include_self)
    shape = [1] * source.dim()
    shape[dim] = -1
    spread = index.reshape(shape).expand(*source.shape)
    return _index_reduce(input, dim, spread, source, reduce, include_self=include_self)
