"""torch's test/distributions/test_distributions.py against gradkit and torch 2.13: TestKL's
infinite pairs and batched normals, TestAgainstScipy's statistics (torch in scipy's place)
and TestRsample's reparameterized gradients of Dirichlet and Beta."""
import itertools
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradkit  # noqa: E402
from test_distributions_torch_expectations_rest import _f  # noqa: E402
from torch_expectations.outcome import assert_like_torch  # noqa: E402

_R = np.random.default_rng(1)


def _infinite_pairs(m):
    """TestKL's infinite_examples, all 63 of torch's list."""
    d, t = m.distributions, m.tensor
    cb = d.ContinuousBernoulli(0.75)
    pairs = [(d.Bernoulli(0), d.Bernoulli(1)), (d.Bernoulli(1), d.Bernoulli(0)),
             (d.Categorical(t([0.9, 0.1])), d.Categorical(t([1.0, 0.0]))),
             (d.Categorical(t([[0.9, 0.1], [0.9, 0.1]])), d.Categorical(t([1.0, 0.0]))),
             (d.Binomial(31, 0.7), d.Binomial(30, 0.3)),
             (d.Binomial(t([3, 4]), t([0.4, 0.6])), d.Binomial(t([2, 3]), t([0.5, 0.8]))),
             (d.Pareto(1, 2), d.Normal(-3, 4)), (d.Pareto(1, 2), d.Pareto(3, 4)),
             (d.Poisson(2), d.Bernoulli(0.5)), (d.Poisson(2.3), d.Binomial(10, 0.2)),
             (d.Uniform(-1, 1), d.Beta(2, 2)), (d.Uniform(0, 2), d.Beta(3, 4))]
    for p in (d.Beta(1, 2), d.ContinuousBernoulli(0.25)):
        pairs += [(p, d.Uniform(0.25, 1)), (p, d.Uniform(0, 0.75)),
                  (p, d.Uniform(0.25, 0.75)), (p, d.Pareto(1, 2))]
    for p in (d.Chi2(1), d.Exponential(1)):
        pairs += [(p, d.Beta(2, 3)), (p, d.Pareto(2, 3)), (p, d.Uniform(-2, 3))]
    pairs += [(d.Gamma(1, 2), q) for q in (d.Beta(3, 4), d.Pareto(3, 4), d.Uniform(-3, 4))]
    for p in (d.Gumbel(-1, 2), d.Laplace(-1, 2), d.Normal(-1, 2)):
        pairs += [(p, q) for q in (d.Beta(3, 4), d.Chi2(3), d.Exponential(3), d.Gamma(3, 4),
                                   d.Pareto(3, 4), d.Uniform(-3, 4))]
    pairs += [(d.Pareto(2, 1), q) for q in (d.Chi2(3), d.Exponential(3), d.Gamma(3, 4))]
    pairs += [(d.Uniform(-1, 2), q) for q in (d.Beta(3, 4), d.Chi2(3), d.Exponential(3),
                                              d.Gamma(3, 4), d.Pareto(3, 4))]
    pairs += [(p, cb) for p in (d.Exponential(1), d.Gamma(1, 2), d.Gumbel(-1, 2),
                                d.Laplace(-1, 2), d.Normal(-1, 2), d.Uniform(-1, 1),
                                d.Uniform(0, 2), d.Uniform(-1, 2))]
    assert len(pairs) == 63
    return pairs


def test_kl_infinite_as_torch():
    """torch: test_kl_infinite (every pair inf), test_kl_edgecases' Uniform/Beta."""
    def program(m):
        divergences = [m.distributions.kl_divergence(p, q) for p, q in _infinite_pairs(m)]
        assert all(bool((k == math.inf).all()) for k in divergences)
        return divergences + [m.distributions.kl_divergence(
            m.distributions.Uniform(0, 1), m.distributions.Beta(1, 1))]
    assert_like_torch(program)


_LOCS, _TRILS, _TRIL1 = (_R.standard_normal((2, 7, 3)), _R.standard_normal((2, 7, 3, 3)),
                         _R.standard_normal((3, 3)))


def test_kl_of_batched_normals_as_torch():
    """torch: test_kl_multivariate_normal_batched(_broadcasted),
    test_kl_lowrank_multivariate_normal(_batched): batched = one by one, low rank = full."""
    def program(m):
        d = m.distributions
        tril = [d.transform_to(d.constraints.lower_cholesky)(_f(m, x)) for x in _TRILS]
        one = d.transform_to(d.constraints.lower_cholesky)(_f(m, _TRIL1))
        p, q = (d.MultivariateNormal(_f(m, _LOCS[i]), scale_tril=tril[i]) for i in range(2))
        batched = d.kl_divergence(p, q)
        each = m.stack([d.kl_divergence(
            d.MultivariateNormal(_f(m, _LOCS[0][i]), scale_tril=tril[0][i]),
            d.MultivariateNormal(_f(m, _LOCS[1][i]), scale_tril=tril[1][i])) for i in range(7)])
        assert bool(m.allclose(batched, each))
        factor, diagonal = _f(m, _TRILS[0][..., :2]), _f(m, np.exp(_LOCS[1]))
        low = [d.LowRankMultivariateNormal(_f(m, _LOCS[i]), factor * (i + 1), diagonal + i)
               for i in range(2)]
        full = [d.MultivariateNormal(x.loc, x.covariance_matrix) for x in low]
        crossed = [d.kl_divergence(low[0], low[1]), d.kl_divergence(low[0], full[1]),
                   d.kl_divergence(full[0], low[1]), d.kl_divergence(full[0], full[1])]
        assert all(bool(m.allclose(k, crossed[3])) for k in crossed)
        return [batched, d.kl_divergence(p, d.MultivariateNormal(_f(m, _LOCS[1]), scale_tril=one)),
                crossed]
    assert_like_torch(program, rtol=1e-9, atol=1e-10)


_POS, _POS2, _REAL = (np.exp(_R.standard_normal(20)), np.exp(_R.standard_normal(20)),
                      _R.standard_normal(20))
_SIMPLEX = _POS2 / _POS2.sum()
_COV20 = (lambda a: a @ a.T)(_R.standard_normal((20, 20)))
_U = _R.uniform(size=(5, 20))


def _scipy_pairs(m):
    """TestAgainstScipy's distributions (torch's in scipy's place), in its order."""
    d = m.distributions
    pos, pos2, real, simplex, cov = (_f(m, x) for x in (_POS, _POS2, _REAL, _SIMPLEX, _COV20))
    return [d.Bernoulli(simplex), d.Beta(pos, pos2), d.Binomial(10, simplex), d.Cauchy(real, pos),
            d.Dirichlet(pos), d.Exponential(pos), d.FisherSnedecor(pos, 4 + pos2),
            d.Gamma(pos, pos2), d.Geometric(simplex), d.Gumbel(real, pos2),
            d.GeneralizedPareto(real, pos, real / 10), d.HalfCauchy(pos), d.HalfNormal(pos2),
            d.InverseGamma(pos, pos2), d.Laplace(real, pos2), d.LogNormal(real, pos.clamp(max=3)),
            d.LowRankMultivariateNormal(real, m.zeros(20, 1, dtype=m.float64), pos2),
            d.Multinomial(10, simplex), d.MultivariateNormal(real, m.diag(pos2)),
            d.MultivariateNormal(real, cov), d.Normal(real, pos2), d.OneHotCategorical(simplex),
            d.Pareto(pos, 2 + pos2), d.Poisson(pos), d.StudentT(2 + pos, real, pos2),
            d.Uniform(real, real + pos), d.VonMises(real, pos), d.Weibull(pos[0], pos2[0]),
            d.Wishart(19 + pos[0], cov)]


@pytest.mark.parametrize("index", range(29))
def test_against_scipy_statistics_as_torch(index):
    """torch: TestAgainstScipy's test_mean, test_variance_stddev, test_cdf (at torch's draws)
    and test_icdf, with torch 2.13 as the reference."""
    torch.manual_seed(1)
    draws = _scipy_pairs(torch)[index].sample((5,))

    def program(m):
        dist = _scipy_pairs(m)[index]
        found = [dist.mean, dist.variance, dist.stddev]
        batch = tuple(dist.batch_shape)
        for statistic, x in (("cdf", draws), ("icdf", _U[:, :max(1, int(np.prod(batch)))])):
            x = _f(m, x.numpy() if statistic == "cdf" else x.reshape((5,) + batch))
            try:
                found.append(getattr(dist, statistic)(x))
            except NotImplementedError:
                found.append("NotImplementedError")
        return found
    assert_like_torch(program, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_and_beta_rsample_gradients_are_torchs(dtype):
    """torch: TestRsample's test_dirichlet_on_diagonal / test_beta_wrt_alpha / _wrt_beta
    check dx/dalpha against scipy's cdf; here the same draws through torch's own backward."""
    backward = pytest.importorskip("torch.distributions.dirichlet")._Dirichlet_backward
    grid = [1e-1, 1e0, 1e1]
    for alpha in itertools.product(grid, grid, grid):
        concentration = gradkit.tensor([alpha] * 20, dtype=getattr(gradkit, dtype),
                                       requires_grad=True)
        draws = gradkit.distributions.Dirichlet(concentration).rsample()
        (got,) = gradkit.autograd.grad(draws[:, 0].sum(), [concentration])
        seed = torch.zeros(20, 3, dtype=getattr(torch, dtype))
        seed[:, 0] = 1
        expected = backward(torch.tensor(draws.detach().numpy()),
                            torch.tensor(concentration.detach().numpy()), seed)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-6,
                                   rtol=1e-4 if dtype == "float32" else 1e-10)


def test_dirichlet_multivariate_rsample_gradient():
    """torch: test_dirichlet_multivariate: the gradient of E(z3 - 1/(2a + 1))^2 in a, for
    Dirichlet(a, a, 1) around a = (sqrt 5 - 1)/4, against its closed form."""
    gradkit.manual_seed(0)
    critical = 0.25 * (5.0**0.5 - 1.0)
    for shift in [-0.1, -0.05, -0.01, 0.0, 0.01, 0.05, 0.10]:
        alpha = gradkit.tensor([critical + shift], requires_grad=True)
        z = gradkit.distributions.Dirichlet(
            gradkit.cat([alpha, alpha, alpha.new_ones(1)]).expand(100000, 3)).rsample()
        loss = ((z[:, 2] - 1.0 / (2.0 * alpha + 1.0)) ** 2).mean()
        a = critical + shift
        expected = (1.0 - 2.0 * a - 4.0 * a**2) / ((1.0 + a) ** 2 * (1.0 + 2.0 * a) ** 3)
        assert abs(gradkit.autograd.grad(loss, [alpha])[0].item() - expected) < 0.002
