"""The distributions compared with torch.distributions: one builder per case, run with
``m = torch`` or ``m = gradkit`` on the same parameters (tests/test_distributions*.py)."""
import numpy as np

_L = np.array([[1.2, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.4, 0.5, 1.1]])
_COV = _L @ _L.T
_CORR_L = np.linalg.cholesky(np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 1.0]]))
_ONE_HOT = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
_PROBS3 = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])


class Case:
    """``build(m, params)`` -> a distribution of module m; ``params`` (numpy) become float64
    leaves of m (those in ``grad`` require grad); ``value`` is scored by log_prob and cdf,
    ``quantile`` by icdf."""

    def __init__(self, id, build, params, value, grad=None, quantile=None,  # noqa: A002
                 integer_value=False, heavy_tail=False, dtype="float64"):
        self.id = id
        self.build = build
        self.params = params
        self.value = np.asarray(value)
        self.grad = list(params) if grad is None else grad
        self.quantile = quantile
        self.integer_value = integer_value  # Categorical scores int64 indices
        self.heavy_tail = heavy_tail        # no finite mean to compare sample means with
        self.dtype = dtype                  # the parameters' dtype in the float64 tests

    def leaves(self, m, dtype=None):
        dtype = dtype or self.dtype
        return {name: m.tensor(value, dtype=getattr(m, dtype), requires_grad=name in self.grad)
                for name, value in self.params.items()}

    def value_of(self, m, dtype=None):
        if self.integer_value:
            return m.tensor(self.value, dtype=m.int64)
        return m.tensor(self.value, dtype=getattr(m, dtype or self.dtype))

    def __repr__(self):
        return self.id


def _sym(matrix):
    """The symmetric part: gradcheck's perturbations of one entry stay covariances
    (the lower triangle, for scale_tril, likewise)."""
    return (matrix + matrix.mT) / 2


def _d(m):
    return m.distributions


CASES = [
    Case("Normal", lambda m, p: _d(m).Normal(p["loc"], p["scale"]),
         {"loc": [0.3, -1.2], "scale": [0.5, 2.0]}, [0.1, 1.5], quantile=[0.2, 0.7]),
    Case("Normal-numbers", lambda m, p: _d(m).Normal(0.5, 2.0), {}, [0.1, 1.5],
         quantile=[0.2, 0.7]),
    Case("Uniform", lambda m, p: _d(m).Uniform(p["low"], p["high"]),
         {"low": [0.0, -1.0], "high": [2.0, 3.0]}, [0.5, 1.0], quantile=[0.2, 0.7]),
    Case("Exponential", lambda m, p: _d(m).Exponential(p["rate"]),
         {"rate": [0.5, 2.0]}, [0.3, 1.2], quantile=[0.2, 0.7]),
    Case("Laplace", lambda m, p: _d(m).Laplace(p["loc"], p["scale"]),
         {"loc": [0.3, -1.2], "scale": [0.5, 2.0]}, [0.1, 1.5], quantile=[0.2, 0.7]),
    Case("Cauchy", lambda m, p: _d(m).Cauchy(p["loc"], p["scale"]),
         {"loc": [0.3, -1.2], "scale": [0.5, 2.0]}, [0.1, 1.5], quantile=[0.2, 0.7],
         heavy_tail=True),
    Case("Gamma", lambda m, p: _d(m).Gamma(p["concentration"], p["rate"]),
         {"concentration": [0.7, 3.0], "rate": [1.5, 0.5]}, [0.3, 2.0],
         grad=["rate"]),  # torch has no gradient of the cdf in the concentration
    Case("Gamma-log_prob", lambda m, p: _d(m).Gamma(p["concentration"], p["rate"]),
         {"concentration": [0.7, 3.0], "rate": [1.5, 0.5]}, [0.3, 2.0]),
    Case("Chi2", lambda m, p: _d(m).Chi2(p["df"]), {"df": [1.5, 4.0]}, [0.3, 2.0]),
    Case("Beta", lambda m, p: _d(m).Beta(p["concentration1"], p["concentration0"]),
         {"concentration1": [0.7, 3.0], "concentration0": [2.0, 0.9]}, [0.3, 0.8]),
    Case("Dirichlet", lambda m, p: _d(m).Dirichlet(p["concentration"]),
         {"concentration": [[0.5, 2.0, 3.0], [1.0, 1.0, 1.5]]},
         [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    Case("StudentT", lambda m, p: _d(m).StudentT(p["df"], p["loc"], p["scale"]),
         {"df": [3.0, 5.0], "loc": [0.0, 1.0], "scale": [1.0, 2.0]}, [0.4, -1.0]),
    Case("StudentT-low-df", lambda m, p: _d(m).StudentT(p["df"]),
         {"df": [0.8, 1.5, 4.0]}, [0.4, -1.0, 2.0], heavy_tail=True),
    Case("Bernoulli-probs", lambda m, p: _d(m).Bernoulli(probs=p["probs"]),
         {"probs": [0.2, 0.7, 0.5]}, [1.0, 0.0, 1.0]),
    Case("Bernoulli-logits", lambda m, p: _d(m).Bernoulli(logits=p["logits"]),
         {"logits": [-0.3, 1.2]}, [1.0, 0.0]),
    Case("Categorical-probs", lambda m, p: _d(m).Categorical(probs=p["probs"]),
         {"probs": _PROBS3}, [2, 0], integer_value=True),
    Case("Categorical-logits", lambda m, p: _d(m).Categorical(logits=p["logits"]),
         {"logits": np.log(_PROBS3) + 0.7}, [2, 0], integer_value=True),
    Case("OneHotCategorical", lambda m, p: _d(m).OneHotCategorical(probs=p["probs"]),
         {"probs": _PROBS3}, _ONE_HOT),
    Case("Geometric-probs", lambda m, p: _d(m).Geometric(probs=p["probs"]),
         {"probs": [0.2, 0.7]}, [3.0, 0.0]),
    Case("Geometric-logits", lambda m, p: _d(m).Geometric(logits=p["logits"]),
         {"logits": [-0.3, 1.2]}, [3.0, 0.0]),
    Case("Binomial-probs", lambda m, p: _d(m).Binomial(5, probs=p["probs"]),
         {"probs": [0.2, 0.7]}, [3.0, 0.0]),
    Case("Binomial-logits", lambda m, p: _d(m).Binomial(p["count"], logits=p["logits"]),
         {"count": [5.0, 8.0], "logits": [-0.3, 1.2]}, [3.0, 8.0], grad=["logits"]),
    Case("Poisson", lambda m, p: _d(m).Poisson(p["rate"]), {"rate": [0.5, 3.0]}, [2.0, 0.0]),
    Case("MultivariateNormal-scale_tril",
         lambda m, p: _d(m).MultivariateNormal(p["loc"], scale_tril=p["scale_tril"].tril()),
         {"loc": [[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]], "scale_tril": _L},
         [[0.5, 0.2, 1.0], [0.0, 0.3, -2.0]]),
    Case("MultivariateNormal-covariance",
         lambda m, p: _d(m).MultivariateNormal(p["loc"], covariance_matrix=_sym(p["cov"])),
         {"loc": [0.0, 1.0, 2.0], "cov": _COV}, [[0.5, 0.2, 1.0], [0.0, 0.3, -2.0]]),
    Case("MultivariateNormal-precision",
         lambda m, p: _d(m).MultivariateNormal(p["loc"],
                                               precision_matrix=_sym(p["precision"])),
         {"loc": [0.0, 1.0, 2.0], "precision": np.linalg.inv(_COV)},
         [0.5, 0.2, 1.0]),
    Case("Independent", lambda m, p: _d(m).Independent(_d(m).Normal(p["loc"], p["scale"]), 1),
         {"loc": [[0.3, -1.2], [0.0, 1.0]], "scale": [[0.5, 2.0], [1.0, 1.5]]},
         [[0.1, 1.5], [0.2, -0.3]]),
    Case("LogNormal", lambda m, p: _d(m).LogNormal(p["loc"], p["scale"]),
         {"loc": [0.3, -1.2], "scale": [0.5, 0.8]}, [0.4, 1.5], quantile=[0.2, 0.7]),
    Case("Gumbel", lambda m, p: _d(m).Gumbel(p["loc"], p["scale"]),
         {"loc": [0.3, -1.2], "scale": [0.5, 2.0]}, [0.1, 1.5], quantile=[0.2, 0.7]),
    Case("HalfNormal", lambda m, p: _d(m).HalfNormal(p["scale"]),
         {"scale": [0.5, 2.0]}, [0.1, 1.5], quantile=[0.2, 0.7]),
    Case("HalfCauchy", lambda m, p: _d(m).HalfCauchy(p["scale"]),
         {"scale": [0.5, 2.0]}, [0.1, 1.5], quantile=[0.2, 0.7], heavy_tail=True),
    Case("RelaxedBernoulli",
         lambda m, p: _d(m).RelaxedBernoulli(p["temperature"], probs=p["probs"]),
         {"temperature": 0.7, "probs": [0.2, 0.7]}, [0.3, 0.9]),
    Case("RelaxedOneHotCategorical",
         lambda m, p: _d(m).RelaxedOneHotCategorical(p["temperature"], logits=p["logits"]),
         {"temperature": 0.7, "logits": np.log(_PROBS3)}, [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    Case("TransformedDistribution",
         lambda m, p: _d(m).TransformedDistribution(
             _d(m).Normal(p["loc"], p["scale"]),
             [_d(m).AffineTransform(1.0, p["factor"]), _d(m).ExpTransform()]),
         {"loc": [0.3, -1.2], "scale": [0.5, 0.8], "factor": [2.0, -0.5]}, [0.4, 1.5],
         quantile=[0.2, 0.7]),
    Case("Multinomial", lambda m, p: _d(m).Multinomial(4, probs=p["probs"]),
         {"probs": _PROBS3}, [[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]]),
    Case("Multinomial-logits", lambda m, p: _d(m).Multinomial(3, logits=p["logits"]),
         {"logits": np.log(_PROBS3)}, [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]),
    Case("NegativeBinomial", lambda m, p: _d(m).NegativeBinomial(p["count"], probs=p["probs"]),
         {"count": [3.0, 0.5], "probs": [0.2, 0.7]}, [2.0, 0.0]),
    Case("NegativeBinomial-logits",
         lambda m, p: _d(m).NegativeBinomial(p["count"], logits=p["logits"]),
         {"count": [3.0, 2.5], "logits": [-0.3, 1.2]}, [4.0, 1.0]),
    Case("OneHotCategoricalStraightThrough",
         lambda m, p: _d(m).OneHotCategoricalStraightThrough(logits=p["logits"]),
         {"logits": np.log(_PROBS3)}, _ONE_HOT),
    Case("FisherSnedecor", lambda m, p: _d(m).FisherSnedecor(p["df1"], p["df2"]),
         {"df1": [1.5, 6.0, 3.0], "df2": [3.0, 5.0, 9.0]}, [0.4, 1.5, 2.0], heavy_tail=True),
    Case("Pareto", lambda m, p: _d(m).Pareto(p["scale"], p["alpha"]),
         {"scale": [0.5, 2.0], "alpha": [3.0, 4.5]}, [0.7, 2.5], quantile=[0.2, 0.7]),
    Case("Weibull", lambda m, p: _d(m).Weibull(p["scale"], p["concentration"]),
         {"scale": [0.5, 2.0], "concentration": [1.5, 0.8]}, [0.7, 2.5], quantile=[0.2, 0.7]),
    Case("InverseGamma", lambda m, p: _d(m).InverseGamma(p["concentration"], p["rate"]),
         {"concentration": [3.0, 1.5], "rate": [1.5, 0.5]}, [0.3, 2.0], grad=["rate"]),
    Case("InverseGamma-log_prob",
         lambda m, p: _d(m).InverseGamma(p["concentration"], p["rate"]),
         {"concentration": [3.0, 4.5], "rate": [1.5, 0.5]}, [0.3, 2.0]),
    Case("Kumaraswamy", lambda m, p: _d(m).Kumaraswamy(p["a"], p["b"]),
         {"a": [0.7, 2.0, 3.0], "b": [2.0, 0.9, 4.0]}, [0.3, 0.8, 0.5], quantile=[0.2, 0.7, 0.5]),
    Case("LowRankMultivariateNormal",
         lambda m, p: _d(m).LowRankMultivariateNormal(p["loc"], p["factor"], p["diag"]),
         {"loc": [[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]],
          "factor": [[1.0, 0.2], [0.3, -0.5], [0.1, 0.4]], "diag": [0.5, 1.2, 0.8]},
         [[0.5, 0.2, 1.0], [0.0, 0.3, -2.0]]),
    Case("MixtureSameFamily",
         lambda m, p: _d(m).MixtureSameFamily(_d(m).Categorical(logits=p["logits"]),
                                              _d(m).Normal(p["loc"], p["scale"])),
         {"logits": [[0.2, -0.3, 1.0], [0.0, 0.5, 0.1]],
          "loc": [[-1.0, 0.0, 2.0], [0.5, 1.0, 1.5]], "scale": [[0.5, 1.0, 0.7], [1.0, 2.0, 0.3]]},
         [0.4, 1.2]),
    Case("MixtureSameFamily-multivariate",
         lambda m, p: _d(m).MixtureSameFamily(
             _d(m).Categorical(probs=p["probs"]),
             _d(m).Independent(_d(m).Normal(p["loc"], p["scale"]), 1)),
         {"probs": [0.3, 0.7], "loc": [[0.0, 1.0], [2.0, -1.0]],
          "scale": [[0.5, 1.0], [1.0, 0.7]]}, [[0.4, 1.2], [1.0, 0.0]]),
    Case("GeneralizedPareto",
         lambda m, p: _d(m).GeneralizedPareto(p["loc"], p["scale"], p["concentration"]),
         {"loc": [0.0, 1.0, -0.5], "scale": [0.5, 2.0, 1.0], "concentration": [0.3, 0.0, -0.2]},
         [0.7, 2.5, 1.0], quantile=[0.2, 0.7, 0.5],
         dtype="float32"),  # torch's log_prob compares with a float32 zero: float64 raises
    Case("ContinuousBernoulli-probs", lambda m, p: _d(m).ContinuousBernoulli(p["probs"]),
         {"probs": [0.2, 0.7, 0.5, 0.4995]}, [0.3, 0.9, 0.5, 0.1], quantile=[0.2, 0.7, 0.5, 0.9]),
    Case("ContinuousBernoulli-logits",
         lambda m, p: _d(m).ContinuousBernoulli(logits=p["logits"]),
         {"logits": [-1.3, 0.8, 0.001]}, [0.3, 0.9, 0.5], quantile=[0.2, 0.7, 0.5]),
    Case("VonMises", lambda m, p: _d(m).VonMises(p["loc"], p["concentration"]),
         {"loc": [0.3, -1.2, 2.0], "concentration": [0.5, 4.0, 12.0]}, [0.1, 1.5, -3.0],
         heavy_tail=True),  # an angle: its mean is circular (test_distributions_api.py)
    Case("LogisticNormal", lambda m, p: _d(m).LogisticNormal(p["loc"], p["scale"]),
         {"loc": [[0.3, -1.2], [0.0, 0.5]], "scale": [[0.5, 2.0], [1.0, 0.7]]},
         [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    Case("Wishart-scale_tril",
         lambda m, p: _d(m).Wishart(p["df"], scale_tril=p["scale_tril"].tril()),
         {"df": [4.0, 6.5], "scale_tril": _L}, [_COV, _COV + np.eye(3)]),
    Case("Wishart-covariance",
         lambda m, p: _d(m).Wishart(p["df"], covariance_matrix=_sym(p["cov"])),
         {"df": 5.0, "cov": _COV}, [_COV + np.eye(3), _COV * 2]),
    Case("Wishart-precision",
         lambda m, p: _d(m).Wishart(p["df"], precision_matrix=_sym(p["precision"])),
         {"df": [3.5, 7.0], "precision": np.linalg.inv(_COV)}, [_COV, _COV + np.eye(3)]),
    Case("LKJCholesky", lambda m, p: _d(m).LKJCholesky(3, p["concentration"]),
         {"concentration": [0.5, 2.0]}, [_CORR_L, _CORR_L]),
]
