"""torch.nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm.

``weight_norm(m)`` stores ``parametrizations.weight.original0`` (g, the norms) and
``original1`` (v); ``spectral_norm(m)`` stores ``parametrizations.weight.original`` and the
power-iteration buffers ``_u`` and ``_v`` on the parametrization. ``m.weight`` is recomputed
on every access (``parametrize.cached()`` to reuse it).

>>> layer = weight_norm(gradkit.nn.Linear(3, 2))
>>> [name for name, _ in layer.named_parameters()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
from __future__ import annotations

from gradkit import autograd, creation, linalg, ops
from gradkit._tensor import Tensor
from gradkit.dtype_info import finfo
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
    tensor). A state_dict of the older hook-based weight_norm (``<name>_g``, ``<name>_v``)
    loads into it, as torch."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def old_keys_compat(module, state_dict, prefix, *_) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(old_keys_compat)
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


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    identity = creation.eye(k, dtype=q.dtype, device=q.device)
    return ops.allclose(ops.matmul(q.mH, q), identity, atol=10.0 * n * finfo(q.dtype).eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of A = QR with R's diagonal made positive."""
    x, tau = ops.geqrf(a)
    q = linalg.householder_product(x, tau)
    return ops.mul(q, ops.sgn(x.diagonal(dim1=-2, dim2=-1)).unsqueeze(-2))


_MAPS = ("matrix_exp", "cayley", "householder")


class _Orthogonal(Module):
    """An orthogonal (unitary) matrix from an unconstrained one: exp or Cayley of the
    skew-symmetric part of its lower triangle, or a product of Householder reflectors; with
    ``use_trivialization`` the result is left-multiplied by the buffer ``base``."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x, n, k = x.mT, k, n
        if self.orthogonal_map == "householder":
            a = x.tril(diagonal=-1)
            tau = ops.div(2.0, ops.add(1.0, ops.sum(ops.mul(a, a), dim=-2)))
            q = linalg.householder_product(a, tau)
            q = ops.mul(q, x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2))
        else:
            x = x.tril()
            if n != k:
                zeros = x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)
                x = ops.cat([x, zeros], dim=-1)
            a = ops.sub(x, x.mH)
            if self.orthogonal_map == "matrix_exp":
                q = ops.matrix_exp(a)
            else:
                identity = creation.eye(n, dtype=a.dtype, device=a.device)
                q = linalg.solve(ops.add(identity, a, alpha=-0.5),
                                 ops.add(identity, a, alpha=0.5))
            q = q[..., :k] if n != k else q
        if hasattr(self, "base"):
            q = ops.matmul(self.base, q)
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        """The unconstrained matrix mapping to ``q``: with trivialization, ``base`` becomes
        (an orthogonal completion of) q and the result maps to the identity."""
        with autograd.no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {q.shape}.")
        q_init = q
        n, k = q.shape[-2], q.shape[-1]
        transpose = n < k
        if transpose:
            q, n, k = q.mT, k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            a, tau = ops.geqrf(q)
            a.diagonal(dim1=-2, dim2=-1).sign_()
            a.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return a.mT if transpose else a
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:  # complete q with random columns (gradkit's generator: not torch's numbers)
            extra = creation.randn(*(tuple(q.shape[:-2]) + (n, n - k)), dtype=q.dtype,
                                   device=q.device)
            q = _make_orthogonal(ops.cat([q, extra], dim=-1))
        self.base = q
        # -I in q_init's shape (torch fills a zeros_like's diagonal; a fresh sum stays
        # writable on every backend)
        identity = creation.eye(q_init.shape[-2], q_init.shape[-1], dtype=q_init.dtype,
                                device=q_init.device)
        return ops.sub(creation.zeros_like(q_init), identity)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep ``module.<name>`` (a matrix or batch of them) orthogonal / unitary.
    ``orthogonal_map``: "matrix_exp" (default for square or complex), "cayley" or
    "householder" (default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


__all__ = ["orthogonal", "weight_norm", "spectral_norm"]
