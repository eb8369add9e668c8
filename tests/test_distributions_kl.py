"""kl_divergence, transforms and constraints of gradkit.distributions against torch's."""
import math

import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

_L = [[1.2, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.4, 0.5, 1.1]]
_L2 = [[0.7, 0.0, 0.0], [-0.2, 1.3, 0.0], [0.1, 0.4, 0.9]]
_MATRIX = [[0.3, 2.0, -1.0], [0.5, -0.2, 0.1], [-0.4, 0.5, 1.1]]


def _d(m):
    return m.distributions


_LEAVES = []  # the leaves the last builder made
_GIVEN = []    # while not empty: the tensors builders take in place of new leaves (gradcheck)


def _t(m, values):
    leaf = _GIVEN.pop(0) if _GIVEN else m.tensor(values, dtype=m.float64, requires_grad=True)
    _LEAVES.append(leaf)
    return leaf


# (p, q) builders: the pairs torch registers that gradkit has
KL_PAIRS = {
    "Normal-Normal": lambda m: (_d(m).Normal(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Bernoulli-Bernoulli": lambda m: (_d(m).Bernoulli(_t(m, [0.2, 0.7, 0.4])),
                                      _d(m).Bernoulli(_t(m, [0.5, 0.1, 0.3]))),
    "Bernoulli-zero-p": lambda m: (_d(m).Bernoulli(_t(m, [0.0, 1.0, 0.3])),
                                   _d(m).Bernoulli(_t(m, [0.5, 0.1, 0.3]))),
    "Bernoulli-zero-q": lambda m: (_d(m).Bernoulli(m.tensor([0.2, 1.0])),
                                   _d(m).Bernoulli(m.tensor([0.0, 1.0]))),
    "Categorical": lambda m: (_d(m).Categorical(_t(m, [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])),
                              _d(m).Categorical(logits=_t(m, [[0.0, 1.0, -1.0]]))),
    "Categorical-zero": lambda m: (_d(m).Categorical(m.tensor([0.0, 0.5, 0.5])),
                                   _d(m).Categorical(m.tensor([0.5, 0.0, 0.5]))),
    "OneHotCategorical": lambda m: (_d(m).OneHotCategorical(_t(m, [0.2, 0.3, 0.5])),
                                    _d(m).OneHotCategorical(_t(m, [0.4, 0.4, 0.2]))),
    "MultivariateNormal": lambda m: (
        _d(m).MultivariateNormal(_t(m, [[0.0, 1.0, 2.0], [1.0, 0.0, 0.0]]),
                                 scale_tril=_t(m, _L)),
        _d(m).MultivariateNormal(_t(m, [0.5, 0.0, -1.0]), scale_tril=_t(m, _L2))),
    "Uniform-Uniform": lambda m: (_d(m).Uniform(_t(m, [0.0, 0.5]), _t(m, [1.0, 2.0])),
                                  _d(m).Uniform(_t(m, [-1.0, 1.0]), _t(m, [2.0, 3.0]))),
    "Beta-Beta": lambda m: (_d(m).Beta(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                            _d(m).Beta(_t(m, [1.5, 1.0]), _t(m, [1.0, 4.0]))),
    "Gamma-Gamma": lambda m: (_d(m).Gamma(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                              _d(m).Gamma(_t(m, [1.5, 1.0]), _t(m, [1.0, 4.0]))),
    "Dirichlet-Dirichlet": lambda m: (_d(m).Dirichlet(_t(m, [0.5, 2.0, 3.0])),
                                      _d(m).Dirichlet(_t(m, [1.0, 1.0, 1.5]))),
    "Exponential-Exponential": lambda m: (_d(m).Exponential(_t(m, [0.5, 2.0])),
                                          _d(m).Exponential(_t(m, [1.5, 0.3]))),
    "Laplace-Laplace": lambda m: (_d(m).Laplace(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                  _d(m).Laplace(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Gumbel-Gumbel": lambda m: (_d(m).Gumbel(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                _d(m).Gumbel(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Geometric-Geometric": lambda m: (_d(m).Geometric(_t(m, [0.2, 0.7])),
                                      _d(m).Geometric(_t(m, [0.5, 0.1]))),
    "Poisson-Poisson": lambda m: (_d(m).Poisson(_t(m, [0.5, 3.0])),
                                  _d(m).Poisson(_t(m, [1.5, 0.7]))),
    "Binomial-Binomial": lambda m: (_d(m).Binomial(m.tensor([5.0, 6.0]), _t(m, [0.2, 0.7])),
                                    _d(m).Binomial(m.tensor([5.0, 4.0]), _t(m, [0.5, 0.1]))),
    "HalfNormal-HalfNormal": lambda m: (_d(m).HalfNormal(_t(m, [0.5, 2.0])),
                                        _d(m).HalfNormal(_t(m, [1.5, 0.7]))),
    "LogNormal-LogNormal": lambda m: (_d(m).LogNormal(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                      _d(m).LogNormal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Chi2-Chi2 (exponential family)": lambda m: (_d(m).Chi2(_t(m, [1.5, 4.0])),
                                                 _d(m).Chi2(_t(m, [3.0, 2.0]))),
    "Independent": lambda m: (
        _d(m).Independent(_d(m).Normal(_t(m, [[0.3, -1.0]]), _t(m, [[0.5, 2.0]])), 1),
        _d(m).Independent(_d(m).Normal(_t(m, [[0.0, 1.0]]), _t(m, [[1.5, 0.7]])), 1)),
    "Bernoulli-Poisson": lambda m: (_d(m).Bernoulli(_t(m, [0.2, 0.7])),
                                    _d(m).Poisson(_t(m, [1.5, 0.7]))),
    "Exponential-Gamma": lambda m: (_d(m).Exponential(_t(m, [0.5, 2.0])),
                                    _d(m).Gamma(_t(m, [1.5, 1.0]), _t(m, [1.0, 4.0]))),
    "Exponential-Normal": lambda m: (_d(m).Exponential(_t(m, [0.5, 2.0])),
                                     _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Gamma-Normal": lambda m: (_d(m).Gamma(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                               _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Gamma-Exponential": lambda m: (_d(m).Gamma(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                                    _d(m).Exponential(_t(m, [1.5, 0.3]))),
    "Normal-Laplace": lambda m: (_d(m).Normal(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                 _d(m).Laplace(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Normal-Gumbel": lambda m: (_d(m).Normal(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                _d(m).Gumbel(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Gumbel-Normal": lambda m: (_d(m).Gumbel(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Laplace-Normal": lambda m: (_d(m).Laplace(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                 _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Normal-Uniform": lambda m: (_d(m).Normal(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                 _d(m).Uniform(_t(m, [0.0, 1.0]), _t(m, [1.5, 1.7]))),
    "Gamma-Uniform": lambda m: (_d(m).Gamma(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                                _d(m).Uniform(_t(m, [0.0, 1.0]), _t(m, [1.5, 1.7]))),
    "Cauchy-Cauchy": lambda m: (_d(m).Cauchy(_t(m, [0.3, -1.0]), _t(m, [0.5, 2.0])),
                                _d(m).Cauchy(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Pareto-Pareto": lambda m: (_d(m).Pareto(_t(m, [0.5, 2.0]), _t(m, [3.0, 1.5])),
                                _d(m).Pareto(_t(m, [0.4, 2.5]), _t(m, [2.0, 2.5]))),
    "LowRank-LowRank": lambda m: (
        _d(m).LowRankMultivariateNormal(_t(m, [0.0, 1.0, 2.0]), _t(m, [[1.0], [0.3], [-0.2]]),
                                        _t(m, [0.5, 1.2, 0.8])),
        _d(m).LowRankMultivariateNormal(_t(m, [[1.0, 0.0, 0.5]]),
                                        _t(m, [[0.2, 0.1], [0.4, -0.3], [0.0, 0.6]]),
                                        _t(m, [1.0, 0.7, 1.5]))),
    "MultivariateNormal-LowRank": lambda m: (
        _d(m).MultivariateNormal(_t(m, [0.0, 1.0, 2.0]), scale_tril=_t(m, _L)),
        _d(m).LowRankMultivariateNormal(_t(m, [1.0, 0.0, 0.5]),
                                        _t(m, [[0.2, 0.1], [0.4, -0.3], [0.0, 0.6]]),
                                        _t(m, [1.0, 0.7, 1.5]))),
    "LowRank-MultivariateNormal": lambda m: (
        _d(m).LowRankMultivariateNormal(_t(m, [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]),
                                        _t(m, [[1.0], [0.3], [-0.2]]), _t(m, [0.5, 1.2, 0.8])),
        _d(m).MultivariateNormal(_t(m, [1.0, 0.0, 0.5]), scale_tril=_t(m, _L2))),
    "Beta-Exponential": lambda m: (_d(m).Beta(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                                   _d(m).Exponential(_t(m, [1.5, 0.3]))),
    "Beta-Gamma": lambda m: (_d(m).Beta(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                             _d(m).Gamma(_t(m, [1.5, 1.0]), _t(m, [1.0, 4.0]))),
    "Beta-Normal": lambda m: (_d(m).Beta(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                              _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Beta-Uniform": lambda m: (_d(m).Beta(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                               _d(m).Uniform(_t(m, [-1.0, 0.5]), _t(m, [2.0, 3.0]))),
    "Exponential-Gumbel": lambda m: (_d(m).Exponential(_t(m, [0.5, 2.0])),
                                     _d(m).Gumbel(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Gamma-Gumbel": lambda m: (_d(m).Gamma(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                               _d(m).Gumbel(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Pareto-Exponential": lambda m: (_d(m).Pareto(_t(m, [0.5, 2.0]), _t(m, [3.0, 0.8])),
                                     _d(m).Exponential(_t(m, [1.5, 0.3]))),
    "Pareto-Gamma": lambda m: (_d(m).Pareto(_t(m, [0.5, 2.0]), _t(m, [3.0, 0.8])),
                               _d(m).Gamma(_t(m, [1.5, 1.0]), _t(m, [1.0, 4.0]))),
    "Pareto-Normal": lambda m: (_d(m).Pareto(_t(m, [0.5, 2.0]), _t(m, [3.0, 1.8])),
                                _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Uniform-Beta": lambda m: (_d(m).Uniform(_t(m, [0.1, 0.5]), _t(m, [0.6, 1.5])),
                               _d(m).Beta(_t(m, [1.5, 1.0]), _t(m, [1.0, 4.0]))),
    "Uniform-Exponential": lambda m: (_d(m).Uniform(_t(m, [0.1, -0.5]), _t(m, [0.6, 1.5])),
                                      _d(m).Exponential(_t(m, [1.5, 0.3]))),
    "Uniform-Gamma": lambda m: (_d(m).Uniform(_t(m, [0.1, -0.5]), _t(m, [0.6, 1.5])),
                                _d(m).Gamma(_t(m, [1.5, 1.0]), _t(m, [1.0, 4.0]))),
    "Uniform-Gumbel": lambda m: (_d(m).Uniform(_t(m, [0.1, -0.5]), _t(m, [0.6, 1.5])),
                                 _d(m).Gumbel(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Uniform-Normal": lambda m: (_d(m).Uniform(_t(m, [0.1, -0.5]), _t(m, [0.6, 1.5])),
                                 _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "Uniform-Pareto": lambda m: (_d(m).Uniform(_t(m, [0.6, 0.5]), _t(m, [0.9, 1.5])),
                                 _d(m).Pareto(_t(m, [0.5, 0.7]), _t(m, [3.0, 0.8]))),
    "ContinuousBernoulli-ContinuousBernoulli": lambda m: (
        _d(m).ContinuousBernoulli(_t(m, [0.2, 0.7, 0.4999])),
        _d(m).ContinuousBernoulli(logits=_t(m, [0.3, -1.0, 0.0001]))),
    "Beta-ContinuousBernoulli": lambda m: (_d(m).Beta(_t(m, [0.7, 3.0]), _t(m, [2.0, 0.9])),
                                           _d(m).ContinuousBernoulli(_t(m, [0.2, 0.7]))),
    "Uniform-ContinuousBernoulli": lambda m: (
        _d(m).Uniform(_t(m, [0.1, -0.5]), _t(m, [0.6, 0.5])),
        _d(m).ContinuousBernoulli(_t(m, [0.2, 0.7]))),
    "ContinuousBernoulli-Exponential": lambda m: (_d(m).ContinuousBernoulli(_t(m, [0.2, 0.7])),
                                                  _d(m).Exponential(_t(m, [1.5, 0.3]))),
    "ContinuousBernoulli-Normal": lambda m: (
        _d(m).ContinuousBernoulli(_t(m, [0.2, 0.7])),
        _d(m).Normal(_t(m, [0.0, 1.0]), _t(m, [1.5, 0.7]))),
    "ContinuousBernoulli-Uniform": lambda m: (
        _d(m).ContinuousBernoulli(_t(m, [0.2, 0.7])),
        _d(m).Uniform(_t(m, [-0.5, 0.1]), _t(m, [1.5, 0.9]))),
    "infinite-Normal-Exponential": lambda m: (_d(m).Normal(_t(m, [0.3]), _t(m, [0.5])),
                                              _d(m).Exponential(_t(m, [1.5]))),
    "infinite-Gumbel-Beta": lambda m: (_d(m).Gumbel(_t(m, [0.3]), _t(m, [0.5])),
                                       _d(m).Beta(_t(m, [1.5]), _t(m, [2.0]))),
    "infinite-Pareto-Uniform": lambda m: (_d(m).Pareto(_t(m, [0.5]), _t(m, [3.0])),
                                          _d(m).Uniform(_t(m, [0.0]), _t(m, [2.0]))),
    "infinite-Poisson-Binomial": lambda m: (_d(m).Poisson(_t(m, [0.5])),
                                            _d(m).Binomial(3, _t(m, [0.3]))),
    "infinite-Exponential-Pareto": lambda m: (_d(m).Exponential(_t(m, [0.5])),
                                              _d(m).Pareto(_t(m, [1.0]), _t(m, [3.0]))),
}


def test_kl_registers_torchs_pairs_of_the_classes_gradkit_has():
    import torch.distributions.kl as torch_kl

    def names(registry):
        return {(p.__name__, q.__name__) for p, q in registry}

    have = set(gradkit.distributions.__all__)
    expected = {(p, q) for p, q in names(torch_kl._KL_REGISTRY) if p in have and q in have}
    assert expected - names(gradkit.distributions.kl._KL_REGISTRY) == set()


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_and_its_gradients_match_torch(pair):
    results = {}
    for m in (gradkit, torch):
        _LEAVES.clear()
        p, q = KL_PAIRS[pair](m)
        kl = m.distributions.kl_divergence(p, q)
        leaves = list(_LEAVES)
        grads = m.autograd.grad(kl.sum(), leaves, allow_unused=True) if kl.requires_grad else ()
        results[m] = (kl.detach().numpy(), str(kl.dtype).split(".")[-1],
                      [None if g is None else g.numpy() for g in grads])
    got, expected = results[gradkit], results[torch]
    assert got[1] == expected[1]
    assert got[0].shape == expected[0].shape
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-10, atol=1e-12)
    assert len(got[2]) == len(expected[2])
    for g, e in zip(got[2], expected[2]):
        if e is None:
            assert g is None or not np.any(g)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_gradcheck(pair):
    _LEAVES.clear()
    kl = gradkit.distributions.kl_divergence(*KL_PAIRS[pair](gradkit))
    leaves = list(_LEAVES)
    finite = gradkit.tensor(np.isfinite(kl.detach().numpy()))
    if not kl.requires_grad or not bool(finite.any()):
        pytest.skip("no gradient: an infinite divergence")
    if "zero" in pair:
        pytest.skip("a probability at 0 or 1: torch's convention, not a derivative, there")
    if pair in ("Uniform-Beta", "Uniform-Gamma"):
        pytest.skip("the parameters of the infinite entry get NaN gradients, as torch's "
                    "(test_kl_divergence_and_its_gradients_match_torch)")

    def divergence(*params):  # its finite entries (an infinite one has no derivative)
        _GIVEN[:] = params
        try:
            return gradkit.distributions.kl_divergence(*KL_PAIRS[pair](gradkit))[finite]
        finally:
            _GIVEN.clear()

    # perturbing a zero above a scale_tril's diagonal leaves the lower factor it describes
    gradkit.distributions.Distribution.set_default_validate_args(False)
    try:
        assert gradcheck(divergence, tuple(leaves))
        assert gradgradcheck(divergence, tuple(leaves))
    finally:
        gradkit.distributions.Distribution.set_default_validate_args(True)


def test_kl_errors_match_torch():
    for m in (gradkit, torch):
        with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for "
                                                      "p type Beta and q type Cauchy"):
            m.distributions.kl_divergence(_d(m).Beta(1.0, 2.0), _d(m).Cauchy(0.0, 1.0))
        with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
            m.distributions.kl_divergence(_d(m).Binomial(2, m.tensor(0.5)),
                                          _d(m).Binomial(3, m.tensor(0.5)))
        with pytest.raises(NotImplementedError, match="different exponential families"):
            m.distributions.kl_divergence(_d(m).Poisson(m.tensor(2.0)),
                                          _d(m).Exponential(m.tensor(1.0)))


@pytest.mark.parametrize("kinds", [("MultivariateNormal", "MultivariateNormal"),
                                   ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
                                   ("MultivariateNormal", "LowRankMultivariateNormal"),
                                   ("LowRankMultivariateNormal", "MultivariateNormal")])
def test_kl_of_normals_of_other_event_shapes_fails_as_torch(kinds):
    def build(m, kind, n):
        if kind == "MultivariateNormal":
            return m.distributions.MultivariateNormal(m.zeros(n), m.eye(n))
        return m.distributions.LowRankMultivariateNormal(m.zeros(n), m.ones(n, 1), m.ones(n))

    messages = []
    for m in (gradkit, torch):
        with pytest.raises(ValueError) as error:
            m.distributions.kl_divergence(build(m, kinds[0], 2), build(m, kinds[1], 3))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_register_kl_picks_the_most_specific_pair():
    class MyNormal(gradkit.distributions.Normal):
        pass

    @gradkit.distributions.register_kl(MyNormal, gradkit.distributions.Normal)
    def _kl_mine(p, q):
        return gradkit.zeros(p.batch_shape)

    p = MyNormal(gradkit.tensor([0.0]), gradkit.tensor([1.0]))
    q = gradkit.distributions.Normal(gradkit.tensor([1.0]), gradkit.tensor([1.0]))
    assert gradkit.distributions.kl_divergence(p, q).tolist() == [0.0]
    assert gradkit.distributions.kl_divergence(q, q).tolist() == [0.0]
    assert gradkit.distributions.kl_divergence(q, p).tolist() == [0.5]


# -- transforms ---------------------------------------------------------------------------

TRANSFORMS = {
    "Exp": (lambda m: _d(m).ExpTransform(), [-1.0, 0.5, 2.0]),
    "Sigmoid": (lambda m: _d(m).SigmoidTransform(), [-1.0, 0.5, 2.0]),
    "Tanh": (lambda m: _d(m).TanhTransform(), [-1.0, 0.5, 2.0]),
    "Softplus": (lambda m: _d(m).SoftplusTransform(), [-1.0, 0.5, 2.0]),
    "Power": (lambda m: _d(m).PowerTransform(m.tensor(2.5, dtype=m.float64)), [0.3, 0.5, 2.0]),
    "Affine": (lambda m: _d(m).AffineTransform(1.0, m.tensor([2.0, -0.5, 3.0],
                                                            dtype=m.float64)), [-1.0, 0.5, 2.0]),
    "Affine-number": (lambda m: _d(m).AffineTransform(1.0, -2.0), [-1.0, 0.5, 2.0]),
    "Affine-event": (lambda m: _d(m).AffineTransform(
        0.0, m.tensor([2.0, -0.5, 3.0], dtype=m.float64), event_dim=1), [-1.0, 0.5, 2.0]),
    "Abs": (lambda m: _d(m).AbsTransform(), [-1.0, 0.5, 2.0]),
    "Softmax": (lambda m: _d(m).SoftmaxTransform(), [-1.0, 0.5, 2.0]),
    "Compose": (lambda m: _d(m).ComposeTransform(
        [_d(m).AffineTransform(0.5, 2.0), _d(m).ExpTransform(), _d(m).PowerTransform(
            m.tensor(0.5, dtype=m.float64))]), [-1.0, 0.5, 2.0]),
    "Inverse": (lambda m: _d(m).ExpTransform().inv, [0.3, 0.5, 2.0]),
    "Independent": (lambda m: _d(m).transforms.IndependentTransform(
        _d(m).SigmoidTransform(), 1), [-1.0, 0.5, 2.0]),
    "Identity": (lambda m: _d(m).transforms.identity_transform, [-1.0, 0.5, 2.0]),
    "StickBreaking": (lambda m: _d(m).StickBreakingTransform(), [-1.0, 0.5, 2.0]),
    "CorrCholesky": (lambda m: _d(m).CorrCholeskyTransform(), [-1.0, 0.5, 2.0]),
    "LowerCholesky": (lambda m: _d(m).LowerCholeskyTransform(), _MATRIX),
    "PositiveDefinite": (lambda m: _d(m).PositiveDefiniteTransform(), _MATRIX),
    "Reshape": (lambda m: _d(m).ReshapeTransform((3,), (1, 3)), [-1.0, 0.5, 2.0]),
    "Cat": (lambda m: _d(m).CatTransform([_d(m).ExpTransform(), _d(m).AffineTransform(1.0, 2.0)],
                                         0, [1, 2]), [-1.0, 0.5, 2.0]),
    "Stack": (lambda m: _d(m).StackTransform([_d(m).ExpTransform(), _d(m).SigmoidTransform(),
                                              _d(m).TanhTransform()]), [-1.0, 0.5, 2.0]),
    "CumulativeDistribution": (lambda m: _d(m).CumulativeDistributionTransform(
        _d(m).Normal(m.tensor(0.5, dtype=m.float64), m.tensor(2.0, dtype=m.float64))),
        [-1.0, 0.5, 2.0]),
}


def _fact(fn):
    try:
        return str(fn()).replace("gradkit.", "torch.")
    except (NotImplementedError, ValueError) as e:
        return f"{type(e).__name__}: {e}".replace("gradkit.", "torch.")


def _transform_outcome(m, name):
    build, x = TRANSFORMS[name]
    transform = build(m)
    x = m.tensor(x, dtype=m.float64, requires_grad=True)
    y = transform(x)
    out = {"y": y, "x_back": transform.inv(y)}
    try:
        out["ladj"] = transform.log_abs_det_jacobian(x, y)
        if out["ladj"].requires_grad:  # an affine map's does not depend on x
            (out["d_ladj"],) = m.autograd.grad(out["ladj"].sum(), x)
    except NotImplementedError:
        out["ladj"] = None
    facts = [repr(transform.domain), repr(transform.codomain), transform.bijective,
             str(transform.inv.inv == transform), transform == build(m),
             _fact(lambda: tuple(transform.forward_shape((2, 3)))),
             _fact(lambda: tuple(transform.inverse_shape((2, 3)))),
             _fact(lambda: transform.sign), _fact(lambda: transform.event_dim)]
    return out, facts


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_match_torch(name):
    got, got_facts = _transform_outcome(gradkit, name)
    expected, expected_facts = _transform_outcome(torch, name)
    assert got_facts[:2] == [f.replace("torch.", "gradkit.") for f in expected_facts[:2]] or \
        [f.replace("gradkit.", "torch.") for f in got_facts[:2]] == expected_facts[:2]
    assert got_facts[2:] == expected_facts[2:]
    assert got.keys() == expected.keys()
    for key in got:
        if expected[key] is None:
            assert got[key] is None
            continue
        np.testing.assert_allclose(got[key].detach().numpy(), expected[key].detach().numpy(),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("diag", [-2, -1, 0, 1])
def test_tril_vec_helpers_as_torch(diag):
    matrix = np.arange(16.0).reshape(2, 2, 4)[..., None].repeat(4, -1)[:, 0]
    got = gradkit.distributions.utils.tril_matrix_to_vec(gradkit.tensor(matrix), diag)
    expected = torch.distributions.utils.tril_matrix_to_vec(torch.tensor(matrix), diag)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    back = gradkit.distributions.utils.vec_to_tril_matrix(got, diag)
    np.testing.assert_array_equal(
        back.numpy(), torch.distributions.utils.vec_to_tril_matrix(expected, diag).numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.distributions.utils.vec_to_tril_matrix(m.ones(4)),
    lambda m: m.distributions.utils.vec_to_tril_matrix(m.ones(2), diag=-3),
    lambda m: m.distributions.utils.tril_matrix_to_vec(m.ones(3, 3), diag=3),
])
def test_tril_vec_helper_errors_as_torch(call):
    errors = []
    for m in (gradkit, torch):
        with pytest.raises((ValueError, RuntimeError)) as error:
            call(m)
        errors.append((type(error.value), str(error.value)))
    assert errors[0] == errors[1]


def test_transform_cache_returns_the_same_tensors():
    transform = gradkit.distributions.ExpTransform(cache_size=1)
    x = gradkit.tensor([0.5, 1.0])
    y = transform(x)
    assert transform(x) is y
    assert transform.inv(y) is x
    assert transform.with_cache(1) is transform
    assert transform.with_cache(0)._cache_size == 0
    assert transform.inv.with_cache(0).inv._cache_size == 0
    compose = gradkit.distributions.ComposeTransform([transform.inv, transform], cache_size=1)
    assert compose.parts[0]._cache_size == 1
    class Shift(gradkit.distributions.transforms.Transform):
        def __init__(self, by):
            super().__init__()
            self.by = by

    with pytest.raises(NotImplementedError, match="with_cache is not implemented"):
        Shift(1.0).with_cache(1)
    assert gradkit.distributions.ComposeTransform([]).event_dim == 0


def test_compose_repr_and_inverse_as_torch():
    reprs = []
    for m in (gradkit, torch):
        t = _d(m).ComposeTransform([_d(m).ExpTransform(), _d(m).AffineTransform(0.0, 2.0)])
        reprs.append((repr(t), repr(t.inv), repr(t.inv.inv is t)))
    assert reprs[0] == reprs[1]


# -- constraints --------------------------------------------------------------------------

CONSTRAINTS = {
    "real": lambda c: c.real, "positive": lambda c: c.positive,
    "nonnegative": lambda c: c.nonnegative, "unit_interval": lambda c: c.unit_interval,
    "boolean": lambda c: c.boolean, "nonnegative_integer": lambda c: c.nonnegative_integer,
    "positive_integer": lambda c: c.positive_integer,
    "integer_interval": lambda c: c.integer_interval(0, 2),
    "interval": lambda c: c.interval(-1, 0.5), "half_open": lambda c: c.half_open_interval(-1, 0.5),
    "greater_than": lambda c: c.greater_than(0.5),
    "greater_than_eq": lambda c: c.greater_than_eq(1),
    "less_than": lambda c: c.less_than(1.0), "real_vector": lambda c: c.real_vector,
    "simplex": lambda c: c.simplex, "one_hot": lambda c: c.one_hot,
    "independent": lambda c: c.independent(c.positive, 1),
    "multinomial": lambda c: c.multinomial(2),
    "lower_triangular": lambda c: c.lower_triangular, "lower_cholesky": lambda c: c.lower_cholesky,
    "corr_cholesky": lambda c: c.corr_cholesky, "square": lambda c: c.square,
    "symmetric": lambda c: c.symmetric, "positive_definite": lambda c: c.positive_definite,
    "positive_semidefinite": lambda c: c.positive_semidefinite,
    "cat": lambda c: c.cat([c.positive, c.real], 0, [1, 2]),
    "stack": lambda c: c.stack([c.positive, c.real, c.unit_interval], 0),
}
VALUES = [[0.0, 1.0, -1.0], [0.5, 0.5, 0.0], [2.0, math.nan, 1.0]]
MATRICES = [[[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [0.1, 0.2, 3.0]],
            [[1.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, -1.0]],
            [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]],
            [[1.0, 0.2, 0.0], [0.2, 2.0, 0.0], [0.0, 0.0, 0.5]]]


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_constraints_check_as_torch(name):
    results = []
    for m in (gradkit, torch):
        constraint = CONSTRAINTS[name](m.distributions.constraints)
        value = m.tensor(MATRICES if constraint.event_dim == 2 else VALUES, dtype=m.float64)
        results.append((repr(constraint), constraint.is_discrete, constraint.event_dim,
                        constraint.check(value).numpy().tolist()))
    assert results[0] == results[1]


def test_dependent_constraints_as_torch():
    for m in (gradkit, torch):
        c = m.distributions.constraints
        assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)
        assert c.dependent(is_discrete=True, event_dim=1).event_dim == 1
        assert c.is_dependent(m.distributions.Uniform.support)
        assert m.distributions.Uniform.support.event_dim == 0
        with pytest.raises(NotImplementedError, match=".is_discrete cannot be determined"):
            c.dependent.is_discrete  # noqa: B018
        with pytest.raises(AssertionError, match="must be a Constraint"):
            c.independent(1.0, 1)
        with pytest.raises(ValueError, match="Expected value.dim\\(\\) >= 2 but got 1"):
            c.independent(c.real, 2).check(m.ones(3))


# -- biject_to and transform_to -------------------------------------------------------------

REGISTERED = {
    "real": lambda c: c.real, "positive": lambda c: c.positive,
    "nonnegative": lambda c: c.nonnegative, "greater_than": lambda c: c.greater_than(1.5),
    "greater_than_eq": lambda c: c.greater_than_eq(-1.0), "less_than": lambda c: c.less_than(2.0),
    "unit_interval": lambda c: c.unit_interval, "interval": lambda c: c.interval(-1.0, 3.0),
    "half_open_interval": lambda c: c.half_open_interval(0.0, 2.0),
    "simplex": lambda c: c.simplex, "independent": lambda c: c.independent(c.positive, 1),
    "lower_cholesky": lambda c: c.lower_cholesky,
    "positive_definite": lambda c: c.positive_definite,
    "corr_cholesky": lambda c: c.corr_cholesky,
    "cat": lambda c: c.cat([c.positive, c.real], 0, [1, 2]),
    "stack": lambda c: c.stack([c.positive, c.unit_interval, c.real], 0),
}


@pytest.mark.parametrize("name", sorted(REGISTERED))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_constraint_registry_as_torch(name, registry):
    results = []
    for m in (gradkit, torch):
        constraint = REGISTERED[name](m.distributions.constraints)
        try:
            transform = getattr(m.distributions, registry)(constraint)
        except NotImplementedError as e:
            results.append(("raises", str(e)))
            continue
        matrix = name in ("lower_cholesky", "positive_definite")
        x = m.tensor(_MATRIX if matrix else [-1.0, 0.5, 2.0], dtype=m.float64)
        y = transform(x)
        results.append((repr(transform), y.numpy().round(12).tolist(),
                        bool(constraint.check(y).all())))
    assert results[0] == results[1]
    assert results[0][0] == "raises" or results[0][2]


def test_constraint_registry_errors_as_torch():
    for m in (gradkit, torch):
        with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
            m.distributions.biject_to(m.distributions.constraints.boolean)
        with pytest.raises(TypeError, match="Expected constraint to be either a Constraint"):
            m.distributions.biject_to.register(3, lambda c: None)


def _family(m, name, shape):
    """A distribution of the family ``name`` whose parameters have ``shape``."""
    def t(*values):
        return m.tensor(np.broadcast_to(np.array(values), shape).copy(), dtype=m.float64)
    d = m.distributions
    return {"Beta": lambda: d.Beta(t(2.0), t(1.5)),
            "ContinuousBernoulli": lambda: d.ContinuousBernoulli(t(0.3)),
            "Exponential": lambda: d.Exponential(t(1.5)),
            "Gamma": lambda: d.Gamma(t(2.0), t(1.5)),
            "Gumbel": lambda: d.Gumbel(t(0.2), t(1.5)),
            "Laplace": lambda: d.Laplace(t(0.2), t(1.5)),
            "Normal": lambda: d.Normal(t(0.2), t(1.5)),
            "Pareto": lambda: d.Pareto(t(1.0), t(3.0)),
            "Poisson": lambda: d.Poisson(t(1.5)),
            "Bernoulli": lambda: d.Bernoulli(t(0.3)),
            "Binomial": lambda: d.Binomial(10, t(0.3)),
            "Uniform": lambda: d.Uniform(t(0.0), t(1.0))}[name]()


def _infinite_pairs():
    from gradkit.distributions.kl_cross import _INFINITE_PAIRS
    return [(p.__name__, q.__name__) for p, _, qs in _INFINITE_PAIRS for q in qs]


@pytest.mark.parametrize("pair", _infinite_pairs(), ids="-".join)
def test_kl_of_the_infinite_pairs_is_infinite_shaped_like_p_as_torch(pair):
    """kl_cross's table of infinite pairs: torch's KL of each is inf too, shaped like p's
    parameter (not broadcast with q's)."""
    results = []
    for m in (gradkit, torch):
        p, q = _family(m, pair[0], (3, 1)), _family(m, pair[1], (2,))
        kl = m.distributions.kl_divergence(p, q)
        results.append((tuple(kl.shape), str(kl.dtype).split(".")[-1], kl.numpy()))
    (shape, dtype, values), (torch_shape, torch_dtype, torch_values) = results
    assert (shape, dtype) == (torch_shape, torch_dtype) == ((3, 1), "float64")
    assert np.all(np.isposinf(values)) and np.all(np.isposinf(torch_values))
