"""``ExponentialFamily``: distributions whose density is exp(<θ, t(x)> - F(θ) + k(x))."""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.autograd.api import grad
from gradkit.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """An exponential family, given by its natural parameters θ (``_natural_params``), its
    log normalizer F (``_log_normalizer``) and the mean of its carrier measure k."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """F(θ) - <θ, ∇F(θ)> - E[k(x)], with ∇F taken by autograd (the Bregman form)."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = grad(log_normalizer.sum(), params, create_graph=True)
        result = result + log_normalizer
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
