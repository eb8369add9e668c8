"""torch's per-distribution tests (test/distributions/test_distributions.py: test_bernoulli,
test_geometric, test_binomial_*, test_*_enumerate_support, test_distribution_expand,
test_distribution_subclass_expand, test_lazy_property_grad, test_repr) as programs run under
gradkit and torch 2.13, their outcomes (values, dtypes, shapes, errors) compared."""
import math

import pytest

torch = pytest.importorskip("torch")
import gradkit  # noqa: E402
from test_distributions_torch_expectations import EXAMPLES, _built  # noqa: E402
from torch_expectations.outcome import assert_same_outcome, outcome  # noqa: E402


def _d(m):
    return m.distributions


def _f64(m, values):
    return m.tensor(values, dtype=m.float64)


def _binomial_stable_gradient(m):
    x = m.tensor(0.0, requires_grad=True)
    y = _d(m).Binomial(1.0, logits=x).log_prob(m.tensor(0.0))
    return m.autograd.grad(y, x)[0]


def _lazy_scale_tril_gradient(m):
    """test_lazy_property_grad: scale_tril first read under no_grad still has a graph."""
    cov = m.eye(2, requires_grad=True)
    dist = _d(m).MultivariateNormal(m.zeros(2), cov)
    with m.no_grad():
        dist.scale_tril  # noqa: B018 - the first read is the point
    dist.scale_tril.sum().backward()
    return cov.grad


def _poisson_zero_rate_gradient(m):
    rate = m.zeros([], requires_grad=True)
    _d(m).Poisson(rate).log_prob(m.ones_like(rate)).backward()
    return rate.grad


def _categorical_entropy_with_inf_logits(m):
    """issue gh-40553: entropy with -inf logits is finite."""
    logits = _f64(m, [[0.1, 0.2, 0.3], [0.5, 0.3, 0.2]]).log()
    logits[1, 1] = logits[0, 2] = float("-inf")
    return _d(m).Categorical(logits=logits).entropy()


_COV3 = [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]
_MVN_MATRICES = {
    "covariance_matrix": lambda m, b: _f64(m, _COV3).expand(b + (3, 3)),
    "precision_matrix": lambda m, b: m.linalg.inv(_f64(m, _COV3)).expand(b + (3, 3)),
    "scale_tril": lambda m, b: m.linalg.cholesky(_f64(m, _COV3)).expand(b + (3, 3)),
}


def _rbf(m):
    """test_multivariate_normal_stable_with_precision_matrix's nearly singular precision."""
    x = m.linspace(-2.0, 2.0, 10, dtype=m.float64)
    return m.exp(-((x - x.unsqueeze(-1)) ** 2))


def _lowrank_and_full(m):
    """test_lowrank_multivariate_normal_properties: the same statistics as the full MVN."""
    loc, factor = _f64(m, [0.1, -0.3, 0.5]), _f64(m, [[1.0, 0.2], [-0.4, 0.3], [0.5, 0.6]])
    diag = _f64(m, [0.5, 1.5, 0.7])
    low = _d(m).LowRankMultivariateNormal(loc, factor, diag)
    full = _d(m).MultivariateNormal(loc, factor @ factor.mT + m.diag(diag))
    return [(getattr(low, k), getattr(full, k)) for k in
            ("mean", "variance", "covariance_matrix", "scale_tril", "precision_matrix")] + [
        (low.entropy(), full.entropy())]


PROGRAMS = {
    "bernoulli-rsample": lambda m: _d(m).Bernoulli(m.tensor(0.3)).rsample(),
    "bernoulli-entropy-zero": lambda m: _d(m).Bernoulli(m.tensor([0.0])).entropy(),
    "bernoulli-entropy": lambda m: _d(m).Bernoulli(_f64(m, [0.7, 0.2, 0.4])).entropy(),
    "bernoulli-3d-sample": lambda m: tuple(_d(m).Bernoulli(m.full((2, 3, 5), 0.5)).sample(
        (2, 5)).shape),
    "geometric-one-sample": lambda m: _d(m).Geometric(1).sample(),
    "geometric-one-at-one": lambda m: _d(m).Geometric(1).log_prob(m.tensor(1.0)),
    "geometric-one-at-zero": lambda m: _d(m).Geometric(1).log_prob(m.tensor(0.0)),
    "geometric-zero": lambda m: _d(m).Geometric(0),
    "geometric-rsample": lambda m: _d(m).Geometric(m.tensor(0.3)).rsample(),
    "geometric-entropy": lambda m: _d(m).Geometric(_f64(m, [0.7, 0.2, 0.4])).entropy(),
    "binomial-rsample": lambda m: _d(m).Binomial(10, m.tensor([0.3])).rsample(),
    "binomial-stable": lambda m: _d(m).Binomial(1.0, logits=m.tensor([-100.0, 100.0])).log_prob(
        m.tensor([0.0, 0.0])),
    "binomial-stable-gradient": _binomial_stable_gradient,
    "binomial-vectorized-count": lambda m: _d(m).Binomial(
        m.tensor([10]), _f64(m, [0.2, 0.7, 0.9])).log_prob(_f64(m, [7.0, 3.0, 9.0])),
    "binomial-vectorized-counts": lambda m: _d(m).Binomial(
        m.tensor([1, 2, 10]), _f64(m, [0.2, 0.7, 0.9])).log_prob(_f64(m, [0.0, 1.0, 9.0])),
    "binomial-entropy-logits": lambda m: _d(m).Binomial(
        10, logits=_f64(m, [-2.0, 0.3, 1.5])).entropy(),
    "binomial-extreme-0": lambda m: (_d(m).Binomial(100, 0).sample(),
                                     _d(m).Binomial(100, 0).log_prob(m.tensor([0.0, 1.0]))),
    "binomial-extreme-1": lambda m: (_d(m).Binomial(100, 1).sample(),
                                     _d(m).Binomial(100, 1).log_prob(m.tensor([100.0, 99.0]))),
    "lazy-scale-tril-gradient": _lazy_scale_tril_gradient,
    "binomial-zero-counts": lambda m: (_d(m).Binomial(m.zeros(2, 2), 1).sample(),
                                       _d(m).Binomial(m.zeros(2, 2), 1).log_prob(m.zeros(2, 2))),
    "binomial-vectorized-certain": lambda m: _d(m).Binomial(
        _f64(m, [[4, 7], [3, 8]]), m.tensor(1.0, dtype=m.float64)).sample(),
    "binomial-vectorized-moments": lambda m: (
        _d(m).Binomial(_f64(m, [[4, 7], [3, 8]]), _f64(m, 0.5)).mean,
        _d(m).Binomial(_f64(m, [[4, 7], [3, 8]]), _f64(m, 0.5)).variance),
    "binomial-int-count": lambda m: m.binomial(m.tensor([10, 10]), m.tensor([0.5, 0.5])),
    "binomial-int-prob": lambda m: m.binomial(m.tensor([10.0, 10.0]), m.tensor([1, 0])),
    "negative-binomial-rsample": lambda m: _d(m).NegativeBinomial(10, m.tensor([0.3])).rsample(),
    "negative-binomial-entropy": lambda m: _d(m).NegativeBinomial(10, m.tensor([0.3])).entropy(),
    "negative-binomial-vectorized-count": lambda m: _d(m).NegativeBinomial(
        m.tensor([10]), _f64(m, [0.2, 0.7, 0.9])).log_prob(_f64(m, [7.0, 3.0, 9.0])),
    "negative-binomial-vectorized-counts": lambda m: _d(m).NegativeBinomial(
        m.tensor([1, 2, 10]), _f64(m, [0.2, 0.7, 0.9])).log_prob(_f64(m, [0.0, 1.0, 9.0])),
    "multinomial-rsample": lambda m: _d(m).Multinomial(10, m.tensor([0.1, 0.2, 0.3])).rsample(),
    "multinomial-shapes": lambda m: [tuple(_d(m).Multinomial(10, m.tensor([0.1, 0.2, 0.3])).sample(
        shape).shape) for shape in [(), (2, 2), (1,)]],
    "multinomial-certain": lambda m: _d(m).Multinomial(10, _f64(m, [[1.0, 0.0], [0.0, 1.0]])
                                                       ).sample(),
    "multinomial-log-prob-entropy": lambda m: (
        _d(m).Multinomial(10, logits=_f64(m, [0.1, 0.2, 0.3]).log()).log_prob(
            _f64(m, [2.0, 3.0, 5.0])),
        _d(m).Multinomial(10, logits=_f64(m, [0.1, 0.2, 0.3]).log()).entropy()),
    "categorical-mean-variance": lambda m: (_d(m).Categorical(m.tensor([0.1, 0.2, 0.3])).mean,
                                            _d(m).Categorical(m.tensor([0.1, 0.2, 0.3])).variance),
    "categorical-rsample": lambda m: _d(m).Categorical(m.tensor([0.1, 0.2, 0.3])).rsample(),
    "categorical-certain": lambda m: _d(m).Categorical(m.tensor([[1.0, 0.0], [0.0, 1.0]])).sample(
        (2,)),
    "categorical-entropy": lambda m: (
        _d(m).Categorical(_f64(m, [[0.1, 0.2, 0.3], [0.5, 0.3, 0.2]])).entropy(),
        _d(m).Categorical(_f64(m, [[1.0, 0.0], [0.0, 1.0]])).entropy()),
    "categorical-entropy-inf-logits": _categorical_entropy_with_inf_logits,
    "one-hot-rsample": lambda m: _d(m).OneHotCategorical(m.tensor([0.1, 0.2, 0.3])).rsample(),
    "one-hot-log-prob": lambda m: _d(m).OneHotCategorical(
        _f64(m, [[0.1, 0.2, 0.3], [0.5, 0.3, 0.2]])).log_prob(_f64(m, [[0, 1, 0], [0, 0, 1]])),
    "poisson-shapes": lambda m: [tuple(_d(m).Poisson(rate).sample(shape).shape) for rate, shape in
                                 [(m.ones(2, 3), (7,)), (m.ones(1), ()), (m.ones(1), (1,)),
                                  (2.0, (2,))]],
    "poisson-zero-rate-log-prob": lambda m: _d(m).Poisson(m.zeros([])).log_prob(
        m.tensor([0.0, 1.0, 2.0])),
    "poisson-zero-rate-gradient": _poisson_zero_rate_gradient,
    "relaxed-bernoulli-hot": lambda m: [_d(m).RelaxedBernoulli(1e10, p).rsample()
                                        for p in (0.001, 0.2, 0.999)],
    # (the draws' noise, divided by 1e10, is left: equal probabilities within 1e-8)
    "relaxed-one-hot-hot": lambda m: [bool(((_d(m).RelaxedOneHotCategorical(
        1e10, _f64(m, p)).rsample() - 1 / len(p)).abs() < 1e-8).all())
        for p in ([0.1, 0.9], [0.2, 0.2, 0.6])],
    "relaxed-shapes": lambda m: [
        tuple(_d(m).RelaxedBernoulli(m.tensor(0.67), 0.3).sample((3, 2)).shape),
        tuple(_d(m).RelaxedOneHotCategorical(m.tensor([3.0]), m.tensor(
            [[0.1, 0.2, 0.3], [0.5, 0.3, 0.2]])).sample((3, 4)).shape)],
    "uniform-outside-unvalidated": lambda m: (
        _d(m).Uniform(m.zeros(1), 3 * m.ones(1), validate_args=False).log_prob(
            m.tensor([4.0, -1.0])),
        _d(m).Uniform(m.zeros(1), 3 * m.ones(1), validate_args=False).cdf(
            m.tensor([4.0, -1.0]))),
    "cauchy-moments": lambda m: (_d(m).Cauchy(m.zeros(1), m.ones(1)).mean,
                                 _d(m).Cauchy(m.zeros(1), m.ones(1)).variance),
    "halfcauchy-moments": lambda m: (_d(m).HalfCauchy(m.ones(1)).mean,
                                     _d(m).HalfCauchy(m.ones(1)).variance),
    "number-parameter-shapes": lambda m: [tuple(d.sample(shape).shape) for d, shape in [
        (_d(m).Uniform(0.0, 1.0), (1,)), (_d(m).Cauchy(0.0, 1.0), (1,)),
        (_d(m).HalfCauchy(1.0), (1,)), (_d(m).HalfNormal(0.6), (1,)),
        (_d(m).HalfNormal(50.0), (1,)), (_d(m).InverseGamma(0.5, 0.5), ()),
        (_d(m).InverseGamma(0.5, 0.5), (1,)), (_d(m).LogNormal(0.2, 0.6), (1,)),
        (_d(m).LogNormal(-0.7, 50.0), (1,))]],
    "broadcast-log-prob-shapes": lambda m: [tuple(d.log_prob(m.ones(3, 1)).shape) for d in [
        _d(m).HalfNormal(m.ones(2, 1, 4)), _d(m).InverseGamma(m.ones(4), m.ones(2, 1, 1)),
        _d(m).LogNormal(m.zeros(4), m.ones(2, 1, 1))]],
    "logistic-normal-shapes": lambda m: [tuple(d.sample(shape).shape) for d, shape in [
        (_d(m).LogisticNormal(m.zeros(5, 5), m.ones(5, 5)), (7,)),
        (_d(m).LogisticNormal(m.zeros(1), m.ones(1)), (1,)),
        (_d(m).LogisticNormal(m.zeros(1), m.ones(1)), ()),
        (_d(m).LogisticNormal(0.2, 0.6), ()), (_d(m).LogisticNormal(-0.7, 50.0), ())]],
    "mixture-shapes": lambda m: [tuple(d.sample(shape).shape) for d in [
        _d(m).MixtureSameFamily(_d(m).Categorical(m.ones(b + (5,))),
                                _d(m).Normal(m.zeros(b + (5,)), m.ones(b + (5,))))
        for b in [(), (3,), (4, 3)]] + [
        _d(m).MixtureSameFamily(_d(m).Categorical(m.ones(b + (5,))), _d(m).Independent(
            _d(m).Normal(m.zeros(b + (5, 2)), m.ones(b + (5, 2))), 1))
        for b in [(), (3,), (4, 3)]] for shape in [(), (2,), (2, 7)]],
    "mixture-binomial-log-prob": lambda m: _d(m).MixtureSameFamily(
        _d(m).Categorical(probs=_f64(m, [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
        _d(m).Binomial(20, _f64(m, [[0.1, 0.5, 0.9], [0.3, 0.4, 0.2]]))).log_prob(
        _f64(m, [3.0, 11.0])),
    "lowrank-shapes": lambda m: [tuple(_d(m).LowRankMultivariateNormal(
        m.zeros(mean), m.ones(factor), m.ones(factor[:-1])).sample(shape).shape)
        for mean in [(5, 3), (3,), (6, 5, 3)] for factor in [(3, 1), (6, 5, 3, 2)]
        for shape in [(), (2,), (2, 7)]],
    "mvn-shapes": lambda m: [tuple(_d(m).MultivariateNormal(
        m.zeros(mean, dtype=m.float64), **{kind: matrix(m, b)})
                             .sample(shape).shape)
                             for mean in [(5, 3), (3,), (6, 5, 3)] for b in [(), (6, 5)]
                             for kind, matrix in _MVN_MATRICES.items() for shape in [(), (2, 7)]],
    "mvn-stable-rbf-precision": lambda m: _d(m).MultivariateNormal(
        m.zeros(10, dtype=m.float64), precision_matrix=_rbf(m)).scale_tril,
    "lowrank-as-mvn": lambda m: _lowrank_and_full(m),
    "wishart-shapes": lambda m: [tuple(_d(m).Wishart(df, **{kind: matrix(m, b)}).sample(
        shape).shape) for df in [_f64(m, [3.5] * 5), _f64(m, 3.5), _f64(m, [[3.5] * 5] * 6)]
        for b in [(), (6, 5)] for kind, matrix in _MVN_MATRICES.items()
        for shape in [(), (2,), (2, 7)]],
    "more-number-parameter-shapes": lambda m: [tuple(d.sample(shape).shape) for d in [
        _d(m).Exponential(0.2), _d(m).Exponential(50.0), _d(m).Laplace(0.2, 0.6),
        _d(m).Laplace(-0.7, 50.0), _d(m).Gamma(0.5, 0.5), _d(m).Pareto(1.0, 1.0),
        _d(m).GeneralizedPareto(1.0, 1.0, 1.0), _d(m).Gumbel(1.0, 1.0),
        _d(m).Kumaraswamy(1.0, 1.0)] for shape in [(), (1,)]],
    "pareto-infinite-moments": lambda m: (_d(m).Pareto(m.ones(1), 0.5).mean,
                                          _d(m).Pareto(m.ones(1), 0.5).variance),
    "gumbel-cdf-of-numbers": lambda m: [
        _d(m).Gumbel(m.tensor(0.0, dtype=dtype), m.tensor(1.0, dtype=dtype),
                     validate_args=False).cdf(x)
        for dtype, x in [(m.float32, 20.0), (m.float32, -5.0), (m.float64, 50.0),
                         (m.float64, -10.0)]],
    # (torch's main tests sample(generator=...); torch 2.13 has no such keyword: TypeError)
    "gamma-sample-with-generator": lambda m: [tuple(_d(m).Gamma(m.tensor(2.0), m.tensor(1.0))
                                                    .sample(shape, generator=m.Generator()
                                                            .manual_seed(42)).shape)
                                              for shape in [(5,), (5, 3)]],
    "vonmises-log-prob-grid": lambda m: [_d(m).VonMises(0.0, c).log_prob(
        m.arange(0.0, 2 * math.pi, 0.1, dtype=m.float64)) for c in (0.01, 0.3, 3.0, 100.0)],
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_as_torch(name):
    assert_same_outcome(outcome(PROGRAMS[name], gradkit), outcome(PROGRAMS[name], torch),
                        rtol=1e-10, atol=1e-12)


ENUMERATE = {
    "Bernoulli": [({"probs": [0.1]}, None), ({"probs": [0.1, 0.9]}, None),
                  ({"probs": [[0.1, 0.2], [0.3, 0.4]]}, None)],
    "Binomial": [({"probs": [0.1]}, 2), ({"probs": [0.1, 0.9]}, 2),
                 ({"probs": [[0.1, 0.2], [0.3, 0.4]]}, 3)],
    "Categorical": [({"probs": [0.1, 0.2, 0.7]}, None),
                    ({"probs": [[0.1, 0.9], [0.3, 0.7]]}, None)],
    "OneHotCategorical": [({"probs": [0.1, 0.2, 0.7]}, None),
                          ({"probs": [[0.1, 0.9], [0.3, 0.7]]}, None)],
}


def _enumerated(m, family, params, total_count):
    kwargs = {k: m.tensor(v) for k, v in params.items()}
    if total_count is not None:
        kwargs["total_count"] = total_count
    dist = getattr(_d(m), family)(**kwargs)
    return (dist.enumerate_support(expand=False), dist.enumerate_support(expand=True),
            type(dist.sample()) is type(dist.enumerate_support()))


@pytest.mark.parametrize("case", [(f, i) for f, rows in ENUMERATE.items()
                                  for i in range(len(rows))])
def test_enumerate_support_examples_as_torch(case):
    """torch: test_bernoulli/binomial/categorical/one_hot_categorical_enumerate_support and
    test_enumerate_support_type."""
    family, index = case
    params, total_count = ENUMERATE[family][index]
    assert_same_outcome(outcome(lambda m: _enumerated(m, family, params, total_count), gradkit),
                        outcome(lambda m: _enumerated(m, family, params, total_count), torch))


def _expanded(name, m, shape, subclass):
    dist = _built(name, m)[0]
    if subclass:  # test_distribution_subclass_expand: expand keeps the user's class
        dist.__class__ = type("SubClass", (type(dist),), {})
    expanded = dist.expand(list(shape + tuple(dist.batch_shape)))
    m.manual_seed(0)
    sample = expanded.sample()
    statistics = []
    for statistic in ("mean", "variance"):
        try:
            statistics.append(getattr(expanded, statistic))
        except NotImplementedError:
            statistics.append(None)
    return (expanded.__class__ is dist.__class__, tuple(sample.shape),
            tuple(expanded.batch_shape), repr(dist).startswith(type(dist).__name__),
            statistics, expanded.log_prob(sample).detach().shape == (
                dist.log_prob(sample).detach().shape))


@pytest.mark.parametrize("subclass", [False, True])
@pytest.mark.parametrize("shape", [(), (2,), (2, 1)])
@pytest.mark.parametrize("name", EXAMPLES)
def test_distribution_expand_as_torch(name, shape, subclass):
    """torch: test_distribution_expand, test_distribution_subclass_expand and test_repr."""
    assert_same_outcome(outcome(lambda m: _expanded(name, m, shape, subclass), gradkit),
                        outcome(lambda m: _expanded(name, m, shape, subclass), torch),
                        rtol=1e-10, atol=1e-12)


def test_near_degenerate_samples_sit_at_the_location():
    """test_halfnormal / test_lognormal: scale 1e-5 samples are the location (atol 1e-4)."""
    half = gradkit.distributions.HalfNormal(gradkit.tensor([1e-5, 1e-5])).sample((1, 2))
    assert half.shape == (1, 2, 2) and float(half.abs().max()) < 1e-4
    log_normal = gradkit.distributions.LogNormal(gradkit.tensor([1.0, 0.0]),
                                                 gradkit.tensor([1e-5, 1e-5])).sample((1, 2))
    assert abs(float(log_normal[0, 0, 0]) - math.e) < 1e-3
    assert abs(float(log_normal[0, 1, 1]) - 1.0) < 1e-4


def test_logistic_normal_near_degenerate_sample():
    """test_logisticnormal: scale 1e-5 puts the sample at the stick-breaking of loc."""
    sample = gradkit.distributions.LogisticNormal(gradkit.tensor([1.0, 0.0]),
                                                  gradkit.tensor([1e-5, 1e-5])).sample()
    total = 2.0 + math.e
    expected = gradkit.tensor([math.e / total, 1 / total, 1 / total])
    assert gradkit.allclose(sample, expected, atol=1e-4, rtol=0)


def test_normal_rsample_gradients_are_the_noise():
    """test_normal: d rsample / d loc = 1 and d / d scale = the standard normal noise."""
    loc = gradkit.zeros(5, 5, requires_grad=True)
    scale = gradkit.full((5, 5), 2.0, requires_grad=True)
    z = gradkit.distributions.Normal(loc, scale).rsample()
    z.backward(gradkit.ones_like(z))
    assert gradkit.allclose(loc.grad, gradkit.ones(5, 5))
    assert gradkit.allclose(scale.grad, z.detach() / 2)


def test_uniform_and_cauchy_rsample_gradients_are_the_noise():
    """test_uniform / test_cauchy: d rsample / d low = 1 - u, d / d high = u, where
    u = (x - low) / (high - low); d / d loc = 1 and d / d scale = (x - loc) / scale."""
    low = gradkit.zeros(5, 5, requires_grad=True)
    high = (gradkit.ones(5, 5) * 3).requires_grad_()
    x = gradkit.distributions.Uniform(low, high).rsample()
    x.backward(gradkit.ones_like(x))
    noise = (x.detach() - 0) / 3
    assert gradkit.allclose(low.grad, 1 - noise) and gradkit.allclose(high.grad, noise)
    loc = gradkit.zeros(5, 5, requires_grad=True)
    scale = gradkit.full((5, 5), 2.0, requires_grad=True)
    c = gradkit.distributions.Cauchy(loc, scale).rsample()
    c.backward(gradkit.ones_like(c))
    assert gradkit.allclose(loc.grad, gradkit.ones(5, 5))
    assert gradkit.allclose(scale.grad, c.detach() / 2)


def test_vonmises_density_integrates_to_one():
    """test_vonmises_logprob: the density's mean over [0, 2 pi) times 2 pi is 1 (1e-3)."""
    grid = gradkit.arange(0.0, 2 * math.pi, 1e-4)
    for concentration in [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]:
        density = gradkit.distributions.VonMises(0.0, concentration).log_prob(grid).exp()
        assert abs(density.mean().item() * 2 * math.pi - 1) < 1e-3


def test_geometric_zero_message_names_the_constraint():
    """Geometric(0)'s error, checked also without torch: probs must be positive."""
    with pytest.raises(ValueError, match="to be positive"):
        gradkit.distributions.Geometric(0.0)
    assert math.isinf(gradkit.distributions.Geometric(1.0).log_prob(gradkit.tensor(1.0)).item())
