"""Reductions (sum, mean, var, max, ...) and the softmax family."""
from __future__ import annotations

import math
from collections import namedtuple

from gradkit._tensor import Tensor
from gradkit.autograd.batching import batch_dim
from gradkit.backend import get_array_module, get_default_dtype, to_numpy_dtype
from gradkit.ops import elementwise
from gradkit.ops._op import op
from gradkit.ops.arithmetic import isnan
from gradkit.ops.complex import conj, real
from gradkit.ops.elementwise import exp, ones_like, where
from gradkit.ops.indexing import gather, scatter_into_zeros
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim, expand, flip, permute, reshape, squeeze, unsqueeze
from gradkit.ops.unary_helpers import fixed_error, kernel_error, reject_complex

values_indices = namedtuple("values_indices", ["values", "indices"])


def axes(dim, ndim):
    """Normalized tuple of reduced axes (all axes for dim=None or an empty tuple)."""
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    normalized = tuple(sorted(_normalize_dim(d, ndim) for d in dim))
    return normalized if ndim else ()  # a 0-d tensor accepts dim 0 / -1 and has no axis


def expand_back(g, x_shape, dim, keepdim):
    """Broadcast a reduced gradient back to the input's shape (the vjp of every reduction).

    Dims in front of the reduced shape (a vectorized batched backward's batch dim) stay.
    """
    ndim = len(x_shape)
    reduced = axes(dim, ndim)
    lead = tuple(g.shape[:g.ndim - (ndim if keepdim else ndim - len(reduced))])
    if not keepdim and ndim:
        kept = list(x_shape)
        for a in reduced:
            kept[a] = 1
        g = reshape(g, lead + tuple(kept))
    return expand(g, lead + tuple(x_shape))


def _count(x_shape, dim):
    n = 1
    for a in axes(dim, len(x_shape)):
        n *= x_shape[a]
    return n


def _np_dtype(dtype):
    """A reduction's ``dtype=`` (gradkit, NumPy or Python type) as a NumPy dtype; None stays."""
    return None if dtype is None else to_numpy_dtype(dtype)


def _accumulation_dtype(x, dtype):
    """``dtype=`` of sum/prod/cumsum: integers and bools accumulate in int64, as in torch."""
    if dtype is None and x.dtype.kind in "biu":
        return _INT64
    return _np_dtype(dtype)


_INT64 = to_numpy_dtype(int)


@op(save="x.shape", linear=True, batchable=True, method=True)
def sum(xp, x, dim=None, keepdim=False, dtype=None):  # noqa: A001 - torch's name
    """Sum along ``dim`` (all dims by default), in ``dtype`` when given."""
    return xp.sum(x, axis=axes(dim, x.ndim), keepdims=keepdim,
                  dtype=_accumulation_dtype(x, dtype))


sum.defvjp(lambda g, x_shape, dim, keepdim, dtype: expand_back(g, x_shape, dim, keepdim))
sum.defjvp(lambda t, x_shape, dim, keepdim, dtype: sum(t, dim, keepdim, dtype))


@op(save="x.shape", linear=True, batchable=True, method=True)
def mean(xp, x, dim=None, keepdim=False, dtype=None):
    """Mean along ``dim`` (all dims by default)."""
    dtype = _np_dtype(dtype)
    if x.dtype.kind not in "fc" and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {x.dtype.name.capitalize()}")
    return xp.mean(x, axis=axes(dim, x.ndim), keepdims=keepdim, dtype=dtype)


mean.defvjp(lambda g, x_shape, dim, keepdim, dtype:
            expand_back(g, x_shape, dim, keepdim) / _count(x_shape, dim))
mean.defjvp(lambda t, x_shape, dim, keepdim, dtype: mean(t, dim, keepdim))


def _only_floating(x, name: str) -> None:
    if getattr(x, "_data", x).dtype.kind in "biu":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def _correction(correction, unbiased):
    if unbiased is not None:
        return 1 if unbiased else 0
    return 1 if correction is None else correction


@op(save="x", batchable=True, method=True)
def var(xp, x, dim=None, unbiased=None, keepdim=False, correction=None):
    """Variance along ``dim``, with Bessel's correction by default (``correction=1``)."""
    _only_floating(x, "std and var")
    c = _correction(correction, unbiased)
    return xp.var(x, axis=axes(dim, x.ndim), ddof=c, keepdims=keepdim)


def _var_slope(x, dim, unbiased, correction):
    """d var / d x: 2 (x - mean) / (n - correction), as torch's var_backward.

    Over all elements with n <= correction torch answers NaN where x equals the mean and inf
    elsewhere; along a dim it divides by n - correction as is (0 * inf = NaN there).
    """
    c = _correction(correction, unbiased)
    n = _count(tuple(x.shape), dim)
    average = mean(x, axes(dim, x.ndim), True)
    if (dim is None or x.ndim == 0) and n <= c:  # x == mean, not x - mean == 0: inf - inf
        return where(x == average, math.nan, math.inf)
    return (x - average) * (2.0 / (n - c) if n != c else math.inf)


def _var_grad(g, x, dim, unbiased, keepdim, correction):
    return expand_back(g, tuple(x.shape), dim, keepdim) * _var_slope(x, dim, unbiased,
                                                                      correction)


var.defvjp(lambda g, x, dim, unbiased, keepdim, correction:
           _var_grad(g, x, dim, unbiased, keepdim, correction))


def _var_jvp(t, x, dim, unbiased, keepdim, correction):
    slope = _var_slope(x, dim, unbiased, correction)
    return sum(real(conj(slope) * t), axes(dim, x.ndim), keepdim)


var.defjvp(_var_jvp)


@op(save=("x", "result"), batchable=True, method=True)
def std(xp, x, dim=None, unbiased=None, keepdim=False, correction=None):
    """Standard deviation; saves its result for backward, as torch's StdBackward0."""
    _only_floating(x, "std and var")
    c = _correction(correction, unbiased)
    return xp.sqrt(xp.var(x, axis=axes(dim, x.ndim), ddof=c, keepdims=keepdim))


def _over_twice_std(g, out):
    # torch: 0 where std is 0 (not 0 * inf = nan); the division never sees that 0
    zero = out == 0
    return where(zero, 0.0, g / (2 * where(zero, 1.0, out)))


std.defvjp(lambda g, x, out, dim, unbiased, keepdim, correction:
           _var_grad(_over_twice_std(g, out), x, dim, unbiased, keepdim, correction))
std.defjvp(lambda t, x, out, dim, unbiased, keepdim, correction:
           _over_twice_std(_var_jvp(t, x, dim, unbiased, keepdim, correction), out))


@numpy_keywords
def var_mean(x, dim=None, unbiased=None, keepdim=False, correction=None):
    """``(var, mean)`` of x along ``dim`` in one call."""
    _only_floating(x, "var_mean")
    return var(x, dim, unbiased, keepdim, correction), mean(x, dim, keepdim)


@numpy_keywords
def std_mean(x, dim=None, unbiased=None, keepdim=False, correction=None):
    """``(std, mean)`` of x along ``dim`` in one call."""
    _only_floating(x, "std_mean")
    return std(x, dim, unbiased, keepdim, correction), mean(x, dim, keepdim)


@op(save=("x", "result"), batchable=True, method=True)
def prod(xp, x, dim=None, keepdim=False, dtype=None):
    """Product along ``dim`` (all dims by default); zeros are handled in backward."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError("prod(): argument 'dim' must be int")
    return xp.prod(x, axis=axes(dim, x.ndim), keepdims=keepdim,
                   dtype=_accumulation_dtype(x, dtype))


def _prod_others(x, out, dim, keepdim):
    """d prod / d x_i = product of the other elements.

    Without zeros that is out / x_i. With zeros, the products of the others are
    formed explicitly (an n x n matrix per reduced row, x_i replaced by 1), which
    stays exact, and differentiable, to any order.
    """
    shape = tuple(x.shape)
    if not shape:  # torch passes a 0-d input's gradient through (out / x is NaN at inf)
        return ones_like(x)
    data = getattr(x, "_data", x)
    if not (data == 0).any():
        return expand_back(out, shape, dim, keepdim) / x
    reduced = axes(dim, x.ndim)
    kept = tuple(a for a in range(x.ndim) if a not in reduced)
    order = kept + reduced
    moved = permute(x, order)
    n = 1
    for a in reduced:
        n *= shape[a]
    rows = reshape(moved, tuple(shape[a] for a in kept) + (n,))
    diagonal = get_array_module(data).eye(n, dtype=bool)
    others = prod(where(diagonal, 1.0, unsqueeze(rows, -2)), -1)
    others = reshape(others, tuple(shape[a] for a in order))
    inverse = [0] * x.ndim
    for i, a in enumerate(order):
        inverse[a] = i
    return permute(others, tuple(inverse))


def _prod_vjp(g, x, out, dim, keepdim, dtype):
    if x.ndim == 0:  # torch: the gradient itself (not g * x / x, which rounds for complex x)
        return g
    return expand_back(g, tuple(x.shape), dim, keepdim) * conj(_prod_others(x, out, dim, keepdim))


prod.defvjp(_prod_vjp)
prod.defjvp(lambda t, x, out, dim, keepdim, dtype:
            t if x.ndim == 0 else
            sum(t * _prod_others(x, out, dim, keepdim), axes(dim, x.ndim), keepdim))


def _evenly(g, x, out, dim, keepdim):
    """Gradient of amax/amin: shared evenly among the elements equal to the extreme.

    As torch, ``g / count * mask``: a NaN extreme (equal to nothing) gives NaN gradients.
    """
    shape = tuple(x.shape)
    mask = x == expand_back(out, shape, dim, keepdim)
    count = sum(mask, axes(dim, x.ndim), True)
    return expand_back(g, shape, dim, keepdim) / count * mask


def _nan_aware_mask(x, out):
    """The elements a max()/min() over all elements picked: the NaNs when the result is NaN."""
    return (x == out) | (isnan(x) & isnan(out))


def _evenly_all(g, x, out):
    """Gradient of max()/min() without dim: shared among the picked elements (torch's
    evenly_distribute_backward, which finds NaNs)."""
    mask = _nan_aware_mask(x, out)
    return where(mask, expand_back(g, tuple(x.shape), None, False) / sum(mask), 0.0)


def _evenly_all_jvp(t, x, out):
    mask = _nan_aware_mask(x, out)
    return sum(where(mask, t, 0.0)) / sum(mask)


@op(save=("x", "result"), batchable=True, node_name="MaxBackward1")
def _max_all(xp, x):
    _check_nonempty("max", x, None)
    reject_complex(x, kernel_error("max_all"))
    return xp.max(x)


@op(save=("x", "result"), batchable=True, node_name="MinBackward1")
def _min_all(xp, x):
    _check_nonempty("min", x, None)
    reject_complex(x, kernel_error("min_all"))
    return xp.min(x)


for _extreme_all in (_max_all, _min_all):
    _extreme_all.defvjp(_evenly_all)
    _extreme_all.defjvp(_evenly_all_jvp)


@op(save=("x", "result"), batchable=True, method=True)
def amax(xp, x, dim=None, keepdim=False):
    """Maximum along ``dim`` (all dims by default); ties share the gradient."""
    _check_nonempty("amax", x, dim, as_given=True)  # before the dtype, as torch
    reject_complex(x, kernel_error("max_values_cpu"))
    return xp.amax(x, axis=axes(dim, x.ndim), keepdims=keepdim)


def _evenly_jvp(t, x, out, dim, keepdim):
    """Tangent of amax/amin: the mean of the tangents at the elements equal to the extreme."""
    mask = x == expand_back(out, tuple(x.shape), dim, keepdim)
    reduced = axes(dim, x.ndim)
    return sum(where(mask, t, 0.0), reduced, keepdim) / sum(mask, reduced, keepdim)


amax.defvjp(_evenly)
amax.defjvp(_evenly_jvp)


@op(save=("x", "result"), batchable=True, method=True)
def amin(xp, x, dim=None, keepdim=False):
    """Minimum along ``dim`` (all dims by default); ties share the gradient."""
    _check_nonempty("amin", x, dim, as_given=True)  # before the dtype, as torch
    reject_complex(x, kernel_error("min_values_cpu"))
    return xp.amin(x, axis=axes(dim, x.ndim), keepdims=keepdim)


amin.defvjp(_evenly)
amin.defjvp(_evenly_jvp)


def _check_nonempty(name, x, dim, as_given=False):
    """torch's errors for a max/min-like reduction with nothing to pick from (naming the dim
    as given, -1, for amax/amin; normalized for the others)."""
    if x.size:
        return
    if dim is None or dim == () or dim == []:  # torch: an empty dim list reduces everything
        if name.startswith("arg"):
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in (dim,) if isinstance(dim, int) else tuple(dim):
        a = _normalize_dim(d, x.ndim)
        if x.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d if as_given else a} to have "
                             "non-zero size.")


def _extreme_along(xp, x, dim, keepdim, name, arg_extreme):
    """(values, indices) of the max/min along ``dim``: the forward of max(x, dim)/min(x, dim)."""
    _check_nonempty(name, x, dim)
    reject_complex(x, fixed_error(RuntimeError, f"{name}(): does not support complex input"))
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=xp.int64)
    idx = arg_extreme(x, axis=dim, keepdims=True)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, values = xp.squeeze(idx, dim), xp.squeeze(values, dim)
    return values, idx


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,),
    node_name="MaxBackward0")
def _max_dim(xp, x, *, dim, keepdim=False):
    return _extreme_along(xp, x, dim, keepdim, "max", xp.argmax)


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,),
    node_name="MinBackward0")
def _min_dim(xp, x, *, dim, keepdim=False):
    return _extreme_along(xp, x, dim, keepdim, "min", xp.argmin)


def _select_grad(g, x_shape, indices, dim, keepdim):
    if not x_shape:  # 0-d input: the value itself was selected
        return g
    if not keepdim:
        g, indices = unsqueeze(g, dim), unsqueeze(indices, dim)
    return scatter_into_zeros(g, indices, x_shape, dim)


def _select_jvp(tangents, x_shape, indices, dim, keepdim):
    """Tangent of max/min along a dim: the tangent at the selected index (indices get none)."""
    t = tangents[0]
    if not x_shape:
        return t, None
    if keepdim:
        return gather(t, dim, indices), None
    return squeeze(gather(t, dim, unsqueeze(indices, dim)), dim), None


_max_dim.defvjp_all(lambda g, x_shape, idx, dim, keepdim: (_select_grad(g, x_shape, idx, dim,
                                                                        keepdim),))
_min_dim.defvjp_all(lambda g, x_shape, idx, dim, keepdim: (_select_grad(g, x_shape, idx, dim,
                                                                        keepdim),))
_max_dim.defjvp_all(_select_jvp)
_min_dim.defjvp_all(_select_jvp)


def _extreme(pairwise_name: str, whole, along):
    """torch.max/min: ``f(x)`` a tensor, ``f(x, dim)`` (values, indices), ``f(x, other)``."""
    def extreme(x, dim=None, keepdim: bool = False):
        if isinstance(dim, Tensor):
            return getattr(elementwise, pairwise_name)(x, dim)
        if dim is None:
            return whole(x)
        values, indices = along(x, _normalize_dim(dim, x.ndim), keepdim)
        return values_indices(values, indices)
    extreme.__name__ = pairwise_name[:3]  # max, min
    return numpy_keywords(extreme)


max = tensor_method()(_extreme("maximum", _max_all, _max_dim))  # noqa: A001
max.__doc__ = "max(x) -> tensor; max(x, dim) -> (values, indices); max(x, other) -> maximum."
min = tensor_method()(_extreme("minimum", _min_all, _min_dim))  # noqa: A001
min.__doc__ = "min(x) -> tensor; min(x, dim) -> (values, indices); min(x, other) -> minimum."


def _arg_extreme(xp, x, dim, keepdim, name, arg_extreme):
    """Index of the max/min (of the flattened x without ``dim``): argmax's and argmin's forward."""
    for kind, words in (("c", "complex"), ("b", "bool")):
        if x.dtype.kind == kind:
            raise RuntimeError(f"{name}(): does not support {words} input")
    _check_nonempty(name, x, dim)  # NumPy's own error is a ValueError
    if dim is None:
        out = arg_extreme(x)
        return xp.reshape(out, (1,) * x.ndim) if keepdim else out
    return arg_extreme(x, axis=_normalize_dim(dim, x.ndim), keepdims=keepdim)


@op(method=True)
def argmax(xp, x, dim=None, keepdim=False):
    """Index of the maximum (of the flattened x without ``dim``); no gradient."""
    return _arg_extreme(xp, x, dim, keepdim, "argmax", xp.argmax)


@op(method=True)
def argmin(xp, x, dim=None, keepdim=False):
    """Index of the minimum (of the flattened x without ``dim``); no gradient."""
    return _arg_extreme(xp, x, dim, keepdim, "argmin", xp.argmin)


@op(save=("x", "result"), batchable=True, method=True)
def logsumexp(xp, x, *, dim, keepdim=False):
    """log(sum(exp(x))) along ``dim``, computed stably (integers in the default dtype)."""
    if x.dtype.kind in "biu":
        x = x.astype(get_default_dtype().np)
    a = axes(dim, x.ndim)
    m = xp.amax(x, axis=a, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, x.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    out = xp.log(xp.sum(xp.exp(x - m), axis=a, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, a)


logsumexp.defvjp(lambda g, x, out, dim, keepdim:
                 expand_back(g, tuple(x.shape), dim, keepdim)
                 * conj(exp(x - expand_back(out, tuple(x.shape), dim, keepdim))))
logsumexp.defjvp(lambda t, x, out, dim, keepdim:
                 sum(t * exp(x - expand_back(out, tuple(x.shape), dim, keepdim)), dim, keepdim))


@op(save="result", batchable=True, method=True)
def softmax(xp, x, *, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    x = _softmax_input(x, dim, dtype, "softmax")
    a = axes(dim, x.ndim)
    if x.size == 0:
        return x.copy()
    z = xp.exp(x - xp.amax(x, axis=a, keepdims=True))
    return z / xp.sum(z, axis=a, keepdims=True)


def _softmax_input(x, dim, dtype, name):
    """x in ``dtype``; torch's kernels take floating inputs only."""
    if dtype is not None:
        x = x.astype(to_numpy_dtype(dtype))
    if x.dtype.kind not in "fV":
        last = x.ndim == 0 or _normalize_dim(dim, x.ndim) == x.ndim - 1
        raise kernel_error(f"{name}_{'lastdim_' if last else ''}kernel_impl")(x)
    return x


def _sum_along(g, out, dim):
    """sum(g, dim, keepdim=True) for a gradient g of out (a batched one too); a 0-d out has
    no dim to sum."""
    return sum(g, batch_dim(dim), True) if out.ndim else g


softmax.defvjp(lambda g, out, dim, dtype: out * (g - _sum_along(g * out, out, dim)))
softmax.defjvp(lambda t, out, dim, dtype: out * (t - sum(t * out, dim, True)))


@op(save="result", batchable=True, method=True)
def log_softmax(xp, x, *, dim, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    x = _softmax_input(x, dim, dtype, "log_softmax")
    a = axes(dim, x.ndim)
    if x.size == 0:
        return x.copy()
    shifted = x - xp.amax(x, axis=a, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=a, keepdims=True))


log_softmax.defvjp(lambda g, out, dim, dtype: g - exp(out) * _sum_along(g, out, dim))
log_softmax.defjvp(lambda t, out, dim, dtype: t - sum(exp(out) * t, dim, True))


@op(linear=True, method=True)
def cumsum(xp, x, *, dim, dtype=None):
    """Cumulative sum along ``dim`` (integers and bools in int64, as torch)."""
    dtype = _accumulation_dtype(x, dtype)
    if x.ndim == 0:  # NumPy would return shape (1,); torch keeps 0-d
        _normalize_dim(dim, 0)
        return x.astype(dtype or x.dtype, copy=True)
    out = xp.cumsum(x, axis=_normalize_dim(dim, x.ndim), dtype=dtype)
    if out.dtype.kind in "fc":  # torch's sums start from 0.0: a -0.0 prefix sums to 0.0
        out += out.dtype.type(0)
    return out


def _reverse_cumsum(g, dim):
    if g.ndim == 0:
        return g
    return flip(cumsum(flip(g, (dim,)), dim), (dim,))


cumsum.defvjp(lambda g, dim, dtype: _reverse_cumsum(g, dim))
cumsum.defjvp(lambda t, dim, dtype: cumsum(t, dim))


@op(method=True)
def all(xp, x, dim=None, keepdim=False):  # noqa: A001
    """True if every element (along ``dim``) is nonzero (no gradient; uint8 for uint8 x)."""
    return _logical_result(x, xp.all(x, axis=None if dim is None else axes(dim, x.ndim),
                                      keepdims=keepdim))


@op(method=True)
def any(xp, x, dim=None, keepdim=False):  # noqa: A001
    """True if some element (along ``dim``) is nonzero (no gradient; uint8 for uint8 x)."""
    return _logical_result(x, xp.any(x, axis=None if dim is None else axes(dim, x.ndim),
                                      keepdims=keepdim))


def _logical_result(x, out):
    """torch's all/any answer in uint8 for uint8 inputs (a legacy it keeps), else bool."""
    return out.astype(x.dtype) if x.dtype.kind == "u" else out
