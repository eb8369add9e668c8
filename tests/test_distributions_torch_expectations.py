"""torch's own distribution tables (test/distributions/test_distributions.py: _get_examples and
_get_bad_examples) run through gradkit and torch 2.13 on the same parameters: the generic tests
that torch runs over every example (shapes, support, log_prob of the same value, statistics,
expand, cdf/icdf, rsample gradients) and the validation error of every bad example."""
import math
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradkit  # noqa: E402


def _d(m):
    return m.distributions


_LEAVES = []  # the leaves that require grad of the last example built


def _t(m, values, grad=False):
    """A float64 tensor of module m (float64 so values compare to rounding)."""
    tensor = m.tensor(np.asarray(values, dtype=np.float64), dtype=m.float64, requires_grad=grad)
    if grad:
        _LEAVES.append(tensor)
    return tensor


def _pos(*shape, seed):
    """torch's ``randn(...).exp()`` / ``.abs()`` parameters: positive data, fixed by seed."""
    return np.exp(np.random.default_rng(seed).standard_normal(shape) * 0.7)


def _randn(*shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


_P23 = [[0.1, 0.2, 0.3], [0.5, 0.3, 0.2]]
_EYE_P = [[1.0, 0.0], [0.0, 1.0]]
_COV2 = [[2.0, 0.3], [0.3, 0.25]]
_PREC3 = [[2.0, 0.1, 0.0], [0.1, 0.25, 0.0], [0.0, 0.0, 0.3]]
_TRIL = [[[2.0, 0.0], [-0.5, 0.25]], [[2.0, 0.0], [0.3, 0.25]], [[5.0, 0.0], [-0.5, 1.5]]]


def _normal(m, *shape, seed=0):
    return _d(m).Normal(_t(m, _randn(*shape, seed=seed), True),
                        _t(m, _pos(*shape, seed=seed + 1), True))


# torch's _get_examples(), one builder per parameter set (random tensors from fixed data)
EXAMPLES = {
    "Bernoulli-probs": lambda m: _d(m).Bernoulli(probs=_t(m, [0.7, 0.2, 0.4], True)),
    "Bernoulli-number": lambda m: _d(m).Bernoulli(probs=0.3),
    "Bernoulli-logits": lambda m: _d(m).Bernoulli(logits=_t(m, [0.0], True)),
    "Geometric-probs": lambda m: _d(m).Geometric(probs=_t(m, [0.7, 0.2, 0.4], True)),
    "Geometric-number": lambda m: _d(m).Geometric(probs=0.3),
    "Beta-2x3": lambda m: _d(m).Beta(_t(m, _pos(2, 3, seed=1), True),
                                     _t(m, _pos(2, 3, seed=2), True)),
    "Categorical-probs": lambda m: _d(m).Categorical(probs=_t(m, _P23, True)),
    "Categorical-degenerate": lambda m: _d(m).Categorical(probs=_t(m, _EYE_P, True)),
    "Categorical-logits": lambda m: _d(m).Categorical(logits=_t(m, np.zeros((2, 2)), True)),
    "Binomial-number": lambda m: _d(m).Binomial(10, probs=_t(m, _P23, True)),
    "Binomial-degenerate": lambda m: _d(m).Binomial(10, probs=_t(m, _EYE_P, True)),
    "Binomial-count-vector": lambda m: _d(m).Binomial(m.tensor([10, 8]),
                                                      probs=_t(m, _EYE_P, True)),
    "Binomial-count-matrix": lambda m: _d(m).Binomial(_t(m, [[10.0, 8.0], [5.0, 3.0]]),
                                                      probs=_t(m, _EYE_P, True)),
    "Binomial-count-zero": lambda m: _d(m).Binomial(_t(m, 0.0), probs=_t(m, _EYE_P, True)),
    "NegativeBinomial": lambda m: _d(m).NegativeBinomial(10, probs=_t(m, _P23, True)),
    "NegativeBinomial-counts": lambda m: _d(m).NegativeBinomial(
        _t(m, [[10.0, 8.0], [5.0, 3.0]]), probs=_t(m, [[0.9, 0.0], [0.0, 0.9]], True)),
    "Multinomial": lambda m: _d(m).Multinomial(10, probs=_t(m, _P23, True)),
    "Multinomial-degenerate": lambda m: _d(m).Multinomial(10, probs=_t(m, _EYE_P, True)),
    "Cauchy-numbers": lambda m: _d(m).Cauchy(0.0, 1.0),
    "Cauchy-columns": lambda m: _d(m).Cauchy(_t(m, [[0.0], [0.0]]), _t(m, [[1.0], [1.0]])),
    "Chi2": lambda m: _d(m).Chi2(_t(m, _pos(2, 3, seed=3), True)),
    "StudentT": lambda m: _d(m).StudentT(_t(m, _pos(2, 3, seed=4), True)),
    "Dirichlet": lambda m: _d(m).Dirichlet(_t(m, _pos(2, 3, seed=5), True)),
    "Exponential": lambda m: _d(m).Exponential(_t(m, _pos(5, 5, seed=6), True)),
    "FisherSnedecor": lambda m: _d(m).FisherSnedecor(_t(m, _pos(5, 5, seed=7), True),
                                                     _t(m, _pos(5, 5, seed=8) + 4.5, True)),
    "FisherSnedecor-number": lambda m: _d(m).FisherSnedecor(_t(m, [1.0]), 1.0),
    "Gamma": lambda m: _d(m).Gamma(_t(m, _pos(2, 3, seed=9), True),
                                   _t(m, _pos(2, 3, seed=10), True)),
    "Gumbel": lambda m: _d(m).Gumbel(_t(m, _randn(5, 5, seed=11), True),
                                     _t(m, _pos(5, 5, seed=12), True)),
    "HalfCauchy": lambda m: _d(m).HalfCauchy(_t(m, [[1.0], [1.0]])),
    "HalfNormal": lambda m: _d(m).HalfNormal(_t(m, _pos(5, 5, seed=13), True)),
    "HalfNormal-tiny": lambda m: _d(m).HalfNormal(_t(m, [1e-5, 1e-5], True)),
    "Independent-0": lambda m: _d(m).Independent(_normal(m, 2, 3), 0),
    "Independent-2": lambda m: _d(m).Independent(_normal(m, 2, 3), 2),
    "Independent-3": lambda m: _d(m).Independent(_normal(m, 2, 3, 5), 3),
    "Kumaraswamy": lambda m: _d(m).Kumaraswamy(_t(m, 1 + _pos(2, 3, seed=14) / 3, True),
                                               _t(m, 1 + _pos(2, 3, seed=15) / 3, True)),
    "LKJCholesky-2": lambda m: _d(m).LKJCholesky(2, 0.5),
    "LKJCholesky-3": lambda m: _d(m).LKJCholesky(3, _t(m, [0.5, 1.0, 2.0])),
    "Laplace": lambda m: _d(m).Laplace(_t(m, _randn(5, 5, seed=16), True),
                                       _t(m, _pos(5, 5, seed=17), True)),
    "Laplace-tiny": lambda m: _d(m).Laplace(_t(m, [1.0, 0.0], True), _t(m, [1e-5, 1e-5], True)),
    "LogNormal": lambda m: _d(m).LogNormal(_t(m, _randn(5, 5, seed=18), True),
                                           _t(m, _pos(5, 5, seed=19), True)),
    "LogisticNormal": lambda m: _d(m).LogisticNormal(_t(m, _randn(5, 5, seed=20), True),
                                                     _t(m, _pos(5, 5, seed=21), True)),
    "LowRankMultivariateNormal": lambda m: _d(m).LowRankMultivariateNormal(
        _t(m, _randn(5, 2, seed=22), True), _t(m, _randn(5, 2, 1, seed=23), True),
        _t(m, [2.0, 0.25], True)),
    "LowRankMultivariateNormal-shared": lambda m: _d(m).LowRankMultivariateNormal(
        _t(m, _randn(4, 3, seed=24), True), _t(m, _randn(3, 2, seed=25), True),
        _t(m, [5.0, 1.5, 3.0], True)),
    "MultivariateNormal-cov": lambda m: _d(m).MultivariateNormal(
        _t(m, _randn(5, 2, seed=26), True), _t(m, _COV2, True)),
    "MultivariateNormal-prec": lambda m: _d(m).MultivariateNormal(
        _t(m, _randn(2, 3, seed=27), True), precision_matrix=_t(m, _PREC3, True)),
    "MultivariateNormal-tril": lambda m: _d(m).MultivariateNormal(
        _t(m, _randn(5, 3, 2, seed=28), True), scale_tril=_t(m, _TRIL, True)),
    "Normal": lambda m: _normal(m, 5, 5, seed=29),
    "Normal-tiny": lambda m: _d(m).Normal(_t(m, [1.0, 0.0], True), _t(m, [1e-5, 1e-5], True)),
    "OneHotCategorical": lambda m: _d(m).OneHotCategorical(probs=_t(m, _P23, True)),
    "OneHotCategorical-logits": lambda m: _d(m).OneHotCategorical(
        logits=_t(m, np.zeros((2, 2)), True)),
    "OneHotCategoricalStraightThrough": lambda m: _d(m).OneHotCategoricalStraightThrough(
        probs=_t(m, _P23, True)),
    "Pareto-numbers": lambda m: _d(m).Pareto(1.0, 1.0),
    "Pareto": lambda m: _d(m).Pareto(_t(m, _pos(5, 5, seed=30) + 0.1, True),
                                     _t(m, _pos(5, 5, seed=31) + 2.1, True)),
    "Poisson": lambda m: _d(m).Poisson(_t(m, _pos(5, 5, seed=32), True)),
    "Poisson-number": lambda m: _d(m).Poisson(0.2),
    "Poisson-zero": lambda m: _d(m).Poisson(_t(m, [0.0], True)),
    "RelaxedBernoulli": lambda m: _d(m).RelaxedBernoulli(_t(m, [0.5], True),
                                                         probs=_t(m, [0.7, 0.2, 0.4], True)),
    "RelaxedBernoulli-logits": lambda m: _d(m).RelaxedBernoulli(
        _t(m, [7.2]), logits=_t(m, [-2.0, 2.0, 1.0, 5.0])),
    "RelaxedOneHotCategorical": lambda m: _d(m).RelaxedOneHotCategorical(
        _t(m, [0.5], True), probs=_t(m, [[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]], True)),
    "RelaxedOneHotCategorical-logits": lambda m: _d(m).RelaxedOneHotCategorical(
        _t(m, [7.2]), logits=_t(m, [[-2.0, 2.0], [1.0, 5.0]])),
    "Transformed-none": lambda m: _d(m).TransformedDistribution(_normal(m, 2, 3), []),
    "Transformed-exp": lambda m: _d(m).TransformedDistribution(
        _normal(m, 2, 3), _d(m).ExpTransform()),
    "Transformed-affine-exp": lambda m: _d(m).TransformedDistribution(
        _normal(m, 2, 3, 5), [_d(m).AffineTransform(_t(m, _randn(3, 5, seed=33)),
                                                    _t(m, _randn(3, 5, seed=34))),
                              _d(m).ExpTransform()]),
    "Transformed-affine-numbers": lambda m: _d(m).TransformedDistribution(
        _normal(m, 2, 3, 5), _d(m).AffineTransform(1, 2)),
    "Transformed-uniform-exp": lambda m: _d(m).TransformedDistribution(
        _d(m).Uniform(_t(m, math.log(1e8)), _t(m, math.log(1e10))), _d(m).ExpTransform()),
    "Uniform": lambda m: _d(m).Uniform(_t(m, np.zeros((5, 5)), True),
                                       _t(m, np.ones((5, 5)), True)),
    "Uniform-vector": lambda m: _d(m).Uniform(_t(m, [1.0, 1.0], True), _t(m, [2.0, 3.0], True)),
    "Weibull": lambda m: _d(m).Weibull(_t(m, _pos(5, 5, seed=35), True),
                                       _t(m, _pos(1, seed=36), True)),
    "Wishart-cov": lambda m: _d(m).Wishart(_t(m, [3.0], True), _t(m, _COV2, True)),
    "Wishart-prec": lambda m: _d(m).Wishart(_t(m, [5.0, 4.0], True),
                                            precision_matrix=_t(m, _PREC3, True)),
    "Wishart-tril": lambda m: _d(m).Wishart(_t(m, [5.0, 3.5, 3.0], True),
                                            scale_tril=_t(m, _TRIL, True)),
    "Wishart-number": lambda m: _d(m).Wishart(3.0, _t(m, [[5.0, -0.5], [-0.5, 1.5]])),
    "MixtureSameFamily-normal": lambda m: _d(m).MixtureSameFamily(
        _d(m).Categorical(_t(m, _pos(5, seed=37), True)), _normal(m, 5, seed=38)),
    "MixtureSameFamily-mvn": lambda m: _d(m).MixtureSameFamily(
        _d(m).Categorical(_t(m, _pos(5, seed=39), True)),
        _d(m).MultivariateNormal(_t(m, _randn(5, 2, seed=40), True), _t(m, _COV2, True))),
    "VonMises": lambda m: _d(m).VonMises(_t(m, 1.0, True), _t(m, 10.0, True)),
    "VonMises-vector": lambda m: _d(m).VonMises(_t(m, [0.0, math.pi / 2], True),
                                                _t(m, [1.0, 10.0], True)),
    "ContinuousBernoulli": lambda m: _d(m).ContinuousBernoulli(probs=_t(m, [0.7, 0.2, 0.4], True)),
    "ContinuousBernoulli-logits": lambda m: _d(m).ContinuousBernoulli(logits=_t(m, [0.0], True)),
    "InverseGamma": lambda m: _d(m).InverseGamma(_t(m, _pos(2, 3, seed=41) + 2.5, True),
                                                 _t(m, _pos(2, 3, seed=42), True)),
    "GeneralizedPareto": lambda m: _d(m).GeneralizedPareto(
        _t(m, _randn(5, 5, seed=43) * 10, True), _t(m, _pos(5, 5, seed=44), True),
        _t(m, _randn(5, 5, seed=45) / 10, True)),
}


def _built(name, m):
    """The example's distribution of module m and its leaves that require grad."""
    _LEAVES.clear()
    dist = EXAMPLES[name](m)
    return dist, list(_LEAVES)


def _both(name):
    return _built(name, gradkit)[0], _built(name, torch)[0]


def _np(x):
    return np.asarray(x.detach().numpy())


def _assert_close(got, expected, where):
    got, expected = _np(got), _np(expected)
    assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9, equal_nan=True,
                               err_msg=where)


def _outcome(compute):
    """The tensor computed, or the error raised as (type name, message); the class's module
    path in a message differs (gradkit.distributions.x vs torch.distributions.y)."""
    try:
        return compute()
    except (NotImplementedError, RuntimeError, ValueError) as error:
        return (type(error).__name__, re.sub(r"<class '[\w.]+\.(\w+)'>", r"\1", str(error)))


def _assert_same_outcome(got, expected, where):
    if isinstance(expected, tuple):
        assert got == expected, where
    else:
        assert not isinstance(got, tuple), f"{where}: {got}"
        _assert_close(got, expected, where)


def _statistic(dist, name):
    """The property, or entropy() called, as an outcome."""
    def compute():
        value = getattr(dist, name)
        return value() if callable(value) else value
    return _outcome(compute)


def _sample_of_torch(dist):
    """A value in the support that both libraries score (torch's sample, detached)."""
    torch.manual_seed(0)
    return dist.sample().detach()


def _as_gradkit(value):
    return gradkit.tensor(value.numpy(), dtype=getattr(gradkit, str(value.dtype)[6:]))


@pytest.mark.parametrize("name", EXAMPLES)
def test_shapes_and_support_as_torch(name):
    """torch: test_support_attributes, test_rsample_requires_grad, test_sample_detached,
    test_distribution_expand (shapes), the example shape checks of _gradcheck_log_prob."""
    ours, theirs = _both(name)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert ours.support.is_discrete == theirs.support.is_discrete
    assert ours.support.event_dim == theirs.support.event_dim
    assert type(ours.support).__name__ == type(theirs.support).__name__
    for sample_shape in [(), (2,), (2, 3)]:
        drawn, reference = ours.sample(sample_shape), theirs.sample(sample_shape)
        assert tuple(drawn.shape) == tuple(reference.shape)
        assert drawn.dtype.itemsize == reference.dtype.itemsize
        assert not drawn.requires_grad  # sample is detached in both
        assert bool(ours.support.check(drawn).all())
    if ours.has_rsample:
        assert ours.rsample().requires_grad == theirs.rsample().requires_grad
    expanded, reference = ours.expand((4,) + tuple(ours.batch_shape)), \
        theirs.expand((4,) + tuple(theirs.batch_shape))
    assert tuple(expanded.batch_shape) == tuple(reference.batch_shape)
    assert tuple(expanded.sample((2,)).shape) == tuple(reference.sample((2,)).shape)


@pytest.mark.parametrize("name", EXAMPLES)
def test_log_prob_and_statistics_as_torch(name):
    """torch: test_mean / test_variance_stddev / test_mode / test_entropy_shape, log_prob
    of the same value (the generic checks and _check_log_prob), and the expanded log_prob."""
    ours, theirs = _both(name)
    value = _sample_of_torch(theirs)
    _assert_same_outcome(_outcome(lambda: ours.log_prob(_as_gradkit(value))),
                         _outcome(lambda: theirs.log_prob(value)), "log_prob")
    expanded, reference = ours.expand((4,) + tuple(ours.batch_shape)), \
        theirs.expand((4,) + tuple(theirs.batch_shape))
    _assert_same_outcome(_outcome(lambda: expanded.log_prob(_as_gradkit(value))),
                         _outcome(lambda: reference.log_prob(value)), "expanded log_prob")
    for statistic in ["mean", "variance", "stddev", "mode", "entropy"]:
        _assert_same_outcome(_statistic(ours, statistic), _statistic(theirs, statistic),
                             statistic)


OUT_OF_SUPPORT = {
    "shifted by 0.5": lambda value: value + 0.5,
    "negated": lambda value: -value - 1.5,
    "1e6": lambda value: value * 0 + 1e6,
}


def _normalized(outcome):
    """An error's text with the library's name and the tensor repr's line wrapping (which
    depends on the dtype name's length: gradkit.float64 is two characters longer) made equal."""
    if isinstance(outcome, tuple):
        return outcome[0], re.sub(r"\s+", " ", outcome[1].replace("gradkit.", "torch."))
    return outcome


@pytest.mark.parametrize("change", OUT_OF_SUPPORT)
@pytest.mark.parametrize("name", EXAMPLES)
def test_log_prob_outside_the_support_as_torch(name, change):
    """torch: test_support_constraints / _validate_sample: a value outside the support raises
    the same ValueError (after the same calls, so the same lazy parameters show in the repr);
    inside it, the same log_prob."""
    ours, theirs = _both(name)
    value = OUT_OF_SUPPORT[change](_sample_of_torch(theirs))
    ours.sample()
    _assert_same_outcome(_normalized(_outcome(lambda: ours.log_prob(_as_gradkit(value)))),
                         _normalized(_outcome(lambda: theirs.log_prob(value))), "log_prob")


@pytest.mark.parametrize("name", EXAMPLES)
def test_cdf_and_icdf_as_torch(name):
    """torch: test_cdf_icdf_inverse and test_cdf_log_prob run where torch implements them."""
    ours, theirs = _both(name)
    value = _sample_of_torch(theirs)
    expected = _outcome(lambda: theirs.cdf(value))
    _assert_same_outcome(_outcome(lambda: ours.cdf(_as_gradkit(value))), expected, "cdf")
    if not isinstance(expected, tuple):
        probability = expected.detach()
        _assert_same_outcome(_outcome(lambda: ours.icdf(_as_gradkit(probability))),
                             _outcome(lambda: theirs.icdf(probability)), "icdf")


# 0-d parameters: NumPy's samplers return a Python number for them (found by torch's
# Example(Poisson, {"rate": 0.2}) and the Gamma/Binomial examples of numbers)
ZERO_D_DRAWS = {
    "poisson": lambda m: m.poisson(_t(m, 0.2)),
    "binomial": lambda m: m.binomial(_t(m, 3.0), _t(m, 0.5)),
    "Poisson(0.2)": lambda m: _d(m).Poisson(0.2).sample(),
    "Binomial(3, 0.5)": lambda m: _d(m).Binomial(3, 0.5).sample(),
    "NegativeBinomial(3, 0.5)": lambda m: _d(m).NegativeBinomial(3, 0.5).sample(),
    "Gamma(2.0, 1.0)": lambda m: _d(m).Gamma(2.0, 1.0).sample(),
    "Chi2(3.0)": lambda m: _d(m).Chi2(3.0).sample(),
    "Beta(2.0, 3.0)": lambda m: _d(m).Beta(2.0, 3.0).sample(),
    "StudentT(3.0)": lambda m: _d(m).StudentT(3.0).sample(),
}


@pytest.mark.parametrize("name", ZERO_D_DRAWS)
def test_draws_of_zero_dimensional_parameters_as_torch(name):
    drawn, reference = ZERO_D_DRAWS[name](gradkit), ZERO_D_DRAWS[name](torch)
    assert tuple(drawn.shape) == tuple(reference.shape) == ()
    assert str(drawn.dtype)[8:] == str(reference.dtype)[6:]
    assert math.isfinite(drawn.item())


def _gradients(dist, leaves, value, m):
    """d/d(parameters) of sum(log_prob(value)) + sum(entropy) where torch has entropy."""
    total = dist.log_prob(value).sum()
    entropy = _statistic(dist, "entropy")
    if not isinstance(entropy, tuple):
        total = total + entropy.sum()
    return m.autograd.grad(total, leaves, allow_unused=True)


@pytest.mark.parametrize("name", EXAMPLES)
def test_parameter_gradients_as_torch(name):
    """torch: _gradcheck_log_prob's gradients of log_prob in the parameters (and entropy's),
    compared with torch's on the same value."""
    theirs, their_leaves = _built(name, torch)
    ours, our_leaves = _built(name, gradkit)
    if not their_leaves:
        pytest.skip("torch's example has no parameter that requires grad")
    value = _sample_of_torch(theirs)
    expected = _outcome(lambda: _gradients(theirs, their_leaves, value, torch))
    got = _outcome(lambda: _gradients(ours, our_leaves, _as_gradkit(value), gradkit))
    if isinstance(expected, tuple) and isinstance(expected[0], str):
        assert got == expected
        return
    for index, (mine, reference) in enumerate(zip(got, expected, strict=True)):
        assert (mine is None) == (reference is None), f"gradient {index}"
        if reference is not None:
            _assert_close(mine, reference, f"gradient {index}")


# torch's _get_bad_examples(): every one fails argument validation
BAD_EXAMPLES = {
    "Bernoulli-above-one": lambda m: _d(m).Bernoulli(probs=_t(m, [1.1, 0.2, 0.4], True)),
    "Bernoulli-negative": lambda m: _d(m).Bernoulli(probs=_t(m, [-0.5], True)),
    "Bernoulli-number": lambda m: _d(m).Bernoulli(probs=1.00001),
    "Beta-zero": lambda m: _d(m).Beta(_t(m, [0.0], True), _t(m, [0.0], True)),
    "Beta-negative": lambda m: _d(m).Beta(_t(m, [-1.0], True), _t(m, [-2.0], True)),
    "Geometric-above-one": lambda m: _d(m).Geometric(probs=_t(m, [1.1, 0.2, 0.4], True)),
    "Geometric-number": lambda m: _d(m).Geometric(probs=1.00000001),
    "Categorical-negative": lambda m: _d(m).Categorical(
        probs=_t(m, [[-0.1, 0.2, 0.3], [0.5, 0.3, 0.2]], True)),
    "Categorical-both": lambda m: _d(m).Categorical(probs=_t(m, [[-1.0, 10.0], [0.0, -1.0]])),
    "Binomial-negative": lambda m: _d(m).Binomial(
        10, probs=_t(m, [[-0.0000001, 0.2, 0.3], [0.5, 0.3, 0.2]], True)),
    "Binomial-above-one": lambda m: _d(m).Binomial(10, probs=_t(m, [[1.0, 0.0], [0.0, 2.0]])),
    "NegativeBinomial-negative": lambda m: _d(m).NegativeBinomial(
        10, probs=_t(m, [[-0.0000001, 0.2, 0.3], [0.5, 0.3, 0.2]], True)),
    "NegativeBinomial-above-one": lambda m: _d(m).NegativeBinomial(
        10, probs=_t(m, [[1.0, 0.0], [0.0, 2.0]])),
    "Cauchy-number": lambda m: _d(m).Cauchy(0.0, -1.0),
    "Cauchy-zero": lambda m: _d(m).Cauchy(_t(m, [0.0]), 0.0),
    "Cauchy-columns": lambda m: _d(m).Cauchy(_t(m, [[0.0], [-2.0]]), _t(m, [[-0.000001], [1.0]])),
    "Chi2-zero": lambda m: _d(m).Chi2(_t(m, [0.0], True)),
    "StudentT-negative": lambda m: _d(m).StudentT(_t(m, [-2.0], True)),
    "Dirichlet-zero": lambda m: _d(m).Dirichlet(_t(m, [0.0], True)),
    "Exponential-zero": lambda m: _d(m).Exponential(_t(m, [0.0, 0.0], True)),
    "FisherSnedecor-df1": lambda m: _d(m).FisherSnedecor(_t(m, [0.0, 0.0]),
                                                         _t(m, [-1.0, -100.0])),
    "FisherSnedecor-df2": lambda m: _d(m).FisherSnedecor(_t(m, [1.0, 1.0]), _t(m, [0.0, 0.0])),
    "Gamma-concentration": lambda m: _d(m).Gamma(_t(m, [0.0, 0.0]), _t(m, [-1.0, -100.0])),
    "Gamma-rate": lambda m: _d(m).Gamma(_t(m, [1.0, 1.0]), _t(m, [0.0, 0.0])),
    "Gumbel-zero": lambda m: _d(m).Gumbel(_t(m, [1.0, 1.0]), _t(m, [0.0, 1.0])),
    "HalfCauchy-number": lambda m: _d(m).HalfCauchy(-1.0),
    "HalfCauchy-column": lambda m: _d(m).HalfCauchy(_t(m, [[-0.000001], [1.0]])),
    "HalfNormal-negative": lambda m: _d(m).HalfNormal(_t(m, [1.0, -1.0])),
    "LKJCholesky-dim-negative": lambda m: _d(m).LKJCholesky(-2, 0.1),
    "LKJCholesky-dim-one": lambda m: _d(m).LKJCholesky(1, 2.0),
    "LKJCholesky-concentration": lambda m: _d(m).LKJCholesky(2, 0.0),
    "Laplace-zero": lambda m: _d(m).Laplace(_t(m, [1.0, 1.0]), _t(m, [0.0, 1.0])),
    "LogNormal-negative": lambda m: _d(m).LogNormal(_t(m, [1.0, 1.0]), _t(m, [1.0, -1.0])),
    "MultivariateNormal": lambda m: _d(m).MultivariateNormal(
        _t(m, [1.0, 1.0]), _t(m, [[1.0, 0.0], [0.0, -2.0]])),
    "Normal-tiny-negative": lambda m: _d(m).Normal(_t(m, [1.0, 0.0]), _t(m, [1e-5, -1e-5])),
    "OneHotCategorical-negative": lambda m: _d(m).OneHotCategorical(
        probs=_t(m, [[0.1, 0.2, 0.3], [0.1, -10.0, 0.2]])),
    "OneHotCategorical-zeros": lambda m: _d(m).OneHotCategorical(probs=_t(m, np.zeros((2, 2)))),
    "OneHotCategoricalStraightThrough": lambda m: _d(m).OneHotCategoricalStraightThrough(
        probs=_t(m, np.zeros((2, 2)))),
    "Pareto-numbers": lambda m: _d(m).Pareto(0.0, 0.0),
    "Pareto-tensors": lambda m: _d(m).Pareto(_t(m, [0.0, 0.0]), _t(m, [-1e-5, 0.0])),
    "Pareto-alpha": lambda m: _d(m).Pareto(_t(m, [1.0]), -1.0),
    "Poisson-negative": lambda m: _d(m).Poisson(_t(m, [-0.1])),
    "Poisson-number": lambda m: _d(m).Poisson(-1.0),
    "RelaxedBernoulli": lambda m: _d(m).RelaxedBernoulli(_t(m, [1.5]),
                                                         probs=_t(m, [1.7, 0.2, 0.4])),
    "RelaxedOneHotCategorical": lambda m: _d(m).RelaxedOneHotCategorical(
        _t(m, [2.0]), probs=_t(m, [[-1.0, 0.0], [-1.0, 1.1]])),
    "Transformed-function": lambda m: _d(m).TransformedDistribution(_d(m).Normal(0, 1),
                                                                    lambda x: x),
    "Transformed-functions": lambda m: _d(m).TransformedDistribution(_d(m).Normal(0, 1),
                                                                     [lambda x: x]),
    "Uniform-equal": lambda m: _d(m).Uniform(_t(m, [2.0]), _t(m, [2.0])),
    "Uniform-reversed": lambda m: _d(m).Uniform(_t(m, [1.0]), _t(m, [0.0])),
    "Weibull-zero": lambda m: _d(m).Weibull(_t(m, [0.0]), _t(m, [0.0])),
    "Weibull-negative": lambda m: _d(m).Weibull(_t(m, [1.0]), _t(m, [-1.0])),
    "Wishart-df": lambda m: _d(m).Wishart(_t(m, [1.5]), _t(m, [[1.0, 0.0], [0.0, -2.0]])),
    "Wishart-matrix": lambda m: _d(m).Wishart(_t(m, [3.0]), _t(m, [[1.0, 1.0], [1.0, -2.0]])),
    "Wishart-number": lambda m: _d(m).Wishart(3.0, _t(m, [[1.0, 1.0], [1.0, -2.0]])),
    "InverseGamma": lambda m: _d(m).InverseGamma(_t(m, [1.0, 1.0]), _t(m, [0.0, 0.0])),
    "GeneralizedPareto-scale": lambda m: _d(m).GeneralizedPareto(
        _t(m, [0.0, 0.0]), _t(m, [-1.0, -100.0]), _t(m, [0.0, 0.0])),
    "GeneralizedPareto-zero": lambda m: _d(m).GeneralizedPareto(
        _t(m, [1.0, 1.0]), _t(m, [0.0, 0.0]), _t(m, [-1.0, -100.0])),
}


def _error_of(build, m):
    """The error raised under float64 numbers (so 1.00000001 stays above one in both)."""
    default = m.get_default_dtype()
    m.set_default_dtype(m.float64)
    try:
        with pytest.raises(Exception) as caught:  # noqa: PT011 - the type is compared next
            build(m)
    finally:
        m.set_default_dtype(default)
    text = str(caught.value).replace("gradkit.", "torch.").replace(", dtype=torch.float64", "")
    return type(caught.value).__name__, re.sub(r" at 0x[0-9a-f]+", "", text)


@pytest.mark.parametrize("name", BAD_EXAMPLES)
def test_bad_examples_raise_as_torch(name):
    """torch: test_invalid_parameters (every bad example raises under validate_args)."""
    assert _error_of(BAD_EXAMPLES[name], gradkit) == _error_of(BAD_EXAMPLES[name], torch)


@pytest.mark.parametrize("probs", [[1.1, 0.2, 0.4], [-0.5], 1.00001])
def test_continuous_bernoulli_bad_examples_are_clamped_as_torch(probs):
    """torch's bad ContinuousBernoulli examples pass validation in torch 2.13 unless
    validate_args=True is passed: with None the constructor clamps probs before the base
    class checks them; gradkit likewise."""
    def build(m):
        return _d(m).ContinuousBernoulli(probs=_t(m, probs)).probs
    _assert_close(build(gradkit), build(torch), "clamped probs")

    def checked(m):
        return _d(m).ContinuousBernoulli(probs=_t(m, probs), validate_args=True)
    assert _error_of(checked, gradkit) == _error_of(checked, torch)


# torch's TestDistributionShapes: each distribution with number and tensor parameters
SHAPE_CASES = {
    "Bernoulli(0.3)": lambda m: _d(m).Bernoulli(0.3),
    "Bernoulli-tensor": lambda m: _d(m).Bernoulli(m.tensor([[0.6, 0.3]] * 3)),
    "Geometric(0.3)": lambda m: _d(m).Geometric(0.3),
    "Geometric-tensor": lambda m: _d(m).Geometric(m.tensor([[0.6, 0.3]] * 3)),
    "Beta(0.1, 0.1)": lambda m: _d(m).Beta(0.1, 0.1),
    "Binomial(10, p)": lambda m: _d(m).Binomial(10, m.tensor([0.6, 0.3])),
    "Binomial-vectorized-n": lambda m: _d(m).Binomial(m.tensor([[10, 3, 1], [4, 8, 4]]),
                                                      m.tensor([0.6, 0.3, 0.1])),
    "Multinomial": lambda m: _d(m).Multinomial(10, m.tensor([[0.6, 0.3]] * 3)),
    "Categorical": lambda m: _d(m).Categorical(m.tensor([0.6, 0.3, 0.1])),
    "Categorical-batched": lambda m: _d(m).Categorical(m.tensor([[0.6, 0.3]] * 3)),
    "OneHotCategorical": lambda m: _d(m).OneHotCategorical(m.tensor([0.6, 0.3, 0.1])),
    "Cauchy(0, 1)": lambda m: _d(m).Cauchy(0, 1),
    "Cauchy-tensor": lambda m: _d(m).Cauchy(m.tensor([0.0, 0.0]), m.tensor([1.0, 1.0])),
    "HalfCauchy(1)": lambda m: _d(m).HalfCauchy(1),
    "Dirichlet": lambda m: _d(m).Dirichlet(m.tensor([[0.6, 0.3], [1.6, 1.3], [2.6, 2.3]])),
    "Gamma(1, 1)": lambda m: _d(m).Gamma(1, 1),
    "Gamma-tensor": lambda m: _d(m).Gamma(m.tensor([1.0, 1.0]), m.tensor([1.0, 1.0])),
    "Chi2(1)": lambda m: _d(m).Chi2(1),
    "StudentT(1)": lambda m: _d(m).StudentT(1),
    "StudentT-tensor": lambda m: _d(m).StudentT(m.tensor([1.0, 1.0])),
    "Pareto(1, 1)": lambda m: _d(m).Pareto(1, 1),
    "Gumbel(1, 1)": lambda m: _d(m).Gumbel(1, 1),
    "Kumaraswamy(1, 1)": lambda m: _d(m).Kumaraswamy(1, 1),
    "VonMises(0.0, 1.0)": lambda m: _d(m).VonMises(0.0, 1.0),
    "VonMises-tensor": lambda m: _d(m).VonMises(m.tensor([0.0, 0.0]), m.tensor([1.0, 1.0])),
    "Weibull(1, 1)": lambda m: _d(m).Weibull(1, 1),
    "Wishart": lambda m: _d(m).Wishart(m.tensor(1), m.tensor([[1.0]])),
    "Wishart-tensor": lambda m: _d(m).Wishart(m.tensor([1.0, 1.0]), m.tensor([[[1.0]], [[1.0]]])),
    "Normal(0, 1)": lambda m: _d(m).Normal(0, 1),
    "Normal-tensor": lambda m: _d(m).Normal(m.tensor([0.0, 0.0]), m.tensor([1.0, 1.0])),
    "Uniform(0, 1)": lambda m: _d(m).Uniform(0, 1),
    "Exponential(1)": lambda m: _d(m).Exponential(1),
    "Laplace(0, 1)": lambda m: _d(m).Laplace(0, 1),
    "Poisson(2)": lambda m: _d(m).Poisson(2),
}

SHAPE_VALUES = {
    "number": lambda m: 1,
    "(3, 2)": lambda m: m.ones(3, 2),
    "(3, 2, 3)": lambda m: m.ones(3, 2, 3),
    "(3, 1, 1)": lambda m: m.ones(3, 1, 1),
    "(2, 1)": lambda m: m.ones(2, 1),
    "simplex (3, 1, 2)": lambda m: m.ones(3, 1, 2) / 2,
    "one-hot (3, 2, 3)": lambda m: m.tensor([0.0, 1.0, 0.0]).expand(3, 2, 3),
    "(3, 2) + 1": lambda m: m.ones(3, 2) + 1,
}


def _shape_outcome(build, value, m):
    dist = build(m)
    drawn = _outcome(lambda: tuple(dist.sample((3, 2)).shape))
    scored = _outcome(lambda: tuple(dist.log_prob(value(m)).shape))
    if scored and isinstance(scored[0], str):
        scored = (scored[0], scored[1].replace("gradkit.", "torch."))
    return tuple(dist.batch_shape), tuple(dist.event_shape), drawn, scored


@pytest.mark.parametrize("value", SHAPE_VALUES)
@pytest.mark.parametrize("name", SHAPE_CASES)
def test_log_prob_shapes_and_errors_as_torch(name, value):
    """torch: TestDistributionShapes (batch/event shapes, sample shapes, log_prob's broadcast
    shape or its ValueError for numbers and values of other shapes)."""
    build, make = SHAPE_CASES[name], SHAPE_VALUES[value]
    assert _shape_outcome(build, make, gradkit) == _shape_outcome(build, make, torch)
