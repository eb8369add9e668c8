"""MultivariateNormal (by covariance, precision or scale_tril) and Independent."""
from __future__ import annotations

import math

from gradkit import linalg, ops
from gradkit._tensor import Size, Tensor
from gradkit.creation import eye, randn
from gradkit.distributions import constraints
from gradkit.distributions.distribution import CentredAtLoc, Distribution
from gradkit.distributions.utils import as_size, forwarded, lazy_property, sum_rightmost
from gradkit.creation_more import broadcast_shapes

__all__ = ["Independent", "MultivariateNormal"]


def _batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """The squared Mahalanobis distance |L⁻¹ x|² for a batch of x and of factors L."""
    n = diff.shape[-1]
    batch = broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    solved = linalg.solve_triangular(scale_tril.expand(tuple(batch) + (n, n)),
                                     diff.expand(tuple(batch) + (n,)).unsqueeze(-1),
                                     upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower Cholesky factor of the inverse of ``precision``, without inverting it
    (torch's flip trick: a Cholesky factor of the flipped matrix gives an upper one)."""
    flipped = linalg.cholesky(ops.flip(precision, (-2, -1)))
    inverse_factor = ops.flip(flipped, (-2, -1)).transpose(-2, -1)
    identity = eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return linalg.solve_triangular(inverse_factor, identity, upper=False)


def scale_tril_from(name: str, matrix: Tensor) -> Tensor:
    """The lower Cholesky factor of the covariance, from the one matrix given as ``name``:
    scale_tril, covariance_matrix or precision_matrix."""
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return linalg.cholesky(matrix)
    return _precision_to_scale_tril(matrix)


class MatrixShapes:
    """Mixin: ``_matrix_shape()``, batch_shape + (n, n) for events of n or n x n."""

    def _matrix_shape(self) -> tuple:
        n = self._event_shape[-1]
        return tuple(self._batch_shape) + (n, n)


class ScaleTrilMatrices(MatrixShapes):
    """Mixin: ``scale_tril`` and ``covariance_matrix`` (L Lᵀ) from the lower Cholesky
    factor ``_unbroadcasted_scale_tril``, expanded to the batch shape, made lazily."""

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        factor = self._unbroadcasted_scale_tril
        return ops.matmul(factor, factor.mT).expand(self._matrix_shape())


class MultivariateNormal(CentredAtLoc, ScaleTrilMatrices, Distribution):
    """The normal distribution on vectors with mean ``loc`` and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (a lower Cholesky factor of the covariance)."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {name: m for name, m in (("scale_tril", scale_tril),
                                         ("covariance_matrix", covariance_matrix),
                                         ("precision_matrix", precision_matrix))
                 if m is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given.items()
        if matrix.dim() < 2:
            prefix = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{prefix} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = scale_tril_from(name, matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = as_size(batch_shape)
        matrix_shape = tuple(batch_shape) + tuple(self.event_shape) * 2
        new.loc = self.loc.expand(tuple(batch_shape) + tuple(self.event_shape))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return ops.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype,
                    device=self.loc.device)
        return self.loc + ops.matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return (-0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis)
                - self._half_log_det())

    def entropy(self) -> Tensor:
        entropy = (0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi))
                   + self._half_log_det())
        return entropy if len(self._batch_shape) == 0 else entropy.expand(self._batch_shape)


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims
    read as event dims (``log_prob`` sums over them)."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        base_batch = base_distribution.batch_shape
        if reinterpreted_batch_ndims > len(base_batch):
            raise ValueError("Expected reinterpreted_batch_ndims <= "
                             "len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_batch)}")
        shape = tuple(base_batch) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = as_size(batch_shape)
        reinterpreted = tuple(self.event_shape[:self.reinterpreted_batch_ndims])
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + reinterpreted)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    has_rsample = forwarded("base_dist.has_rsample")

    @property
    def has_enumerate_support(self) -> bool:
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    mean = forwarded("base_dist.mean")
    mode = forwarded("base_dist.mode")
    variance = forwarded("base_dist.variance")

    def sample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
