"""The regularized incomplete gamma functions P(a, x) (``gammainc``) and Q(a, x) = 1 - P
(``gammaincc``) on raw arrays, as torch's CPU kernels (ATen/native/Math.h, from Cephes'
igam.c): Temme's uniform asymptotic expansion near the transition a ~ x for large a, else the
power series of P, the series of Q for small x, or Q's continued fraction. Each element takes
its branch (the arrays are split by mask); the loops run on until every element converged.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops.binary_math import fused_multiply_add
from gradkit.ops.coefficient_tables import TEMME_D
from gradkit.ops.special import erfc_array
from gradkit.ops.special_gamma import c_power
from gradkit.ops.special_gamma import c_lgamma_array
from gradkit.ops.special_series import c_math

_LANCZOS_NUM = (0.006061842346248907, 0.5098416655656676, 19.519927882476175,
                449.9445569063168, 6955.999602515376, 75999.29304014542,
                601859.6171681099, 3481712.154980646, 14605578.087685067,
                43338889.32467614, 86363131.2881386, 103794043.11634454,
                56906521.913471565)
_LANCZOS_DENOM = (1.0, 66.0, 1925.0, 32670.0, 357423.0, 2637558.0, 13339535.0, 45995730.0,
                  105258076.0, 150917976.0, 120543840.0, 39916800.0, 0.0)
_LANCZOS_G = 6.024680040776729583740234375
_MAX_ITER = 2000
_PI_FLOAT = float(np.float32(math.pi))  # torch's kernel writes c10::pi<float> here


def _constants(dtype):
    """(MACHEP, MAXLOG, BIG, BIGINV) of the dtype, as torch's kernel picks them."""
    if dtype == np.float64:
        return 1.11022302462515654042e-16, 7.09782712893383996843e2, 4.503599627370496e15, \
            2.22044604925031308085e-16
    return 5.9604644775390625e-8, 88.72283905206835, 16777216.0, 5.9604644775390625e-8


def _lanczos_sum(xp, a):
    """Cephes' ratevl of the Lanczos sum (a > 1: in 1 / a, highest order first)."""
    large = xp.abs(a) > 1
    y = xp.where(large, 1 / a, a)
    num_forward, num_back = _LANCZOS_NUM, _LANCZOS_NUM[::-1]
    den_forward, den_back = _LANCZOS_DENOM, _LANCZOS_DENOM[::-1]
    num = xp.where(large, num_back[0], num_forward[0])
    den = xp.where(large, den_back[0], den_forward[0])
    for k in range(1, len(_LANCZOS_NUM)):
        num = fused_multiply_add(xp, num, y, xp.where(large, num_back[k], num_forward[k]))
        den = fused_multiply_add(xp, den, y, xp.where(large, den_back[k], den_forward[k]))
    return num / den  # N - M = 0: no power of x


def _prefactor(xp, a, x):
    """x^a e^-x / gamma(a), as Cephes' igam_fac (Lanczos near a ~ x)."""
    _, max_log, _, _ = _constants(a.dtype)
    direct = fused_multiply_add(xp, a, c_math(xp, "log", x), -x) - c_lgamma_array(xp, a)
    direct = xp.where(direct < -max_log, 0.0, c_math(xp, "exp", direct))
    fac = a + _LANCZOS_G - 0.5
    res = xp.sqrt(fac / 2.718281828459045) / _lanczos_sum(xp, a)
    small = (a < 200) & (x < 200)
    near = res * (c_math(xp, "exp", a - x) * c_power(xp, x / fac, a))
    num = x - a - _LANCZOS_G + 0.5
    ratio = num / fac
    far = res * c_math(xp, "exp", fused_multiply_add(xp, a, c_math(xp, "log1p", ratio) - ratio,
                                      x * (0.5 - _LANCZOS_G) / fac))
    return xp.where(xp.abs(a - x) > 0.4 * xp.abs(a), direct, xp.where(small, near, far))


def _p_series(xp, a, x):
    """P by its power series (Cephes igam_series)."""
    machep = _constants(a.dtype)[0]
    ax = _prefactor(xp, a, x)
    r, c, total = a.copy(), xp.ones_like(a), xp.ones_like(a)
    going = ax != 0
    for _ in range(_MAX_ITER):
        if not bool(going.any()):
            break
        r = xp.where(going, r + 1, r)
        c = xp.where(going, c * (x / r), c)
        total = xp.where(going, total + c, total)
        going = going & ~(c <= machep * total) & ~xp.isnan(total)
    return xp.where(ax == 0, 0.0, total * ax / a)


def _q_series(xp, a, x, fma):
    """Q for small x by the series of P's complement (Cephes igamc_series)."""
    machep = _constants(a.dtype)[0]
    fac, total = xp.ones_like(a), xp.zeros_like(a)
    going = xp.ones(a.shape, bool)
    for n in range(1, _MAX_ITER):
        if not bool(going.any()):
            break
        fac = xp.where(going, fac * (-x / n), fac)
        term = fac / (a + n)
        total = xp.where(going, total + term, total)
        going = going & ~(xp.abs(term) <= machep * xp.abs(total)) & ~xp.isnan(total)
    log_x = c_math(xp, "log", x)
    head = -c_math(xp, "expm1", fma(xp, a, log_x, -c_lgamma_array(xp, 1 + a)))
    return fma(xp, -c_math(xp, "exp", fma(xp, a, log_x, -c_lgamma_array(xp, a))), total, head)


def _q_fraction(xp, a, x, fma):
    """Q by its continued fraction (Cephes igamc_continued_fraction)."""
    machep, _, big, big_inverse = _constants(a.dtype)
    ax = _prefactor(xp, a, x)
    y, z, c = 1 - a, x + (1 - a) + 1, xp.zeros_like(a)
    p2, q2, p1, q1 = xp.ones_like(a), x.copy(), x + 1, z * x
    answer = p1 / q1
    going = ax != 0
    for _ in range(_MAX_ITER):
        if not bool(going.any()):
            break
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk, qk = fma(xp, p1, z, -(p2 * yc)), fma(xp, q1, z, -(q2 * yc))
        nonzero = qk != 0
        r = pk / xp.where(nonzero, qk, 1)
        t = xp.where(nonzero, xp.abs((answer - r) / r), 1.0)
        answer = xp.where(going & nonzero, r, answer)
        scale = xp.where(xp.abs(pk) > big, big_inverse, 1.0)
        p2, p1 = xp.where(going, p1 * scale, p2), xp.where(going, pk * scale, p1)
        q2, q1 = xp.where(going, q1 * scale, q2), xp.where(going, qk * scale, q1)
        going = going & ~(t <= machep) & ~xp.isnan(answer)
    return xp.where(ax == 0, 0.0, answer * ax)


def _temme(xp, a, x, lower: bool):
    """Temme's uniform asymptotic expansion (Cephes asymptotic_series); ``lower``: P, else Q."""
    machep = _constants(a.dtype)[0]
    sign = -1.0 if lower else 1.0
    sigma = (x - a) / a
    eta = xp.sqrt(-2 * (c_math(xp, "log1p", sigma) - sigma))
    eta = xp.where(x / a > 1, eta, xp.where(x / a < 1, -eta, 0.0))
    res = 0.5 * erfc_array(xp, sign * eta * xp.sqrt(a / 2))
    powers = [xp.ones_like(a)]
    for _ in range(24):
        powers.append(eta * powers[-1])
    total, afac = xp.zeros_like(a), xp.ones_like(a)
    old = xp.full_like(a, math.inf)
    going = xp.ones(a.shape, bool)
    for row in TEMME_D:
        ck, inner = xp.full_like(a, row[0]), xp.ones(a.shape, bool)
        for n in range(1, 25):
            term = row[n] * powers[n]
            ck = xp.where(inner, fused_multiply_add(xp, xp.full_like(a, row[n]), powers[n], ck), ck)
            inner = inner & ~(xp.abs(term) < machep * xp.abs(ck))
        term = ck * afac
        going = going & ~(xp.abs(term) > old)
        total = xp.where(going, total + term, total)
        going = going & ~(xp.abs(term) < machep * xp.abs(total))
        old, afac = xp.where(going, xp.abs(term), old), xp.where(going, afac / a, afac)
    return res + sign * c_math(xp, "exp", -0.5 * a * eta * eta) * total / xp.sqrt(
        2 * _PI_FLOAT * a)


def _on(xp, mask, out, fn, a, x, *args):
    """out with fn(a, x) where mask (computed on those elements only)."""
    if bool(mask.any()):
        out[mask] = fn(xp, a[mask], x[mask], *args)
    return out


def _uses_temme(xp, a, x):
    ratio = xp.abs(x - a) / a
    return ((a > 20) & (a < 200) & (ratio < 0.3)) | ((a > 200) & (ratio < 4.5 / xp.sqrt(a)))


def _edges(xp, a, x, upper: bool):
    """(mask of the elements torch's domain rules decide, their values) for Q (``upper``) or
    P, in torch's order (so NaN with x = 0 gives 0 or 1; NaN elsewhere runs through)."""
    at_zero, at_inf = (1.0, 0.0) if upper else (0.0, 1.0)  # the value at x = 0, x = inf
    negative = (x < 0) | (a < 0)
    a_zero = ~negative & (a == 0)
    x_zero = ~negative & ~a_zero & (x == 0)
    a_inf = ~negative & ~a_zero & ~x_zero & xp.isinf(a)
    x_inf = ~negative & ~a_zero & ~x_zero & ~a_inf & xp.isinf(x)
    value = xp.where(a_zero, xp.where(x > 0, at_inf, math.nan), math.nan)
    value = xp.where(x_zero, at_zero, value)
    value = xp.where(a_inf, xp.where(xp.isinf(x), math.nan, at_zero), value)
    value = xp.where(x_inf, at_inf, value)
    return negative | a_zero | x_zero | a_inf | x_inf, value


def _separate_multiply_add(xp, a, b, c):
    return a * b + c


def _upper(xp, a, x, fma):
    """Q(a, x); ``fma``: the multiply-add of Q's series and continued fraction (fused, or
    not: see gammainc_array)."""
    decided, out = _edges(xp, a, x, upper=True)
    out = out.astype(a.dtype)
    temme = ~decided & _uses_temme(xp, a, x)
    rest = ~decided & ~temme
    below = ((x > 1.1) & (x < a)) | ((x <= 0.5) & (-0.4 / c_math(xp, "log", x) < a)) | (
        (x > 0.5) & (x <= 1.1) & (x * 1.1 < a))
    _on(xp, temme, out, _temme, a, x, False)
    _on(xp, rest & below, out, lambda xp_, a_, x_: 1.0 - _p_series(xp_, a_, x_), a, x)
    _on(xp, rest & ~below & (x > 1.1), out, _q_fraction, a, x, fma)
    _on(xp, rest & ~below & (x <= 1.1), out, _q_series, a, x, fma)
    return out


def gammaincc_array(xp, a, x):
    """Q(a, x) = Gamma(a, x) / Gamma(a) elementwise, in a's (common) dtype."""
    with np.errstate(all="ignore"):
        return _upper(xp, a, x, fused_multiply_add)


def gammainc_array(xp, a, x):
    """P(a, x) = gamma(a, x) / Gamma(a) elementwise, in a's (common) dtype. Within torch's
    igamma kernel, Q's series and continued fraction round their products separately where
    the igammac kernel fuses them (found by comparison), and so do they here."""
    fma = _separate_multiply_add
    with np.errstate(all="ignore"):
        decided, out = _edges(xp, a, x, upper=False)
        out = out.astype(a.dtype)
        temme = ~decided & _uses_temme(xp, a, x)
        rest = ~decided & ~temme
        _on(xp, temme, out, _temme, a, x, True)
        complement = rest & (x > 1.0) & (x > a)
        _on(xp, complement, out, lambda xp_, a_, x_, f: 1.0 - _upper(xp_, a_, x_, f), a, x, fma)
        _on(xp, rest & ~complement, out, _p_series, a, x)
    return out
