"""torch.gradient: derivatives of sampled values by finite differences.

Second-order central differences inside, first- or second-order one-sided ones at the edges,
for even spacing (a number per dimension) or for sample coordinates (a 1-D tensor per
dimension). Written with differentiable ops in torch's order of operations, so the results
round as torch's and their gradients are those of the formulas.
"""
from __future__ import annotations

from collections.abc import Sequence

from gradkit._tensor import Tensor
from gradkit.ops.joining import cat
from gradkit.ops.shape import _normalize_dim


def _part(x: Tensor, dim: int, start: int | None, stop: int | None = None) -> Tensor:
    """``x[start:stop]`` along ``dim`` (a view)."""
    return x[(slice(None),) * dim + (slice(start, stop),)]


def _even(x: Tensor, dim: int, dx, edge_order: int) -> Tensor:
    """Differences for evenly spaced samples ``dx`` apart."""
    center = (_part(x, dim, 2) - _part(x, dim, 0, -2)) / dx
    if edge_order == 1:
        prepend = (_part(x, dim, 1, 2) - _part(x, dim, 0, 1)) / dx
        append = (_part(x, dim, -1) - _part(x, dim, -2, -1)) / dx
    else:
        prepend = (_part(x, dim, 0, 1) * -1.5 + _part(x, dim, 1, 2) * 2
                   + _part(x, dim, 2, 3) * -0.5) / dx
        append = (_part(x, dim, -3, -2) * 0.5 + _part(x, dim, -2, -1) * -2
                  + _part(x, dim, -1) * 1.5) / dx
    return cat([prepend, center / 2, append], dim)


def _uneven(x: Tensor, dim: int, coordinates: Tensor, edge_order: int) -> Tensor:
    """Differences for samples at ``coordinates`` along ``dim``."""
    if coordinates.dim() != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coordinates.dim()} dimensions!")
    shape = [1] * x.dim()
    shape[dim] = -1
    dx = coordinates[1:] - coordinates[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _part(x, dim, 0, -2) + b * _part(x, dim, 1, -1) + c * _part(x, dim, 2)
    if edge_order == 1:
        prepend = (_part(x, dim, 1, 2) - _part(x, dim, 0, 1)) / dx[0]
        append = (_part(x, dim, -1) - _part(x, dim, -2, -1)) / dx[-1]
    else:
        first, second, last, before = dx[0], dx[1], dx[-1], dx[-2]
        prepend = (-(2.0 * first + second) / (first * (first + second)) * _part(x, dim, 0, 1)
                   + (first + second) / (first * second) * _part(x, dim, 1, 2)
                   + (-first) / (second * (first + second)) * _part(x, dim, 2, 3))
        append = (last / (before * (last + before)) * _part(x, dim, -3, -2)
                  - (last + before) / (last * before) * _part(x, dim, -2, -1)
                  + (2 * last + before) / (last * (last + before)) * _part(x, dim, -1))
    return cat([prepend, center, append], dim)


def _checked_dims(x: Tensor, spacing_length: int | None, dims: list | None,
                  edge_order: int) -> list[int]:
    """torch's checks, in its order; the dimensions to differentiate along."""
    if x.dtype.name == "uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_length is not None and dims is None and spacing_length != x.dim():
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {x.dim()}', since dim argument was not given, but got a "
            f"list of length {spacing_length}")
    if spacing_length is not None and dims is not None and spacing_length != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            "dim arguments to have the same length, but got a spacing argument of length "
            f"{spacing_length} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = list(range(x.dim())) if dims is None else [_normalize_dim(d, x.dim())
                                                         for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    return wrapped


def gradient(input: Tensor, *, spacing=None, dim: int | Sequence[int] | None = None,  # noqa: A002
             edge_order: int = 1) -> list[Tensor]:
    """The derivative of ``input`` along each dimension in ``dim`` (all by default), by
    central differences; ``spacing`` is a number for every dimension, one number per
    dimension, or one 1-D tensor of sample coordinates per dimension."""
    dims = None if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if spacing is None or not isinstance(spacing, (list, tuple)):  # one number for all dims
        wrapped = _checked_dims(input, None, dims, edge_order)
        step = 1 if spacing is None else spacing
        return [_even(input, d, step, edge_order) for d in wrapped]
    wrapped = _checked_dims(input, len(spacing), dims, edge_order)
    if all(isinstance(s, Tensor) for s in spacing):
        return [_uneven(input, d, s, edge_order) for d, s in zip(wrapped, spacing)]
    return [_even(input, d, s, edge_order) for d, s in zip(wrapped, spacing)]
