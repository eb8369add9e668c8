"""Tensors built in a pattern from another, composed as torch composes them: diagflat
(diag_embed), repeat_interleave (an expanded clone, or index_select), vander (cumprod, flip);
and the index tensors tril_indices / triu_indices."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.int_arguments import int_parameters, invalid_combination
from gradkit.backend import int64
from gradkit.creation import empty, ones, tensor
from gradkit.memory_format import contiguous_format
from gradkit.ops.conversion import astype, clone
from gradkit.ops.indexing import index_select
from gradkit.ops.joining import cat
from gradkit.ops.methods import tensor_method
from gradkit.ops.promotion import promote_types
from gradkit.ops.scans import cumprod
from gradkit.ops.shape import _normalize_dim, expand, flip, reshape, unsqueeze, view
from gradkit.ops.triangular import diag_embed
from gradkit.ops.unary_helpers import scalar_type_name


@tensor_method()
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with x's elements, flattened, on its ``offset`` diagonal."""
    return diag_embed(reshape(input, (-1,)), offset, 0, 1)


# -- repeat_interleave -------------------------------------------------------------------------

def _repeat_counts(repeats: Tensor) -> np.ndarray:
    """A repeats tensor's counts on the host, with torch's checks of its dtype and values."""
    if repeats.dtype.is_floating_point or repeats.dtype.is_complex or repeats.dtype.name == "bool":
        raise NotImplementedError('"repeat_interleave_cpu" not implemented for '
                                  f"'{scalar_type_name(repeats)}'")
    counts = np.asarray(repeats.tolist(), dtype=np.int64).reshape(-1)
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return counts


def _indices_of_counts(repeats: Tensor, output_size) -> Tensor:
    """``repeat_interleave(repeats)``: each position i, ``repeats[i]`` times."""
    counts = _repeat_counts(repeats)  # (its dtype checked before the rank, as torch's)
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if output_size is not None and output_size != counts.sum():
        raise RuntimeError("allocated size does not match required size")
    return tensor(np.repeat(np.arange(counts.size), counts), dtype=repeats.dtype,
                  device=repeats.device)


_NO_REPEATS = object()  # repeat_interleave(counts): no repeats given (a None is refused)


@tensor_method()
@int_parameters("repeat_interleave", True, dim=(2, "int?"))
def repeat_interleave(input: Tensor, repeats=_NO_REPEATS, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element of x repeated ``repeats`` times along ``dim`` (x flattened when dim is
    None); a tensor of repeats gives each slice its own count. With only a tensor of counts,
    the indices 0, 1, ... repeated that often."""
    if repeats is _NO_REPEATS:
        return _indices_of_counts(input, output_size)
    if not isinstance(repeats, Tensor) and (type(repeats) is not int and not isinstance(
            repeats, np.integer)):  # (a bool, a float: no signature takes it)
        raise invalid_combination("repeat_interleave", (input, repeats) + (
            () if dim is None else (dim,)), {})
    source = input if dim is not None else reshape(input, (-1,))
    dim = _normalize_dim(0 if dim is None else dim, input.ndim)
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        counts = _repeat_counts(repeats)
        size = source.shape[dim] if source.ndim else 1
        if counts.size == 1:
            counts = np.repeat(counts, size)
        elif counts.size != size:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.size} and input.size({dim}) = {size}")
        if output_size is not None and output_size != counts.sum():
            raise RuntimeError("allocated size does not match required size")
        index = tensor(np.repeat(np.arange(size), counts), device=input.device)
        return index_select(source, dim, index)
    repeats = int(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    # torch: an expanded copy viewed with the repeated dim merged (ViewBackward0 of a clone)
    spread = unsqueeze(source, dim + 1)
    shape = tuple(spread.shape)
    copied = clone(expand(spread, shape[:dim + 1] + (repeats,) + shape[dim + 2:]),
                   memory_format=contiguous_format)
    expected = shape[dim] * repeats
    if output_size is not None and output_size != expected:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {expected} but got "
                           f"{output_size}")
    return view(copied, shape=shape[:dim] + (expected,) + shape[dim + 2:])


repeat_interleave.function_words = True  # its method's errors do not list self


# -- tril_indices / triu_indices ---------------------------------------------------------------

def _triangle_indices(name: str, rows: np.ndarray, cols: np.ndarray, row: int, col: int,
                      dtype, device) -> Tensor:
    dtype = int64 if dtype is None else dtype
    if not dtype.is_signed or dtype.is_floating_point or dtype.is_complex:
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{scalar_type_name(np.empty(0, dtype.np))}'")
    return tensor(np.stack([rows, cols]), dtype=dtype, device=device)


def _check_sizes(row: int, col: int) -> None:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")


def _triangle(name: str, upper: bool):
    @int_parameters(name, row=(1, "int"), col=(2, "int"), offset=(3, "int"))
    def indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                layout=None) -> Tensor:
        _check_sizes(row, col)
        rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
        return _triangle_indices(name, rows, cols, row, col, dtype, device)
    side = "upper" if upper else "lower"  # one function, torch's two names
    indices.__name__ = indices.__qualname__ = name
    indices.__doc__ = (f"The (2, n) coordinates of the {side} triangle of a row x col matrix "
                       f"(on and {'above' if upper else 'below'} the ``offset`` diagonal), row "
                       "by row.")
    return indices


tril_indices = _triangle("tril_indices", upper=False)
triu_indices = _triangle("triu_indices", upper=True)


# -- vander --------------------------------------------------------------------------------------

@int_parameters("vander", N=(2, "int?"), increasing=(3, "bool"))
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of the 1-d x: columns x^(N-1), ..., x^0 (reversed with
    ``increasing``), computed as torch does, by a cumulative product (integers in int64)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = promote_types(x.dtype.np, np.dtype(np.int64))
    if n == 0:
        return empty(x.shape[0], 0, dtype=dtype, device=x.device)
    first = ones(x.shape[0], 1, dtype=dtype, device=x.device)
    if n == 1:
        result = first
    else:
        powers = expand(unsqueeze(astype(x, dtype), 1), (x.shape[0], n - 1))
        result = cat([first, cumprod(powers, dim=1)], 1)
    return result if increasing else flip(result, (1,))

