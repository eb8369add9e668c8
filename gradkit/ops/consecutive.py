"""torch.unique_consecutive: each run of equal consecutive elements (or slices) kept once.

As torch's, the values require grad when the input does, but their backward raises (torch has
no derivative), and NaNs never equal each other, so each starts its own run.
"""
from __future__ import annotations

import math

from gradkit._tensor import Tensor
from gradkit.int_arguments import int_parameters
from gradkit.ops._op import op
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.unary_helpers import scalar_type_name


def _runs(xp, rows):
    """(where each run starts, which run each row is in) of a (n, ...) array's rows."""
    n = rows.shape[0]
    flat = rows.reshape(n, math.prod(rows.shape[1:]))
    starts = xp.ones(n, dtype=bool)
    if n > 1:
        starts[1:] = xp.any(flat[1:] != flat[:-1], axis=1)
    return starts, xp.cumsum(starts) - 1


def _counts(xp, starts):
    first = xp.flatnonzero(starts)
    ends = xp.concatenate([first, xp.asarray([starts.shape[0]], dtype=first.dtype)])
    return xp.diff(ends).astype(xp.int64)


@op(outputs=3, differentiable_outputs=(0,))
def _unique_consecutive(xp, x, *, dim=None):
    """(run values, inverse: the run of each element, counts: each run's length)."""
    if x.dtype.kind == "c":
        raise NotImplementedError(f"\"unique\" not implemented for '{scalar_type_name(x)}'")
    if dim is None:
        starts, run = _runs(xp, x.reshape(-1))
        return x.reshape(-1)[starts], run.reshape(x.shape).astype(xp.int64), \
            _counts(xp, starts)
    if x.shape[dim] == 0 and x.shape.count(0) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot "
                           "be applied ")  # sic: torch's trailing space
    rows = xp.moveaxis(x, dim, 0)
    if rows.shape[0] and 0 in rows.shape:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    starts, run = _runs(xp, rows)
    return xp.moveaxis(rows[starts], 0, dim), run.astype(xp.int64), _counts(xp, starts)


def _no_derivative(*_, **__):
    raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


_unique_consecutive.name = "unique_consecutive"
_unique_consecutive.profiler_name = "gradkit::unique_consecutive"
_unique_consecutive.defvjp_all(_no_derivative)
_unique_consecutive.defjvp_all(_no_derivative)


@tensor_method()
@int_parameters("unique_consecutive", return_inverse=(None, "bool"),  # torch's Python wrapper
                return_counts=(None, "bool"), dim=(None, "int?"))  # names no positions
def unique_consecutive(input: Tensor, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim: int | None = None):
    """The elements (``dim``: the slices along dim) of input with each run of equal
    consecutive ones kept once; on request the inverse (the run of each element) and the
    counts (each run's length)."""
    if dim is not None:
        if input.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        dim = _normalize_dim(dim, input.dim())
    values, inverse, counts = _unique_consecutive(input, dim=dim)
    extra = ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return (values, *extra) if extra else values
