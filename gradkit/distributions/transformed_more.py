"""More distributions torch defines as transformed ones: Pareto, Weibull, InverseGamma,
Kumaraswamy, LogisticNormal."""
from __future__ import annotations

import math

from gradkit import ops
from gradkit._tensor import Tensor
from gradkit.creation import full_like, ones_like
from gradkit.distributions import constraints
from gradkit.distributions.continuous import Exponential, Normal, Uniform
from gradkit.distributions.gamma_family import Gamma
from gradkit.distributions.transform_kinds import AffineTransform, ExpTransform, PowerTransform
from gradkit.distributions.transform_structured import StickBreakingTransform
from gradkit.distributions.transformed import TransformedDistribution
from gradkit.distributions.utils import broadcast_all, euler_constant, forwarded

__all__ = ["InverseGamma", "Kumaraswamy", "LogisticNormal", "Pareto", "Weibull"]


class _OwnParameters(TransformedDistribution):
    """A transformed distribution that also keeps its parameters (``_own``) itself."""
    _own: tuple[str, ...] = ()

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        for name in self._own:
            setattr(new, name, getattr(self, name).expand(tuple(batch_shape)))
        return super().expand(batch_shape, _instance=new)


class Pareto(_OwnParameters):
    """The Pareto distribution: scale * exp(X) for X ~ Exponential(alpha)."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    _own = ("scale", "alpha")

    def __init__(self, scale: Tensor | float, alpha: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """The Weibull distribution: scale * X ** (1 / concentration), X ~ Exponential(1)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        super().__init__(Exponential(ones_like(self.scale), validate_args=validate_args),
                         self._transforms(), validate_args=validate_args)

    def _transforms(self) -> list:
        return [PowerTransform(exponent=self.concentration_reciprocal),
                AffineTransform(loc=0, scale=self.scale)]

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape),
                                         new._transforms(), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale.pow(2) * ((1 + 2 * r).lgamma().exp() - (2 * (1 + r).lgamma()).exp())

    def entropy(self) -> Tensor:
        r = self.concentration_reciprocal
        return euler_constant * (1 - r) + (self.scale * r).log() + 1


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    concentration = forwarded("base_dist.concentration")
    rate = forwarded("base_dist.rate")

    @property
    def mean(self) -> Tensor:
        return ops.where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        finite = self.rate.square() / ((c - 1).square() * (c - 2))
        return ops.where(c > 2, finite, math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()


def _moments(a, b, n):
    """E[X^n] of a Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    return b * (arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()).exp()


class Kumaraswamy(_OwnParameters):
    """The Kumaraswamy distribution on (0, 1): (1 - U ** (1 / b)) ** (1 / a), U uniform."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _own = ("concentration1", "concentration0")

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return ops.where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        t1, t0 = 1 - a.reciprocal(), 1 - b.reciprocal()
        harmonic = (b + 1).digamma() + euler_constant
        return t0 + t1 * harmonic - a.log() - b.log()



class LogisticNormal(TransformedDistribution):
    """The logistic normal distribution on the simplex: stick breaking of a Normal(loc,
    scale) vector (one coordinate shorter than the simplex)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    loc = forwarded("base_dist.base_dist.loc")
    scale = forwarded("base_dist.base_dist.scale")
