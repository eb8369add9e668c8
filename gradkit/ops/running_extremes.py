"""cummax and cummin: the running maximum/minimum along a dim and where it came from."""
from __future__ import annotations

import operator

from gradkit import return_types
from gradkit.int_arguments import int_parameters
from gradkit.ops._op import op
from gradkit.ops.indexing import gather, scatter_into_zeros
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import tensor_method
from gradkit.ops.order_statistics import refuse_complex_grad
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.unary_helpers import kernel_error, reject_complex

cummax_result = return_types.cummax
cummin_result = return_types.cummin


def _running_extreme(xp, x, dim, name, takes_over):
    """(values, indices) of the running max/min along ``dim``, by torch's CPU loop: an element
    takes over when ``takes_over(element, extreme)`` (>= or <=: the last index among equals)
    or when it is NaN (the index moves on to each later NaN)."""
    d = _normalize_dim(dim, x.ndim)
    if x.ndim == 0:  # before the dtype check, as torch's
        return x.copy(), xp.zeros((), dtype=xp.int64)
    if x.size:  # torch's kernel passes an empty x of any dtype
        reject_complex(x, kernel_error(f"{name}_cpu"))
    values = xp.moveaxis(x.copy(), d, 0)  # views, filled along d
    indices = xp.zeros(values.shape, dtype=xp.int64)
    for i in range(1, values.shape[0]):
        takes = takes_over(values[i], values[i - 1])
        if x.dtype.kind == "f":
            takes |= xp.isnan(values[i])
        values[i] = xp.where(takes, values[i], values[i - 1])
        indices[i] = xp.where(takes, i, indices[i - 1])
    return xp.moveaxis(values, 0, d), xp.moveaxis(indices, 0, d)


@op(save=("x", "result1"), outputs=2, differentiable_outputs=(0,), name="cummax",
    contiguous=True)
def _cummax(xp, x, *, dim):
    return _running_extreme(xp, x, dim, "cummax", operator.ge)


@op(save=("x", "result1"), outputs=2, differentiable_outputs=(0,), name="cummin",
    contiguous=True)
def _cummin(xp, x, *, dim):
    return _running_extreme(xp, x, dim, "cummin", operator.le)


def _to_arg_positions(g, x, indices, dim):
    """Each value's gradient added at the position it came from (torch's scatter_add; x is
    saved as torch saves it, its shape is what the rule reads). An empty x is its own
    gradient, as torch's: g is not read, so a second derivative does not reach g's graph."""
    if not x.ndim:
        return (g,)
    if 0 in tuple(x.shape):  # (arrays without create_graph: a copy, never x's memory)
        return (x if hasattr(x, "grad_fn") else x.copy(),)
    return (scatter_into_zeros(g, indices, tuple(x.shape), _normalize_dim(dim, x.ndim)),)


def _from_arg_positions(tangents, x, indices, dim):
    t = tangents[0]
    return (t if not x.ndim else gather(t, _normalize_dim(dim, x.ndim), indices)), None


for _scan in (_cummax, _cummin):
    _scan.defvjp_all(_to_arg_positions)
    _scan.defjvp_all(_from_arg_positions)


@tensor_method()
@numpy_keywords
@int_parameters("cummax", dim=(1, "int"))
def cummax(x, dim: int):
    """(values, indices) of the running maximum along ``dim``; ties and NaN take the later
    index, as torch; the gradient goes to the indices."""
    return cummax_result(*refuse_complex_grad("cummax", x, _cummax(x, dim=dim)))


@tensor_method()
@numpy_keywords
@int_parameters("cummin", dim=(1, "int"))
def cummin(x, dim: int):
    """(values, indices) of the running minimum along ``dim`` (see ``cummax``)."""
    return cummin_result(*refuse_complex_grad("cummin", x, _cummin(x, dim=dim)))
