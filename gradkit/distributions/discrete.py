"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical, Geometric, Poisson,
Binomial. Each takes ``probs`` or ``logits`` (one of them); the other is derived lazily."""
from __future__ import annotations

import math

from gradkit import ops
from gradkit._tensor import Size, Tensor
from gradkit.creation import arange, empty, full, zeros_like
from gradkit.distributions import constraints
from gradkit.distributions.distribution import Distribution
from gradkit.distributions.exp_family import ExponentialFamily
from gradkit.distributions.utils import (
    forwarded, lazy_property, logits_to_probs, probs_to_logits)
from gradkit.dtype_info import finfo
from gradkit.nn.functional import binary_cross_entropy_with_logits
from gradkit.ops.binomial_norms import binomial
from gradkit.ops.random_sampling import bernoulli, multinomial, poisson

__all__ = ["Bernoulli", "Binomial", "Categorical", "Geometric", "Poisson"]


def _one_of(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _Binary(Distribution):
    """A distribution given by a success probability ``probs`` or its log-odds ``logits``."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    _expand_names = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            self._init_parameters(validate_args, probs=probs)
        else:
            self._init_parameters(validate_args, logits=logits)

    @property
    def _param(self) -> Tensor:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self) -> Size:
        """The shape of the parameter that was given."""
        return self._param.size()

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def _checked(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return value

    def _support_values(self, count: int, expand: bool) -> Tensor:
        values = arange(count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Bernoulli(_Binary, ExponentialFamily):
    """The Bernoulli distribution: 1 with probability ``probs``, else 0."""
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs)
        return ops.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        return bernoulli(self.probs.detach().expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        # validated first, as torch: the error repr lists logits only if it was computed
        value = self._checked(value)
        logits, value = ops.broadcast_tensors(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        return self._support_values(2, expand)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (ops.logit(self.probs),)

    def _log_normalizer(self, x):
        return x.exp().log1p()


class Geometric(_Binary):
    """The number of failures before the first success, success probability ``probs``."""
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        super().__init__(probs, logits, validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{self.probs.data[~valid]}")

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()) -> Tensor:
        probs = self.probs.detach()
        tiny = finfo(probs.dtype).tiny
        u = empty(self._extended_shape(sample_shape), dtype=probs.dtype,
                  device=probs.device).uniform_(tiny, 1)
        return (u.log() / (-probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        value, probs = ops.broadcast_tensors(self._checked(value), self.probs)
        # p = 1 at value 0 gives 0 * log(0): torch zeroes that probability to get log p = 0
        probs = ops.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs


def init_counted(dist: _Binary, total_count, probs, logits, validate_args) -> None:
    """Binomial's and NegativeBinomial's parameters: a count and probs or logits, broadcast,
    the count in the parameter's dtype."""
    _one_of(probs, logits)
    name, param = ("probs", probs) if probs is not None else ("logits", logits)
    dist._broadcast_parameters(total_count=total_count, **{name: param})
    dist.total_count = dist.total_count.type_as(dist._param)
    Distribution.__init__(dist, dist._param.shape, validate_args=validate_args)


def _clamp_by_zero(x: Tensor) -> Tensor:
    """max(x, 0) with gradient 1/2 at 0 (as torch)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_Binary):
    """The number of successes in ``total_count`` trials of success probability ``probs``."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    _expand_names = ("total_count", "probs", "logits")

    def __init__(self, total_count: Tensor | int = 1, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        init_counted(self, total_count, probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return binomial(self.total_count.detach().expand(shape).contiguous(),
                        self.probs.detach().expand(shape).contiguous())

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        n, logits = self.total_count, self.logits
        normalize_term = (n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
                          - (n + 1).lgamma())
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalize_term

    def _homogeneous_count(self, method: str) -> int:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{method}`.")
        return total_count

    def entropy(self) -> Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        return self._support_values(1 + self._homogeneous_count("enumerate_support"), expand)


class Poisson(ExponentialFamily):
    """The Poisson distribution with rate ``rate``."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _expand_names = ("rate",)

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        self._init_parameters(validate_args, rate=rate)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=Size()) -> Tensor:
        return poisson(self.rate.detach().expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = ops.broadcast_tensors(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


class Categorical(Distribution):
    """One of ``K`` categories, with probabilities ``probs`` (normalized along the last dim)
    or unnormalized log-probabilities ``logits``."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _expand_names = ("probs", "logits")

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if given.dim() < 1:
            name = "probs" if probs is not None else "logits"
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def _param(self) -> Tensor:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        """The shape of the parameter that was given."""
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = Size(tuple(sample_shape))
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, log_pmf = ops.broadcast_tensors(value.long().unsqueeze(-1), self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)  # -inf * 0 would be NaN
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class WrapsCategorical(Distribution):
    """A distribution built on ``self._categorical``: its parameters, and an expand() that
    expands the Categorical and keeps the plain state (a temperature, a count)."""

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        for name, value in self.__dict__.items():
            if not isinstance(value, (Distribution, Size)):
                new.__dict__[name] = value
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    _param = forwarded("_categorical._param")
    probs = forwarded("_categorical.probs")
    logits = forwarded("_categorical.logits")
    param_shape = forwarded("_categorical.param_shape", "The shape of the given parameter.")
