"""Out-of-place writes into a view's place: select_scatter, slice_scatter, diagonal_scatter
(each a copy of the input with ``src`` where the view reads; torch's SelectScatterBackward0 &
co.), and views copied: narrow_copy (NarrowCopyBackward0), expand_copy and permute_copy (the
view op's rules, torch's ``<view node>_copy`` names)."""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.int_arguments import int_list_argument
from gradkit.ops._op import op
from gradkit.ops.indexing import index_put_into_zeros
from gradkit.ops.memory_overlap import may_overlap
from gradkit.ops.methods import tensor_method
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.shape import _normalize_dim, expand, permute
from gradkit.ops.slicing import _select_index, _slice, _slice_key, narrow, select
from gradkit.ops.strided import whole_storage_copy
from gradkit.ops.triangular import diagonal
from gradkit.ops.view_copies import derived_op
from gradkit.tensor_arguments import tensor_parameters


def _check_src(src: Tensor, part: Tensor) -> None:
    """torch's check that ``src`` has the shape of the view it replaces (no broadcasting)."""
    if tuple(src.shape) != tuple(part.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(part.shape)}")


def _written(x, src, place):
    """A copy of x with ``src`` written at ``place(copy)``: (an array viewing it, a key). As
    torch's, the copy is of x's whole storage, viewed as x (an as_strided read of it reads
    what torch's does); of an x whose elements overlap, dense (docs/numerics.md)."""
    out = x.copy() if may_overlap(x) or not x.size else whole_storage_copy(x)
    view, key = place(out)
    view[key] = src
    return out


# -- select_scatter ------------------------------------------------------------------------------

@op(linear=True, node_name="SelectScatterBackward0")
def _select_scatter(xp, x, src, *, dim, index):
    return _written(x, src, lambda out: (out, (slice(None),) * dim + (index, Ellipsis)))


_select_scatter.defvjp(
    lambda g, dim, index: _select_scatter(
        g, zeros_like(_select_index(g, dim=dim, index=index)), dim=dim, index=index),
    lambda g, dim, index: _select_index(g, dim=dim, index=index))
_select_scatter.name, _select_scatter.profiler_name = "select_scatter", "gradkit::select_scatter"
_select_scatter.no_complex_grad = "select_scatter"  # torch has no complex formula for it


@tensor_method()
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of x with ``src`` in the place of ``x.select(dim, index)``."""
    part = select(input.detach(), dim, index)  # torch's errors for dim and index
    _check_src(src, part)
    dim = _normalize_dim(dim, input.ndim)
    return _select_scatter(input, src, dim=dim, index=int(index) % input.shape[dim])


# -- slice_scatter -------------------------------------------------------------------------------

def _slice_bounds(size: int, start, end, step: int) -> tuple:
    """torch's slice bounds: None is the whole dim, a negative bound wraps once, then clamps."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start = 0 if start is None else int(start)
    end = size if end is None else int(end)
    start, end = (min(max(b + size if b < 0 else b, 0), size) for b in (start, end))
    return start, max(end, start)


@op(linear=True, node_name="SliceScatterBackward0")
def _slice_scatter(xp, x, src, *, dim, start, end, step):
    return _written(x, src, lambda out: (out, _slice_key(dim, start, end, step)))


def _sliced(g, dim, start, end, step):
    return _slice(g, dim=dim, start=start, end=end, step=step)


_slice_scatter.defvjp(
    lambda g, dim, start, end, step: _slice_scatter(
        g, zeros_like(_sliced(g, dim, start, end, step)), dim=dim, start=start, end=end,
        step=step),
    lambda g, dim, start, end, step: _sliced(g, dim, start, end, step))
_slice_scatter.name, _slice_scatter.profiler_name = "slice_scatter", "gradkit::slice_scatter"
_slice_scatter.no_complex_grad = "slice_scatter"  # torch has no complex formula for it


@tensor_method()
@tensor_parameters("src")
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """A copy of x with ``src`` in the place of ``x[start:end:step]`` along ``dim``."""
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, input.ndim)
    start, end = _slice_bounds(input.shape[dim], start, end, int(step))
    _check_src(src, _sliced(input.detach(), dim, start, end, int(step)))
    return _slice_scatter(input, src, dim=dim, start=start, end=end, step=int(step))


# -- diagonal_scatter ----------------------------------------------------------------------------

@op(linear=True, node_name="DiagonalScatterBackward0")
def _diagonal_scatter(xp, x, src, *, offset, dim1, dim2):
    steps = xp.arange(src.shape[-1])  # by index: a diagonal view may be read-only
    rows, cols = steps + max(-offset, 0), steps + max(offset, 0)
    return _written(x, src, lambda out: (xp.moveaxis(out, (dim1, dim2), (-2, -1)),
                                         (Ellipsis, rows, cols)))


def _diagonal_of(g, offset, dim1, dim2):
    return diagonal(g, offset, dim1, dim2)


_diagonal_scatter.defvjp(
    lambda g, offset, dim1, dim2: _diagonal_scatter(
        g, zeros_like(_diagonal_of(g, offset, dim1, dim2)), offset=offset, dim1=dim1, dim2=dim2),
    lambda g, offset, dim1, dim2: _diagonal_of(g, offset, dim1, dim2))
_diagonal_scatter.name = "diagonal_scatter"
_diagonal_scatter.profiler_name = "gradkit::diagonal_scatter"


@tensor_method()
@tensor_parameters("src")
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of x with ``src`` on the diagonal that ``x.diagonal(offset, dim1, dim2)`` reads."""
    _check_src(src, diagonal(input.detach(), offset, dim1, dim2))  # torch's errors for the dims
    return _diagonal_scatter(input, src, offset=offset, dim1=_normalize_dim(dim1, input.ndim),
                             dim2=_normalize_dim(dim2, input.ndim))


# -- narrow_copy ---------------------------------------------------------------------------------

@op(save="x.shape", linear=True, node_name="NarrowCopyBackward0")
def _narrow_copy(xp, x, *, dim, start, end):
    return x[_slice_key(dim, start, end, 1)].copy()


_narrow_copy.defvjp(lambda g, x_shape, dim, start, end:
                    index_put_into_zeros(g, x_shape, _slice_key(dim, start, end, 1)))
_narrow_copy.name, _narrow_copy.profiler_name = "narrow_copy", "gradkit::narrow_copy"


def _check_narrow_copy(x: Tensor, dim, start, length) -> None:
    """torch's narrow_copy kernel's own refusals where narrow's differ: a dim past the end
    (its bare check's text) and a negative length (after the start's range, in one check with
    the end's bound)."""
    if not x.ndim or not all(type(v) is int for v in (dim, start, length)):
        return  # narrow's checks
    if dim >= x.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    size = x.shape[_normalize_dim(dim, x.ndim)]
    if not -size <= start <= size:  # before the length, in narrow_copy
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if length < 0:
        start = start + size if start < 0 else start
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")


@tensor_method()
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A copy of ``x.narrow(dim, start, length)`` (no view of x)."""
    _check_narrow_copy(input, dim, start, length)
    part = narrow(input.detach(), dim, start, length)  # torch's errors and bounds
    dim = _normalize_dim(dim, input.ndim)
    start = int(start) + (input.shape[dim] if int(start) < 0 else 0)
    return _narrow_copy(input, dim=dim, start=start, end=start + part.shape[dim])


# -- expand_copy / permute_copy ------------------------------------------------------------------

_expand_copy = derived_op(expand, "expand_copy", "ExpandBackward0_copy", copies=True)
_permute_copy = derived_op(permute, "permute_copy", "PermuteBackward0_copy", copies=True)


def expand_copy(input: Tensor, size, *, implicit: bool = False) -> Tensor:
    """A copy of ``x.expand(size)``."""
    check_implicit(implicit, "expand_copy")
    return _expand_copy(input, sizes=int_list_argument(size, "expand_copy", "size", 2, symint=True))


def check_implicit(implicit, function: str) -> None:
    """torch's ``expand(..., implicit=)``: a tracing flag eager torch ignores, a bool only."""
    if type(implicit) is not bool:
        raise TypeError(f"{function}(): argument 'implicit' must be bool, not "
                        f"{type(implicit).__name__}")


def permute_copy(input: Tensor, dims) -> Tensor:
    """A copy of ``x.permute(dims)``."""
    dims = int_list_argument(dims, "permute_copy", "dims", 2)
    if len(dims) != input.ndim:  # torch's text from its sparse kernel, which checks first
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not "
                           "match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}")
    return _permute_copy(input, dims=tuple(dims))
