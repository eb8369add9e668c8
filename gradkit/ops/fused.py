"""C's arithmetic on the array module, as torch's CPU kernels do it: ``a * b + c`` rounded once
(fma), complex quotients (Smith's, fused) and products (C99's Annex G)."""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops.half_scalar import HALF

_SPLIT = {np.dtype(np.float64): 134217729.0}  # 2**27 + 1: Dekker's split of a double


def fused_multiply_add(xp, a, b, c):
    """a * b + c with one rounding (C's fma, which torch's kernels use): narrower floats in
    float64, where a * b is exact; float64 with Dekker's exact product error. A product
    beyond the range is exact in an fma: an infinite c is the sum, else it is taken at a
    quarter scale (at more than 4 times the largest double it is inf there too)."""
    if a.dtype not in _SPLIT:
        return (a.astype(np.float64) * b + c).astype(a.dtype)
    product = a * b
    out = _fused_in_range(xp, a, b, c, product)
    infinite = xp.isinf(product)
    if not infinite.any():
        return out
    with np.errstate(all="ignore"):
        overflowed = infinite & xp.isfinite(a) & xp.isfinite(b)
        quarter = 4 * _fused_in_range(xp, a * 0.25, b, c * 0.25, (a * 0.25) * b)
        return xp.where(overflowed, xp.where(xp.isinf(c), c, quarter), out)


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
    return xp.where(xp.isfinite(correction) & (correction != 0), rounded + correction, rounded)


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
