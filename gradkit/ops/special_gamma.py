"""The gamma family on raw arrays of module xp (no SciPy):
lgamma, digamma, trigamma and the Hurwitz zeta function (for polygamma and zeta).

The algorithms are those of torch's CPU kernels (ATen/native/Math.h, derived from the Cephes
Math Library), written elementwise with masks instead of branches, so their values at the
edges are torch's: digamma(+-0) = -+inf, NaN at negative integers; trigamma by reflection
below 0.5 (finite, huge, at negative integers, as torch); zeta by Euler-Maclaurin.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

_PI = math.pi
_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16
# below this q torch's direct sum runs -q terms; its closed form gives the same sum at once
_ZETA_FAR = -1000.0


def _work_dtype(x) -> np.dtype:
    """torch computes these in float64 for double, else in float (half is widened)."""
    return np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0 or a negative integer
        return math.inf


def _c_library_lgamma():
    """C's lgamma, elementwise, or None where the C library is not found. Python's
    math.lgamma is CPython's own: up to 1e5 ulp from C's near lgamma's zeros at 1 and 2."""
    name = ctypes.util.find_library("m")
    try:
        function = getattr(ctypes.CDLL(name), "lgamma", None) if name else None
    except OSError:
        function = None
    if function is None:
        return None
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
    return np.frompyfunc(function, 1, 1)


_lgamma_float64 = _c_library_lgamma() or np.frompyfunc(_lgamma_scalar, 1, 1)


# Stirling's series of lgamma: B_2k / (2k (2k - 1)) for k = 1 .. 9, in long double
_STIRLING = tuple(np.longdouble(b) / np.longdouble(d) for b, d in (
    (1, 12), (-1, 360), (1, 1260), (-1, 1680), (1, 1188), (-691, 360360), (1, 156),
    (-3617, 122400), (43867, 244188)))
_HALF_LOG_2PI = np.longdouble("0.918938533204672741780329736405617639861")
_STIRLING_FROM = 3.0   # below, rounding near lgamma's zero at 2 needs C's special cases
_EXTENDED = np.finfo(np.longdouble).nmant >= 63  # x87's 80 bits: 11 bits past a double


def _lgamma_stirling(x: np.ndarray) -> np.ndarray:
    """lgamma of finite x >= 3 in long double, rounded once to float64: Stirling's series
    at x + 13 or above, the recurrence below (torch's SLEEF kernel is correctly rounded there
    nearly always; C's lgamma is one ulp off in a quarter of the doubles: breadth seed 24382,
    a Kumaraswamy variance that subtracts two lgammas of 4.8e17)."""
    z = x.astype(np.longdouble)
    product = np.ones_like(z)
    for _ in range(13):
        low = z < 16
        product = np.where(low, product * z, product)
        z = np.where(low, z + 1, z)
    r = 1 / z
    series = np.zeros_like(z)
    for c in reversed(_STIRLING):
        series = series * (r * r) + c
    out = (z - 0.5) * np.log(z) - z + _HALF_LOG_2PI + series * r - np.log(product)
    return out.astype(np.float64)


def c_lgamma_array(xp, x):
    """C's lgamma elementwise in float64, rounded to x's dtype (torch's igamma kernels call
    it). Inf at the poles and at -inf. CuPy arrays are computed on the host."""
    host = x.get() if hasattr(x, "get") else x
    out = np.asarray(_lgamma_float64(np.asarray(host, dtype=np.float64)), dtype=np.float64)
    return xp.asarray(out.astype(x.dtype))


def lgamma_array(xp, x):
    """log|gamma(x)| as torch's lgamma: C's lgamma, but correctly rounded (nearly always) for
    x >= 3 where long double allows, rounded to x's dtype (torch's float32 values, to the
    bit; its float64 ones within an ulp: its vectorized kernel is SLEEF's)."""
    host = np.asarray(x.get() if hasattr(x, "get") else x, dtype=np.float64)
    out = np.asarray(_lgamma_float64(host), dtype=np.float64)
    large = np.isfinite(host) & (host >= _STIRLING_FROM)
    if _EXTENDED and large.any():
        out[large] = _lgamma_stirling(host[large])
    return xp.asarray(out.astype(x.dtype))


def digamma_array(xp, x):
    """The digamma function psi(x) = d/dx lgamma(x)."""
    dtype, work = x.dtype, _work_dtype(x)
    x = x.astype(work)
    with np.errstate(all="ignore"):
        negative = x < 0
        # reflection psi(x) = psi(1 - x) - pi / tan(pi r), r the fractional part, in double
        fraction = xp.fmod(x.astype(np.float64), 1.0)
        reflection = (_PI / xp.tan(_PI * fraction)).astype(work)
        y = xp.where(negative, 1 - x, x)
        shifted = xp.zeros_like(y)
        for _ in range(10):  # push y to >= 10: psi(y) = psi(y + 1) - 1 / y
            small = y < 10
            shifted = xp.where(small, shifted - 1 / y, shifted)
            y = xp.where(small, y + 1, y)
        z = 1 / (y * y)
        poly = xp.zeros_like(y)
        for coefficient in _DIGAMMA_A:
            poly = poly * z + work.type(coefficient)
        tail = xp.where(y < 1e17, z * poly, 0)
        value = shifted + xp.log(y) - work.type(0.5) / y - tail
        value = xp.where(y == 10, shifted + work.type(_PSI_10), value)
        value = xp.where(negative, value - reflection, value)
        value = xp.where(x == 0, xp.copysign(work.type(math.inf), -x), value)
        value = xp.where(negative & (x == xp.trunc(x)), work.type(math.nan), value)
    return value.astype(dtype)


def trigamma_array(xp, x):
    """psi'(x), by reflection below 0.5, six recurrence steps and the asymptotic series."""
    dtype, work = x.dtype, _work_dtype(x)
    x = x.astype(work)
    pi = work.type(_PI)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        sine = xp.sin(pi * x)
        result = xp.where(reflect, -(pi * pi) / (sine * sine), work.type(0))
        y = xp.where(reflect, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (y * y)
            y = y + 1
        ixx = 1 / (y * y)
        one = work.type(1)
        result = result + (one + one / (2 * y) + ixx * (one / 6 - ixx * (
            one / 30 - ixx * (one / 42)))) / y
        value = xp.where(reflect, -result, result)
    return value.astype(dtype)


def _pow_scalar(base: float, exponent: float) -> float:
    try:
        return math.pow(base, exponent)
    except (ValueError, OverflowError):  # NumPy's scalar power gives C's inf / NaN there
        return float(np.float64(base) ** np.float64(exponent))


_pow_numpy = np.frompyfunc(_pow_scalar, 2, 1)


def c_power(xp, base, exponent):
    """base ** exponent with C's pow on NumPy (torch's kernels call it; NumPy's vectorized
    power differs in the last bit now and then), computed in float64, in base's dtype."""
    if xp is np:
        dtype = getattr(base, "dtype", np.dtype(np.float64))
        return np.asarray(_pow_numpy(base, exponent), dtype=np.float64).astype(dtype)
    return base ** exponent


def zeta_array(xp, order, q):
    """The Hurwitz zeta function sum_k (q + k) ** -order, for order > 1 (a number or an array
    broadcast with q), in float64."""
    q = q.astype(np.float64)
    with np.errstate(all="ignore"):
        pole = (q <= 0) & (q == xp.floor(q))
        far = (q < _ZETA_FAR) & ~pole
        total = c_power(xp, q, -order)
        a = q.copy()
        term = xp.zeros_like(q)
        done = pole | xp.isnan(q) | far
        i = 0
        while not bool(xp.all(done)):  # the direct sum, to a > 9
            i += 1
            active = ~done & ((i <= 9) | (a <= 9))
            a = xp.where(active, a + 1, a)
            term = xp.where(active, c_power(xp, a, -order), term)
            total = xp.where(active, total + term, total)
            converged = active & (xp.abs(term) < _MACHEP * xp.abs(total))
            done = done | converged | ~active
        summed = _euler_maclaurin(xp, order, total, a, term)
        converged_early = xp.abs(term) < _MACHEP * xp.abs(total)
        value = xp.where(converged_early, total, summed)
        if bool(xp.any(far)):
            value = xp.where(far, _zeta_far_below_zero(xp, order, xp.where(far, q, 1.0)), value)
        return xp.where(pole, math.inf, value)


def _zeta_far_below_zero(xp, order, q):
    """zeta(s, q) for q < 0 and an integer s (else NaN, set by the caller) from zetas of
    positive arguments: with f = q - floor(q), the terms (q + k) ** -s for q + k < 0 are
    (-1) ** s |q + k| ** -s over |q + k| = 1 - f, 2 - f, ..., -q; those after are f, f + 1, ...
    """
    f = q - xp.floor(q)  # exact
    sign = xp.where(xp.fmod(order, 2) == 0, 1.0, -1.0)
    # the small far sum last: f = 1/2 cancels the first two exactly; its Euler-Maclaurin tail
    # is NaN for a huge order where the direct sum's terms underflow to 0
    far = zeta_array(xp, order, 1 - q)
    return (zeta_array(xp, order, f) + sign * zeta_array(xp, order, 1 - f)
            - sign * xp.where(xp.isnan(far), 0.0, far))


def _euler_maclaurin(xp, order, total, a, term):
    """The tail of the zeta sum after the direct terms, as Cephes (stops where a term is
    below MACHEP of the sum)."""
    w = a
    total = total + term * w / (order - 1) - 0.5 * term
    factor = 1.0
    k = 0.0
    b = term
    stopped = xp.zeros(total.shape, bool)
    for coefficient in _ZETA_A:
        factor *= order + k
        b = b / w
        t = factor * b / coefficient
        total = xp.where(stopped, total, total + t)
        stopped = stopped | (xp.abs(t / total) < _MACHEP)
        k += 1
        factor *= order + k
        b = b / w
        k += 1
    return total


def polygamma_array(xp, n: int, x):
    """The n-th derivative of digamma, n >= 2: (-1)^(n+1) n! zeta(n + 1, x)."""
    # torch's n! is exp(lgamma(n + 1)) of C's lgamma (Python's rounds otherwise: 24 is
    # 23.999999999999982, 24.000000000000004 in C)
    scale = (1.0 if n % 2 else -1.0) * math.exp(float(_lgamma_float64(n + 1.0)))
    with np.errstate(all="ignore"):
        return (scale * zeta_array(xp, float(n + 1), x)).astype(x.dtype)
