"""``sample_dirichlet``: Dirichlet draws with torch's reparameterization gradient, the ground
of Dirichlet and Beta's ``rsample``.

Draws are normalized Gamma(α, 1) draws computed in float64 (torch's ``_sample_dirichlet``).
Their gradient is torch's ``_Dirichlet`` backward: each coordinate's implicit gradient
-(∂F/∂α)/p as a Beta(α_i, Σα - α_i) marginal, approximated piecewise as torch's CPU kernel
does (aten/src/ATen/native/Distributions.h, ``dirichlet_grad_one``): Taylor series near 0 and
near 1, a saddle point expansion when both parameters exceed 6, a rational correction of an
analytic approximation elsewhere. float64 inside, cast back.
"""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.autograd.function import Function, once_differentiable
from gradkit.generator import rng_of
from gradkit.ops._op import Op
from gradkit.ops.reduction import sum as reduce_sum
from gradkit.ops.special_gamma import digamma_array

# torch's coefficients: p (index 0) and q (index 1) of the rational correction, by powers of
# u = log x (i), a = log α - u (j) and b = log Σα - a (k)
_RATIONAL = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _psi(x):
    return digamma_array(np, x)


def _grad_alpha_small(x, alpha, beta):
    """Near x = 0: a Taylor series of the Beta cdf's derivative in alpha."""
    factor = _psi(alpha) - _psi(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * (i - beta) * x / i
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return np.where(np.isnan(result), 0.0, result)


def _grad_beta_small(x, alpha, beta):
    """Near x = 0: a Taylor series of the Beta cdf's derivative in beta."""
    factor = _psi(alpha + beta) - _psi(beta)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _grad_alpha_mid(x, alpha, beta):
    """alpha and beta both large: Rice's saddle point expansion, its own series at the mean."""
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    poly = (47 * x * beta**4 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * beta**3 + alpha * (
            3 * (59 + 180 * beta - 90 * x) * beta**2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11))))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha**3 * beta**2 * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha**2))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta**2))
                / (1 + 1 / (12 * total) + 1 / (288 * total**2)))
    term1_num = 2 * alpha**2 * (x - 1) + alpha * beta * (x - 1) - x * beta**2
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * total**1.5 * axbx * axbx)
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x)))
             + alpha * np.log(alpha / (total * x))) ** -1.5
    far = stirling * prefactor * (term1 + term2 * (term3 + np.where(x < mean, term4, -term4)))
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


def _rational(x, alpha, total):
    """Elsewhere: a rational correction of x (ψ(Σα) - ψ(α)) / β."""
    u = np.log(x)
    a = np.log(alpha) - u
    b = np.log(total) - a
    p, q = np.zeros_like(x), np.zeros_like(x)
    for i in range(3):
        for j in range(3):
            ua = u**i * a**j
            cp, cq = _RATIONAL[0, i, j], _RATIONAL[1, i, j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    return p / q * x * (_psi(total) - _psi(alpha)) / (total - alpha)


def _dirichlet_grad_forward(xp, x, alpha, total):
    """torch's ``_dirichlet_grad(x, alpha, total)``: -(∂F/∂α)/p/(1 - x) for the Beta
    marginal of each coordinate."""
    dtype = x.dtype
    x, alpha, total = np.broadcast_arrays(
        *(np.asarray(backend.to_device(v, backend.CPU), dtype=np.float64)
          for v in (x, alpha, total)))
    beta = total - alpha
    boundary = total * x * (1 - x)
    with np.errstate(all="ignore"):  # every branch is computed, each kept where it applies
        grad = np.select(
            [(x <= 0.5) & (boundary < 2.5), (x >= 0.5) & (boundary < 0.75),
             (alpha > 6) & (beta > 6)],
            [_grad_alpha_small(x, alpha, beta), -_grad_beta_small(1 - x, beta, alpha),
             _grad_alpha_mid(x, alpha, beta)],
            _rational(x, alpha, total))
    return xp.asarray(grad.astype(dtype))


def _not_differentiable(g, *saved, **params):
    raise NotImplementedError("the derivative for '_dirichlet_grad' is not implemented.")


dirichlet_grad = Op(_dirichlet_grad_forward, name="_dirichlet_grad")
dirichlet_grad.defvjp(*(_not_differentiable,) * 3)
dirichlet_grad.defjvp(*(_not_differentiable,) * 3)


def _draw_dirichlet(xp, concentration, *, rng=None):
    alpha = np.asarray(backend.to_device(concentration, backend.CPU))
    gammas = np.maximum(rng.standard_gamma(alpha.astype(np.float64)), np.finfo(np.float64).tiny)
    draws = (gammas / gammas.sum(-1, keepdims=True)).astype(alpha.dtype)
    # as torch: never 0 nor 1, which have no log
    return xp.asarray(np.clip(draws, np.finfo(alpha.dtype).tiny,
                              np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0))))


class _Dirichlet(Function):
    """torch's Dirichlet.rsample, a Function (node ``_DirichletBackward``) whose backward is
    once_differentiable: a create_graph gradient has no graph of its own, so a second
    derivative raises as torch's (no grad_fn, or its DelayedError)."""

    @staticmethod
    def forward(ctx, concentration, rng):
        data = concentration._data
        result = Tensor._make(_draw_dirichlet(backend.get_array_module(data), data, rng=rng))
        ctx.save_for_backward(result, concentration)
        return result

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        result, concentration = ctx.saved_tensors
        total = reduce_sum(concentration, -1, True)
        return dirichlet_grad(result, concentration, total) * \
            (g - reduce_sum(result * g, -1, True)), None


def sample_dirichlet(concentration, generator=None):
    """Draws of Dirichlet(concentration) along the last dim, differentiable in
    ``concentration`` as torch's ``Dirichlet.rsample``."""
    return _Dirichlet.apply(concentration, rng_of(generator, "_sample_dirichlet"))
