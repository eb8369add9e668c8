"""KL divergences between distributions of different families (torch's registered pairs);
kl.py has the dispatch and the pairs within one family."""
from __future__ import annotations

import functools
import math

from gradkit import ops
from gradkit.distributions.continuous import Exponential, Laplace, Normal, Uniform
from gradkit.distributions.continuous_more import ContinuousBernoulli
from gradkit.distributions.discrete import Bernoulli, Binomial, Poisson
from gradkit.distributions.gamma_family import Beta, Gamma
from gradkit.distributions.kl import _infinite_like, _overridden, _x_log_x, register_kl
from gradkit.distributions.transformed import Gumbel
from gradkit.distributions.transformed_more import Pareto
from gradkit.distributions.utils import euler_constant

__all__: list[str] = []


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * ratio.log() + ratio + q.concentration.lgamma()
            + q.concentration * euler_constant - (1 + euler_constant))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal, rate_sqr = q.scale.pow(2), p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = (0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - p.concentration
          - p.concentration.lgamma())
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return (t1 + (p.concentration - 1) * p.concentration.digamma()
            + (t2 - t3 + t4) / var_normal)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = (scale_ratio).log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * ops.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = (-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio).exp()
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2, t3, t4 = 0.5 * p.loc.pow(2), p.loc * q.loc, 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


# Where p puts mass that q has none (q lives on a half line or an interval that p's support
# overflows), KL is infinite, shaped like the parameter of p named here.
_HALF_LINE_OR_INTERVAL = (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
_INFINITE_PAIRS = (  # (p's family, p's parameter, the q families)
    (Beta, "concentration1", (Pareto,)),
    (ContinuousBernoulli, "probs", (Pareto,)),
    (Exponential, "rate", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Gamma, "concentration", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Gumbel, "loc", _HALF_LINE_OR_INTERVAL),
    (Laplace, "loc", _HALF_LINE_OR_INTERVAL),
    (Normal, "loc", _HALF_LINE_OR_INTERVAL),
    (Pareto, "scale", (Beta, ContinuousBernoulli, Uniform)),
    (Poisson, "rate", (Bernoulli, Binomial)),
)


@functools.cache  # one function per parameter, so the dispatcher sees one KL, not rivals
def _infinite_shaped_like(param: str):
    def kl(p, q):
        return _infinite_like(getattr(p, param))
    return kl


for _p, _param, _qs in _INFINITE_PAIRS:
    for _q in _qs:
        register_kl(_p, _q)(_infinite_shaped_like(_param))


def _beta_mean(p):
    return p.concentration1 / (p.concentration1 + p.concentration0)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * _beta_mean(p)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma()
                                  - (p.concentration1 + p.concentration0).digamma())
    return -p.entropy() + t2 - t3 + q.rate * _beta_mean(p)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean, var_normal = _beta_mean(p), q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)) * 0.5
    return -p.entropy() + t2 + (t3 - q.loc * mean + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _overridden(result, (q.low > p.support.lower_bound)
                       | (q.high < p.support.upper_bound))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod, loc_scale_ratio = p.rate * q.scale, q.loc / q.scale
    t2 = loc_scale_ratio.exp() * scale_rate_prod / (scale_rate_prod + 1)
    return scale_rate_prod.log() - 1 - loc_scale_ratio + t2 + scale_rate_prod.reciprocal()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    c = p.concentration
    beta_scale_prod, loc_scale_ratio = p.rate * q.scale, q.loc / q.scale
    t1 = (c - 1) * c.digamma() - c.lgamma() - c
    t2 = beta_scale_prod.log() + c / beta_scale_prod
    t3 = (loc_scale_ratio.exp() * (1 + beta_scale_prod.reciprocal()).pow(-c)
          - loc_scale_ratio)
    return t1 + t2 + t3


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    result = ((p.alpha / scale_rate_prod).log() - p.alpha.reciprocal()
              + p.alpha * scale_rate_prod / (p.alpha - 1) - 1)
    return _overridden(result, p.alpha <= 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _overridden(t1 + t2 + t3 + t4 - 1, p.alpha <= 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _overridden(t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1, p.alpha <= 2)


def _uniform_log_moment(p):
    """E[log X] times the width, for X ~ Uniform(low, high): the x log x difference."""
    return _x_log_x(p.high) - _x_log_x(p.low) - (p.high - p.low)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * _uniform_log_moment(p) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - width.log() - t2
    return _overridden(result, (p.high > q.support.upper_bound)
                       | (p.low < q.support.lower_bound))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _overridden(result, p.low < q.support.lower_bound)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * _uniform_log_moment(p) / width
    result = -width.log() + t2 + t3 + q.rate * (p.high + p.low) / 2
    return _overridden(result, p.low < q.support.lower_bound)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff, low_loc_diff = (p.high - q.loc) / q.scale, (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    return t1 - common_term * ((-high_loc_diff).exp() - (-low_loc_diff).exp())


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (width.pow(2) / 12 + t3) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    result = _uniform_log_moment(p) / width * (q.alpha + 1) - t1
    return _overridden(result, p.low < q.support.lower_bound)


# -- the continuous Bernoulli --------------------------------------------------------------

@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3  # torch's grouping: q's terms cancel p's exactly for p = q


def _against_continuous_bernoulli(p, q):
    """-H(p) - E_p[log q] for a q continuous Bernoulli, given p's mean."""
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _against_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    outside = p.high.ge(q.support.upper_bound) | p.low.le(q.support.lower_bound)
    # torch.where here (broadcast), not the masked write of the other pairs
    return ops.where(outside, math.inf, _against_continuous_bernoulli(p, q))


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = q.low.ge(p.support.lower_bound) | q.high.le(p.support.upper_bound)
    return ops.where(outside, math.inf, result)  # torch.where: broadcast, as above
