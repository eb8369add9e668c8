"""torch.unique_consecutive: each run of equal consecutive elements (or slices) kept once.

As torch's, the values require grad when the input does, but their backward raises (torch has
no derivative), and NaNs never equal each other, so each starts its own run.
"""
from __future__ import annotations

import math

from gradkit._tensor import Tensor
from gradkit.backend import int64
from gradkit.creation import empty
from gradkit.int_arguments import int_parameters
from gradkit.ops._op import op
from gradkit.ops.cpu_order import std_sort
from gradkit.ops.dims import existing_dim
from gradkit.ops.methods import tensor_method
from gradkit.ops.unary_helpers import scalar_type_name


def _runs(xp, rows):
    """(where each run starts, which run each row is in) of a (n, ...) array's rows."""
    n = rows.shape[0]
    flat = rows.reshape(n, math.prod(rows.shape[1:]))
    starts = xp.ones(n, dtype=bool)
    if n > 1:
        starts[1:] = xp.any(flat[1:] != flat[:-1], axis=1)
    return starts, xp.cumsum(starts) - 1


def refuse_empty_slices(shape: tuple, dim: int) -> None:
    """torch's unique along ``dim`` takes an empty tensor only when ``dim`` is its one empty
    dim (the result: no slices)."""
    if shape[dim] == 0 and shape.count(0) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot "
                           "be applied ")  # sic: torch's trailing space
    if shape[dim] and 0 in shape:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")


def unique_slices(xp, x, dim: int):
    """(sorted distinct slices along ``dim``, inverse, counts): unique with a dim."""
    refuse_empty_slices(x.shape, dim)
    rows = xp.moveaxis(x, dim, 0)
    flat = rows.reshape(rows.shape[0], math.prod(rows.shape[1:]))
    if x.dtype.kind != "f" or not xp.isnan(flat).any():
        values, inverse, counts = xp.unique(x, return_inverse=True, return_counts=True, axis=dim)
        return values, inverse.reshape(-1).astype(xp.int64), counts.astype(xp.int64)
    # NaN slices: never equal (NumPy would merge them), ordered as torch's std::sort leaves
    # them, whose comparator finds NaN neither less nor greater than anything
    order = std_sort(flat.tolist(), _rows_less)
    starts, run = _runs(xp, flat[order])
    inverse = xp.empty(len(flat), dtype=xp.int64)
    inverse[order] = run
    return xp.moveaxis(rows[order][starts], 0, dim), inverse, _counts(xp, starts)


def _rows_less(a: list, b: list) -> bool:
    """torch's unique_dim comparator: the first element where one row is below the other."""
    for p, q in zip(a, b):
        if p < q:
            return True
        if p > q:
            return False
    return False


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
    refuse_empty_slices(x.shape, dim)
    rows = xp.moveaxis(x, dim, 0)
    starts, run = _runs(xp, rows)
    return xp.moveaxis(rows[starts], 0, dim), run.astype(xp.int64), _counts(xp, starts)


def _no_derivative(*_, **__):
    raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


_unique_consecutive.name = "unique_consecutive"
_unique_consecutive.profiler_name = "gradkit::unique_consecutive"
_unique_consecutive.defvjp_all(_no_derivative)
_unique_consecutive.defjvp_all(_no_derivative)


@tensor_method("unique_consecutive")
@int_parameters("unique_consecutive", return_inverse=(None, "bool"),  # torch's Python wrapper
                return_counts=(None, "bool"), dim=(None, "int?"))  # names no positions
def _unique_consecutive_method(input: Tensor, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim: int | None = None):
    """The elements (``dim``: the slices along dim) of input with each run of equal
    consecutive ones kept once; on request the inverse (the run of each element) and the
    counts (each run's length)."""
    if dim is not None:
        dim = existing_dim(dim, input.dim())
    values, inverse, counts = _unique_consecutive(input, dim=dim)
    extra = ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return (values, *extra) if extra else values


def unique_consecutive(input: Tensor, *args, **kwargs):  # noqa: A002 - torch's name
    """torch.unique_consecutive(input, return_inverse=False, return_counts=False, dim=None).

    As torch's: its Python dispatcher picks the outputs reading ``return_inverse`` from the
    third positional and ``return_counts`` from the second (swapped), so one of them given
    positionally returns the other's slot, an empty int64 tensor (``unique_consecutive(x,
    True)`` is (values, empty)); the method and keywords are as documented."""
    result = _unique_consecutive_method(input, *args, **kwargs)
    inverse_given = kwargs.get("return_inverse", args[0] if args else False)
    counts_given = kwargs.get("return_counts", args[1] if len(args) > 1 else False)
    inverse_picked = kwargs.get("return_inverse", args[1] if len(args) > 1 else False)
    counts_picked = kwargs.get("return_counts", args[0] if args else False)
    if (inverse_picked, counts_picked) == (inverse_given, counts_given):
        return result
    nothing = empty(0, dtype=int64, device=input.device)
    inverse = result[1] if inverse_given else nothing
    counts = result[1 + bool(inverse_given)] if counts_given else nothing
    values = result[0] if isinstance(result, tuple) else result
    picked = ((inverse,) if inverse_picked else ()) + ((counts,) if counts_picked else ())
    return (values, *picked) if picked else values
