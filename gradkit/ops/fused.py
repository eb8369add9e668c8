"""C's arithmetic on the array module, as torch's CPU kernels do it: ``a * b + c`` rounded once
(fma), complex quotients (Smith's, fused) and products (C99's Annex G)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from gradkit.ops.half_scalar import HALF

_SPLIT = {np.dtype(np.float64): 134217729.0}  # 2**27 + 1: Dekker's split of a double
# below this a product's low part (|a b| 2**-106) falls under the smallest subnormal: Dekker's
# error term is no longer exact there
_TINY_PRODUCT = 2.0 ** -968
_DOWN = 2.0 ** -30  # a factor times this is within Dekker's split (under 2**996)


def fused_multiply_add(xp, a, b, c):
    """a * b + c with one rounding (C's fma, which torch's kernels use): narrower floats in
    float64, where a * b is exact; float64 with Dekker's exact product error. The last sum is
    rounded to odd where a second rounding could meet a tie (Boldo and Melquiond). Beyond
    Dekker's range (a factor past 2**996, a product past the largest double or under
    2**-968) the product is scaled into range, or computed exactly in rationals."""
    if a.dtype not in _SPLIT:
        return _fused_narrow(xp, a, b, c)
    product = a * b
    out, in_range = _fused_in_range(xp, a, b, c, product)
    if not in_range.all():
        out = _scaled_where(xp, ~in_range, a, b, c, out)
    tiny = xp.abs(product) < _TINY_PRODUCT
    if tiny.any():
        tiny = tiny & (a != 0) & (b != 0) & xp.isfinite(c)  # in the shape of out
        if tiny.any():
            out = _exact_where(xp, tiny, a, b, c, out)
    return out


def _fused_narrow(xp, a, b, c):
    """a * b + c for a narrower float a: exact product in float64, the sum rounded to odd
    where it lies on a midpoint of a's dtype, so that rounding to a's dtype rounds once."""
    product = a.astype(np.float64) * b
    wide = product + c
    if a.dtype.kind == "f":
        dropped = 52 - np.finfo(a.dtype).nmant  # the float64 bits a's dtype has not
        on_midpoint = (wide.view(np.int64) & ((1 << dropped) - 1)) == 1 << (dropped - 1)
        if on_midpoint.any():
            wide = _rounded_to_odd(xp, product, c, wide, on_midpoint)
    return wide.astype(a.dtype)


def _scaled_where(xp, missed, a, b, c, out):
    """``out`` where Dekker's split or product overflowed for finite a, b (``missed``):
    a * b + c at 2**-30 times the larger factor's scale, exact, then scaled back (an infinite
    c is the sum; a product infinite at that scale too is inf). A product past 2**-78 there
    leaves a c under 2**-992 no say but the sign it gives a tie."""
    with np.errstate(all="ignore"):
        redo = missed & xp.isfinite(a) & xp.isfinite(b) & (a * b != 0)  # 0 + c: exact
        if not redo.any():
            return out
        a_larger = xp.abs(a) >= xp.abs(b)
        large, small = xp.where(a_larger, a, b), xp.where(a_larger, b, a)
        large, scaled_c = large * _DOWN, c * _DOWN
        # a c lost to underflow there still breaks a tie: any c of its sign does
        scaled_c = xp.where((scaled_c == 0) & (c != 0), xp.copysign(5e-324, c), scaled_c)
        scaled = _fused_in_range(xp, large, small, scaled_c, large * small)[0] / _DOWN
        return xp.where(redo, xp.where(xp.isinf(c), c, scaled), out)


def _fused_in_range(xp, a, b, c, product):
    t = _SPLIT[a.dtype] * a
    a_high = t - (t - a)
    a_low = a - a_high
    t = _SPLIT[a.dtype] * b
    b_high = t - (t - b)
    b_low = b - b_high
    error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    rounded = product + c
    back = rounded - product  # Knuth's two-sum: the exact error of product + c
    sum_error = (product - (rounded - back)) + (c - back)
    # an infinite product or sum is its own result (its "errors" are inf - inf = NaN), and a
    # zero correction leaves it as it is (adding +0.0 would turn a -0.0 result into 0.0)
    correction = sum_error + error
    near_tie = (correction.view(np.int64) & _MANTISSA) == 0
    if near_tie.any():
        correction = _rounded_to_odd(xp, sum_error, error, correction, near_tie)
    in_range = xp.isfinite(correction)
    return xp.where(in_range & (correction != 0), rounded + correction, rounded), in_range


_MANTISSA = (1 << 52) - 1


def _rounded_to_odd(xp, x, y, nearest, near_tie):
    """``nearest`` (x + y rounded to nearest) rounded to odd instead where it is a power of two
    (``near_tie``): only there can rounding it twice (into rounded + correction) land on a tie
    that the lost bits of x + y would have broken (Boldo and Melquiond's emulated fma). The odd
    neighbour of a power of two is one step towards the exact sum."""
    back = nearest - x
    lost = (x - (nearest - back)) + (y - back)  # x + y - nearest, exactly (two-sum)
    inexact = near_tie & (lost != 0) & xp.isfinite(lost)
    step = xp.where((lost > 0) == (nearest > 0), 1, -1) * inexact
    return (nearest.view(np.int64) + step).view(nearest.dtype)


def _exact_where(xp, mask, a, b, c, out):
    """``out`` with a * b + c computed exactly and rounded once where ``mask`` (a tiny product,
    a few elements: Python's rationals round to the nearest double, subnormals included)."""
    a, b, c = (xp.broadcast_to(v, mask.shape) for v in (a, b, c))
    exact = [float(Fraction(p) * Fraction(q) + Fraction(r)) for p, q, r in
             zip(a[mask].tolist(), b[mask].tolist(), c[mask].tolist())]
    out = xp.array(xp.broadcast_to(out, mask.shape))  # a writable copy
    out[mask] = xp.asarray(exact, dtype=out.dtype)
    return out


_FUSED = (np.dtype(np.float32), np.dtype(np.float64))  # float16: torch computes in float32


def multiply_add(xp, a, b, c):
    """a * b + c as torch's CPU kernels (add with alpha, addcmul, lerp) round it: once, a
    fused multiply-add, in float32 and float64; twice in other dtypes (docs/numerics.md)."""
    if a.dtype in _FUSED:
        return fused_multiply_add(xp, a, b, c)
    if a.dtype == HALF:  # torch's opmath: float32 (b, c of a's dtype or numbers), rounded once
        return (a.astype(np.float32) * _widened(b) + _widened(c)).astype(HALF)
    return a * b + c


def _widened(value):
    """A float16 array (or NumPy scalar) as float32; a number as it is."""
    return value.astype(np.float32) if getattr(value, "dtype", None) == HALF else value


def complex_product(xp, z, w, fused: bool):
    """z * w as c10::complex's product, (a c - b d) + (a d + b c) j, with each part one fma
    where torch's compiled loop contracts it (``fused``) or rounded at each step. NumPy's
    own product depends on the loop it picks (its SIMD loop fuses, its 0-d scalars not)."""
    a, b, c, d = xp.real(z), xp.imag(z), xp.real(w), xp.imag(w)
    with np.errstate(all="ignore"):
        if fused:
            real, imag = fused_multiply_add(xp, a, c, -(b * d)), fused_multiply_add(xp, a, d, b * c)
        else:
            real, imag = a * c - b * d, a * d + b * c
    out = xp.empty(real.shape, dtype=xp.result_type(z, w))
    xp.real(out)[...], xp.imag(out)[...] = real, imag
    return out


def complex_quotient(xp, x, y):
    """x / y for complex arrays (broadcasting) as torch's CPU kernels divide: c10::complex's
    Smith division, the larger part of y first, with its multiply-adds fused (NumPy's is Smith's
    unfused, so 1 / z and z / z land an ulp apart: z / z is 1 - ulp in torch)."""
    x, y = xp.broadcast_arrays(x, y)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    with np.errstate(all="ignore"):
        c_major = xp.abs(c) >= xp.abs(d)  # False at a NaN part, as C's comparison
        big, small = xp.where(c_major, c, d), xp.where(c_major, d, c)
        ratio = small / big
        scale = 1 / fused_multiply_add(xp, small, ratio, big)
        # (a + b ratio, b - a ratio) where c is the larger part, (a ratio + b, b ratio - a) else
        real = fused_multiply_add(xp, xp.where(c_major, b, a), ratio,
                                  xp.where(c_major, a, b)) * scale
        imag = fused_multiply_add(xp, xp.where(c_major, -a, b), ratio,
                                  xp.where(c_major, b, -a)) * scale
        by_zero = (c == 0) & (d == 0)  # C's a / 0 and b / 0 parts: inf or NaN as IEEE says
        # (0 / 0's NaN with its sign bit clear, as torch's; the FPU's default NaN has it set)
        real = xp.where(by_zero, _unsigned_nan(xp, a / xp.abs(c)), real)
        imag = xp.where(by_zero, _unsigned_nan(xp, b / xp.abs(d)), imag)
    out = xp.empty(x.shape, x.dtype)
    out.real[...], out.imag[...] = real, imag  # views' writes: CuPy arrays take no .real =
    return out


def c99_multiply(xp, z, w):
    """z * w as C99's complex product (Annex G, __muldc3): an infinite factor gives an
    infinite product where the schoolbook formula gives NaN + NaN j."""
    z, w = xp.asarray(z), xp.asarray(w)
    a, b, c, d = z.real, z.imag, w.real, w.imag
    re, im = a * c - b * d, a * d + b * c
    lost = xp.isnan(re) & xp.isnan(im)
    if not xp.any(lost):
        return z * w

    def box(v, infinite):  # an infinite part becomes +-1, a finite one +-0, NaN stays
        return xp.where(infinite, xp.copysign(xp.isinf(v).astype(v.dtype), v), v)

    def zero_nan(v, where):  # NaN beside an infinity becomes +-0
        return xp.where(where & xp.isnan(v), xp.copysign(xp.zeros_like(v), v), v)
    z_inf = lost & (xp.isinf(a) | xp.isinf(b))
    a, b = box(a, z_inf), box(b, z_inf)
    c, d = zero_nan(c, z_inf), zero_nan(d, z_inf)
    w_inf = lost & (xp.isinf(c) | xp.isinf(d))
    c, d = box(c, w_inf), box(d, w_inf)
    a, b = zero_nan(a, w_inf), zero_nan(b, w_inf)
    overflow = lost & ~z_inf & ~w_inf & (xp.isinf(a * c) | xp.isinf(b * d) | xp.isinf(a * d)
                                         | xp.isinf(b * c))
    a, b, c, d = (zero_nan(v, overflow) for v in (a, b, c, d))
    redo = z_inf | w_inf | overflow
    out = xp.empty(re.shape, dtype=xp.result_type(z, w))  # re + 1j * im: NaN + NaN j at inf
    out.real[...] = xp.where(redo, math.inf * (a * c - b * d), re)
    out.imag[...] = xp.where(redo, math.inf * (a * d + b * c), im)
    return out


def _unsigned_nan(xp, v):
    """``v`` with the sign bit of its NaNs clear (torch's complex kernels give +nan where the
    FPU's 0 / 0 gives -nan; only copysign-like reads, as catan's, see the difference)."""
    return xp.where(xp.isnan(v), xp.abs(v), v)
