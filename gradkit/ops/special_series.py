"""torch.special's error-function and Bessel-I family on raw arrays of module xp (no SciPy):
erfcx, log_ndtr, ndtri, i0e, i1, i1e and the Hurwitz zeta function of two arrays.

The algorithms are those of torch's CPU kernels (ATen/native/Math.h: Cephes and the Faddeeva
package), written elementwise with masks instead of branches and evaluated in torch's working
precision (float64 for double, float32 otherwise), so their values at the edges are torch's.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops.binary_math import fused_multiply_add
from gradkit.ops.erfcx_table import ERFCX_ROWS
from gradkit.ops.special import erfc_array
from gradkit.ops.special_gamma import zeta_array
from gradkit.ops.coefficient_tables import (
    MODIFIED_BESSEL_I0_A, MODIFIED_BESSEL_I0_B, MODIFIED_BESSEL_I1_A, MODIFIED_BESSEL_I1_B,
    NDTRI_P0, NDTRI_P1, NDTRI_P2, NDTRI_Q0, NDTRI_Q1, NDTRI_Q2)

_INV_SQRT_PI = 0.56418958354775628694807945156
_SQRT_2PI = 2.50662827463100050242
_EXP_MINUS_2 = 0.13533528323661269189
SQRT_HALF = 0.70710678118654752440  # 1 / sqrt(2) rounded once (1 / math.sqrt(2) is 1 ulp low)
_ERFCX_TABLE = np.array(ERFCX_ROWS)


_LARGE = 2.0 ** 480  # beyond: Dekker's split in fused_multiply_add may overflow
_SHRINK = 2.0 ** -540


def fused_multiply_add_wide(xp, a, b, c):
    """a * b + c rounded once, for float64 near overflow too: a and b beyond 2 ** 480 are
    scaled down by 2 ** -540 (exactly), c by the same factors, the result back up."""
    if a.dtype != np.float64:
        return fused_multiply_add(xp, a, b, c)
    with np.errstate(all="ignore"):
        large_a, large_b = xp.abs(a) > _LARGE, xp.abs(b) > _LARGE
        if not bool(xp.any(large_a | large_b)):
            return fused_multiply_add(xp, a, b, c)
        scale_a = xp.where(large_a, _SHRINK, 1.0)
        scale_b = xp.where(large_b, _SHRINK, 1.0)
        out = fused_multiply_add(xp, a * scale_a, b * scale_b, c * scale_a * scale_b)
        return out / scale_a / scale_b


def chebyshev_series(xp, x, coefficients):
    """Cephes' chbevl: the Chebyshev series of ``coefficients`` (highest first) at x, its
    ``x * b1 - b2`` fused (torch's kernels are compiled with FMA contraction)."""
    b0, b1, b2 = xp.full_like(x, coefficients[0]), xp.zeros_like(x), xp.zeros_like(x)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = fused_multiply_add(xp, x, b1, -b2) + c
    return 0.5 * (b0 - b2)


def polynomial(xp, x, coefficients):
    """Cephes' polevl: the polynomial of ``coefficients`` (highest order first) at x, by
    fused multiply-adds (as torch's compiled Horner loops)."""
    total = xp.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        total = fused_multiply_add(xp, total, x, xp.full_like(x, c))
    return total


def _inf_on_overflow(function):
    """``function`` as C's: inf where Python's math raises OverflowError."""
    def c_function(v: float) -> float:
        try:
            return function(v)
        except OverflowError:
            return math.inf
    c_function.__name__ = f"c_{function.__name__}"
    return c_function


def _log_with_pole(function, pole: float):
    """The logarithm ``function`` as C's: -inf at its ``pole``, NaN below (math raises)."""
    def c_function(v: float) -> float:
        if v > pole:
            return function(v)
        return -math.inf if v == pole else math.nan
    c_function.__name__ = f"c_{function.__name__}"
    return c_function


def _c_acos(v: float) -> float:
    return math.acos(v) if -1 <= v <= 1 else math.nan


_C_FUNCTIONS = {name: np.frompyfunc(function, 1, 1) for name, function in (
    ("exp", _inf_on_overflow(math.exp)), ("expm1", _inf_on_overflow(math.expm1)),
    ("log", _log_with_pole(math.log, 0.0)), ("log1p", _log_with_pole(math.log1p, -1.0)),
    ("arccos", _c_acos))}


def c_math(xp, name: str, x):
    """C's ``exp``, ``expm1``, ``log``, ``log1p``, ``arccos``, ``sin`` or ``cos`` of x, as torch's
    scalar kernels call them: for NumPy float64 all but sin and cos the C library's, elementwise
    (NumPy's own SIMD versions differ in the last bit now and then); float32 rounded from
    float64 (as C's correctly rounded expf & co.); anything else through xp."""
    if xp is np and x.dtype == np.float64 and name in _C_FUNCTIONS:
        return np.asarray(_C_FUNCTIONS[name](x), dtype=np.float64)
    if x.dtype == np.float32:
        return getattr(xp, name)(x.astype(np.float64)).astype(np.float32)
    return getattr(xp, name)(x)


def _wide(xp, x):
    """x in torch's working precision: float64 for double, float32 for narrower floats."""
    return x.astype(np.float64 if x.dtype == np.float64 else np.float32)


def i0e_array(xp, x):
    """exp(-|x|) I0(x): Chebyshev series on [0, 8] and in 32 / |x| above."""
    a = xp.abs(_wide(xp, x))
    with np.errstate(all="ignore"):
        small = chebyshev_series(xp, xp.minimum(a, 8.0) / 2.0 - 2.0, MODIFIED_BESSEL_I0_A)
        large = chebyshev_series(xp, 32.0 / xp.maximum(a, 8.0) - 2.0, MODIFIED_BESSEL_I0_B)
        out = xp.where(a <= 8.0, small, large / xp.sqrt(a))
    return out.astype(x.dtype)


def _i1e_series(xp, a):
    """The two Chebyshev series of exp(-x) I1(x): torch's float kernel keeps the last 17 and
    7 coefficients of the double tables."""
    short = a.dtype != np.float64
    low = MODIFIED_BESSEL_I1_A[-17:] if short else MODIFIED_BESSEL_I1_A
    high = MODIFIED_BESSEL_I1_B[-7:] if short else MODIFIED_BESSEL_I1_B
    with np.errstate(all="ignore"):
        return (chebyshev_series(xp, xp.minimum(a, 8.0) / 2.0 - 2.0, low),
                chebyshev_series(xp, 32.0 / xp.maximum(a, 8.0) - 2.0, high))


def i1e_array(xp, x):
    """exp(-|x|) I1(x), odd in x."""
    wide = _wide(xp, x)
    a = xp.abs(wide)
    small, large = _i1e_series(xp, a)
    with np.errstate(all="ignore"):
        out = xp.where(a <= 8.0, small * a, large / xp.sqrt(a))
    return xp.where(wide < 0, -out, out).astype(x.dtype)


def i1_array(xp, x):
    """I1(x) = exp(|x|) i1e(x), as torch's calc_i1 (NaN at +-inf: inf / inf)."""
    wide = _wide(xp, x)
    a = xp.abs(wide)
    small, large = _i1e_series(xp, a)
    with np.errstate(all="ignore"):
        grows = c_math(xp, "exp", a)
        out = xp.where(a <= 8.0, grows * a * small, grows * large / xp.sqrt(a))
    return xp.where(wide < 0, -out, out).astype(x.dtype)


def ndtri_array(xp, y0):
    """The inverse of the standard normal CDF (-inf at 0, inf at 1, NaN outside [0, 1])."""
    y0w = _wide(xp, y0)
    with np.errstate(all="ignore"):
        upper = y0w > 1.0 - _EXP_MINUS_2
        y = xp.where(upper, 1.0 - y0w, y0w)
        centred = y - 0.5
        c2 = centred * centred
        ratio = c2 * polynomial(xp, c2, NDTRI_P0) / polynomial(xp, c2, NDTRI_Q0)
        central = fused_multiply_add(xp, centred, ratio, centred) * _SQRT_2PI
        x = xp.sqrt(-2.0 * c_math(xp, "log", y))
        x0 = x - c_math(xp, "log", x) / x
        z = 1.0 / x
        near = z * polynomial(xp, z, NDTRI_P1) / polynomial(xp, z, NDTRI_Q1)
        far = z * polynomial(xp, z, NDTRI_P2) / polynomial(xp, z, NDTRI_Q2)
        tail = x0 - xp.where(x < 8.0, near, far)
        tail = xp.where(upper, tail, -tail)
        out = xp.where(y > _EXP_MINUS_2, central, tail)
        out = xp.where((y0w < 0) | (y0w > 1), math.nan, out)
        out = xp.where(y0w == 0, -math.inf, xp.where(y0w == 1, math.inf, out))
    return out.astype(y0.dtype)


def _erfcx_y100(xp, y100):
    """erfcx from y100 = 400 / (4 + |x|): row floor(y100) of the table (1 at y100 = 100)."""
    row = xp.clip(xp.floor(y100), 0, 99).astype(np.int64)
    table = xp.asarray(_ERFCX_TABLE, dtype=y100.dtype)
    t = 2.0 * y100 - (2.0 * row + 1.0)
    total = table[row, 6]
    for k in range(5, -1, -1):  # not fused here (found by comparison)
        total = table[row, k] + total * t
    return xp.where(y100 >= 100, y100.dtype.type(1), total)


def erfcx_array(xp, x):
    """exp(x²) erfc(x) without overflow (S. G. Johnson's algorithm, as torch)."""
    w = _wide(xp, x)
    with np.errstate(all="ignore"):
        a = xp.abs(w)
        table = _erfcx_y100(xp, 400.0 / (4.0 + xp.where(xp.isnan(a), 0.0, a)))
        x2 = a * a
        numerator = fused_multiply_add(xp, x2, x2 + 4.5, xp.full_like(x2, 2.0))
        denominator = a * fused_multiply_add(xp, x2, x2 + 5, xp.full_like(x2, 3.75))
        fraction = _INV_SQRT_PI * numerator / denominator
        positive = xp.where(a > 5e7, _INV_SQRT_PI / a, fraction)
        positive = xp.where(a > 50, positive, table)
        doubled = 2 * c_math(xp, "exp", w * w)
        negative = xp.where(w < -6.1, doubled, doubled - table)
        negative = xp.where(w < -26.7, math.inf, negative)
        out = xp.where(w >= 0, positive, negative)
        out = xp.where(xp.isnan(w), w, out)
    return out.astype(x.dtype)


def log_ndtr_array(xp, x):
    """log of the standard normal CDF: log(erfcx(-t) / 2) - t² below -1, else
    log1p(-erfc(t) / 2), t = x / sqrt(2)."""
    w = _wide(xp, x)
    with np.errstate(all="ignore"):
        t = w * SQRT_HALF
        low = c_math(xp, "log", erfcx_array(xp, -t) / 2) - t * t
        high = c_math(xp, "log1p", -erfc_array(xp, t) / 2)
        out = xp.where(w < -1.0, low, high)
    return out.astype(x.dtype)


def hurwitz_zeta_array(xp, x, q):
    """zeta(x, q) = sum_k (q + k) ** -x elementwise in both: inf at x = 1 and at q a
    non-positive integer, NaN for x < 1 and for q < 0 with x not an integer (torch's zeta)."""
    dtype = x.dtype  # x and q share it; computed in float64 for every float dtype, as torch
    x, q = xp.broadcast_arrays(x.astype(np.float64), q.astype(np.float64))
    with np.errstate(all="ignore"):
        bad = (x < 1) | ((q <= 0) & (q != xp.floor(q)) & (x != xp.floor(x)))
        safe_x = xp.where(bad | (x == 1), 2.0, x)
        value = zeta_array(xp, safe_x, q)
        value = xp.where((q <= 0) & (q == xp.floor(q)), math.inf, value)
        value = xp.where(bad, math.nan, value)
        value = xp.where(x == 1, math.inf, value)
        return value.astype(dtype)  # float32 overflows to inf, as torch's cast
