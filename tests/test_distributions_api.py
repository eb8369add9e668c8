"""gradkit.distributions against torch: the errors of argument and sample validation (type
and text), reparameterized gradients given the same noise, the implicit gamma gradient,
enumerate_support, sample_n and the module's missing names."""
import math
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradkit
from gradkit.distributions.dirichlet_sampling import dirichlet_grad
from gradkit.distributions.gamma_sampling import _standard_gamma_grad, standard_gamma

torch = pytest.importorskip("torch")


def _outcome(program, m):
    try:
        result = program(m)
    except Exception as e:  # noqa: BLE001 - the error is the outcome under test
        return ("raises", type(e).__name__, str(e).replace("gradkit.", "torch."))
    return ("ok", result.detach().numpy())


def _d(m):
    return m.distributions


ERRORS = {
    "scale-not-positive": lambda m: _d(m).Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, -1.0])),
    "scale-number": lambda m: _d(m).Normal(0.0, -1.0),
    "probs-above-one": lambda m: _d(m).Bernoulli(probs=1.5),
    "neither-probs-nor-logits": lambda m: _d(m).Bernoulli(),
    "probs-and-logits": lambda m: _d(m).Geometric(probs=0.5, logits=0.0),
    "categorical-0d": lambda m: _d(m).Categorical(probs=m.tensor(0.5)),
    "categorical-logits-0d": lambda m: _d(m).Categorical(logits=m.tensor(0.5)),
    "categorical-negative": lambda m: _d(m).Categorical(probs=m.tensor([-0.1, 1.1])),
    "categorical-nan-logits": lambda m: _d(m).Categorical(logits=m.tensor([math.nan, 1.0])),
    "uniform-low-above-high": lambda m: _d(m).Uniform(1.0, 0.0),
    "dirichlet-0d": lambda m: _d(m).Dirichlet(m.tensor(1.0)),
    "dirichlet-negative": lambda m: _d(m).Dirichlet(m.tensor([1.0, -1.0])),
    "mvn-0d-loc": lambda m: _d(m).MultivariateNormal(m.tensor(0.0), m.eye(1)),
    "mvn-no-matrix": lambda m: _d(m).MultivariateNormal(m.zeros(2)),
    "mvn-two-matrices": lambda m: _d(m).MultivariateNormal(m.zeros(2), m.eye(2),
                                                           scale_tril=m.eye(2)),
    "mvn-1d-scale_tril": lambda m: _d(m).MultivariateNormal(m.zeros(2), scale_tril=m.ones(2)),
    "mvn-1d-covariance": lambda m: _d(m).MultivariateNormal(m.zeros(2), m.ones(2)),
    "mvn-1d-precision": lambda m: _d(m).MultivariateNormal(m.zeros(2),
                                                           precision_matrix=m.ones(2)),
    "mvn-not-positive-definite": lambda m: _d(m).MultivariateNormal(
        m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "mvn-not-lower": lambda m: _d(m).MultivariateNormal(m.zeros(2),
                                                        scale_tril=m.ones(2, 2)),
    "geometric-zero": lambda m: _d(m).Geometric(probs=m.tensor([0.0, 0.5])),
    "binomial-negative-count": lambda m: _d(m).Binomial(-1, probs=0.5),
    "poisson-negative": lambda m: _d(m).Poisson(m.tensor([-1.0])),
    "gamma-zero": lambda m: _d(m).Gamma(0.0, 1.0),
    "studentt-df": lambda m: _d(m).StudentT(m.tensor([-1.0, 2.0])),
    "independent-too-many": lambda m: _d(m).Independent(
        _d(m).Normal(m.zeros(2), m.ones(2)), 2),
    "outside-support": lambda m: _d(m).Exponential(1.0).log_prob(m.tensor(-1.0)),
    "outside-support-cdf": lambda m: _d(m).Beta(2.0, 3.0).cdf(m.tensor([0.5, 1.5])),
    "not-a-tensor": lambda m: _d(m).Normal(0.0, 1.0).log_prob(0.5),
    "event-shape": lambda m: _d(m).Dirichlet(m.ones(3)).log_prob(m.tensor([0.5, 0.5])),
    "not-broadcastable": lambda m: _d(m).Normal(m.zeros(3), m.ones(3)).log_prob(m.zeros(2)),
    "categorical-value": lambda m: _d(m).Categorical(m.ones(3)).log_prob(m.tensor(3)),
    "one-hot-value": lambda m: _d(m).OneHotCategorical(m.ones(3)).log_prob(
        m.tensor([1.0, 1.0, 0.0])),
    "transforms-not-list": lambda m: _d(m).TransformedDistribution(_d(m).Normal(0.0, 1.0), "x"),
    "transforms-not-transforms": lambda m: _d(m).TransformedDistribution(
        _d(m).Normal(0.0, 1.0), [1]),
    "binomial-inhomogeneous": lambda m: _d(m).Binomial(
        m.tensor([2.0, 3.0]), probs=m.tensor([0.5, 0.5])).enumerate_support(),
    "binomial-inhomogeneous-entropy": lambda m: _d(m).Binomial(
        m.tensor([2.0, 3.0]), probs=m.tensor([0.5, 0.5])).entropy(),
    "independent-enumerate": lambda m: _d(m).Independent(
        _d(m).Bernoulli(m.ones(2) / 2), 1).enumerate_support(),
    "cache-size": lambda m: _d(m).ExpTransform(cache_size=2),
    "dependent-check": lambda m: _d(m).constraints.dependent.check(m.ones(1)),
    "dependent-event-dim": lambda m: _d(m).constraints.dependent.event_dim,
    "generalized-pareto-float64": lambda m: _d(m).GeneralizedPareto(
        m.zeros(2, dtype=m.float64), 1.0, 0.5).log_prob(m.ones(2, dtype=m.float64)),
    "continuous-bernoulli-probs": lambda m: _d(m).ContinuousBernoulli(
        m.tensor([1.5]), validate_args=False),
    "continuous-bernoulli-probs-checked": lambda m: _d(m).ContinuousBernoulli(
        m.tensor([1.5]), validate_args=True),
    "wishart-two-matrices": lambda m: _d(m).Wishart(3.0, m.eye(2), scale_tril=m.eye(2)),
    "wishart-1d": lambda m: _d(m).Wishart(3.0, scale_tril=m.ones(2)),
    "wishart-low-df": lambda m: _d(m).Wishart(m.tensor([0.5]), m.eye(2)),
    "lkj-dim": lambda m: _d(m).LKJCholesky(1),
    "lkj-concentration": lambda m: _d(m).LKJCholesky(3, -1.0),
    "no-validation": lambda m: _d(m).Normal(0.0, -1.0, validate_args=False).log_prob(
        m.tensor([0.5])),
    "no-validation-sample": lambda m: _d(m).Exponential(1.0, validate_args=False).log_prob(
        m.tensor(-1.0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_validation_errors_match_torch(name):
    got, expected = _outcome(ERRORS[name], gradkit), _outcome(ERRORS[name], torch)
    assert got[0] == expected[0]
    if got[0] == "raises":
        assert got[1:] == expected[1:]
    else:
        np.testing.assert_allclose(got[1], expected[1], equal_nan=True)


def test_set_default_validate_args_turns_validation_off_for_every_distribution():
    with pytest.raises(ValueError):
        gradkit.distributions.Distribution.set_default_validate_args(3)
    gradkit.distributions.Distribution.set_default_validate_args(False)
    try:
        dist = gradkit.distributions.Normal(0.0, -1.0)
        assert math.isnan(dist.log_prob(gradkit.tensor(0.0)).item())
    finally:
        gradkit.distributions.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        gradkit.distributions.Normal(0.0, -1.0)


def test_sample_n_warns_as_torch():
    for m in (gradkit, torch):
        with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated"):
            assert tuple(_d(m).Normal(m.zeros(2), m.ones(2)).sample_n(3).shape) == (3, 2)


@pytest.mark.parametrize("build", [
    lambda m: _d(m).Bernoulli(m.tensor([0.2, 0.7])),
    lambda m: _d(m).Categorical(m.tensor([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])),
    lambda m: _d(m).OneHotCategorical(m.tensor([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])),
    lambda m: _d(m).Binomial(3, m.tensor([0.2, 0.7])),
    lambda m: _d(m).Independent(_d(m).Bernoulli(m.tensor([0.2, 0.7])), 0),
], ids=["Bernoulli", "Categorical", "OneHotCategorical", "Binomial", "Independent"])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_matches_torch(build, expand):
    got, expected = build(gradkit).enumerate_support(expand), build(torch).enumerate_support(
        expand)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_missing_distributions_name_their_torch_feature():
    with pytest.raises(AttributeError, match="gradkit does not implement "
                                             "torch.distributions.relaxed_bernoulli"):
        gradkit.distributions.relaxed_bernoulli  # noqa: B018 - the lookup is what raises


# -- reparameterized samples: the same noise gives torch's value and gradients ------------

def _normal_noise(shape):
    return gradkit.randn(shape, dtype=gradkit.float64)


def _uniform_noise(shape):
    return gradkit.rand(shape, dtype=gradkit.float64)


def _laplace_noise(shape):
    eps = float(np.finfo(np.float64).eps)
    return gradkit.empty(shape, dtype=gradkit.float64).uniform_(eps - 1, 1)


def _exponential_noise(shape):
    return gradkit.empty(shape, dtype=gradkit.float64).exponential_()


def _cauchy_noise(shape):
    return gradkit.empty(shape, dtype=gradkit.float64).cauchy_()


def _clamped(u, t):
    eps = float(np.finfo(np.float64).eps)
    return u.clamp(min=eps, max=1 - eps)


# (builder, its parameters, the noise it draws, torch's rsample formula on that noise)
RSAMPLES = {
    "Normal": (lambda m, p: _d(m).Normal(p[0], p[1]), ([0.3, -1.0], [0.5, 2.0]),
               _normal_noise, lambda t, p, e: p[0] + e * p[1]),
    "Uniform": (lambda m, p: _d(m).Uniform(p[0], p[1]), ([0.3, -1.0], [0.5, 2.0]),
                _uniform_noise, lambda t, p, e: p[0] + e * (p[1] - p[0])),
    "Exponential": (lambda m, p: _d(m).Exponential(p[0]), ([0.5, 2.0],),
                    _exponential_noise, lambda t, p, e: e / p[0]),
    "Laplace": (lambda m, p: _d(m).Laplace(p[0], p[1]), ([0.3, -1.0], [0.5, 2.0]),
                _laplace_noise, lambda t, p, e: p[0] - p[1] * e.sign() * t.log1p(-e.abs())),
    "Cauchy": (lambda m, p: _d(m).Cauchy(p[0], p[1]), ([0.3, -1.0], [0.5, 2.0]),
               _cauchy_noise, lambda t, p, e: p[0] + e * p[1]),
    "LogNormal": (lambda m, p: _d(m).LogNormal(p[0], p[1]), ([0.3, -1.0], [0.5, 2.0]),
                  _normal_noise, lambda t, p, e: (p[0] + e * p[1]).exp()),
    "HalfNormal": (lambda m, p: _d(m).HalfNormal(p[0]), ([0.5, 2.0],),
                   _normal_noise, lambda t, p, e: (e * p[0]).abs()),
    "MultivariateNormal": (
        lambda m, p: _d(m).MultivariateNormal(p[0], scale_tril=p[1]),
        ([0.3, -1.0], [[1.0, 0.0], [0.4, 0.7]]), _normal_noise,
        lambda t, p, e: p[0] + (p[1] @ e.unsqueeze(-1)).squeeze(-1)),
    "RelaxedBernoulli": (
        lambda m, p: _d(m).RelaxedBernoulli(p[0], probs=p[1]), (0.6, [0.3, 0.8]),
        _uniform_noise,
        lambda t, p, e: t.sigmoid((_clamped(e, t).logit() + p[1].logit()) / p[0]).clamp(
            min=float(np.finfo(np.float64).tiny), max=1 - float(np.finfo(np.float64).eps))),
    "RelaxedOneHotCategorical": (
        lambda m, p: _d(m).RelaxedOneHotCategorical(p[0], logits=p[1]),
        (0.6, [0.3, -0.8, 1.0]), _uniform_noise,
        lambda t, p, e: t.softmax((p[1] - p[1].logsumexp(-1, keepdim=True)
                                   - (-_clamped(e, t).log()).log()) / p[0], -1)),
}


@pytest.mark.parametrize("name", sorted(RSAMPLES))
def test_rsample_gradient_matches_torch_given_the_same_noise(name):
    build, params, draw_noise, torch_formula = RSAMPLES[name]
    leaves = [gradkit.tensor(p, dtype=gradkit.float64, requires_grad=True) for p in params]
    dist = build(gradkit, leaves)
    gradkit.manual_seed(7)
    sample = dist.rsample((5,))
    weights = np.linspace(0.5, 1.5, sample.numel()).reshape(tuple(sample.shape))
    grads = gradkit.autograd.grad((sample * gradkit.tensor(weights)).sum(), leaves)
    gradkit.manual_seed(7)
    noise = torch.tensor(draw_noise(tuple(sample.shape)).numpy())
    t_leaves = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    expected = torch_formula(torch, t_leaves, noise)
    t_grads = torch.autograd.grad((expected * torch.tensor(weights)).sum(), t_leaves)
    np.testing.assert_allclose(sample.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    for got, want in zip(grads, t_grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


# -- the implicit gamma gradient ---------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_standard_gamma_grad_matches_torch_in_each_regime(dtype):
    # small x (Taylor series), alpha > 8 near and away from the mean (saddle point), the rest
    alpha = np.array([0.05, 0.5, 1.0, 3.0, 7.9, 8.5, 20.0, 100.0])[:, None]
    x = alpha * np.array([0.01, 0.3, 0.95, 1.05, 1.8, 4.0])[None, :] + np.array(
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.5])
    x, alpha = np.broadcast_arrays(x, alpha)
    got = _standard_gamma_grad(gradkit.tensor(alpha, dtype=getattr(gradkit, dtype)),
                               gradkit.tensor(x, dtype=getattr(gradkit, dtype)))
    expected = torch._standard_gamma_grad(torch.tensor(alpha, dtype=getattr(torch, dtype)),
                                          torch.tensor(x, dtype=getattr(torch, dtype)))
    assert str(got.dtype).split(".")[-1] == dtype
    np.testing.assert_allclose(got.numpy(), expected.numpy(),
                               rtol=1e-12 if dtype == "float64" else 1e-6)


def test_gamma_rsample_gradient_is_torchs_implicit_gradient():
    concentration = gradkit.tensor([0.3, 2.0, 12.0], dtype=gradkit.float64, requires_grad=True)
    rate = gradkit.tensor([1.5, 0.5, 2.0], dtype=gradkit.float64, requires_grad=True)
    sample = gradkit.distributions.Gamma(concentration, rate).rsample((4,))
    assert sample.grad_fn is not None
    d_concentration, d_rate = gradkit.autograd.grad(sample.sum(), [concentration, rate])
    standard = torch.tensor((sample * rate).detach().numpy())
    t_concentration = torch.tensor([0.3, 2.0, 12.0], dtype=torch.float64)
    t_rate = torch.tensor([1.5, 0.5, 2.0], dtype=torch.float64)
    expected_concentration = (torch._standard_gamma_grad(t_concentration.expand(4, 3), standard)
                              / t_rate).sum(0)
    expected_rate = (-standard / t_rate**2).sum(0)
    np.testing.assert_allclose(d_concentration.numpy(), expected_concentration.numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(d_rate.numpy(), expected_rate.numpy(), rtol=1e-10)


def test_standard_gamma_node_and_double_backward_as_torch():
    for m, draw in ((gradkit, standard_gamma), (torch, torch._standard_gamma)):
        alpha = m.tensor([0.5, 2.0], dtype=m.float64, requires_grad=True)
        sample = draw(alpha)
        assert type(sample.grad_fn).__name__ == "StandardGammaBackward0" or \
            sample.grad_fn.name() == "StandardGammaBackward0"
        (first,) = m.autograd.grad(sample.sum(), alpha, create_graph=True)
        with pytest.raises(NotImplementedError) as error:
            first.sum().backward()
        assert str(error.value) == "the derivative for '_standard_gamma_grad' is not implemented."


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dirichlet_grad_matches_torch_in_each_regime(dtype):
    rng = np.random.default_rng(0)
    # small and large concentrations reach every branch: near 0, near 1, both large, the rest
    alpha = np.concatenate([rng.uniform(0.05, 3.0, (150, 3)), rng.uniform(6.5, 40.0, (150, 3))])
    x = np.clip(np.concatenate([rng.dirichlet([0.3, 0.3, 0.3], 150), rng.dirichlet(
        [20.0, 20.0, 20.0], 150)]), 1e-6, 1 - 1e-6)
    total = alpha.sum(-1, keepdims=True) * np.ones((1, 3))
    got = dirichlet_grad(*(gradkit.tensor(v, dtype=getattr(gradkit, dtype))
                           for v in (x, alpha, total)))
    expected = torch._dirichlet_grad(*(torch.tensor(v, dtype=getattr(torch, dtype))
                                       for v in (x, alpha, total)))
    # torch's kernel computes the series of its float32 version in float32
    np.testing.assert_allclose(got.numpy(), expected.numpy(),
                               rtol=1e-11 if dtype == "float64" else 1e-4, atol=1e-12)


@pytest.mark.parametrize("beta", [False, True], ids=["Dirichlet", "Beta"])
def test_dirichlet_rsample_gradient_is_torchs(beta):
    values = [[0.5, 2.0, 3.0], [7.0, 9.0, 0.8]] if not beta else [[0.7, 2.0], [8.0, 9.5]]
    concentration = gradkit.tensor(values, dtype=gradkit.float64, requires_grad=True)
    if beta:
        dist = gradkit.distributions.Beta(concentration[:, 0], concentration[:, 1])
    else:
        dist = gradkit.distributions.Dirichlet(concentration)
    sample = dist.rsample((3,))
    weights = np.linspace(0.5, 1.5, sample.numel()).reshape(tuple(sample.shape))
    (got,) = gradkit.autograd.grad((sample * gradkit.tensor(weights)).sum(), concentration)
    # torch's _Dirichlet backward on the same draws
    full = sample.detach().numpy()
    full = np.stack([full, 1 - full], -1) if beta else full
    g = np.stack([weights, np.zeros_like(weights)], -1) if beta else weights
    x, g = torch.tensor(full), torch.tensor(g)
    alpha = torch.tensor(values, dtype=torch.float64).expand_as(x)
    grad = torch._dirichlet_grad(x, alpha, alpha.sum(-1, True).expand_as(alpha))
    expected = (grad * (g - (x * g).sum(-1, True))).sum(0)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10)


def test_dirichlet_node_and_double_backward_as_torch():
    has_graph = []
    for m in (gradkit, torch):
        concentration = m.tensor([0.5, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        sample = m.distributions.Dirichlet(concentration).rsample()
        assert sample.grad_fn.name() == "_DirichletBackward"
        assert abs(float(sample.sum()) - 1) < 1e-12 and float(sample.min()) > 0
        (first,) = m.autograd.grad(sample[0], concentration, create_graph=True)
        has_graph.append(first.requires_grad)  # torch: once_differentiable, no graph
    assert has_graph == [False, False]


def test_von_mises_samples_have_the_circular_mean_and_concentration():
    loc = gradkit.tensor([0.3, -2.9, 2.0], dtype=gradkit.float64)
    dist = gradkit.distributions.VonMises(loc, gradkit.tensor([0.5, 4.0, 12.0],
                                                              dtype=gradkit.float64))
    angles = dist.sample((20000,)).numpy()
    assert angles.min() >= -math.pi and angles.max() <= math.pi
    direction = np.arctan2(np.sin(angles).mean(0), np.cos(angles).mean(0))
    np.testing.assert_allclose(direction, loc.numpy(), atol=0.06)
    # the mean resultant length is I1(k) / I0(k), that is 1 - variance
    length = np.hypot(np.sin(angles).mean(0), np.cos(angles).mean(0))
    np.testing.assert_allclose(length, 1 - dist.variance.numpy(), atol=0.015)


def test_samples_follow_gradkit_manual_seed():
    dist = gradkit.distributions.Gamma(gradkit.tensor([0.5, 2.0]), 1.0)
    gradkit.manual_seed(11)
    first = dist.sample((3,))
    gradkit.manual_seed(11)
    np.testing.assert_array_equal(first.numpy(), dist.sample((3,)).numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(first.min()) > 0


TORCH_PROGRAM = '''\
import torch
import torch.distributions as dist
from torch.distributions import Normal, kl_divergence
from torch.distributions.transforms import ExpTransform
from torch.distributions import constraints

loc = torch.tensor([0.0, 1.0], requires_grad=True)
scale = torch.tensor([1.0, 2.0], requires_grad=True)
p = Normal(loc, scale)
eps = torch.tensor([[0.3, -1.2], [0.5, 0.1]])
x = loc + eps * scale                       # the reparameterization, on fixed noise
elbo = p.log_prob(x).sum() - kl_divergence(p, dist.Normal(0.0, 1.0)).sum()
elbo.backward()
print(elbo.item(), loc.grad, scale.grad)
g = dist.Gamma(torch.tensor([0.5, 3.0]), torch.tensor(2.0))
print(g.log_prob(torch.tensor([0.2, 1.0])), g.cdf(torch.tensor([0.2, 1.0])), g.entropy())
mvn = dist.MultivariateNormal(torch.zeros(2), torch.tensor([[2.0, 0.3], [0.3, 1.0]]))
print(mvn.log_prob(torch.tensor([0.5, -0.5])), constraints.positive, ExpTransform().inv)
'''


def test_a_torch_program_runs_unchanged_on_gradkit(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(TORCH_PROGRAM, encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    outputs = []
    for runner in ([], ["-m", "gradkit.utils.as_torch"]):
        done = subprocess.run([sys.executable, *runner, str(script)], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path,
                              env={"PYTHONPATH": str(root), "OMP_NUM_THREADS": "1",
                                   "PATH": ""})
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    expected, got = outputs
    numbers = r"-?\d+\.\d+(?:e[-+]\d+)?"
    assert re.sub(numbers, "#", got) == re.sub(numbers, "#", expected)
    np.testing.assert_allclose([float(v) for v in re.findall(numbers, got)],
                               [float(v) for v in re.findall(numbers, expected)], rtol=1e-5)


def test_user_subclasses_behave_as_torchs():
    for m in (gradkit, torch):
        class MyNormal(m.distributions.Normal):
            def __init__(self, loc):
                super().__init__(loc, 1.0)

        with pytest.raises(NotImplementedError, match="Subclass MyNormal of Normal that defines "
                                                      "a custom __init__ method must also "
                                                      "define a custom .expand\\(\\) method."):
            MyNormal(m.zeros(2)).expand((3, 2))

        class Bare(m.distributions.Distribution):
            pass

        with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
            bare = Bare(validate_args=True)
        with pytest.warns(UserWarning, match="does not define `support`"):
            bare._validate_sample(m.zeros(()))
        with pytest.raises(NotImplementedError, match="does not implement mode"):
            bare.mode  # noqa: B018
        with pytest.raises(NotImplementedError):
            bare.expand((2,))
