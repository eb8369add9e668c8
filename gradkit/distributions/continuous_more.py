"""More continuous distributions: GeneralizedPareto, ContinuousBernoulli, VonMises."""
from __future__ import annotations

import math

from gradkit import backend, ops
from gradkit._tensor import Size, Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.creation import empty, ones_like, rand, tensor, zeros
from gradkit.distributions import constraints
from gradkit.distributions.discrete import _Binary, _one_of
from gradkit.distributions.distribution import CentredAtLoc, Distribution
from gradkit.distributions.exp_family import ExponentialFamily
from gradkit.distributions.utils import (
    broadcast_all, clamp_probs, lazy_property, logits_to_probs)
from gradkit.nn.functional import binary_cross_entropy_with_logits

__all__ = ["ContinuousBernoulli", "GeneralizedPareto", "VonMises"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with ``loc``, ``scale`` and ``concentration``
    (exponential at concentration 0)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True
    _expand_names = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self._init_parameters(validate_args, loc=loc, scale=scale, concentration=concentration)

    def _safe_concentration(self):
        """(concentration == 0 within isclose, the concentration with 1 there)."""
        eq_zero = ops.isclose(self.concentration, tensor(0.0))
        return eq_zero, ops.where(eq_zero, ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=Size()) -> Tensor:
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + ones_like(z)
        where_nonzero = ops.where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - ops.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe_concentration()
        return ops.where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        """log P(X <= value)."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero = ops.isclose(self.concentration, ops.zeros_like(self.concentration))
        safe = ops.where(eq_zero, ones_like(self.concentration), self.concentration)
        logu = (-value).log1p()
        return ops.where(eq_zero, self.loc - self.scale * logu,
                         self.loc + self.scale / safe * (-safe * logu).expm1())

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = ops.where(valid, self.concentration, 0.5)
        return ops.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = ops.where(valid, self.concentration, 0.25)
        return ops.where(valid, self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).broadcast_to(
            tuple(self._batch_shape))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = ops.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                          math.inf)
        return constraints.interval(self.loc, upper)


class ContinuousBernoulli(_Binary, ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] (density ∝ p^x (1-p)^(1-x)), with
    torch's Taylor expansions inside ``lims`` around p = 1/2."""
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims: tuple = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        self._lims = lims
        if probs is not None:
            batch_shape = self._broadcast_parameters(probs=probs)
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            batch_shape = self._broadcast_parameters(logits=logits)
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def _outside_unstable_region(self):
        return ops.maximum(self.probs.le(self._lims[0]), self.probs.gt(self._lims[1]))

    def _cut_probs(self):
        return ops.where(self._outside_unstable_region(), self.probs,
                         self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below_half = ops.where(cut.le(0.5), cut, ops.zeros_like(cut))
        above_half = ops.where(cut.ge(0.5), cut, ones_like(cut))
        log_norm = (((-cut).log1p() - cut.log()).abs().log()
                    - ops.where(cut.le(0.5), (-2.0 * below_half).log1p(),
                                (2.0 * above_half - 1.0).log()))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        exact = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                 + 1.0 / ((-cut).log1p() - cut.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), exact, taylor)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def rsample(self, sample_shape=Size()) -> Tensor:
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype,
                 device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ops.broadcast_tensors(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = ops.where(self._outside_unstable_region(), cdfs, value)
        return ops.where(value.le(0.0), ops.zeros_like(value),
                         ops.where(value.ge(1.0), ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inverse = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                   / (cut.log() - (-cut).log1p()))
        return ops.where(self._outside_unstable_region(), inverse, value)

    def entropy(self) -> Tensor:
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = ops.maximum(x.le(self._lims[0] - 0.5), x.gt(self._lims[1] - 0.5))
        cut = ops.where(outside, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ops.where(outside, log_norm, taylor)


# torch's polynomial approximations of log I0 and log I1 (Abramowitz and Stegun 9.8.1-4)
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
           0.02635537, -0.01647633, 0.00392377],
          [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
           -0.02895312, 0.01787654, -0.00420059])


def _eval_poly(y, coefficients):
    result = coefficients[-1]
    for coefficient in reversed(coefficients[:-1]):
        result = coefficient + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """log I_order(x) for order 0 or 1, as torch approximates it."""
    small = _eval_poly((x / 3.75) ** 2, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _LARGE[order]).log()
    return ops.where(x < 3.75, small.log(), large)


class VonMises(CentredAtLoc, Distribution):
    """The von Mises (circular normal) distribution with mean direction ``loc`` and
    ``concentration``; sampled by torch's rejection scheme (Best and Fisher), no rsample."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _expand_names = ("loc", "concentration")

    def __init__(self, loc: Tensor, concentration: Tensor,
                 validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    def _proposal_r(self, kappa: Tensor) -> Tensor:
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return ops.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            loc = self.loc.to(backend.float64)
            kappa = self.concentration.to(backend.float64)
            proposal_r = self._proposal_r(kappa)
            shape = tuple(self._extended_shape(sample_shape))
            device = self.loc.device
            x = empty(shape, dtype=backend.float64, device=device)
            done = zeros(shape, dtype=backend.bool_, device=device)
            while not bool(done.all()):
                u1, u2, u3 = rand((3,) + shape, dtype=backend.float64, device=device).unbind()
                z = (math.pi * u1).cos()
                f = (1 + proposal_r * z) / (proposal_r + z)
                c = kappa * (proposal_r - f)
                accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
                x = ops.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @lazy_property
    def variance(self) -> Tensor:
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()

