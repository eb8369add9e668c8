"""torch.special's orthogonal polynomials of degree n at x: Chebyshev T, U, V, W (and their
shifted forms on [0, 1]), Hermite H and He, Laguerre L and Legendre P.

Each is torch's CPU kernel (ATen/native/Math.h) written with masks: the degree is n truncated
to an integer (NaN, inf and negative degrees give 0), the edge values at x = +-1 (0 and 1 for
the shifted ones) come first, Chebyshev's trigonometric form inside (-1, 1) for large n, then
the three-term recurrence, its ``a q - k p`` fused into one multiply-add as torch's compiled
kernel. Torch defines no derivative for them, so their outputs never require grad.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.binary_math import _floating_pair
from gradkit.ops.special_functions import no_scalar_pair
from gradkit.ops.unary_helpers import refuse_half
from gradkit.ops.special_series import c_math
from gradkit.ops.special_series import fused_multiply_add_wide as fused_multiply_add

_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}


def _recurrence(xp, x, degree, first, step, running):
    """q after the n - 1 steps ``r = step(p, q, j)`` (j = 0, 1, ...) from p = 1, q = first,
    for the elements where ``running``; NaN stays NaN, so those stop early."""
    one = x.dtype.type(1)
    p, q = xp.full_like(x, one), first
    todo = running & (degree >= 2)
    steps = int(degree[todo].max()) - 1 if bool(todo.any()) else 0
    with np.errstate(all="ignore"):
        for j in range(steps):
            active = todo & (j < degree - 1) & ~xp.isnan(q)
            if not bool(active.any()):
                break
            r = step(p, q, j)
            p, q = xp.where(active, q, p), xp.where(active, r, q)
    return q


def _odd_even(xp, degree, if_even, if_odd):
    return xp.where(degree % 2 == 0, if_even, if_odd)


def _degree(xp, n):
    """torch's static_cast<int64_t>(n): truncation; NaN, inf and out-of-range give INT64_MIN."""
    with np.errstate(invalid="ignore"):
        return xp.where(xp.isfinite(n), n, -1).astype(np.int64)


def _finish(xp, x, degree, out, first):
    """The small degrees: 0 below 0, 1 at 0, ``first`` at 1."""
    out = xp.where(degree == 1, first, out)
    out = xp.where(degree == 0, x.dtype.type(1), out)
    return xp.where(degree < 0, x.dtype.type(0), out)


def _chebyshev(xp, x, n, kind: str, shifted: bool):
    """T, U, V or W at x (shifted: at 2x - 1, with the edges at x = 1 and x = 0)."""
    degree = _degree(xp, n)
    dn = degree.astype(x.dtype)
    one = x.dtype.type(1)
    y = x + x - one if shifted else x
    first = {"t": y, "u": y + y, "v": y + y - one, "w": y + y + one}[kind]
    upper, lower = (x == 1, x == 0) if shifted else ((xp.abs(x) == 1) & (x > 0),
                                                    (xp.abs(x) == 1) & ~(x > 0))
    with np.errstate(all="ignore"):
        angle = c_math(xp, "arccos", y)
        trig, guarded = _chebyshev_trig(xp, kind, y, dn, degree, angle)
        # where torch's guard skips the closed form: the edge value (non-shifted W: by x's sign)
        edge = _chebyshev_edge(xp, kind, dn, degree, True)
        if kind == "w" and not shifted:
            edge = xp.where(x > 0, _chebyshev_edge(xp, kind, dn, degree, False), edge)
        trig = xp.where(guarded, edge, trig)
    limit = {"t": 6, "u": 8, "v": 8, "w": 8}[kind] if not shifted else (4 if kind == "w" else 6)
    trig_used = (degree > limit) & (xp.abs(y) < 1) & ~upper & ~lower
    recurrence = _recurrence(xp, x, degree, first,
                             lambda p, q, j: fused_multiply_add(xp, y + y, q, -p),
                             ~upper & ~lower & ~trig_used)
    out = _finish(xp, x, degree, xp.where(trig_used, trig, recurrence), first)
    out = xp.where(upper & (degree >= 0), _chebyshev_edge(xp, kind, dn, degree, False), out)
    out = xp.where(lower & (degree >= 0), _chebyshev_edge(xp, kind, dn, degree, True), out)
    return out.astype(x.dtype)


def _chebyshev_edge(xp, kind: str, dn, degree, at_minus_one: bool):
    """The value at y = 1 or (``at_minus_one``) y = -1."""
    twice = dn + dn + 1
    if kind == "t":
        return _odd_even(xp, degree, 1, -1) if at_minus_one else 1
    if kind == "u":
        return _odd_even(xp, degree, dn + 1, -(dn + 1)) if at_minus_one else dn + 1
    if kind == "v":
        return _odd_even(xp, degree, twice, -twice) if at_minus_one else 1
    return _odd_even(xp, degree, 1, -1) if at_minus_one else twice


def _chebyshev_trig(xp, kind, y, dn, degree, angle):
    """The closed forms in cos / sin of (n + c) acos(y), and where torch's guard skips them."""
    if kind == "t":
        return c_math(xp, "cos", dn * angle), xp.zeros(angle.shape, bool)
    if kind == "u":
        sine = c_math(xp, "sin", angle)
        guarded = (dn + 1) * c_math(xp, "cos", (dn + 1) * angle) / y
        return xp.where(sine != 0, c_math(xp, "sin", (dn + 1) * angle) / sine, guarded), \
            xp.zeros(angle.shape, bool)
    half_cos, half_sin = c_math(xp, "cos", angle / 2), c_math(xp, "sin", angle / 2)
    if kind == "v":
        return c_math(xp, "cos", (dn + 0.5) * angle) / half_cos, half_sin == 1
    return c_math(xp, "sin", (dn + 0.5) * angle) / half_sin, half_cos == 1


def _hermite(xp, x, n, physicists: bool):
    degree = _degree(xp, n)
    first = x + x if physicists else x
    scale = x + x if physicists else x
    limit = _HERMITE_LIMIT.get(x.dtype, 1024)

    def step(p, q, j):
        k = x.dtype.type(2 * (j + 1) if physicists else j + 1)
        return fused_multiply_add(xp, scale, q, -(k * p))
    out = _recurrence(xp, x, xp.where(degree > limit, 0, degree), first, step,
                      xp.ones(x.shape, bool))
    out = xp.where(degree > limit, math.nan, out)
    return _finish(xp, x, degree, out, first).astype(x.dtype)


def _laguerre(xp, x, n):
    degree = _degree(xp, n)
    one = x.dtype.type(1)

    def step(p, q, j):
        k = x.dtype.type(j + 1)
        return fused_multiply_add(xp, (k + k) + (one - x), q, -(k * p)) / (k + one)
    out = _recurrence(xp, x, degree, one - x, step, x != 0)
    out = _finish(xp, x, degree, out, one - x)
    return xp.where((x == 0) & (degree >= 0), one, out).astype(x.dtype)


def _legendre(xp, x, n):
    degree = _degree(xp, n)
    one = x.dtype.type(1)

    def step(p, q, j):
        k = x.dtype.type(j + 1)
        return fused_multiply_add(xp, (k + k + one) * x, q, -(k * p)) / (k + one)
    edge = xp.abs(x) == 1
    out = _finish(xp, x, degree, _recurrence(xp, x, degree, x, step, ~edge), x)
    at_edge = xp.where((x > 0) | (degree % 2 == 0), one, -one)
    return xp.where(edge & (degree >= 0), at_edge, out).astype(x.dtype)


def _declare(name: str, values, *args):
    """The op ``name``(x, n), either operand a number: torch's dtype rules and errors."""
    kernel = f"{name}_cpu"

    def forward(xp, x, n):
        no_scalar_pair(f"special_{name}", x, n, ("x", "n", "x"))
        x, n = _floating_pair(xp, x, n, kernel)
        refuse_half(x, kernel)
        x, n = xp.broadcast_arrays(x, n)
        return values(xp, x, n, *args)
    forward.__doc__ = f"torch.special.{name}(x, n): the polynomial of degree n at x."
    return op(name=name, elementwise=True)(forward)


(chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
 shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
 shifted_chebyshev_polynomial_w) = (
    _declare(f"{prefix}chebyshev_polynomial_{kind}", _chebyshev, kind, bool(prefix))
    for prefix in ("", "shifted_") for kind in "tuvw")
hermite_polynomial_h = _declare("hermite_polynomial_h", _hermite, True)
hermite_polynomial_he = _declare("hermite_polynomial_he", _hermite, False)
laguerre_polynomial_l = _declare("laguerre_polynomial_l", _laguerre)
legendre_polynomial_p = _declare("legendre_polynomial_p", _legendre)
