"""Variance and standard deviation (var, std, var_mean, std_mean)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from gradkit._user_frames import warn_at_user
from gradkit.int_arguments import function_form, ints_reader
from gradkit.numbers_hooks import chain, combination_of
from gradkit.number_arguments import numbers_reader

from gradkit.backend import get_array_module
from gradkit.ops._op import op
from gradkit.ops.arithmetic import add
from gradkit.ops.complex import conj, real
from gradkit.ops.piecewise import where
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.reduction import (axes, expand_back, mean, reduced_count,
                                   sum)


# torch's CPU var/std kernels of real tensors are Welford passes accumulating in double,
# rounded once at the end (std after its square root): float32 4e26 values have a finite std
# though their var overflows (strided_breadth seed 1807543), and float16 and float32 results
# are its bits (complex ones are not computed so: complex64 stays as it is)
_WELFORD = {np.dtype(np.float16): np.float64, np.dtype(np.float32): np.float64}


def _wide(x):
    """x in the dtype torch's variance kernels accumulate it in."""
    return x.astype(_WELFORD[x.dtype]) if x.dtype in _WELFORD else x


def _two_pass(xp, x, out, correction, root: bool):
    """torch's var/std of one result from 2+ float32 values: ATen's two-pass std_var_all_cpu,
    whose mean is ``x.mean()`` in float32 (so a sum past float32's range makes it inf, and
    the result: strided_breadth seed 1807543) and the squared deviations from that rounded
    mean summed in double (the variance of three float32 1e30 is inf there, 7.6e22 squared;
    gradkit's double mean gave the exact 0, and the last bit of 1 in 7 random variances)."""
    n = x.size
    if out.size != 1 or x.dtype != np.float32 or n < 2 or xp is not np:
        return out
    dof = n - correction if n - correction > 0 else 0.0  # ATen's max(0, n - c): NaN is 0
    with np.errstate(all="ignore"):
        mean = np.float32(np.add.reduce(x, axis=None, dtype=np.float32)) / np.float32(n)
        deviations = x.astype(np.float64) - np.float64(mean)
        variance = np.add.reduce(deviations * deviations, axis=None) / float(dof)
        return np.full_like(out, np.sqrt(variance) if root else variance)


def _narrow(out, x, real: bool = True):
    """A result computed from ``_wide(x)`` in x's dtype (its real dtype for a variance)."""
    dtype = x.real.dtype if real else x.dtype
    return out.astype(dtype, copy=False) if out.dtype != dtype else out


def _only_floating(x, name: str) -> None:
    if getattr(x, "_data", x).dtype.kind in "biu":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def _variance(xp, x, dim, correction, keepdim: bool, name: str):
    """NumPy's var with torch's warning where no degree of freedom is left (n <= correction;
    the result is NaN or inf, as torch's) instead of NumPy's RuntimeWarnings."""
    ax = axes(dim, x.ndim)
    # torch's reduction factor: input numel over output numel, 0 for an empty input
    count = reduced_count(x.shape, dim) if x.size else 0
    if correction != correction:  # NaN: torch's std::max(0, n - NaN) is 0, with no warning
        return _divided_by_nothing(xp, x, ax, count, keepdim)
    if count - correction > 0:
        if not count:  # (a negative correction) the mean of nothing is NaN in torch's pass
            shape = tuple(1 if i in ax else n for i, n in enumerate(x.shape)
                          if keepdim or i not in ax)
            return xp.full(shape, np.nan, dtype=x.real.dtype)
        result = _welford_zeros(xp, x, ax, xp.var(x, axis=ax, ddof=correction,
                                                  keepdims=keepdim), name.endswith("_mean"))
    else:
        warn_at_user(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                     "less than the reduction factor (input numel divided by output numel).")
        result = _divided_by_nothing(xp, x, ax, correction, keepdim)
    # torch's var/std of one result is two-pass (as NumPy's), the rest a Welford pass
    return result if result.size <= 1 and not name.endswith("_mean") else \
        _welford_ends(xp, x, ax, correction, result, 0)


# below it no Welford step overflows (x - mean, delta squared) and NumPy's var is within rounding
_ORDINARY = 1e150


def _welford_ends(xp, x, ax: tuple, correction, result, which: int):
    """``result`` (NumPy's var, ``which`` 0, or mean, 1) with torch's Welford pass replayed
    in double along the rows holding a value beyond 1e150, inf or NaN: its steps overflow
    there (var NaN where NumPy's is inf, the mean of [inf, 2.5] NaN) or keep a mean finite
    that NumPy's sum overflows (the mean of two 1.7e308)."""
    if xp is not np or not ax or x.dtype.kind != "f" or not x.size:
        return result
    if x.max() <= _ORDINARY and x.min() >= -_ORDINARY:  # the common case (a NaN fails):
        return result  # two reductions, no temporary, no rows moved into place
    with np.errstate(invalid="ignore"):
        ordinary = np.abs(x) <= _ORDINARY
    kept, count = x.ndim - len(ax), reduced_count(x.shape, ax)
    extreme = ~np.moveaxis(ordinary, ax, range(kept, x.ndim)).reshape(-1, count).all(axis=1)
    rows = np.moveaxis(x, ax, range(kept, x.ndim)).reshape(-1, count)
    values = rows[extreme].astype(np.float64)
    mean = m2 = np.zeros(len(values))
    with np.errstate(all="ignore"):
        for i in range(values.shape[1]):
            delta = values[:, i] - mean
            mean = mean + delta / (i + 1)
            m2 = m2 + delta * (values[:, i] - mean)
        patched = result.reshape(-1).copy()
        patched[extreme] = mean if which else m2 / max(values.shape[1] - correction, 0)
    return patched.reshape(result.shape)


def _divided_by_nothing(xp, x, ax: tuple, correction, keepdim: bool):
    """The sum of squared deviations over ``count - correction <= 0`` (inf, or NaN where it is
    0), NumPy's warnings silenced."""
    if type(correction) is int and correction >= 2 ** 63:  # torch's Scalar past int64: a
        correction = float(correction)  # double to NumPy (whose ddof is a C long)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if x.dtype.kind == "c":  # torch sums the parts' variances: inf + 0/0 is NaN
            return (xp.var(x.real, axis=ax, ddof=correction, keepdims=keepdim)
                    + xp.var(x.imag, axis=ax, ddof=correction, keepdims=keepdim))
        return xp.var(x, axis=ax, ddof=correction, keepdims=keepdim)


def _welford_zeros(xp, x, ax: tuple, result, always: bool):
    """0 where the reduced values are equal and finite: torch's Welford pass keeps their mean
    exact, where NumPy's mean leaves rounding noise (1e-33; breadth 16983). var_mean and
    std_mean (``always``) take it for every reduction, var and std unless the result is one
    element (torch's all-reduce is two-pass, as NumPy's; breadth 79355)."""
    if (result.size <= 1 and not always) or not ax:
        return result
    equal, _ = constant_along(xp, x, ax)
    return xp.where(equal.reshape(result.shape), 0, result).astype(result.dtype, copy=False)


def welford_mean(x, dims: tuple):
    """``mean(x, dims, keepdim=True)``, exactly the value of the rows whose values are all
    equal, as torch's Welford pass (layer and group norm) gives: the correction added is a
    constant (Sterbenz: first - mean is exact), so the derivatives are the mean's."""
    mu = mean(x, dims, True)
    xp = get_array_module(x._data)
    constant, first = constant_along(xp, x._data, dims)
    if not constant.any():
        return mu
    return add(mu, type(x)._make(xp.where(constant, first - mu._data, 0).astype(mu._data.dtype)))


def constant_along(xp, x, ax: tuple) -> tuple:
    """(where the values along ``ax`` are all equal and finite, their first value), both
    keeping ``ax`` as one-element dims: a Welford pass's mean there is that value exactly."""
    first = x[tuple(slice(0, 1) if i in ax else slice(None) for i in range(x.ndim))]
    return xp.all(x == first, axis=ax, keepdims=True) & xp.isfinite(first), first


def _unbiased_overload(function: str):
    """A ``numbers`` hook for torch's ``var(bool unbiased)`` signature: a lone positional
    bool is ``unbiased`` (not dim 1: ``x.var(True)``), and ``unbiased`` beside ``correction``
    matches no signature."""
    def read(params: dict, positional=(), inputs=()) -> dict:
        lone_bool = type(params.get("dim")) is bool
        if lone_bool and list(params) == ["dim"] and "dim" in positional:
            return {"unbiased": params["dim"]}
        unbiased = params.get("unbiased")  # a bool only (None: the default, unless given)
        if lone_bool or "unbiased" in params and "correction" in params or type(
                unbiased) is not bool and (unbiased is not None or "unbiased" in positional):
            raise combination_of(function, params, positional)
        return params
    return read


_UNSET = object()  # var_mean's unbiased not given (None given is refused, as torch's)


def _lone_unbiased(function: str, x, dim, unbiased, keepdim, correction) -> tuple:
    """``(dim, unbiased)`` of var_mean / std_mean, read as ``_unbiased_overload`` reads them
    (their defaults stand for absent arguments)."""
    given = {name: value for name, value, default in (
        ("dim", dim, None), ("unbiased", unbiased, _UNSET), ("keepdim", keepdim, False),
        ("correction", correction, None)) if value is not default}
    positional = tuple(name for name in ("dim", "unbiased") if name in given)
    try:
        params = _unbiased_overload(function)(given, positional)
        params = ints_reader(function, True, dim=(1, "int[1]?"))(params, positional)
    except TypeError as error:
        raise function_form(error, (x,)) from None  # (no method: the function's words)
    return params.get("dim"), params.get("unbiased")


def _correction(correction, unbiased):
    if unbiased is not None:
        return 1 if unbiased else 0
    return 1 if correction is None else correction


@op(save="x", batchable=True, method=True, contiguous=True)
def var(xp, x, dim=None, unbiased=None, keepdim=False, correction=None):
    """Variance along ``dim``, with Bessel's correction by default (``correction=1``)."""
    _only_floating(x, "std and var")
    c = _correction(correction, unbiased)
    return _two_pass(xp, x, _narrow(_variance(xp, _wide(x), dim, c, keepdim, "var"), x), c,
                     False)


def _var_backward(g, x, dim, unbiased, correction):
    """torch's var_backward of a gradient ``g`` broadcast to x: ``(2 / (n - correction)) * g
    * (x - mean)`` in that order, so a 0 gradient stays 0 where 2 (x - mean) overflows.

    Over all elements with n <= correction torch answers NaN where x equals the mean and inf
    elsewhere; along a dim it divides by n - correction as is (0 * inf = NaN there).
    """
    c = _correction(correction, unbiased)
    n = reduced_count(tuple(x.shape), dim)
    average = mean(x, axes(dim, x.ndim), True)
    if (dim is None or x.ndim == 0) and n <= c:  # x == mean, not x - mean == 0: inf - inf
        return g * where(x == average, math.nan, math.inf)
    return g * (2.0 / (n - c) if n != c else math.inf) * (x - average)


def _var_grad(g, x, dim, unbiased, keepdim, correction):
    return _var_backward(expand_back(g, tuple(x.shape), dim, keepdim), x, dim, unbiased,
                         correction)


var.defvjp(lambda g, x, dim, unbiased, keepdim, correction:
           _var_grad(g, x, dim, unbiased, keepdim, correction))


def _var_jvp(t, x, dim, unbiased, keepdim, correction):
    # torch's: real(var_backward(conj(t), x)) summed over dim
    return sum(real(_var_backward(conj(t), x, dim, unbiased, correction)), axes(dim, x.ndim),
               keepdim)


var.defjvp(_var_jvp)
# correction is a Scalar: 0-d tensors read
var.numbers = chain(_unbiased_overload("var"),
                    numbers_reader("var", True, correction=(None, "double?")),
                    ints_reader("var", True, dim=(1, "int[1]?"), keepdim=(3, "bool")))


@op(save=("x", "result"), batchable=True, method=True, contiguous=True)
def std(xp, x, dim=None, unbiased=None, keepdim=False, correction=None):
    """Standard deviation; saves its result for backward, as torch's StdBackward0."""
    _only_floating(x, "std and var")
    c = _correction(correction, unbiased)
    return _two_pass(xp, x, _narrow(xp.sqrt(_variance(xp, _wide(x), dim, c, keepdim, "std")), x),
                     c, True)


def _over_twice_std(g, out):
    # torch's std_backward: (g / (2 std)).masked_fill_(std == 0, 0). The division does see
    # the 0, so a second derivative through it is 0 * inf = NaN there, as torch's
    return where(out == 0, 0.0, g / (2 * out))


std.defvjp(lambda g, x, out, dim, unbiased, keepdim, correction:
           _var_grad(_over_twice_std(g, out), x, dim, unbiased, keepdim, correction))
std.defjvp(lambda t, x, out, dim, unbiased, keepdim, correction:
           _over_twice_std(_var_jvp(t, x, dim, unbiased, keepdim, correction), out))
std.numbers = chain(_unbiased_overload("std"),
                    numbers_reader("std", True, correction=(None, "double?")),
                    ints_reader("std", True, dim=(1, "int[1]?"), keepdim=(3, "bool")))


@op(save="x", outputs=2, name="var_mean", contiguous=True)
def _var_mean(xp, x, dim=None, unbiased=None, keepdim=False, correction=None):
    """(var, mean) in one node with two outputs, as torch's VarMeanBackward0."""
    c, wide = _correction(correction, unbiased), _wide(x)
    return (_narrow(_variance(xp, wide, dim, c, keepdim, "var_mean"), x),
            _narrow(_welford_mean(xp, wide, dim, keepdim), x, real=False))


def _welford_mean(xp, x, dim, keepdim: bool):
    """The mean torch's var_mean / std_mean return: their Welford pass's."""
    ax = axes(dim, x.ndim)
    return _welford_ends(xp, x, ax, 0, xp.mean(x, axis=ax, keepdims=keepdim), 1)


def _mean_grad(g, x, dim, keepdim):
    shape = tuple(x.shape)
    return expand_back(g, shape, dim, keepdim) / reduced_count(shape, dim)


def _var_mean_vjp(grads, x, dim, unbiased, keepdim, correction):
    g_var, g_mean = grads
    return (_var_grad(g_var, x, dim, unbiased, keepdim, correction)
            + _mean_grad(g_mean, x, dim, keepdim),)


_var_mean.defvjp_all(_var_mean_vjp)
_var_mean.defjvp_all(lambda tangents, x, dim, unbiased, keepdim, correction: (
    _var_jvp(tangents[0], x, dim, unbiased, keepdim, correction), mean(tangents[0], dim, keepdim)))


@numpy_keywords
def var_mean(input, dim=None, unbiased=_UNSET, keepdim=False, correction=None):
    """``(var, mean)`` of input along ``dim`` in one call (one node, as torch)."""
    _only_floating(input, "var_mean")
    dim, unbiased = _lone_unbiased("var_mean", input, dim, unbiased, keepdim, correction)
    return _var_mean(input, dim, unbiased, keepdim, correction)


@op(save=("x", "result0"), outputs=2, name="std_mean", contiguous=True)
def _std_mean(xp, x, dim=None, unbiased=None, keepdim=False, correction=None):
    """(std, mean) in one node with two outputs, as torch's StdMeanBackward0."""
    c, wide = _correction(correction, unbiased), _wide(x)
    return (_narrow(xp.sqrt(_variance(xp, wide, dim, c, keepdim, "std_mean")), x),
            _narrow(_welford_mean(xp, wide, dim, keepdim), x, real=False))


def _std_mean_vjp(grads, x, out, dim, unbiased, keepdim, correction):
    g_std, g_mean = grads
    return (_var_grad(_over_twice_std(g_std, out), x, dim, unbiased, keepdim, correction)
            + _mean_grad(g_mean, x, dim, keepdim),)


_std_mean.defvjp_all(_std_mean_vjp)
_std_mean.defjvp_all(lambda tangents, x, out, dim, unbiased, keepdim, correction: (
    _over_twice_std(_var_jvp(tangents[0], x, dim, unbiased, keepdim, correction), out),
    mean(tangents[0], dim, keepdim)))


@numpy_keywords
def std_mean(input, dim=None, unbiased=_UNSET, keepdim=False, correction=None):
    """``(std, mean)`` of input along ``dim`` in one call (one node, as torch)."""
    _only_floating(input, "std_mean")
    dim, unbiased = _lone_unbiased("std_mean", input, dim, unbiased, keepdim, correction)
    return _std_mean(input, dim, unbiased, keepdim, correction)
