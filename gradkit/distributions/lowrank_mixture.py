"""LowRankMultivariateNormal (covariance W Wᵀ + diag(D)) and MixtureSameFamily."""
from __future__ import annotations

import math

from gradkit import linalg, ops
from gradkit._tensor import Size, Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.creation import eye, randn
from gradkit.distributions import constraints
from gradkit.distributions.discrete import Categorical
from gradkit.distributions.distribution import CentredAtLoc, Distribution
from gradkit.distributions.multivariate import MatrixShapes, _batch_mahalanobis
from gradkit.distributions.utils import as_size, forwarded, lazy_property

__all__ = ["LowRankMultivariateNormal", "MixtureSameFamily"]


def _batch_mv(matrix: Tensor, vector: Tensor) -> Tensor:
    return ops.matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


def _capacitance_tril(cov_factor: Tensor, cov_diag: Tensor) -> Tensor:
    """The Cholesky factor of the capacitance I + Wᵀ D⁻¹ W (m x m for a rank m)."""
    rank = cov_factor.shape[-1]
    capacitance = ops.matmul(cov_factor.mT / cov_diag.unsqueeze(-2), cov_factor)
    return linalg.cholesky(capacitance + eye(rank, dtype=cov_factor.dtype,
                                             device=cov_factor.device))


def _lowrank_logdet(cov_diag: Tensor, capacitance_tril: Tensor) -> Tensor:
    """log det(W Wᵀ + D) by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + cov_diag.log().sum(-1))


def _lowrank_mahalanobis(cov_factor, cov_diag, x, capacitance_tril) -> Tensor:
    """xᵀ (W Wᵀ + D)⁻¹ x by the Woodbury identity."""
    wt_dinv_x = _batch_mv(cov_factor.mT / cov_diag.unsqueeze(-2), x)
    return (x.pow(2) / cov_diag).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(CentredAtLoc, MatrixShapes, Distribution):
    """The normal distribution on vectors with covariance ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``, computed without forming it (Woodbury, determinant lemma)."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = ops.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        for name in ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag",
                     "_capacitance_tril"):
            setattr(new, name, getattr(self, name))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(tuple(self._batch_shape)
                                                       + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        n = self._event_shape[0]
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / diag_sqrt
        inner = ops.matmul(scaled, scaled.mT) + eye(n, dtype=scaled.dtype, device=scaled.device)
        return (diag_sqrt * linalg.cholesky(inner)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        factor = self._unbroadcasted_cov_factor
        return (ops.matmul(factor, factor.mT) + ops.diag_embed(self._unbroadcasted_cov_diag)
                ).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        return (ops.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a).expand(
            self._matrix_shape())

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        eps_w = randn(shape[:-1] + tuple(self.cov_factor.shape[-1:]), dtype=self.loc.dtype,
                      device=self.loc.device)
        eps_d = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self) -> Tensor:
        return _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                           self._unbroadcasted_cov_diag, value - self.loc,
                                           self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det()
                       + mahalanobis)

    def entropy(self) -> Tensor:
        entropy = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return entropy if len(self._batch_shape) == 0 else entropy.expand(self._batch_shape)


class MixtureSameFamily(Distribution):
    """A mixture of the batch of ``component_distribution`` (its rightmost batch dim) with
    weights from ``mixture_distribution``, a Categorical."""
    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical,
                 component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = Size(tuple(component_distribution.batch_shape[:-1]))
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = as_size(batch_shape)
        new = self._new_for_expand(_instance)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    mixture_distribution = forwarded("_mixture_distribution")
    component_distribution = forwarded("_component_distribution")

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(dim)
        deviation = self.component_distribution.mean - self._pad(self.mean)
        return mean_cond_var + (probs * deviation.pow(2.0)).sum(dim)

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = ops.log_softmax(self.mixture_distribution.logits, dim=-1)
        return ops.logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            index = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            index = index.repeat((1,) * len(mix_shape) + (1,) + es)
            return ops.gather(comp_samples, gather_dim, index).squeeze(gather_dim)

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  "
                f"{self.component_distribution})")
