"""torch.special's error-function and Bessel-I family on raw arrays of module xp (no SciPy):
erfcx, log_ndtr, ndtri, i0e, i1, i1e and the Hurwitz zeta function of two arrays.

The algorithms are those of torch's CPU kernels (ATen/native/Math.h: Cephes and the Faddeeva
package), written elementwise with masks instead of branches and evaluated in torch's working
precision (float64 for double, float32 otherwise), so their values at the edges are torch's.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops.erfcx_table import ERFCX_ROWS
from gradkit.ops.special import erfc_array
from gradkit.ops.special_gamma import zeta_array
from gradkit.ops.special_tables import (
    MODIFIED_BESSEL_I0_A, MODIFIED_BESSEL_I0_B, MODIFIED_BESSEL_I1_A, MODIFIED_BESSEL_I1_B,
    NDTRI_P0, NDTRI_P1, NDTRI_P2, NDTRI_Q0, NDTRI_Q1, NDTRI_Q2)

_INV_SQRT_PI = 0.56418958354775628694807945156
_SQRT_2PI = 2.50662827463100050242
_EXP_MINUS_2 = 0.13533528323661269189
_ERFCX_TABLE = np.array(ERFCX_ROWS)


def chebyshev_series(x, coefficients):
    """Cephes' chbevl: the Chebyshev series of ``coefficients`` (highest first) at x."""
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def polynomial(x, coefficients):
    """Cephes' polevl: the polynomial of ``coefficients`` (highest order first) at x."""
    total = coefficients[0]
    for c in coefficients[1:]:
        total = total * x + c
    return total


def _wide(xp, x):
    """x in torch's working precision: float64 for double, float32 for narrower floats."""
    return x.astype(np.float64 if x.dtype == np.float64 else np.float32)


def i0e_array(xp, x):
    """exp(-|x|) I0(x): Chebyshev series on [0, 8] and in 32 / |x| above."""
    a = xp.abs(_wide(xp, x))
    with np.errstate(all="ignore"):
        small = chebyshev_series(xp.minimum(a, 8.0) / 2.0 - 2.0, MODIFIED_BESSEL_I0_A)
        large = chebyshev_series(32.0 / xp.maximum(a, 8.0) - 2.0, MODIFIED_BESSEL_I0_B)
        out = xp.where(a <= 8.0, small, large / xp.sqrt(a))
    return out.astype(x.dtype)


def _i1e_magnitude(xp, a):
    with np.errstate(all="ignore"):
        small = chebyshev_series(xp.minimum(a, 8.0) / 2.0 - 2.0, MODIFIED_BESSEL_I1_A) * a
        large = chebyshev_series(32.0 / xp.maximum(a, 8.0) - 2.0, MODIFIED_BESSEL_I1_B)
        return xp.where(a <= 8.0, small, large / xp.sqrt(a))


def i1e_array(xp, x):
    """exp(-|x|) I1(x), odd in x."""
    wide = _wide(xp, x)
    out = _i1e_magnitude(xp, xp.abs(wide))
    return xp.where(wide < 0, -out, out).astype(x.dtype)


def i1_array(xp, x):
    """I1(x) = exp(|x|) i1e(x), as torch's calc_i1 (NaN at +-inf: inf / inf)."""
    wide = _wide(xp, x)
    a = xp.abs(wide)
    with np.errstate(all="ignore"):
        out = xp.exp(a) * _i1e_magnitude(xp, a)
    return xp.where(wide < 0, -out, out).astype(x.dtype)


def ndtri_array(xp, y0):
    """The inverse of the standard normal CDF (-inf at 0, inf at 1, NaN outside [0, 1])."""
    y0w = _wide(xp, y0)
    with np.errstate(all="ignore"):
        upper = y0w > 1.0 - _EXP_MINUS_2
        y = xp.where(upper, 1.0 - y0w, y0w)
        centred = y - 0.5
        c2 = centred * centred
        central = (centred + centred * (c2 * polynomial(c2, NDTRI_P0) / polynomial(c2, NDTRI_Q0)))
        central = central * _SQRT_2PI
        x = xp.sqrt(-2.0 * xp.log(y))
        x0 = x - xp.log(x) / x
        z = 1.0 / x
        near = z * polynomial(z, NDTRI_P1) / polynomial(z, NDTRI_Q1)
        far = z * polynomial(z, NDTRI_P2) / polynomial(z, NDTRI_Q2)
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
    for k in range(5, -1, -1):
        total = table[row, k] + total * t
    return xp.where(y100 >= 100, y100.dtype.type(1), total)


def erfcx_array(xp, x):
    """exp(x²) erfc(x) without overflow (S. G. Johnson's algorithm, as torch)."""
    w = _wide(xp, x)
    with np.errstate(all="ignore"):
        a = xp.abs(w)
        table = _erfcx_y100(xp, 400.0 / (4.0 + xp.where(xp.isnan(a), 0.0, a)))
        x2 = a * a
        fraction = _INV_SQRT_PI * (x2 * (x2 + 4.5) + 2) / (a * (x2 * (x2 + 5) + 3.75))
        positive = xp.where(a > 5e7, _INV_SQRT_PI / a, fraction)
        positive = xp.where(a > 50, positive, table)
        doubled = 2 * xp.exp(w * w)
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
        t = w * (1 / math.sqrt(2))
        low = xp.log(erfcx_array(xp, -t) / 2) - t * t
        high = xp.log1p(-erfc_array(xp, t) / 2)
        out = xp.where(w < -1.0, low, high)
    return out.astype(x.dtype)


def hurwitz_zeta_array(xp, x, q):
    """zeta(x, q) = sum_k (q + k) ** -x elementwise in both: inf at x = 1 and at q a
    non-positive integer, NaN for x < 1 and for q < 0 with x not an integer (torch's zeta)."""
    dtype = np.result_type(x, q)
    x, q = xp.broadcast_arrays(_wide(xp, x), _wide(xp, q))
    with np.errstate(all="ignore"):
        bad = (x < 1) | ((q <= 0) & (q != xp.floor(q)) & (x != xp.floor(x)))
        safe_x = xp.where(bad | (x == 1), 2.0, x)
        value = zeta_array(xp, safe_x, q)
        value = xp.where((q <= 0) & (q == xp.floor(q)), math.inf, value)
        value = xp.where(bad, math.nan, value)
        value = xp.where(x == 1, math.inf, value)
    return value.astype(dtype)
