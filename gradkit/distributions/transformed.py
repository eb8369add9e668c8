"""``TransformedDistribution`` (a base distribution pushed through transforms) and the
distributions torch defines that way: LogNormal, Gumbel, HalfNormal, HalfCauchy."""
from __future__ import annotations

import math

from gradkit import ops
from gradkit._tensor import Size, Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.creation import as_tensor, full, full_like, ones_like, zeros_like
from gradkit.distributions import constraints
from gradkit.distributions.continuous import Cauchy, Normal, Uniform
from gradkit.distributions.distribution import Distribution
from gradkit.distributions.multivariate import Independent
from gradkit.distributions.transform_base import ComposeTransform, Transform
from gradkit.distributions.transform_kinds import AbsTransform, AffineTransform, ExpTransform
from gradkit.distributions.utils import (
    as_size, broadcast_all, euler_constant, forwarded, is_number, sum_rightmost)
from gradkit.dtype_info import finfo

__all__ = ["Gumbel", "HalfCauchy", "HalfNormal", "LogNormal", "TransformedDistribution"]


class TransformedDistribution(Distribution):
    """The distribution of ``transforms`` applied in order to draws of
    ``base_distribution``; ``log_prob`` adds the inverse maps' log |det Jacobian|."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms,
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError("base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {Size(base_shape)}.")
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_batch = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch)
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        batch_shape = as_size(batch_shape)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for transform in reversed(self.transforms):
            shape = tuple(transform.inverse_shape(shape))
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    has_rsample = forwarded("base_dist.has_rsample")

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            return self._push(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self._push(self.base_dist.rsample(sample_shape))

    def _push(self, x: Tensor) -> Tensor:
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob, y = 0.0, value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """``value`` as a cdf value of the base distribution: flipped for a decreasing map."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        return self._push(self.base_dist.icdf(self._monotonize_cdf(value)))


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    loc = forwarded("base_dist.loc")
    scale = forwarded("base_dist.scale")

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class _Half(TransformedDistribution):
    """|X| for X of a distribution symmetric about 0 with scale ``scale``."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    scale = forwarded("base_dist.scale")

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.scale)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = as_tensor(value, dtype=self.base_dist.scale.dtype,
                              device=self.base_dist.scale.device)
        return ops.where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Half):
    """|X| for X ~ Normal(0, scale)."""

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Half):
    """|X| for X ~ Cauchy(0, scale)."""

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                    device=self.scale.device)

    variance = forwarded("base_dist.variance")


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution with ``loc`` and ``scale``:
    loc - scale * log(-log U) for U uniform."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if is_number(loc) and is_number(scale):
            base = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base = Uniform(full_like(self.loc, info.tiny), full_like(self.loc, 1 - info.eps),
                           validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)
