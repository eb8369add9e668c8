"""Reductions: sum, mean, cumsum, all/any, and the softmax family (prod: ``scans.py``; var
and std: ``variance.py``; max, min and their arg forms: ``extremes.py``)."""
from __future__ import annotations

import warnings
from functools import partial

import numpy as np


from gradkit.int_arguments import ints_reader
from gradkit.numbers_hooks import chain, keepdim_needs_dim
from gradkit.autograd.batching import batch_dim
from gradkit.backend import get_default_dtype, to_numpy_dtype
from gradkit.ops._op import op
from gradkit.ops.arithmetic import sub
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import exp
from gradkit.ops.fused import complex_quotient
from gradkit.ops.promotion import SCALAR_TYPE_NAMES
from gradkit.ops.dims import distinct_dims
from gradkit.ops.shape import _normalize_dim, expand, flip, reshape, unsqueeze
from gradkit.ops.unary_helpers import kernel_error


def axes(dim, ndim):
    """Normalized tuple of reduced axes (all axes for dim=None or an empty tuple)."""
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    normalized = distinct_dims(dim, ndim)
    return tuple(sorted(normalized)) if ndim else ()  # a 0-d tensor: dim 0 / -1, no axis


def unsqueeze_back(g, x_shape, dim, keepdim):
    """A reduced gradient with its reduced dims back as dims of size 1 (keepdim's shape).

    Dims in front of the reduced shape (a vectorized batched backward's batch dim) stay.
    """
    ndim = len(x_shape)
    if keepdim or not ndim:
        return g
    reduced = axes(dim, ndim)
    lead = tuple(g.shape[:g.ndim - (ndim - len(reduced))])
    kept = list(x_shape)
    for a in reduced:
        kept[a] = 1
    return reshape(g, lead + tuple(kept))


def expand_back(g, x_shape, dim, keepdim):
    """Broadcast a reduced gradient back to the input's shape (the vjp of every reduction)."""
    g = unsqueeze_back(g, x_shape, dim, keepdim)
    return expand(g, tuple(g.shape[:g.ndim - len(x_shape)]) + tuple(x_shape))


def reduced_count(x_shape, dim):
    n = 1
    for a in axes(dim, len(x_shape)):
        n *= x_shape[a]
    return n


def _np_dtype(dtype):
    """A reduction's ``dtype=`` (gradkit, NumPy or Python type) as a NumPy dtype; None stays."""
    return None if dtype is None else to_numpy_dtype(dtype)


def scan_dtype(name: str, x, dtype):
    """cumsum/cumprod's accumulation dtype; torch's scan kernels have no bool version."""
    dtype = _accumulation_dtype(x, dtype)
    if dtype == np.bool_:
        raise kernel_error(f"{name}_out_cpu")(np.empty(0, dtype))
    return dtype


def _accumulation_dtype(x, dtype):
    """``dtype=`` of sum/prod/cumsum: integers and bools accumulate in int64, as in torch."""
    if dtype is None and x.dtype.kind in "biu":
        return _INT64
    return _np_dtype(dtype)


_INT64 = to_numpy_dtype(int)


@op(save="x.shape", linear=True, batchable=True, method=True, contiguous=True)
def sum(xp, x, dim=None, keepdim=False, dtype=None):  # noqa: A001 - torch's name
    """Sum along ``dim`` (all dims by default), in ``dtype`` when given."""
    return accumulate(np.add.reduce if xp is np else xp.sum, x, _accumulation_dtype(x, dtype),
                      axis=axes(dim, x.ndim), keepdims=keepdim)


def in_float32(x):
    """float16 x as float32: torch runs its half kernels here in float32, rounded once."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def rounded(out, x):
    """``out`` (computed from ``in_float32(x)``) back in float16 when x was."""
    return out.astype(np.float16) if x.dtype == np.float16 else out


def accumulate(reduce, x, dtype, **options):
    """``reduce`` (a NumPy sum) of x in ``dtype``; float16 adds up in float32 and rounds once,
    as torch's CPU kernels (NumPy would round after each addition along a strided dim)."""
    if (dtype or x.dtype) == np.float16:
        return reduce(x.astype(np.float16), dtype=np.float32, **options).astype(np.float16)
    return reduce(x, dtype=dtype, **options)


# torch's CPU scans carry their running value in acc_type: a wider dtype, rounded per output
_SCAN_CARRY = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float64,
               np.dtype(np.complex64): np.complex128}


def scan(reduce, x, dtype, **options):
    """``reduce`` (NumPy's cumsum or cumprod) of x in ``dtype`` as torch's CPU scans: float16,
    float32 and complex64 carry the running value in float32, float64 and complex128 and round
    each output (NumPy's rounds each step: a float32 cumsum an ulp from torch's)."""
    target = np.dtype(dtype or x.dtype)
    carry = _SCAN_CARRY.get(target)
    if carry is None:
        return reduce(x, dtype=dtype, **options)
    return reduce(x.astype(target), dtype=carry, **options).astype(target)


sum.numbers = chain(keepdim_needs_dim("sum"),
                   ints_reader("sum", "single", dim=(1, "int[1]?"), keepdim=(2, "bool"),
                                dtype=(None, "ScalarType?")))


def _sum_back(g, x_shape, dim, keepdim):
    """torch's sum_backward: the reduced dims unsqueezed one by one, then expanded (nodes
    Unsqueeze and Expand where gradkit's other reductions view the gradient first)."""
    ndim = len(x_shape)
    reduced = axes(dim, ndim)
    if keepdim or g.ndim != ndim - len(reduced):  # (a batched backward's g: lead dims)
        return expand_back(g, x_shape, dim, keepdim)
    if len(reduced) < ndim:
        for a in sorted(reduced):
            g = unsqueeze(g, a)
    return expand(g, tuple(x_shape))


sum.defvjp(lambda g, x_shape, dim, keepdim, dtype: _sum_back(g, x_shape, dim, keepdim))
sum.defjvp(lambda t, x_shape, dim, keepdim, dtype: sum(t, dim, keepdim, dtype))


@op(save="x.shape", linear=True, batchable=True, method=True, contiguous=True)
def mean(xp, x, dim=None, keepdim=False, dtype=None):
    """Mean along ``dim`` (all dims by default)."""
    dtype = floating_dtype("mean", dtype)
    if x.dtype.kind not in "fc" and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {SCALAR_TYPE_NAMES.get(x.dtype.name, x.dtype.name)}")
    return accumulate(partial(quiet_mean, xp), x, dtype, axis=axes(dim, x.ndim), keepdims=keepdim)


def floating_dtype(name: str, dtype):
    """``dtype=`` of mean/nanmean as a NumPy dtype; torch refuses one that is not floating."""
    dtype = _np_dtype(dtype)
    if dtype is not None and dtype.kind not in "fc":
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                           "either a floating point or complex dtype. Got: "
                           f"{SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)}")
    return dtype


mean.numbers = chain(keepdim_needs_dim("mean"),
                    ints_reader("mean", "single", dim=(1, "int[1]?"), keepdim=(2, "bool"),
                                 dtype=(None, "ScalarType?")))


def quiet_mean(xp, a, **options):
    """``xp.mean``; NaN over nothing without NumPy's warnings, as torch (silent). NumPy's is
    its add.reduce divided by the count, called here: a RuntimeWarning (overflow) is then
    raised from gradkit's module, which silences it (quiet_numpy.py)."""
    if a.size and xp is np:  # (the count an intp, as NumPy's: float32 / intp is in float64)
        total = np.add.reduce(a, **{"axis": None, **options})  # (reduce's default: axis 0)
        count = np.intp(a.size // max(np.size(total), 1))
        if total.dtype.kind == "c":  # torch's sum / n: a complex quotient, 1 / n a factor
            return complex_quotient(xp, total, np.asarray(count, total.dtype))
        if type(total) is np.ndarray:  # (in place, as NumPy's: the reduction's own layout)
            return np.true_divide(total, count, out=total, casting="unsafe")
        return total.dtype.type(total / count)
    if a.size:
        return xp.mean(a, **options)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return xp.mean(a, **options)


mean.defvjp(lambda g, x_shape, dim, keepdim, dtype:
            _sum_back(g, x_shape, dim, keepdim) / reduced_count(x_shape, dim))
mean.defjvp(lambda t, x_shape, dim, keepdim, dtype: mean(t, dim, keepdim))



@op(save=("x", "result"), batchable=True, method=True, contiguous=True)
def logsumexp(xp, x, *, dim, keepdim=False):
    """log(sum(exp(x))) along ``dim``, computed stably (integers in the default dtype)."""
    if dim is None:  # torch 2.13 has no all-dims form (a later torch adds one)
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    if x.dtype.kind in "biu":
        x = x.astype(get_default_dtype().np)
    if dim in ((), []) and not keepdim and x.ndim and x.size:
        # torch's kernel reads dim=() as all dims for the max, then fails adding it back
        raise RuntimeError("output with shape [] doesn't match the broadcast shape "
                           f"[{', '.join('1' * x.ndim)}]")
    a = axes(dim, x.ndim)
    # as torch, the shift is the largest real part (a complex result's imaginary part is then
    # the principal value of the log)
    parts = xp.real(x) if x.dtype.kind == "c" else x
    m = xp.amax(parts, axis=a, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, parts.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    out = xp.log(xp.sum(xp.exp(x - m), axis=a, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, a)


logsumexp.numbers = ints_reader("logsumexp", dim=(1, "int[1]"), keepdim=(2, "bool"))


def _exp_minus_result(x, out, dim, keepdim):
    """exp(x - logsumexp(x)), subtracting with torch's sub (on raw arrays too): a complex
    result with a NaN part gives NaN everywhere, as torch's (1 + 0j) * y does."""
    return exp(sub(x, expand_back(out, tuple(x.shape), dim, keepdim)))


logsumexp.defvjp(lambda g, x, out, dim, keepdim:
                 expand_back(g, tuple(x.shape), dim, keepdim)
                 * conj(_exp_minus_result(x, out, dim, keepdim)))
# (its jvp rule: ops/softmax_backward.py, torch's logsumexp_jvp)


@op(save="result", batchable=True, method=True, contiguous=True)
def softmax(xp, x, *, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    return _softmax_kernel(xp, x, dim, dtype, "softmax")


softmax.numbers = ints_reader("softmax", dim=(1, "int"), dtype=(None, "ScalarType?"))


def _softmax_kernel(xp, x, dim, dtype, name):
    """softmax or log_softmax (by ``name``) of x in ``dtype``, shifted by the max along dim so
    that exp cannot overflow. torch's kernels take floating inputs only (none runs on an empty
    x; torch's autograd then refuses a complex one that requires grad: ``no_complex_grad``)."""
    _normalize_dim(dim, x.ndim)  # an int: torch refuses a tuple here
    if dtype is not None:
        x = x.astype(to_numpy_dtype(dtype))
    if x.dtype == np.float16:
        return rounded(_softmax_kernel(xp, in_float32(x), dim, None, name), x)
    if x.dtype.kind not in "fV" and x.size:
        last = x.ndim == 0 or _normalize_dim(dim, x.ndim) == x.ndim - 1
        raise kernel_error(f"{name}_{'lastdim_' if last else ''}kernel_impl")(x)
    a = axes(dim, x.ndim)
    if x.size == 0:
        return x.copy()
    shifted = x - xp.amax(x, axis=a, keepdims=True)
    if name == "log_softmax":
        return shifted - xp.log(xp.sum(xp.exp(shifted), axis=a, keepdims=True))
    z = xp.exp(shifted)
    return z / xp.sum(z, axis=a, keepdims=True)


def _sum_along(g, out, dim):
    """sum(g, dim, keepdim=True) for a gradient g of out (a batched one too); a 0-d out has
    no dim to sum."""
    return sum(g, batch_dim(dim), True) if out.ndim else g


# (its vjp and jvp rules: ops/softmax_backward.py, torch's _softmax_backward_data)
softmax.no_complex_grad = "_softmax"


@op(save="result", batchable=True, method=True, contiguous=True)
def log_softmax(xp, x, *, dim, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    return _softmax_kernel(xp, x, dim, dtype, "log_softmax")


log_softmax.numbers = ints_reader("log_softmax", dim=(1, "int"), dtype=(None, "ScalarType?"))


# (its vjp and jvp rules: ops/softmax_backward.py, torch's _log_softmax_backward_data)
log_softmax.no_complex_grad = "_log_softmax"


@op(linear=True, method=True, contiguous=True)
def cumsum(xp, x, *, dim, dtype=None):
    """Cumulative sum along ``dim`` (integers and bools in int64, as torch)."""
    dtype = scan_dtype("cumsum", x, dtype)
    if x.ndim == 0:  # NumPy would return shape (1,); torch keeps 0-d
        _normalize_dim(dim, 0)
        return x.astype(dtype or x.dtype, copy=True)
    out = scan(xp.cumsum, x, dtype, axis=_normalize_dim(dim, x.ndim))
    if out.dtype.kind in "fc":  # torch's sums start from 0.0: a -0.0 prefix sums to 0.0
        out += out.dtype.type(0)
    return out


cumsum.numbers = ints_reader("cumsum", dim=(1, "int"), dtype=(None, "ScalarType?"))
cumsum.keyword_only("dtype")


def _reverse_cumsum(g, dim):
    if g.ndim == 0:
        return g
    return flip(cumsum(flip(g, (dim,)), dim), (dim,))


cumsum.defvjp(lambda g, dim, dtype: _reverse_cumsum(g, dim))
cumsum.defjvp(lambda t, dim, dtype: cumsum(t, dim))


@op(method=True, contiguous=True)
def all(xp, x, dim=None, keepdim=False):  # noqa: A001
    """True if every element (along ``dim``) is nonzero (no gradient; uint8 for uint8 x)."""
    return _logical_result(x, xp.all(x, axis=_logical_axes(dim, x.ndim), keepdims=keepdim))


all.numbers = ints_reader("all", True, dim=(1, "int|int[]?"), keepdim=(2, "bool"))


@op(method=True, contiguous=True)
def any(xp, x, dim=None, keepdim=False):  # noqa: A001
    """True if some element (along ``dim``) is nonzero (no gradient; uint8 for uint8 x)."""
    return _logical_result(x, xp.any(x, axis=_logical_axes(dim, x.ndim), keepdims=keepdim))


def _logical_axes(dim, ndim):
    """all/any's axes: unlike sum, an empty dim list reduces nothing there (torch 2.13)."""
    if dim is None:
        return None
    return () if dim in ((), []) else axes(dim, ndim)


any.numbers = ints_reader("any", True, dim=(1, "int|int[]?"), keepdim=(2, "bool"))


def _logical_result(x, out):
    """torch's all/any answer in uint8 for uint8 inputs (a legacy it keeps), else bool."""
    return out.astype(x.dtype) if x.dtype == np.uint8 else out
