"""torch.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations.

``weight_norm(m)`` stores ``parametrizations.weight.original0`` (g, the norms) and
``original1`` (v); ``spectral_norm(m)`` stores ``parametrizations.weight.original`` and the
power-iteration buffers ``_u`` and ``_v`` on the parametrization. ``m.weight`` is recomputed
on every access (``parametrize.cached()`` to reuse it).

>>> layer = weight_norm(gradkit.nn.Linear(3, 2))
>>> [name for name, _ in layer.named_parameters()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
from __future__ import annotations

from gradkit import autograd, ops
from gradkit._tensor import Tensor
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.module import Module
from gradkit.nn.utils import parametrize
from gradkit.nn.utils.weight_norm import (norm_except_dim, spectral_default_dim,
                                         weight_norm_of)


class _WeightNorm(Module):
    """w = g · v / ‖v‖ from (g, v); right_inverse splits a weight into them."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_of(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalization of ``module.<name>`` (``dim=None``: one norm for the whole
    tensor). torch also loads old ``weight_g`` / ``weight_v`` state_dict keys into it; gradkit
    has no load_state_dict pre-hooks, so rename those keys first."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / σ, σ the largest singular value estimated by power iteration on ``_u``,
    ``_v`` (one step per training-mode access); a 1-D weight is just normalized."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            height, width = weight_mat.shape
            u = weight_mat.new_empty(height).normal_(0, 1)
            v = weight_mat.new_empty(width).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with autograd.no_grad():  # u and v change in place, as torch's out=
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ops.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ops.mv(weight_mat.mH, self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        sigma = ops.vdot(self._u.clone(), ops.mv(weight_mat, self._v.clone()))
        return ops.div(weight, sigma)

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Spectral normalization of ``module.<name>``; dim defaults to 1 for ConvTranspose,
    else 0. u and v start from gradkit's generator (values differ from torch's for a seed)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = spectral_default_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


__all__ = ["weight_norm", "spectral_norm"]
