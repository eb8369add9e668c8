"""scatter_reduce: src reduced (sum, prod, mean, amax, amin) into x at ``index`` along ``dim``.

The gradients are torch's (``scatter_reduce_backward`` in its FunctionsManual.cpp), written with
gradkit ops so they differentiate again: prod divides out each factor (with care for zeros),
mean divides by the number of values reduced, and amax/amin share the gradient evenly among
the values equal to the result (ties included).
"""
from __future__ import annotations

import functools

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.ops._op import Op, op
from gradkit.ops.methods import tensor_method
from gradkit.ops.comparison import eq
from gradkit.ops.conversion import astype
from gradkit.ops.dims import dim_among_inputs
from gradkit.ops.indexing import (
    _along_axis_key, _src_block, gather, index_put_into_zeros, scatter, scatter_add)
from gradkit.ops.piecewise import ones_like, where, zeros_like
from gradkit.ops.scatter_checks import check_scatter
from gradkit.ops.shape import _normalize_dim, reshape
from gradkit.ops.unary_helpers import scalar_type_name

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_UFUNCS = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}
_ALIASES = {"max": "amax", "min": "amin"}  # torch takes these older spellings too, unlisted


def _check(x, dim: int, index, src, reduce: str) -> None:
    """torch's checks, in its order."""
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")

    def kernel_check():
        if (x.dtype.kind == "c" and reduce in ("amax", "amin")) or (
                x.dtype.kind == "b" and reduce == "mean"):  # torch's CPU kernels lack these
            raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not '
                                      f"implemented for '{scalar_type_name(x)}'")
    check_scatter(x, dim, index, src, kernel_check)


def _identity(xp, dtype, reduce: str):
    """The value a reduction starts from when x's own value is left out."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    lowest = reduce == "amax"  # amax starts from the lowest value, amin from the highest
    if dtype.kind == "b":
        return not lowest
    if dtype.kind == "f":
        return -np.inf if lowest else np.inf
    return xp.iinfo(dtype).min if lowest else xp.iinfo(dtype).max


@op(save=("x", "dim", "index", "src", "result"), name="scatter_reduce")
def _scatter_reduce(xp, x, dim, index, src, reduce=None, *, include_self=True):
    """x with ``src`` reduced into it at ``index`` along ``dim``."""
    dim = dim_among_inputs("scatter_reduce", dim, x.ndim)
    reduce = _ALIASES.get(reduce, reduce)
    shape = x.shape
    if x.ndim == 0:  # torch reads 0-d tensors as one element
        x, index, src = x.reshape(1), index.reshape(-1), src.reshape(-1)
    _check(x, dim, index, src, reduce)
    if index.size == 0:  # (torch's result is C-contiguous whatever x's layout)
        return xp.array(x, order="C").reshape(shape)
    # torch accumulates half precision in float32 and rounds once at the end
    work = xp.float32 if x.dtype == xp.float16 else x.dtype
    out = x.astype(work, order="C")  # a copy
    key = _along_axis_key(xp, index, dim)
    values = _src_block(src, index).astype(work)
    if reduce in ("amax", "amin"):
        out = _extremes_first_wins(xp, out, key, values, reduce, include_self)
    else:
        if not include_self:
            out[key] = _identity(xp, x.dtype, reduce)
        getattr(xp, _UFUNCS[reduce]).at(out, key, values)
    if reduce == "mean":
        counts = xp.full(x.shape, 1 if include_self else 0, dtype=xp.int64)
        xp.add.at(counts, key, 1)
        counts = xp.maximum(counts, 1)
        # the sum rounded to x's dtype, divided in it (as torch: no double rounding)
        out = out.astype(x.dtype, copy=False)
        out = out // counts if x.dtype.kind in "iu" else out / counts.astype(x.dtype)
    return out.astype(x.dtype, copy=False).reshape(shape)


def _extremes_first_wins(xp, out, key, values, reduce, include_self):
    """amax/amin into ``out`` where, among equal values (0.0 and -0.0), the first in torch's
    order (self, then src in order) wins, as its kernel's ``std::max(self, src)``. NumPy's
    maximum/minimum return their second operand on a tie, so the src values are folded in
    reverse order, then self comes last."""
    ufunc = getattr(xp, _UFUNCS[reduce])
    key = xp.broadcast_arrays(*key)
    folded = xp.full(out.shape, _identity(xp, out.dtype, reduce), dtype=out.dtype)
    ufunc.at(folded, tuple(k.reshape(-1)[::-1] for k in key), values.reshape(-1)[::-1])
    if include_self:
        return ufunc(folded, out)
    out[tuple(key)] = folded[tuple(key)]
    return out


def _coefficients(x, d, index, src, result, reduce, include_self):
    """(cx, terms): the op's derivative as ``grad_x = g * cx`` and ``grad_src = sum over
    terms (cg, cs) of gather(g * cg) * cs`` (None: 1), which gives the vjp and the jvp alike."""
    if reduce == "sum":
        cx, terms = None, [(None, None)]
    elif reduce == "mean":
        counts = ones_like(x) if include_self else zeros_like(x)
        counts = scatter_add(counts, d, index, ones_like(src))
        cx = 1.0 / where(eq(counts, 0), 1.0, counts)
        terms = [(cx, None)]
    elif reduce == "prod":  # the product without each factor, found again where that is 0
        x_safe = where(eq(x, 0), 1.0, x)
        cx = _scatter_reduce(x_safe, d, index, src, "prod", include_self=include_self) / x_safe
        src_zero = eq(src, 0)
        zeros_at = gather(scatter_add(zeros_like(x), d, index, astype(src_zero, x.dtype)), d,
                          index)
        single_zero = src_zero & eq(zeros_at, 1)
        without_zero = _scatter_reduce(x, d, index, where(single_zero, 1.0, src), "prod",
                                      include_self=include_self)
        terms = [(without_zero, astype(single_zero, x.dtype)),
                 (result, 1.0 / where(src_zero, 1.0, src))]
    else:  # amax / amin: split evenly among the values equal to the result (ties included)
        x_is_result = astype(eq(x, result), x.dtype)
        src_is_result = astype(eq(src, gather(result, d, index)), x.dtype)
        split = 1.0 / scatter_add(x_is_result, d, index, src_is_result)
        cx, terms = x_is_result * split, [(split, src_is_result)]
    return cx, terms


def _self_part(t, cx, d, index, include_self):
    """x's share of a gradient or tangent ``t``: ``t * cx``, and, without include_self, zero
    where src was written (written, not multiplied by 0: an infinite ``t`` stays out, as in
    torch's masked_fill)."""
    part = _times(t, cx)
    return part if include_self else scatter(part, d, index, 0.0)


def _refusing_double_backward(function: str, argument: str) -> Op:
    """An op giving grad itself, whose derivative raises: torch's Error node for prod with
    2+ zeros at one place, its message naming ``function`` and its ``argument``."""
    def passthrough(xp, grad):
        return grad

    def refuse(g, **_):
        raise RuntimeError(f"{function}(): Double backward is unsupported for {argument} when "
                           f">1 zeros in {argument} are scattered to the same position in self")
    error = Op(passthrough, node_name="Error")
    error.defvjp(refuse)
    error.defjvp(lambda t: t)
    return error


# scatter_reduce's and index_reduce's (same rules, torch's own names in the message)
REFUSALS = {"scatter_reduce": _refusing_double_backward("scatter_reduce", "src"),
            "index_reduce": _refusing_double_backward("index_reduce", "source")}


def _several_zeros(x, d, index, src) -> bool:
    """Does some place of x receive two or more zeros of src?"""
    zero = astype(eq(src, 0), x.dtype)
    counts = scatter_add(zeros_like(x), d, index, zero)
    return bool(getattr(counts, "_data", counts).max(initial=0) > 1)


def _times(a, b):
    return a if b is None else a * b


def _check_derivative(reduce: str) -> None:
    """torch's forward takes "max"/"min"; its derivative formulas do not."""
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")


def _vjp(g, x, dim, index, src, result, reduce, include_self, function="scatter_reduce"):
    _check_derivative(reduce)
    d = _normalize_dim(dim, x.ndim)
    block = _src_block(src, index)  # src larger than index: the rest gets zeros
    cx, terms = _coefficients(x, d, index, block, result, reduce, include_self)
    if reduce == "prod":  # torch selects between its two formulas: an inf in one stays out
        (without_zero, single_zero), (cg, cs) = terms
        grad_src = where(eq(single_zero, 1), gather(g * without_zero, d, index),
                         gather(g * cg, d, index) * cs)
    else:
        grad_src = None
        for cg, cs in terms:
            term = _times(gather(_times(g, cg), d, index), cs)
            grad_src = term if grad_src is None else grad_src + term
    if reduce == "prod" and _several_zeros(x, d, index, block):
        grad_src = REFUSALS[function](grad_src)
    if tuple(grad_src.shape) != tuple(src.shape):
        corner = tuple(slice(0, n) for n in grad_src.shape)
        grad_src = index_put_into_zeros(grad_src, tuple(src.shape), corner)
    return _self_part(g, cx, d, index, include_self), None, None, grad_src


def _jvp(tangents, x, dim, index, src, result, reduce, include_self):
    """The transpose of the vjp: x's tangent scaled, src's scattered in, each by its share."""
    _check_derivative(reduce)
    t_x, _, _, t_src = tangents
    d = _normalize_dim(dim, x.ndim)
    block = _src_block(src, index)
    cx, terms = _coefficients(x, d, index, block, result, reduce, include_self)
    out = None if t_x is None else _self_part(t_x, cx, d, index, include_self)
    if t_src is not None:
        t_block = _src_block(t_src, index)
        for cg, cs in terms:
            spread = _times(scatter_add(zeros_like(x), d, index, _times(t_block, cs)), cg)
            out = spread if out is None else out + spread
    return out


def _one_element_dims(rule):
    """The rule with a 0-d x (its index, src, result and gradient too) read as one element
    along dim 0, as the forward reads it."""
    def flat(a):
        return None if a is None else reshape(a, (-1,))

    def rule_any_dims(first, x, dim, index, src, result, reduce, include_self):
        if x.ndim:
            return rule(first, x, dim, index, src, result, reduce, include_self)
        first = tuple(map(flat, first)) if isinstance(first, tuple) else flat(first)
        out = rule(first, flat(x), 0, flat(index), flat(src), flat(result), reduce, include_self)
        if isinstance(out, tuple):  # the vjp: (grad_x, None, None, grad_src)
            return reshape(out[0], ()), None, None, reshape(out[3], tuple(src.shape))
        return reshape(out, ())
    return rule_any_dims


_scatter_reduce.defvjp_all(_one_element_dims(_vjp))
_scatter_reduce.edge_inputs = (0, 3)  # self and src: torch's node has no edge for the index
# index_reduce's: the same rule, its refusal of double backward in index_reduce's words
INDEX_REDUCE_VJP = _one_element_dims(functools.partial(_vjp, function="index_reduce"))
_scatter_reduce.defjvp_all(_one_element_dims(_jvp))


@tensor_method(inplace=True)
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """x with ``src`` reduced into it at ``index`` along ``dim``: ``reduce`` is "sum", "prod",
    "mean", "amax" or "amin"; ``include_self=False`` leaves x's own values out where written."""
    if input.is_complex() and is_grad_enabled() and (input.requires_grad or src.requires_grad):
        raise RuntimeError("scatter_reduce does not support automatic differentiation for "
                           "outputs with complex dtype.")
    return _scatter_reduce(input, dim, index, src, reduce, include_self=include_self)
