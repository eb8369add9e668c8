"""Relaxed (continuous, reparameterizable) versions of Bernoulli and OneHotCategorical at a
``temperature`` (the Concrete / Gumbel-softmax distributions)."""
from __future__ import annotations

from gradkit import ops
from gradkit._tensor import Size, Tensor
from gradkit.creation import full_like, rand
from gradkit.distributions import constraints
from gradkit.distributions.discrete import Categorical, WrapsCategorical, _Binary
from gradkit.distributions.transform_kinds import ExpTransform, SigmoidTransform
from gradkit.distributions.transformed import TransformedDistribution
from gradkit.distributions.utils import clamp_probs, forwarded

__all__ = ["ExpRelaxedCategorical", "LogitRelaxedBernoulli", "RelaxedBernoulli",
           "RelaxedOneHotCategorical"]


class LogitRelaxedBernoulli(_Binary):
    """The logit of a RelaxedBernoulli draw."""
    support = constraints.real

    def __init__(self, temperature: Tensor, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        super().__init__(probs, logits, validate_args)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ops.broadcast_tensors(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _Relaxed(TransformedDistribution):
    """A relaxed distribution: its base's temperature and parameters."""

    temperature = forwarded("base_dist.temperature")
    logits = forwarded("base_dist.logits")
    probs = forwarded("base_dist.probs")


class RelaxedBernoulli(_Relaxed):
    """A Bernoulli relaxed onto (0, 1): sigmoid of a LogitRelaxedBernoulli draw."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)


class ExpRelaxedCategorical(WrapsCategorical):
    """The log of a RelaxedOneHotCategorical draw (log-softmax of Gumbel-perturbed logits
    over the temperature)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -(-uniforms.log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ops.broadcast_tensors(self.logits, value)
        log_scale = (full_like(self.temperature, float(k)).lgamma()
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        return (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """A OneHotCategorical relaxed onto the simplex (the Gumbel-softmax distribution)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits,
                                               validate_args=validate_args),
                         ExpTransform(), validate_args=validate_args)
