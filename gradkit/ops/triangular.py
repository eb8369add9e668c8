"""Triangles and diagonals of matrices: tril, triu, diagonal (a view), diag, diag_embed."""
from __future__ import annotations

import numpy as np

from gradkit.int_arguments import int_parameters, ints_reader
from gradkit.ops._op import op
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim


def _check_matrix(name, x):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def _within(diagonal: int, x) -> int:
    """``diagonal`` brought into [-rows - 1, columns], which keeps the same triangle (NumPy
    overflows on an int64 far beyond the matrix: torch's ``tril(-2**63)``)."""
    return min(max(diagonal, -x.shape[-2] - 1), x.shape[-1])


@op(linear=True, batchable=True, method=True, contiguous=True)
def tril(xp, x, diagonal=0):
    """The lower triangle of the last two dims of x (below and on ``diagonal``), zeros above."""
    _check_matrix("tril", x)
    return xp.tril(x, _within(diagonal, x))


tril.numbers = ints_reader("tril", diagonal=(1, "SymInt"))


@op(linear=True, batchable=True, method=True, contiguous=True)
def triu(xp, x, diagonal=0):
    """The upper triangle of the last two dims of x (above and on ``diagonal``), zeros below."""
    _check_matrix("triu", x)
    return xp.triu(x, _within(diagonal, x))


triu.numbers = ints_reader("triu", diagonal=(1, "SymInt"))


# torch's tril_/triu_ check no internal overlap and write only the zeros: in an expanded
# tensor, every element sharing a zeroed location reads 0 (inplace's write of the changed
# elements only does so; breadth seed 1576629)
tril.check_overlap = triu.check_overlap = lambda target, *args: True
tril.defvjp(lambda g, diagonal: tril(g, diagonal))
tril.defjvp(lambda t, diagonal: tril(t, diagonal))
triu.defvjp(lambda g, diagonal: triu(g, diagonal))
triu.defjvp(lambda t, diagonal: triu(t, diagonal))


def _diagonal_view(xp, x, offset, dim1, dim2):
    """A writable view of a diagonal (NumPy's own is read-only; torch's may be written)."""
    if xp is not np:
        return xp.diagonal(x, offset, dim1, dim2)  # CuPy's is a writable view
    # start the array at the diagonal's first element, then walk it with the diagonal's strides
    start = [slice(None)] * x.ndim
    start[dim2 if offset >= 0 else dim1] = slice(abs(offset), None)
    shifted = x[tuple(start)]
    d = np.diagonal(shifted, 0, dim1, dim2)
    return np.lib.stride_tricks.as_strided(shifted, d.shape, d.strides,
                                           writeable=x.flags.writeable)


def _diagonal_dims(x, dim1, dim2):
    d1, d2 = _normalize_dim(dim1, x.ndim), _normalize_dim(dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@op(save="x.shape", linear=True, view=True, method=True)
def diagonal(xp, x, offset=0, dim1=0, dim2=1):
    """A view of the ``offset`` diagonal of the dims ``dim1`` and ``dim2`` of x, moved last."""
    d1, d2 = _diagonal_dims(x, dim1, dim2)
    return _diagonal_view(xp, x, offset, d1, d2)


diagonal.numbers = ints_reader("diagonal", offset=(1, "int"), dim1=(2, "int"), dim2=(3, "int"))


@op(linear=True)
def diagonal_backward(xp, g, shape=None, offset=0, dim1=0, dim2=1):
    """Zeros of ``shape`` with ``g`` on the diagonal that ``diagonal`` reads (its vjp)."""
    out = xp.zeros(shape, dtype=g.dtype)
    d1, d2 = _normalize_dim(dim1, len(shape)), _normalize_dim(dim2, len(shape))
    steps = xp.arange(g.shape[-1])  # written by index, not through a (read-only) diagonal view
    xp.moveaxis(out, (d1, d2), (-2, -1))[..., steps + max(-offset, 0), steps + max(offset, 0)] = g
    return out


diagonal.defvjp(lambda g, x_shape, offset, dim1, dim2:
                diagonal_backward(g, x_shape, offset, dim1, dim2))
diagonal.defjvp(lambda t, x_shape, offset, dim1, dim2: diagonal(t, offset, dim1, dim2))
diagonal_backward.defvjp(lambda g, shape, offset, dim1, dim2: diagonal(g, offset, dim1, dim2))
diagonal_backward.defjvp(lambda t, shape, offset, dim1, dim2:
                         diagonal_backward(t, shape, offset, dim1, dim2))


@op(save="x.shape", linear=True, method=True)
def diag_embed(xp, x, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims ``dim1``, ``dim2``) with the last dim of x on their ``offset`` diagonal."""
    n = x.shape[-1] + abs(offset) if x.ndim else 1
    ndim = x.ndim + 1
    d1, d2 = _normalize_dim(dim1, ndim), _normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = [*x.shape[:-1]]
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    return diagonal_backward.forward(xp, x, tuple(shape), offset, d1, d2)


diag_embed.numbers = ints_reader("diag_embed", offset=(1, "int"), dim1=(2, "int"),
                                 dim2=(3, "int"))


diag_embed.defvjp(lambda g, x_shape, offset, dim1, dim2: diagonal(g, offset, dim1, dim2))
diag_embed.defjvp(lambda t, x_shape, offset, dim1, dim2: diag_embed(t, offset, dim1, dim2))


@op(save="x.shape", linear=True, node_name="DiagonalBackward0_copy")  # torch's diagonal_copy
def _diagonal_copy(xp, x, *, offset):
    return xp.diagonal(x, offset).copy()


_diagonal_copy.defvjp(lambda g, x_shape, offset: diagonal_backward(g, x_shape, offset))
_diagonal_copy.defjvp(lambda t, x_shape, offset: _diagonal_copy(t, offset=offset))


@tensor_method()
@int_parameters("diag", diagonal=(1, "int"))
def diag(input, diagonal: int = 0):
    """A 1-D x on the ``diagonal`` of a new square matrix; a 2-D x's diagonal (a copy)."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal_copy(input, offset=diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
