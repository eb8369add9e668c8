"""More discrete distributions: OneHotCategorical (and its straight-through version),
Multinomial, NegativeBinomial."""
from __future__ import annotations

import math

from gradkit import ops
from gradkit._tensor import Size, Tensor
from gradkit.creation import eye, ones_like, tensor, zeros
from gradkit.distributions import constraints
from gradkit.distributions.discrete import (
    Binomial, Categorical, WrapsCategorical, _Binary, init_counted)
from gradkit.distributions.gamma_family import Gamma
from gradkit.distributions.utils import forwarded, lazy_property
from gradkit.nn.functional import logsigmoid, one_hot
from gradkit.ops.random_sampling import poisson

__all__ = ["Multinomial", "NegativeBinomial", "OneHotCategorical",
           "OneHotCategoricalStraightThrough"]


class OneHotCategorical(WrapsCategorical):
    """A Categorical whose samples are one-hot vectors of length ``K``."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    mean = forwarded("_categorical.probs")

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class Multinomial(WrapsCategorical):
    """Counts of ``total_count`` draws of a Categorical(probs / logits)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = tuple(sample_shape)
        draws = self._categorical.sample((self.total_count,) + sample_shape)
        draws = draws.permute(*range(1, draws.dim()), 0)  # the draws last
        counts = zeros(self._extended_shape(sample_shape), dtype=draws.dtype,
                       device=draws.device)
        return counts.scatter_add(-1, draws, ones_like(draws)).type_as(self.probs)

    def entropy(self) -> Tensor:
        n = tensor(self.total_count, device=self.probs.device)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        return term1 + (binomial_probs * (support + 1).lgamma()).sum([0, -1])

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ops.broadcast_tensors(self.logits, value)
        # 0 * log(0): torch takes a zero count of an impossible event as log-probability 0
        logits = ops.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return ((value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1)
                + (logits * value).sum(-1))


class NegativeBinomial(_Binary):
    """The number of successes before ``total_count`` failures, each trial a success with
    probability ``probs``."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_names = ("total_count", "probs", "logits")

    def __init__(self, total_count: Tensor | float, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        init_counted(self, total_count, probs, logits, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / ops.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=Size()) -> Tensor:
        return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        normalization = normalization.masked_fill(n + value == 0.0, 0.0)
        return unnormalized - normalization


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` passes the gradient of the probabilities through
    the one-hot sample (the straight-through estimator)."""
    has_rsample = True

    def rsample(self, sample_shape=Size()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
