"""The distributions lane's ops for the fuzzer (class ``dist``: ``run_fuzz.py --classes dist``).

A step builds a distribution of ``lib.distributions`` from a tensor of an earlier step (each
parameter a fixed affine map of it, pushed into its constraint by softplus, sigmoid, softmax
or a Cholesky-like lower triangle; ``mult`` scales it to the edge: tiny or huge parameters,
float32 underflow), then takes one statistic: log_prob/cdf of a value in the support made
from a second tensor, icdf of a probability, entropy, mean, variance, stddev, mode, the KL
divergence of a pair torch registers, and the reparameterized sample through the family's
transforms given fixed noise (the base's icdf of a fixed probability), optionally after
``expand``. Parameters outside the support (NaN leaves, an underflowed scale) raise torch's
ValueError in both libraries: those are error cases.
"""
from __future__ import annotations

from .ops_core import OpSpec

_MULTS = (1.0, 1.0, 1.0, 0.01, 20.0, 200.0)
# per parameter a different affine map of the source tensor, so parameters differ
_AFFINE = ((1.0, 0.0), (-0.7, 0.3), (0.5, -0.2), (1.3, 0.6))


def _param(lib, x, i, kind, mult):
    a, b = _AFFINE[i]
    base = (x * a + b) * mult
    if kind == "real":
        return base
    if kind == "pos":
        return lib.nn.functional.softplus(base)
    if kind == "prob":
        return lib.sigmoid(base)
    if kind == "simplex":
        return lib.softmax(base, -1)
    if kind == "count":
        return (lib.nn.functional.softplus(x * a + b) * 3).floor()
    if kind == "tril":  # a positive diagonal below a lower triangle of products of x
        v = x * a + b
        strict = (v.unsqueeze(-1) * v.unsqueeze(-2) * 0.3).tril(-1)
        return strict + lib.diag_embed(lib.nn.functional.softplus(v * mult))
    raise AssertionError(kind)


def _index(lib, y, k):
    # + 0.25: sigmoid(0) * k, an integer for an even k, would floor to either side of it
    return (lib.sigmoid(y) * k + 0.25).floor().clamp(max=max(k - 1, 0)).long()


def _value(lib, y, kind, params, event):
    """A value in the support of kind ``kind``, made from y (and the parameters it needs)."""
    if kind == "real":
        return y * 3
    if kind == "pos":
        return lib.nn.functional.softplus(y) * 2
    if kind == "unit":
        return lib.sigmoid(y)
    if kind == "int":
        return (lib.nn.functional.softplus(y) * 3).floor()
    if kind == "binary":
        return (y > 0).to(y.dtype)
    if kind == "index":
        return _index(lib, y, event)
    if kind == "onehot":
        return lib.nn.functional.one_hot(_index(lib, y, event), max(event, 1)).to(y.dtype)
    if kind == "simplex":
        return lib.softmax(y, -1)
    if kind == "simplex+1":
        return lib.softmax(lib.cat([y, lib.zeros_like(y[..., :1])], -1), -1)
    if kind == "above":  # Pareto: above its scale
        return params[0] + lib.nn.functional.softplus(y)
    if kind == "between":  # Uniform: inside [low, high)
        return params[0] + lib.sigmoid(y) * 0.999 * (params[1] - params[0])
    if kind == "angle":
        return lib.tanh(y) * 3
    if kind == "binomial":
        return lib.minimum((lib.sigmoid(y) * (params[0] + 1) + 0.25).floor(), params[0])
    raise AssertionError(kind)


def _d(lib):
    return lib.distributions


def _uniform(lib, p):
    return _d(lib).Uniform(p[0], p[0] + p[1])


def _mixture(lib, p):
    return _d(lib).MixtureSameFamily(_d(lib).Categorical(logits=p[0]),
                                     _d(lib).Normal(p[1], p[2]))


# family: (parameter kinds, builder from the parameters, kind of value in its support)
FAMILIES = {
    "Normal": (("real", "pos"), lambda lib, p: _d(lib).Normal(*p), "real"),
    "Laplace": (("real", "pos"), lambda lib, p: _d(lib).Laplace(*p), "real"),
    "Cauchy": (("real", "pos"), lambda lib, p: _d(lib).Cauchy(*p), "real"),
    "Gumbel": (("real", "pos"), lambda lib, p: _d(lib).Gumbel(*p), "real"),
    "LogNormal": (("real", "pos"), lambda lib, p: _d(lib).LogNormal(*p), "pos"),
    "HalfNormal": (("pos",), lambda lib, p: _d(lib).HalfNormal(*p), "pos"),
    "HalfCauchy": (("pos",), lambda lib, p: _d(lib).HalfCauchy(*p), "pos"),
    "Exponential": (("pos",), lambda lib, p: _d(lib).Exponential(*p), "pos"),
    "Gamma": (("pos", "pos"), lambda lib, p: _d(lib).Gamma(*p), "pos"),
    "Chi2": (("pos",), lambda lib, p: _d(lib).Chi2(*p), "pos"),
    "InverseGamma": (("pos", "pos"), lambda lib, p: _d(lib).InverseGamma(*p), "pos"),
    "Beta": (("pos", "pos"), lambda lib, p: _d(lib).Beta(*p), "unit"),
    "Kumaraswamy": (("pos", "pos"), lambda lib, p: _d(lib).Kumaraswamy(*p), "unit"),
    "StudentT": (("pos", "real", "pos"), lambda lib, p: _d(lib).StudentT(*p), "real"),
    "FisherSnedecor": (("pos", "pos"), lambda lib, p: _d(lib).FisherSnedecor(*p), "pos"),
    "Weibull": (("pos", "pos"), lambda lib, p: _d(lib).Weibull(*p), "pos"),
    "Pareto": (("pos", "pos"), lambda lib, p: _d(lib).Pareto(*p), "above"),
    "Uniform": (("real", "pos"), _uniform, "between"),
    "ContinuousBernoulli": (("prob",), lambda lib, p: _d(lib).ContinuousBernoulli(*p), "unit"),
    "VonMises": (("real", "pos"), lambda lib, p: _d(lib).VonMises(*p), "angle"),
    "Bernoulli": (("prob",), lambda lib, p: _d(lib).Bernoulli(probs=p[0]), "binary"),
    "Bernoulli-logits": (("real",), lambda lib, p: _d(lib).Bernoulli(logits=p[0]), "binary"),
    "Geometric": (("prob",), lambda lib, p: _d(lib).Geometric(probs=p[0]), "int"),
    "Poisson": (("pos",), lambda lib, p: _d(lib).Poisson(*p), "int"),
    "Binomial": (("count", "prob"), lambda lib, p: _d(lib).Binomial(p[0], probs=p[1]),
                 "binomial"),
    "NegativeBinomial": (("pos", "real"),
                         lambda lib, p: _d(lib).NegativeBinomial(p[0], logits=p[1]), "int"),
    "Categorical": (("simplex",), lambda lib, p: _d(lib).Categorical(probs=p[0]), "index"),
    "Categorical-logits": (("real",), lambda lib, p: _d(lib).Categorical(logits=p[0]),
                           "index"),
    "OneHotCategorical": (("simplex",), lambda lib, p: _d(lib).OneHotCategorical(probs=p[0]),
                          "onehot"),
    "Dirichlet": (("pos",), lambda lib, p: _d(lib).Dirichlet(*p), "simplex"),
    "MultivariateNormal": (("real", "tril"),
                           lambda lib, p: _d(lib).MultivariateNormal(p[0], scale_tril=p[1]),
                           "real"),
    "LowRankMultivariateNormal": (
        ("real", "real", "pos"),
        lambda lib, p: _d(lib).LowRankMultivariateNormal(p[0], p[1].unsqueeze(-1), p[2]),
        "real"),
    "Independent": (("real", "pos"), lambda lib, p: _d(lib).Independent(_d(lib).Normal(*p), 1),
                    "real"),
    "LogisticNormal": (("real", "pos"), lambda lib, p: _d(lib).LogisticNormal(*p),
                       "simplex+1"),
    "MixtureSameFamily": (("real", "real", "pos"), _mixture, "real"),
    "RelaxedBernoulli": (("pos", "prob"),
                         lambda lib, p: _d(lib).RelaxedBernoulli(p[0], probs=p[1]), "unit"),
    "RelaxedOneHotCategorical": (
        ("pos", "real"), lambda lib, p: _d(lib).RelaxedOneHotCategorical(p[0], logits=p[1]),
        "simplex"),
}
# the categorical-like families' last dim is their event (or categories): x needs one
_EVENT_FAMILIES = {"Categorical", "Categorical-logits", "OneHotCategorical", "Dirichlet",
                   "MultivariateNormal", "LowRankMultivariateNormal", "Independent",
                   "LogisticNormal", "MixtureSameFamily", "RelaxedOneHotCategorical"}
# pairs torch registers a KL divergence for (torch.distributions.kl._KL_REGISTRY)
KL_PAIRS = tuple(
    (p, q) for p in ("Normal", "Laplace", "Gumbel", "Exponential", "Gamma", "Beta", "Pareto",
                     "Uniform", "ContinuousBernoulli")
    for q in ("Normal", "Exponential", "Gamma", "Beta", "Pareto", "Uniform",
              "ContinuousBernoulli", "Gumbel") if (p, q) not in {
        ("Beta", "Gumbel"), ("ContinuousBernoulli", "Gamma"), ("ContinuousBernoulli", "Gumbel"),
        ("Pareto", "Gumbel")}) + (
    ("Normal", "Laplace"), ("Laplace", "Laplace"), ("Cauchy", "Cauchy"),
    ("HalfNormal", "HalfNormal"), ("Bernoulli", "Bernoulli"), ("Bernoulli", "Poisson"),
    ("Poisson", "Poisson"), ("Poisson", "Bernoulli"), ("Geometric", "Geometric"),
    ("Binomial", "Binomial"), ("Categorical", "Categorical"),
    ("OneHotCategorical", "OneHotCategorical"), ("Dirichlet", "Dirichlet"),
    ("MultivariateNormal", "MultivariateNormal"), ("Independent", "Independent"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
    ("MultivariateNormal", "LowRankMultivariateNormal"))


def build(lib, family, x, mult, expand):
    """The family's distribution with parameters made from x (expanded to (2, *batch))."""
    kinds, make, _ = FAMILIES[family]
    params = [_param(lib, x, i, kind, mult) for i, kind in enumerate(kinds)]
    dist = make(lib, params)
    if expand:
        dist = dist.expand((2, *dist.batch_shape))
    return dist, params


def _statistic_fn(lib, x, y, family, stat, mult, expand):
    dist, params = build(lib, family, x, mult, expand)
    y = y.to(x.dtype)
    if stat in ("log_prob", "cdf"):
        kind = FAMILIES[family][2]
        event = x.shape[-1] if x.dim() else 0
        return getattr(dist, stat)(_value(lib, y, kind, params, event))
    if stat == "icdf":
        return dist.icdf(lib.sigmoid(y) * 0.98 + 0.01)
    if stat in ("entropy", "perplexity"):
        return getattr(dist, stat)()
    return getattr(dist, stat)


def _family_params(draw, shapes, families):
    family = draw.choice(families)
    if family in _EVENT_FAMILIES and not shapes[0]:
        if not draw.chance(0.1):  # mostly: a vector family needs a dim (else torch's error)
            return None
    return {"family": family, "mult": draw.choice(_MULTS), "expand": draw.chance(0.2)}


_STATS = ("log_prob", "log_prob", "log_prob", "cdf", "icdf", "entropy", "mean", "variance",
          "stddev", "mode", "perplexity")


def _statistic_params(draw, shapes):
    p = _family_params(draw, shapes, tuple(FAMILIES))
    return p and {**p, "stat": draw.choice(_STATS)}


def _kl_fn(lib, x, y, pair, mult, expand):
    p, _ = build(lib, pair[0], x, mult, expand)
    q, _ = build(lib, pair[1], y.to(x.dtype), mult, False)
    return _d(lib).kl_divergence(p, q)


def _kl_params(draw, shapes):
    pair = draw.choice(KL_PAIRS)
    if (pair[0] in _EVENT_FAMILIES or pair[1] in _EVENT_FAMILIES) and \
            not (shapes[0] and shapes[1]):
        return None
    return {"pair": pair, "mult": draw.choice(_MULTS), "expand": draw.chance(0.15)}


# families whose rsample is transforms of a base distribution with an icdf
_TRANSFORMED = ("LogNormal", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull", "Pareto",
                "Kumaraswamy", "LogisticNormal")


def _rsample_fn(lib, x, y, family, mult, expand, jacobian):
    """The reparameterized sample given fixed noise: the base's icdf of a fixed probability
    (made from y), through the family's transforms; or the sum of their log |det J|."""
    dist, _ = build(lib, family, x, mult, expand)
    base = dist.base_dist
    while hasattr(base, "base_dist"):  # Independent(Normal) under LogisticNormal
        base = base.base_dist
    z = base.icdf(lib.sigmoid(y.to(x.dtype)) * 0.98 + 0.01)
    total = lib.zeros((), dtype=x.dtype)
    for transform in dist.transforms:
        out = transform(z)
        total = total + transform.log_abs_det_jacobian(z, out).sum()
        z = out
    return total if jacobian else z


def _rsample_params(draw, shapes):
    p = _family_params(draw, shapes, _TRANSFORMED)
    return p and {**p, "jacobian": draw.chance(0.3)}


DIST_OPS: dict[str, OpSpec] = {
    "d_statistic": OpSpec(2, _statistic_fn, _statistic_params),
    "d_kl": OpSpec(2, _kl_fn, _kl_params),
    "d_rsample": OpSpec(2, _rsample_fn, _rsample_params),
}
