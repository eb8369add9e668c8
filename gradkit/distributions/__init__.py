"""``gradkit.distributions``: torch.distributions on gradkit's ops.

>>> import gradkit
>>> from gradkit.distributions import Normal
>>> Normal(gradkit.tensor(0.0), gradkit.tensor(1.0)).log_prob(gradkit.tensor(0.0))
tensor(-0.9189)

Densities, cdfs, entropies and reparameterized samples are differentiable in the parameters;
samples are drawn from gradkit's generator (``gradkit.manual_seed``). See
docs/distributions.md for what is there and what differs from torch.
"""
from gradkit._not_implemented import module_getattr as _module_getattr
from gradkit.distributions import constraints, kl, transforms
from gradkit.distributions import kl_cross  # noqa: F401 - registers the cross-family KL pairs
from gradkit.distributions.constraint_registry import biject_to, transform_to
from gradkit.distributions.continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from gradkit.distributions.continuous_more import (
    ContinuousBernoulli, GeneralizedPareto, VonMises)
from gradkit.distributions.discrete import Bernoulli, Binomial, Categorical, Geometric, Poisson
from gradkit.distributions.discrete_more import (
    Multinomial, NegativeBinomial, OneHotCategorical, OneHotCategoricalStraightThrough)
from gradkit.distributions.distribution import Distribution
from gradkit.distributions.exp_family import ExponentialFamily
from gradkit.distributions.gamma_family import (
    Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, StudentT)
from gradkit.distributions.kl import kl_divergence, register_kl
from gradkit.distributions.lowrank_mixture import LowRankMultivariateNormal, MixtureSameFamily
from gradkit.distributions.multivariate import Independent, MultivariateNormal
from gradkit.distributions.relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from gradkit.distributions.transformed import (
    Gumbel, HalfCauchy, HalfNormal, LogNormal, TransformedDistribution)
from gradkit.distributions.transformed_more import (
    InverseGamma, Kumaraswamy, LogisticNormal, Pareto, Weibull)
from gradkit.distributions.transforms import (
    AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
    CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
    PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
    SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
    Transform, identity_transform)
from gradkit.distributions.wishart_lkj import LKJCholesky, Wishart

__getattr__ = _module_getattr(__name__)  # torch distributions gradkit lacks: a clear error

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet",
           "Distribution", "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor",
           "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy", "LKJCholesky",
           "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal",
           "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Pareto", "Poisson", "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "VonMises",
           "Weibull", "Wishart", "biject_to", "constraints", "identity_transform", "kl",
           "kl_divergence", "register_kl", "transform_to", "transforms"]
