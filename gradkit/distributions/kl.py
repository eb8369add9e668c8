"""``kl_divergence(p, q)`` and ``register_kl``: KL(p || q) looked up by the pair of types,
the most specific registered pair winning, as torch.distributions.kl."""
from __future__ import annotations

import math
import warnings
from functools import total_ordering

from gradkit import linalg, ops
from gradkit._tensor import Tensor
from gradkit.autograd.api import grad
from gradkit.creation import full_like
from gradkit.creation_more import broadcast_shapes
from gradkit.distributions.continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from gradkit.distributions.discrete import Bernoulli, Binomial, Categorical, Geometric, Poisson
from gradkit.distributions.discrete_more import OneHotCategorical
from gradkit.distributions.distribution import Distribution
from gradkit.distributions.exp_family import ExponentialFamily
from gradkit.distributions.gamma_family import Beta, Dirichlet, Gamma
from gradkit.distributions.lowrank_mixture import (
    LowRankMultivariateNormal, _lowrank_logdet, _lowrank_mahalanobis)
from gradkit.distributions.multivariate import (
    Independent, MultivariateNormal, _batch_mahalanobis)
from gradkit.distributions.transformed_more import Pareto
from gradkit.distributions.transformed import Gumbel, HalfNormal, TransformedDistribution
from gradkit.distributions.utils import euler_constant, sum_rightmost
from gradkit.nn.functional import softplus

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fun(p, q)`` as KL(p || q) for p of ``type_p`` and q of
    ``type_q`` (subclasses included)."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


@total_ordering
class _Match:
    """A registered pair of types, ordered by how specific it is (left type first)."""
    __slots__ = ["types"]

    def __init__(self, *types) -> None:
        self.types = types

    def __eq__(self, other) -> bool:
        return self.types == other.types

    def __le__(self, other) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun, right_fun = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the batch shape."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _KL_MEMOIZE[type(p), type(q)] = _dispatch_kl(type(p), type(q))
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor: Tensor) -> Tensor:
    return full_like(tensor, math.inf)


def _x_log_x(tensor: Tensor) -> Tensor:
    return ops.xlogy(tensor, tensor)


def _batch_trace_xxt(matrix: Tensor) -> Tensor:
    """trace(X Xᵀ) over a batch of matrices."""
    rows, cols = matrix.shape[-2], matrix.shape[-1]
    return matrix.reshape(-1, rows * cols).pow(2).sum(-1).reshape(tuple(matrix.shape[:-2]))


def _overridden(value: Tensor, infinite, zero=None) -> Tensor:
    """``value`` set to inf where ``infinite`` and to 0 where ``zero`` (torch's masked
    writes, written with where so that gradients flow through the other entries)."""
    value = ops.where(_leading_mask(value, infinite), math.inf, value)
    return value if zero is None else ops.where(_leading_mask(value, zero), 0.0, value)


def _leading_mask(value: Tensor, mask: Tensor) -> Tensor:
    """``mask`` as torch's ``value[mask] = ...`` reads it: over value's leading dims (not
    broadcast from the right), an IndexError where their sizes differ."""
    if mask.dim() > value.dim():
        raise IndexError(f"too many indices for tensor of dimension {value.dim()}")
    for i, (size, indexed) in enumerate(zip(mask.shape, value.shape)):
        if size != indexed:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {i} does not "
                             f"match the shape of the indexed tensor {list(value.shape)} at "
                             f"index {i}")
    return mask.reshape(tuple(mask.shape) + (1,) * (value.dim() - mask.dim()))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _overridden(t1, q.probs == 0, p.probs == 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _overridden(t2, q.probs == 1, p.probs == 1)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _overridden(kl, p.total_count > q.total_count)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _overridden(t, (q.probs == 0).expand_as(t), (p.probs == 0).expand_as(t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer, for two members of one family."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot                             be computed "
                                  "using Bregman divergences")
    p_params = [param.detach().requires_grad_() for param in p._natural_params]
    q_params = q._natural_params
    log_normalizer = p._log_normalizer(*p_params)
    gradients = grad(log_normalizer.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_normalizer
    for p_param, q_param, gradient in zip(p_params, q_params, gradients):
        result = result - sum_rightmost((q_param - p_param) * gradient, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + ct1 * euler_constant + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _same_events(p, q, "Multivariate Normals")
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    batch = tuple(broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_tril.shape[:-2])))
    n = p.event_shape[0]
    term2 = _batch_trace_xxt(linalg.solve_triangular(q_tril.expand(batch + (n, n)),
                                                     p_tril.expand(batch + (n, n)), upper=False))
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _overridden(result, (q.low > p.low) | (q.high < p.high))


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _overridden(result, p.support.lower_bound < q.support.lower_bound)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _same_events(p, q, "Low Rank Multivariate Normals")
    term1 = (_lowrank_logdet(q._unbroadcasted_cov_diag, q._capacitance_tril)
             - _lowrank_logdet(p._unbroadcasted_cov_diag, p._capacitance_tril))
    term3 = _mahalanobis_of_locs(p, q)
    a = _woodbury_factor(q)
    p_factor, p_diag = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term21 = (p_diag / q._unbroadcasted_cov_diag).sum(-1)
    term22 = _batch_trace_xxt(p_factor * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_xxt(a * p_diag.sqrt().unsqueeze(-2))
    term24 = _batch_trace_xxt(a.matmul(p_factor))
    return 0.5 * (term1 + term21 + term22 - term23 - term24 + term3 - p.event_shape[0])


def _same_events(p, q, which: str) -> None:
    if p.event_shape != q.event_shape:
        # torch's message, the spaces of its source's line continuation included
        raise ValueError(f"KL-divergence between two {which} with{' ' * 26}different event "
                         "shapes cannot be computed")


def _mahalanobis_of_locs(p, q) -> Tensor:
    """(μq - μp)ᵀ Σq⁻¹ (μq - μp) for a low-rank q."""
    return _lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                q.loc - p.loc, q._capacitance_tril)


def _woodbury_factor(q) -> Tensor:
    """L⁻¹ Wᵀ D⁻¹ of a low-rank q (L its capacitance's Cholesky factor)."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return linalg.solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _same_events(p, q, "(Low Rank) Multivariate Normals")
    term1 = (_lowrank_logdet(q._unbroadcasted_cov_diag, q._capacitance_tril)
             - 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    term3 = _mahalanobis_of_locs(p, q)
    p_tril = p._unbroadcasted_scale_tril
    term21 = _batch_trace_xxt(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_xxt(_woodbury_factor(q).matmul(p_tril))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    _same_events(p, q, "(Low Rank) Multivariate Normals")
    q_tril = q._unbroadcasted_scale_tril
    term1 = (2 * q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
             - _lowrank_logdet(p._unbroadcasted_cov_diag, p._capacitance_tril))
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    batch = tuple(broadcast_shapes(tuple(q_tril.shape[:-2]),
                                   tuple(p._unbroadcasted_cov_factor.shape[:-2])))
    n = p.event_shape[0]
    q_tril = q_tril.expand(batch + (n, n))
    p_factor = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.shape[-1]))
    p_diag = ops.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_xxt(linalg.solve_triangular(q_tril, p_factor, upper=False))
    term22 = _batch_trace_xxt(linalg.solve_triangular(q_tril, p_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
