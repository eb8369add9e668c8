"""Bessel and Airy functions on raw arrays of module xp (no SciPy): J0, J1, Y0, Y1, the
modified I0, I1, K0, K1 (and exp(x)-scaled K0, K1), the spherical j0 and Airy's Ai.

The algorithms are those of torch's CPU kernels (ATen/native/Math.h, from Cephes): rational
approximations below 5 and the Hankel asymptotic form above for J and Y, Chebyshev series for
I and K; written with masks instead of branches evaluated in torch's working
precision (float64 for double, float32 otherwise).
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops.binary_math import fused_multiply_add
from gradkit.ops.special_series import c_math, chebyshev_series, polynomial
from gradkit.ops.coefficient_tables import (
    AIRY_AI_AD, AIRY_AI_AFD, AIRY_AI_AFN, AIRY_AI_AGD, AIRY_AI_AGN, AIRY_AI_AN, BESSEL_J0_PP,
    BESSEL_J0_PQ, BESSEL_J0_QP, BESSEL_J0_QQ, BESSEL_J0_RP, BESSEL_J0_RQ, BESSEL_J1_PP,
    BESSEL_J1_PQ, BESSEL_J1_QP, BESSEL_J1_QQ, BESSEL_J1_RP, BESSEL_J1_RQ, BESSEL_Y0_YP,
    BESSEL_Y0_YQ, BESSEL_Y1_YP, BESSEL_Y1_YQ, MODIFIED_BESSEL_I0_A, MODIFIED_BESSEL_I0_B,
    MODIFIED_BESSEL_I1_A, MODIFIED_BESSEL_I1_B, MODIFIED_BESSEL_K0_A, MODIFIED_BESSEL_K0_B,
    MODIFIED_BESSEL_K1_A, MODIFIED_BESSEL_K1_B)

_QUARTER_PI = 0.785398163397448309615660845819875721
_THREE_QUARTER_PI = 2.356194490192344928846982537459627163
_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448
_J0_ZEROS_SQUARED = (5.78318596294678452118, 30.4712623436620863991)
_J1_ZEROS_SQUARED = (14.6819706421238932572, 49.2184563216946036703)


def _hankel(xp, x, order: int, sine: bool):
    """The asymptotic form above 5: sqrt(2 / (pi x)) (P cos(x - phase) - 5/x Q sin(...)) for
    J (``sine`` False), and with sin and cos exchanged (and +) for Y; the first product fused
    with the sum, as torch's compiled kernel."""
    pp, pq, qp, qq = ((BESSEL_J0_PP, BESSEL_J0_PQ, BESSEL_J0_QP, BESSEL_J0_QQ) if order == 0
                      else (BESSEL_J1_PP, BESSEL_J1_PQ, BESSEL_J1_QP, BESSEL_J1_QQ))
    phase = _QUARTER_PI if order == 0 else _THREE_QUARTER_PI
    z = 25.0 / (x * x) if order == 0 else 5.0 / x * (5.0 / x)
    p = polynomial(xp, z, pp) / polynomial(xp, z, pq)
    q = 5.0 / x * (polynomial(xp, z, qp) / polynomial(xp, z, qq))
    sine_part, cosine_part = c_math(xp, "sin", x - phase), c_math(xp, "cos", x - phase)
    if sine:
        wave = fused_multiply_add(xp, p, sine_part, q * cosine_part)
    else:
        wave = fused_multiply_add(xp, p, cosine_part, -(q * sine_part))
    return wave * _SQRT_2_OVER_PI / xp.sqrt(x)


def _j0(xp, x):
    """J0(x), even."""
    a = xp.abs(x)
    s = xp.minimum(a, 5.0)
    s2 = s * s
    first, second = s2 - _J0_ZEROS_SQUARED[0], s2 - _J0_ZEROS_SQUARED[1]  # not fused: s2 is shared
    small = first * second * polynomial(xp, s2, BESSEL_J0_RP) / polynomial(xp, s2, BESSEL_J0_RQ)
    small = xp.where(s < 0.00001, 1.0 - s2 / 4.0, small)
    return xp.where(a <= 5.0, small, _hankel(xp, xp.maximum(a, 5.0), 0, False))


def _j1(xp, x):
    """J1(x), odd: the rational form on the signed x up to 5 (so J1(-0.0) is -0.0, as torch's),
    the sign times the asymptotic form of |x| above."""
    a = xp.abs(x)
    s = xp.where(a <= 5.0, x, 5.0)
    s2 = s * s
    first, second = s2 - _J1_ZEROS_SQUARED[0], s2 - _J1_ZEROS_SQUARED[1]
    small = polynomial(xp, s2, BESSEL_J1_RP) / polynomial(xp, s2, BESSEL_J1_RQ) * s * first * second
    large = _hankel(xp, xp.maximum(a, 5.0), 1, False)
    return xp.where(a <= 5.0, small, xp.where(x < 0, -large, large))


def _on_work_dtype(kernel, *args):
    """The array function of ``kernel(xp, x, *args)`` run in torch's working precision
    (float64 for double, float32 for narrower floats), rounded to the input's dtype."""
    def run(xp, x):
        work = np.float64 if x.dtype == np.float64 else np.float32
        with np.errstate(all="ignore"):
            return kernel(xp, x.astype(work), *args).astype(x.dtype)
    run.__doc__ = kernel.__doc__
    return run


bessel_j0_array = _on_work_dtype(_j0)
bessel_j1_array = _on_work_dtype(_j1)


def _y_edges(xp, x, value):
    """-inf at 0 and NaN below, as torch's Y0 and Y1."""
    return xp.where(x == 0, -math.inf, xp.where(x < 0, math.nan, value))


@_on_work_dtype
def bessel_y0_array(xp, x):
    """Y0(x) for x > 0."""
    s = xp.where(x <= 5.0, xp.abs(x), 5.0)
    s2 = s * s
    small = fused_multiply_add(xp, _TWO_OVER_PI * c_math(xp, "log", s), _j0(xp, s),
                               polynomial(xp, s2, BESSEL_Y0_YP) / polynomial(xp, s2, BESSEL_Y0_YQ))
    return _y_edges(xp, x, xp.where(x <= 5.0, small, _hankel(xp, xp.maximum(x, 5.0), 0, True)))


@_on_work_dtype
def bessel_y1_array(xp, x):
    """Y1(x) for x > 0."""
    s = xp.where(x <= 5.0, xp.abs(x), 5.0)
    s2 = s * s
    log_term = fused_multiply_add(xp, _j1(xp, s), c_math(xp, "log", s), -(1.0 / s))
    small = fused_multiply_add(xp, s, polynomial(xp, s2, BESSEL_Y1_YP) / polynomial(
        xp, s2, BESSEL_Y1_YQ), _TWO_OVER_PI * log_term)
    return _y_edges(xp, x, xp.where(x <= 5.0, small, _hankel(xp, xp.maximum(x, 5.0), 1, True)))


def _i0(xp, x):
    """I0(x), even."""
    a = xp.abs(x)
    grows = c_math(xp, "exp", a)
    small = grows * chebyshev_series(xp, xp.minimum(a, 8.0) / 2.0 - 2.0, MODIFIED_BESSEL_I0_A)
    large = grows * chebyshev_series(xp, 32.0 / xp.maximum(a, 8.0) - 2.0,
                                     MODIFIED_BESSEL_I0_B) / xp.sqrt(a)
    return xp.where(a <= 8.0, small, large)


def _i1(xp, x):
    """I1(x), odd."""
    a = xp.abs(x)
    grows = c_math(xp, "exp", a)
    small = chebyshev_series(xp, xp.minimum(a, 8.0) / 2.0 - 2.0, MODIFIED_BESSEL_I1_A) * a * grows
    large = grows * chebyshev_series(xp, 32.0 / xp.maximum(a, 8.0) - 2.0,
                                     MODIFIED_BESSEL_I1_B) / xp.sqrt(a)
    out = xp.where(a <= 8.0, small, large)
    return xp.where(x < 0, -out, out)


def _k(xp, x, order: int, scaled: bool):
    """K0 or K1 at x > 0 (inf at 0, NaN below); ``scaled``: times exp(x). The products
    next to a sum are fused, as torch's compiled kernel."""
    s = xp.where(x <= 2.0, x, 1.0)
    log_half = c_math(xp, "log", 0.5 * s)
    argument = fused_multiply_add(xp, s, s, xp.full_like(s, -2.0))
    if order == 0:
        series = chebyshev_series(xp, argument, MODIFIED_BESSEL_K0_A)
        small = fused_multiply_add(xp, -log_half, _i0(xp, s), series)
    else:
        series = chebyshev_series(xp, argument, MODIFIED_BESSEL_K1_A)
        small = fused_multiply_add(xp, log_half, _i1(xp, s), series / s)
    large_x = xp.maximum(x, 2.0)
    tail = (MODIFIED_BESSEL_K0_B, MODIFIED_BESSEL_K1_B)[order]
    large = chebyshev_series(xp, 8.0 / large_x - 2.0, tail)
    if scaled:
        small = small * c_math(xp, "exp", s)
    else:
        large = c_math(xp, "exp", -large_x) * large
    large = large / xp.sqrt(large_x)
    out = xp.where(x <= 2.0, small, large)
    return xp.where(x == 0, math.inf, xp.where(x < 0, math.nan, out))


modified_bessel_i0_array = _on_work_dtype(_i0)
modified_bessel_i1_array = _on_work_dtype(_i1)
modified_bessel_k0_array = _on_work_dtype(_k, 0, False)
modified_bessel_k1_array = _on_work_dtype(_k, 1, False)
scaled_modified_bessel_k0_array = _on_work_dtype(_k, 0, True)
scaled_modified_bessel_k1_array = _on_work_dtype(_k, 1, True)
_SPHERICAL_SERIES = (1 / 6227020800.0, -1 / 39916800.0, 1 / 362880.0, -1 / 5040.0, 1 / 120.0,
                     -1 / 6.0, 1.0)


@_on_work_dtype
def spherical_bessel_j0_array(xp, x):
    """sin(x) / x: its Taylor polynomial below 0.5, 0 at +-inf."""
    series = polynomial(xp, x * x, _SPHERICAL_SERIES)
    out = xp.where(xp.abs(x) < 0.5, series, c_math(xp, "sin", x) / x)
    return xp.where(xp.isinf(x), 0.0, out)


_AIRY_SERIES_STEPS = 200  # the power series stops at float64's epsilon long before this


def _airy_series(xp, x):
    """Ai(x) = c1 f(x) - c2 g(x) from the Maclaurin series of f and g (near 0)."""
    z = x * x * x
    f, g, m, n, t = xp.ones_like(x), x.copy(), xp.ones_like(x), x.copy(), xp.ones_like(x)
    k = xp.ones_like(x)
    for _ in range(_AIRY_SERIES_STEPS):  # torch: while t > eps, per element
        going = t > np.finfo(x.dtype).eps
        if not bool(xp.any(going)):
            break
        m_next = m * z / (k + 1)
        n_next = n * z / (k + 2)
        m_next = m_next / (k + 2)
        n_next = n_next / (k + 3)
        m, n = xp.where(going, m_next, m), xp.where(going, n_next, n)
        f, g = xp.where(going, f + m, f), xp.where(going, g + n, g)
        k = xp.where(going, k + 3, k)
        t = xp.where(going, xp.abs(m / f), t)
    return fused_multiply_add(xp, xp.full_like(f, 0.355028053887817239260), f,
                              -(0.258819403792806798405 * g))


@_on_work_dtype
def airy_ai_array(xp, x):
    """Airy's Ai(x): oscillating asymptotic form below -2.09, the power series up to 2.09,
    the decaying asymptotic form above, 0 beyond 103.892, NaN at +-inf."""
    negative = xp.minimum(x, -2.09)
    root = xp.sqrt(-negative)
    z = 1.0 / (-2.0 * negative * root / 3.0)
    zz = z * z
    f = 1.0 + zz * polynomial(xp, zz, AIRY_AI_AFN) / polynomial(xp, zz, AIRY_AI_AFD)
    g = z * polynomial(xp, zz, AIRY_AI_AGN) / polynomial(xp, zz, AIRY_AI_AGD)
    phase = -2.0 * negative * root / 3.0 + 0.25 * math.pi
    wave = fused_multiply_add(xp, c_math(xp, "sin", phase), f, -(c_math(xp, "cos", phase) * g))
    oscillating = 0.564189583547756286948 / xp.sqrt(root) * wave
    positive = xp.maximum(x, 2.09)
    zeta = 2.0 * positive * xp.sqrt(positive) / 3.0
    ratio = polynomial(xp, 1.0 / zeta, AIRY_AI_AN) / polynomial(xp, 1.0 / zeta, AIRY_AI_AD)
    decaying = 0.564189583547756286948 * ratio / (
        2.0 * xp.sqrt(xp.sqrt(positive)) * c_math(xp, "exp", zeta))
    middle = xp.where((x >= -2.09) & (x < 2.09), x, 0.0)
    series = _airy_series(xp, middle)
    out = xp.where(x < -2.09, oscillating, xp.where(x >= 2.09, decaying, series))
    out = xp.where(x > 103.892, 0.0, out)
    return xp.where(xp.isinf(x) | xp.isnan(x), math.nan, out)
