"""Distributions over matrices: Wishart (positive definite matrices) and LKJCholesky
(Cholesky factors of correlation matrices)."""
from __future__ import annotations

import math
import warnings

from gradkit import linalg, ops
from gradkit._tensor import Size, Tensor
from gradkit.creation import arange, eye, randn, tensor
from gradkit.creation_more import broadcast_shapes
from gradkit.distributions import constraints
from gradkit.distributions.distribution import Distribution
from gradkit.distributions.exp_family import ExponentialFamily
from gradkit.distributions.gamma_family import Beta, Chi2
from gradkit.distributions.multivariate import ScaleTrilMatrices, scale_tril_from
from gradkit.distributions.utils import (
    as_size, broadcast_all, is_number, lazy_property, vec_to_tril_matrix)
from gradkit.dtype_info import finfo

__all__ = ["LKJCholesky", "Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma function Σ_i ψ(x - i/2), i < p."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    shifts = arange(p, dtype=x.dtype, device=x.device).div(2)
    return (x.unsqueeze(-1) - shifts.expand(tuple(x.shape) + (-1,))).digamma().sum(-1)


class Wishart(ScaleTrilMatrices, ExponentialFamily):
    """The Wishart distribution on positive definite p x p matrices with ``df`` degrees of
    freedom and one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``;
    ``rsample`` is Bartlett's decomposition (chi-squared diagonal, normal lower part)."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = {name: m for name, m in (("covariance_matrix", covariance_matrix),
                                         ("precision_matrix", precision_matrix),
                                         ("scale_tril", scale_tril)) if m is not None}
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        (name, param), = given.items()
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if is_number(df):
            batch_shape = tuple(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = scale_tril_from(name, param)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape) -> Chi2:
        """The chi-squared laws of Bartlett's diagonal: df, df - 1, ..., df - p + 1."""
        p = self._event_shape[-1]
        factor = self._unbroadcasted_scale_tril
        steps = arange(p, dtype=factor.dtype, device=factor.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        batch_shape = as_size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def precision_matrix(self) -> Tensor:
        factor = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=factor.dtype, device=factor.device)
        return ops.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    def _df_matrix(self, df: Tensor) -> Tensor:
        return df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ops.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        cov = self.covariance_matrix
        diagonal = cov.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (cov.pow(2) + diagonal.unsqueeze(-1)
                                           * diagonal.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape) -> Tensor:
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = chi.clamp(min=finfo(chi.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        lower = randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                      dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ (noise + vec_to_tril_matrix(lower, diag=-1))
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=None) -> Tensor:
        """Bartlett draws; draws that are singular in working precision are drawn again (at
        most ``max_try_correction`` times, 10 by default), with torch's warning."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(tuple(sample_shape))
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(tuple(sample_shape))
                sample = ops.where(singular[..., None, None], redrawn, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = ops.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + self._half_log_det()) - ops.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._half_log_det()) + ops.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + ops.mvlgamma(y + (p + 1) / 2, p=p))


class LKJCholesky(Distribution):
    """The LKJ distribution over Cholesky factors of ``dim`` x ``dim`` correlation matrices,
    density ∝ det(L Lᵀ)^(concentration - 1); sampled by the onion method."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype,
                        device=self.concentration.device)
        offset = ops.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._new_for_expand(_instance)
        batch_shape = as_size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = randn(self._extended_shape(sample_shape), dtype=y.dtype,
                         device=y.device).tril(-1)
        norm = u_normal.norm(dim=-1, keepdim=True)
        # row 0 has no strictly lower part: it stays 0 (torch divides 0 by 0, then fills 0)
        w = y.sqrt() * (u_normal / ops.where(norm == 0, 1.0, norm))
        diagonal = (1 - (w**2).sum(dim=-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diagonal.diag_embed()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + ops.mvlgamma(alpha - 0.5, dm1)
                      - alpha.lgamma() * dm1)
        return unnormalized - normalizer
