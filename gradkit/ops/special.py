"""Special functions written on the array module alone (no SciPy needed)."""
from __future__ import annotations

import math

import numpy as np

_SERIES_LIMIT = 2.5  # below: a positive-term series; above: a continued fraction for erfc
_SERIES_TERMS = 60
_FRACTION_TERMS = 60
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


_erf_numpy = np.frompyfunc(math.erf, 1, 1)  # C's erf per element: exact and ~50x faster


def erf_array(xp, x):
    """The error function on raw arrays of module xp, accurate to ~1e-16 in float64.

    On NumPy, the C library's erf elementwise; on other array modules (CuPy) the
    generic evaluation below, written with xp operations only.

    Small |x|: erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2x^2)^n x / (1*3*...*(2n+1)), whose
    terms are all positive (no cancellation, unlike the Taylor series). Large |x|:
    1 - erfc(|x|), with erfc's continued fraction, which converges fast there.
    Narrower floats are computed in float64 and rounded once.
    """
    dtype = x.dtype
    if xp is np:
        return np.asarray(_erf_numpy(x.astype(np.float64)), dtype=dtype)
    a = xp.abs(x.astype(xp.float64))
    small = xp.minimum(a, _SERIES_LIMIT)
    two_x2 = 2.0 * small * small
    term = small.copy()
    total = small.copy()
    for n in range(1, _SERIES_TERMS):
        term = term * two_x2 / (2 * n + 1)
        total = total + term
    series = _TWO_OVER_SQRT_PI * xp.exp(-small * small) * total
    tail = 1.0 - _erfc_fraction(xp, xp.maximum(a, _SERIES_LIMIT))
    magnitude = xp.where(a < _SERIES_LIMIT, series, tail)
    return (xp.sign(x) * magnitude).astype(dtype, copy=False)


def _erfc_fraction(xp, large):
    """erfc(x) for x >= _SERIES_LIMIT, by its continued fraction."""
    fraction = large
    for k in range(_FRACTION_TERMS, 0, -1):
        fraction = large + (0.5 * k) / fraction
    return _INV_SQRT_PI * xp.exp(-large * large) / fraction


_erfc_numpy = np.frompyfunc(math.erfc, 1, 1)


def erfc_array(xp, x):
    """1 - erf(x) without its cancellation for large x: C's erfc on NumPy; elsewhere the
    continued fraction above _SERIES_LIMIT and 1 - erf below (where erf < 0.9996)."""
    dtype = x.dtype
    if xp is np:
        return np.asarray(_erfc_numpy(x.astype(np.float64)), dtype=dtype)
    wide = x.astype(xp.float64)
    fraction = _erfc_fraction(xp, xp.maximum(wide, _SERIES_LIMIT))
    return xp.where(wide < _SERIES_LIMIT, 1.0 - erf_array(xp, wide), fraction).astype(dtype)


# torch's calc_erfinv's rational first guess (central range, then tails), then Newton steps
_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (3.543889200, 1.637067800)
_NEWTON_STEPS = 3  # torch's two leave ~1e-13 at 1 - 1e-15; its float64 results are exact there


def erfinv_array(xp, y):
    """The inverse error function (NaN outside [-1, 1], +-inf at +-1), computed in float64."""
    dtype = y.dtype
    y = y.astype(np.float64)
    a, b, c, d = _ERFINV_A, _ERFINV_B, _ERFINV_C, _ERFINV_D
    y_abs = xp.abs(y)
    with np.errstate(all="ignore"):
        z = y * y
        central = y * (((a[3] * z + a[2]) * z + a[1]) * z + a[0]) / (
            (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0)
        z = xp.sqrt(-xp.log((1.0 - y_abs) / 2.0))
        tail = xp.copysign(((c[3] * z + c[2]) * z + c[1]) * z + c[0], y) / (
            (d[1] * z + d[0]) * z + 1.0)
        x = xp.where(y_abs <= 0.7, central, tail)
        near_one = y_abs > 0.5  # erf(x) - y as (1 - |y|) - erfc(|x|) there: no cancellation
        for _ in range(_NEWTON_STEPS):
            residual = xp.where(near_one, xp.sign(y) * ((1.0 - y_abs) - erfc_array(xp, xp.abs(x))),
                                erf_array(xp, x) - y)
            x = x - residual / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
        x = xp.where(y_abs == 1.0, xp.copysign(math.inf, y), x)
        x = xp.where(y_abs > 1.0, math.nan, x)
    return x.astype(dtype)
