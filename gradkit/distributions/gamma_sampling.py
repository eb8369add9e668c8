"""``_standard_gamma``: Gamma(alpha, 1) samples with torch's implicit reparameterization
gradient, the ground of Gamma, Chi2, StudentT, Dirichlet and Beta's ``rsample``.

The gradient of a draw x ~ Gamma(alpha) in alpha is -(dF/dalpha)(x; alpha) / p(x; alpha)
(F the cdf, p the density: Figurnov et al., "Implicit Reparameterization Gradients"), which
torch approximates piecewise (aten/src/ATen/native/Distributions.h,
``standard_gamma_grad_one``): a Taylor series for small x, Rice's saddle point expansion for
large alpha, a bivariate rational fit elsewhere. ``_standard_gamma_grad`` is that function,
computed in float64 as torch's CPU kernel does.
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit.generator import rng_of
from gradkit.ops._op import Op
from gradkit.ops.special_gamma import digamma_array

# torch's coefficients of the rational fit exp(p(u, v) / q(u, v)), u = log(x/alpha),
# v = log(alpha): coefficient i of p (i < 4) and of q (i >= 4) is row0 + u*(row1 + u*row2)
_RATIONAL = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07]])


def _small_x(alpha, x):
    """Taylor series of the cdf and its alpha-derivative (x < 0.8); NaN becomes 0."""
    numer, denom = np.ones_like(x), alpha.copy()
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x**alpha
    pdf = x ** (alpha - 1) * np.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (np.log(x) - digamma_array(np, alpha)) * cdf - pow_x_alpha * series2
    result = -cdf_alpha / pdf
    return np.where(np.isnan(result), 0.0, result)


def _large_alpha(alpha, x):
    """Rice's saddle point expansion (alpha > 8), its own series next to the mean."""
    near_numer = ((1 + 24 * alpha * (1 + 12 * alpha))
                  * (1440 * alpha**2 + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                     + alpha * (107 + 3600 * x)))
    near = near_numer / (1244160 * alpha**4)
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * np.log(x / alpha)) ** -1.5
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / (alpha - x) ** 2
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far = -stirling * x * term1 / denom
    return np.where((0.9 * alpha <= x) & (x <= 1.1 * alpha), near, far)


def _rational(alpha, x):
    u, v = np.log(x / alpha), np.log(alpha)
    c = [_RATIONAL[0, i] + u * (_RATIONAL[1, i] + u * _RATIONAL[2, i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return np.exp(p / q)


def _gamma_grad(xp, alpha, x):
    """d x / d alpha for draws x of Gamma(alpha, 1), in float64, cast back."""
    dtype = x.dtype
    a64 = np.asarray(backend.to_device(alpha, backend.CPU), dtype=np.float64)
    x64 = np.asarray(backend.to_device(x, backend.CPU), dtype=np.float64)
    a64, x64 = np.broadcast_arrays(a64, x64)
    with np.errstate(all="ignore"):  # every branch is computed, each kept where it applies
        grad = np.where(x64 < 0.8, _small_x(a64, x64),
                        np.where(a64 > 8.0, _large_alpha(a64, x64), _rational(a64, x64)))
    return xp.asarray(grad.astype(dtype))


def _not_differentiable(g, *saved, **params):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


_standard_gamma_grad = Op(_gamma_grad, name="_standard_gamma_grad")
_standard_gamma_grad.defvjp(_not_differentiable, _not_differentiable)
_standard_gamma_grad.defjvp(_not_differentiable, _not_differentiable)


def _draw_gamma(xp, concentration, *, rng=None):
    alpha = np.asarray(backend.to_device(concentration, backend.CPU))
    # (asarray: NumPy returns a Python float for a 0-d concentration)
    draws = np.asarray(rng.standard_gamma(alpha), dtype=alpha.dtype)
    # torch's sampler never returns 0, which has no log and no implicit gradient
    return xp.asarray(np.maximum(draws, np.finfo(alpha.dtype).tiny))


_standard_gamma_op = Op(_draw_gamma, name="_standard_gamma", save=("concentration", "result"))
_standard_gamma_op.defvjp(lambda g, concentration, result, rng: g * _standard_gamma_grad(
    concentration, result))
_standard_gamma_op.defjvp(lambda t, concentration, result, rng: t * _standard_gamma_grad(
    concentration, result))


def standard_gamma(concentration, generator=None):
    """Draws of Gamma(concentration, 1), differentiable in ``concentration`` (torch's
    ``_standard_gamma``)."""
    return _standard_gamma_op(concentration, rng=rng_of(generator, "_standard_gamma"))
