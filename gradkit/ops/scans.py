"""Scans along a dim: cumprod and logcumsumexp (cumsum: ``reduction.py``; cummax and cummin:
``running_extremes.py``), and prod, whose gradient at zeros is made of cumprods."""
from __future__ import annotations

import builtins

import numpy as np

from gradkit.int_arguments import ints_reader
from gradkit.numbers_hooks import chain, keepdim_needs_dim
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.backend import get_array_module, to_numpy_dtype
from gradkit.ops._op import op
from gradkit.ops.arithmetic import add, sub
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import exp, log
from gradkit.ops.methods import register as register_method
from gradkit.ops import piecewise
from gradkit.ops.piecewise import ones_like, where, zeros_like
from gradkit.ops.joining import cat, stack
from gradkit.ops.reduction import (_accumulation_dtype, axes, cumsum, expand_back, in_float32,
                                   rounded, scan, scan_dtype, sum)
from gradkit.ops.slicing import narrow
from gradkit.ops.shape import _normalize_dim, flip, reshape
from gradkit.ops.unary_helpers import c_type_name, kernel_error


def _scan_dim(x, dim) -> int:
    """``dim`` normalized for x (a 0-d x accepts 0 and -1, as torch)."""
    return _normalize_dim(dim, len(x.shape))


def _data(x):
    return getattr(x, "_data", x)


@op(save=("x", "result"), method=True, contiguous=True)
def cumprod(xp, x, *, dim, dtype=None):
    """Cumulative product along ``dim`` (integers and bools in int64, as torch)."""
    dtype = scan_dtype("cumprod", x, dtype)
    d = _scan_dim(x, dim)
    if x.ndim == 0:
        return x.astype(dtype or x.dtype, copy=True)
    x = x.astype(dtype or x.dtype, copy=True)
    if x.dtype.kind == "c":
        return _complex_cumprod(xp, x, d)
    return scan(xp.cumprod, x, x.dtype, axis=d)  # NumPy would widen int32 to int64


def _complex_cumprod(xp, x, d):
    """torch's complex cumprod: a running complex128 product from 1 (so 1 * (inf+0j) is
    inf+nanj), each step C's fused product, which NumPy's elementwise one is and its cumprod
    is not (complex128 cumprods an ulp off), rounded to x's dtype per output."""
    factors = xp.moveaxis(x, d, 0).astype(np.complex128)
    out = xp.empty_like(factors)
    running = xp.ones(factors.shape[1:], np.complex128)
    for i in range(factors.shape[0]):
        running = running * factors[i]
        out[i] = running
    return xp.moveaxis(out, 0, d).astype(x.dtype)


cumprod.numbers = ints_reader("cumprod", dim=(1, "int"), dtype=(None, "ScalarType?"))
cumprod.keyword_only("dtype")


def _reverse_cumsum(g, d):
    return flip(cumsum(flip(g, (d,)), d), (d,))


def _cumprod_vjp(g, x, out, dim, dtype):
    """torch's cumprod_backward: sum over j >= i of g_j times the product of x_k, k <= j, k != i.

    Without zeros that is reversed_cumsum(g * out) / x. With zeros, a plain backward takes
    torch's O(n) form (only the elements up to the first zero get a gradient); a graph-recording
    one the O(n^2) products of the others, which stay differentiable where x is 0."""
    if x.ndim == 0 or x.shape[_scan_dim(x, dim)] <= 1:
        return g
    d = _scan_dim(x, dim)
    if not (_data(x) == 0).any():
        return _reverse_cumsum(g * conj(out), d) / conj(x)
    if not is_grad_enabled():
        return _up_to_first_zero(g, x, out, d)
    return _omitted_products(g, x, d)


def _up_to_first_zero(g, x, out, d):
    zero = x == 0
    zeros_so_far = cumsum(zero, d)
    before = zeros_so_far == 0
    between = (zeros_so_far == 1) & ~zero  # after the first zero, before the second
    first = zero & (zeros_so_far == 1)
    grad_before = _reverse_cumsum(where(before, g * conj(out), 0), d) / conj(where(before, x, 1))
    head = prod(where(before, x, 1), d, True)  # the product before the first zero
    tail = sum(where(zeros_so_far == 1, g, 0) * conj(cumprod(where(between, x, 1), d)), d, True)
    return where(before, grad_before, where(first, conj(head) * tail, 0))


def _omitted_products(g, x, d):
    """torch's O(n^2) form, slice by slice: at j >= k, the product of x_i for i <= j, i != k,
    from prods of x before k and cumprods of x after it. x_k is left out, never replaced by 1,
    so the second derivatives are torch's (a NaN x_k does not reach its own row)."""
    n = x.shape[d]
    return stack([sum(narrow(g, d, k, n - k) * row, d)
                  for k, row in enumerate(_omitted_rows(conj(x), d))], d)


def _omitted_rows(x, d):
    """For each k, the products of x_i for i <= j, i != k at j = k..n-1 along d."""
    n = x.shape[d]
    ones = ones_like(narrow(x, d, 0, 1))
    for k in range(n):
        until_k = ones if k == 0 else prod(narrow(x, d, 0, k), d, True)
        if k == n - 1:
            yield until_k
        else:
            from_next = cumprod(narrow(x, d, k + 1, n - k - 1), d)
            yield cat([until_k, from_next if k == 0 else until_k * from_next], d)


def _cumprod_jvp(t, x, out, dim, dtype):
    """torch's cumprod_jvp: cumsum(t / x) * out up to the first zero, then the cumprod of x
    with the first zero replaced by its tangent. Recording a graph with zeros in x, the sum
    over k of t_k times the products of the other x_i instead: torch's form reads the first
    zero as a constant, so the gradient of the tangent there is NaN in torch (finite
    differences give the products of the others)."""
    if x.ndim == 0:
        return t
    d = _scan_dim(x, dim)
    if is_grad_enabled() and (x.requires_grad or t.requires_grad) and (_data(x) == 0).any():
        terms = [narrow(t, d, k, 1) * row for k, row in enumerate(_omitted_rows(x, d))]
        return builtins.sum(cat([zeros_like(narrow(t, d, 0, k)), term], d) if k else term
                            for k, term in enumerate(terms))
    zero = x == 0
    first = zero & (cumsum(zero, d) == 1)
    from_first = cumsum(first, d) > 0
    before = cumsum(t / where(from_first, 1, x), d) * out  # x is nonzero before the first 0
    return where(from_first, cumprod(where(first, t, x), d), before)


cumprod.defvjp(_cumprod_vjp)
cumprod.defjvp(_cumprod_jvp)


@op(save=("x", "result"), batchable=True, method=True, contiguous=True)
def prod(xp, x, dim=None, keepdim=False, dtype=None):
    """Product along ``dim`` (all dims by default); zeros are handled in backward."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError("prod(): argument 'dim' must be int")
    # NumPy's prod is its multiply.reduce: called here, an overflow's RuntimeWarning comes
    # from gradkit's module, which silences it (quiet_numpy.py), as torch is silent
    reduce = np.multiply.reduce if xp is np else xp.prod
    ax, accumulation = axes(dim, x.ndim), _accumulation_dtype(x, dtype)
    if x.dtype == np.float16 and (accumulation is None or accumulation == np.float16) and \
            ax and x.size:
        return _half_steps(x, ax, keepdim)
    return reduce(x, axis=ax, keepdims=keepdim, dtype=accumulation)


def _half_steps(x, ax: tuple, keepdim: bool):
    """A float16 product as torch's kernel: its Half multiply rounds each step to float16
    (so 300 * 3000 * 1e-7 is inf); NumPy's float16 reduce carries a float. Below its vector
    size torch multiplies in sequence (longer rows: its lanes' order, not replayed)."""
    kept = x.ndim - len(ax)
    rows = np.moveaxis(x, ax, range(kept, x.ndim))
    rows = rows.reshape(rows.shape[:kept] + (-1,))
    product = np.ones(rows.shape[:-1], dtype=np.float16)
    with np.errstate(all="ignore"):
        for i in range(rows.shape[-1]):
            product = product * rows[..., i]
    shape = tuple(1 if i in ax else n for i, n in enumerate(x.shape)
                  if keepdim or i not in ax)
    return product.reshape(shape)


prod.numbers = chain(keepdim_needs_dim("prod"),
                    ints_reader("prod", "single", dim=(1, "int"), keepdim=(2, "bool"),
                                 dtype=(None, "ScalarType?")))


def _prod_others(x, out, dim, keepdim):
    """d prod / d x_i, the product of the other elements: out / x_i without zeros, else torch's
    prod_safe_zeros_backward, the products left of x_i times those right of it (exclusive
    cumprods, so a second derivative is cumprod's, as in torch)."""
    shape = tuple(x.shape)
    if not shape:  # torch passes a 0-d input's gradient through (out / x is NaN at inf)
        return ones_like(x)
    if not (_data(x) == 0).any():
        return expand_back(out, shape, dim, keepdim) / x
    rows = reshape(x, (-1,)) if dim is None else x  # torch: a flat view for a full product
    d = 0 if dim is None else _normalize_dim(dim, x.ndim)
    n = rows.shape[d]
    if n == 1:  # torch: the gradient itself, no graph through x (cumprod's would give NaN)
        return ones_like(x)
    ones = ones_like(narrow(rows, d, 0, 1))
    left = cumprod(cat([ones, narrow(rows, d, 0, n - 1)], d), d)
    right = flip(cumprod(cat([ones, flip(narrow(rows, d, 1, n - 1), (d,))], d), d), (d,))
    return reshape(left * right, shape)


def _zeros_without_grad_mode(x, dim) -> bool:
    """torch's full prod_backward, without grad mode, answers zeros for two zeros in x (NaN or
    inf beside them too); with it (and for a product over a dim), the products of the others."""
    return dim is None and not is_grad_enabled() and (_data(x) == 0).sum() > 1


def _prod_vjp(g, x, out, dim, keepdim, dtype):
    if x.ndim == 0:  # torch: the gradient itself (not g * x / x, which rounds for complex x)
        return g
    g = expand_back(g, tuple(x.shape), dim, keepdim)
    if _zeros_without_grad_mode(x, dim):
        return zeros_like(g)
    return g * conj(_prod_others(x, out, dim, keepdim))


def _prod_jvp(t, x, out, dim, keepdim, dtype):
    """torch's sum(prod_backward(ones) * t): its zeros by grad mode too (times an inf t: NaN)."""
    if x.ndim == 0:
        return t
    others = zeros_like(x) if _zeros_without_grad_mode(x, dim) else _prod_others(x, out, dim,
                                                                                 keepdim)
    return sum(t * others, axes(dim, x.ndim), keepdim)


prod.defvjp(_prod_vjp)
prod.defjvp(_prod_jvp)


def _cumprod_in_place(x, dim: int, *, dtype=None):
    """The values ``x.cumprod_(dim)`` writes: torch refuses a ``dtype=`` other than x's."""
    if dtype is not None and to_numpy_dtype(dtype) != _data(x).dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {c_type_name(_data(x))} and "
                           f"output tensor dtype {c_type_name(np.empty(0, to_numpy_dtype(dtype)))}"
                           " should match")
    return cumprod(x, dim, dtype=dtype)


register_method(_cumprod_in_place, "cumprod", method=False, inplace=True)


@op(save=("x", "result"), method=True, contiguous=True)
def logcumsumexp(xp, x, *, dim):
    """log(cumsum(exp(x))) along ``dim``, computed stably (floating and complex x only)."""
    if x.dtype.kind not in "fc":
        raise kernel_error("logcumsumexp_out_cpu")(x)
    d = _scan_dim(x, dim)
    if x.ndim == 0:  # torch copies a 0-d x (its -0.0 too)
        return x.copy()
    return rounded(_log_cumsum_exp(xp, in_float32(x), d), x)


def _log_cumsum_exp(xp, x, d: int):
    out = xp.moveaxis(x.copy(), d, 0)  # a view: filled row by row along d, as torch's loop
    add = xp.logaddexp if x.dtype.kind == "f" else _complex_log_add_exp
    with np.errstate(all="ignore"):  # infinite cases are picked after the fact
        if x.dtype.kind == "c" and out.shape[0]:  # torch adds the first one to log(0) too
            out[0] = add(xp.full_like(out[0], -np.inf), out[0])
        for i in range(1, out.shape[0]):
            out[i] = add(out[i - 1], out[i])
    out = xp.moveaxis(out, 0, d)
    out += out.dtype.type(0)  # torch starts from log(0) = -inf: a first -0.0 becomes 0.0
    return out


logcumsumexp.numbers = ints_reader("logcumsumexp", dim=(1, "int"))


def _complex_log_add_exp(a, b):
    """torch's complex log(exp(a) + exp(b)): around the one of larger real part; NaN in
    either gives NaN; infinite real parts of one sign stay (-inf) or add exactly (+inf)."""
    xp = get_array_module(a)
    b_larger = b.real > a.real
    high, low = xp.where(b_larger, b, a), xp.where(b_larger, a, b)
    out = xp.log1p(xp.exp(low - high)) + high
    same_inf = ~xp.isfinite(low.real) & (low.real == high.real)
    out = xp.where(same_inf & (low.real < 0), a, out)  # the sum so far: -inf + 0j from log(0)
    out = xp.where(same_inf & (low.real > 0), xp.log(xp.exp(low) + xp.exp(high)), out)
    return xp.where(xp.isnan(a) | xp.isnan(b), complex(np.nan, np.nan), out)


def _reverse_logcumsumexp(v, d):
    return flip(logcumsumexp(flip(v, (d,)), d), (d,))


def _signed_logs(v, keep_nan: bool):
    """(log|v| where v > 0, log|v| where v < 0), the lowest float elsewhere (exp gives 0): the
    two parts of a real v for sums taken in log space; a NaN goes with the positive part when
    ``keep_nan`` (torch's backward drops a NaN gradient, its forward mode spreads one)."""
    lowest = float(np.finfo(_data(v).dtype).min)
    with np.errstate(divide="ignore"):  # log|0| = -inf, masked
        log_abs = log(piecewise.abs(v))
    positive = (v > 0) | (v != v) if keep_nan else v > 0
    return where(positive, log_abs, lowest), where(v < 0, log_abs, lowest)


def _logcumsumexp_vjp(g, x, out, dim):
    """torch's logcumsumexp_backward: sum over j >= i of g_j exp(x_i - out_j), by the
    logcumsumexp of log|g| - out, positive and negative parts apart (real x)."""
    if x.ndim == 0 or 0 in x.shape:
        return g
    d = _scan_dim(x, dim)
    if _data(x).dtype.kind == "c":
        with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf: exp gives 0
            # the ops, not NumPy's - and + on the arrays a plain backward passes: torch's
            # complex sub and add multiply by alpha = 1 + 0j, so an infinite out gives NaN
            return conj(exp(add(_reverse_logcumsumexp(sub(log(conj(g)), out), d), x)))
    with np.errstate(over="ignore"):  # lowest - out
        positive, negative = (exp(_reverse_logcumsumexp(part - out, d) + x)
                              for part in _signed_logs(g, False))
    return positive - negative


def _logcumsumexp_jvp(t, x, out, dim):
    """sum over j <= i of t_j exp(x_j - out_i), by the logcumsumexp of log|t| + x (the parts
    of each sign apart for real x), so that no weight underflows: torch's cumsum(e t) /
    cumsum(e), e = exp(x - max), is 0 / 0 where a prefix is far below the max (and takes no
    max for complex x: exp overflows)."""
    if x.ndim == 0 or 0 in x.shape:
        return t
    d = _scan_dim(x, dim)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # as the vjp's
        if _data(x).dtype.kind == "c":
            return exp(logcumsumexp(log(t) + x, d) - out)
        positive, negative = (exp(logcumsumexp(part + x, d) - out)
                              for part in _signed_logs(t, True))
    return positive - negative


logcumsumexp.defvjp(_logcumsumexp_vjp)
logcumsumexp.defjvp(_logcumsumexp_jvp)
