"""The rest of torch's test/distributions/test_distributions.py against gradkit and torch 2.13:
the Wishart / Dirichlet / Beta / ContinuousBernoulli / LKJCholesky tests, Independent's
shapes and expand, d(cdf)/dx, ExponentialFamily's Bregman entropy and KL, parameter
broadcasting (TestKL, TestAgainstScipy, TestRsample: ..._kl_scipy.py)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradkit  # noqa: E402
import test_distributions_torch_expectations as expectations  # noqa: E402
from test_distributions_torch_expectations import EXAMPLES, _as_gradkit, _built  # noqa: E402
from torch_expectations.outcome import assert_like_torch  # noqa: E402

_R = np.random.default_rng(0)
_TMP = _R.standard_normal((3, 10))
_COV = _TMP @ _TMP.T / 10
_TMPB = _R.standard_normal((6, 5, 3, 10))
_COVB = (_TMPB[..., :, None, :] * _TMPB[..., None, :, :]).mean(-1)
_DF = {"5": _R.uniform(size=5) + 3, "()": _R.uniform() + 3, "6x5": _R.uniform(size=(6, 5)) + 3}
_W = [[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 0.8]]


def _f(m, values):
    return m.tensor(np.asarray(values, dtype=np.float64), dtype=m.float64)


@pytest.mark.parametrize("df, kind, batched", [
    ("5", "covariance_matrix", False), ("6x5", "covariance_matrix", False),
    ("6x5", "covariance_matrix", True), ("5", "precision_matrix", False),
    ("()", "precision_matrix", True), ("5", "scale_tril", False), ("()", "scale_tril", True)])
def test_wishart_log_prob_gradients_as_torch(df, kind, batched):
    """torch: test_wishart_shape's gradchecks, as the gradients themselves."""
    def program(m):
        nu = _f(m, _DF[df]).requires_grad_()
        cov = _f(m, _COVB if batched else _COV)
        matrix = {"covariance_matrix": cov, "precision_matrix": m.linalg.inv(cov),
                  "scale_tril": m.linalg.cholesky(cov)}[kind].detach().requires_grad_()
        log_prob = m.distributions.Wishart(nu, **{kind: matrix}).log_prob(_f(m, _W))
        return [log_prob, m.autograd.grad(log_prob.sum(), [nu, matrix])]
    assert_like_torch(program, rtol=1e-9, atol=1e-12)


def _rbf(m, dtype):
    x = np.linspace(-2, 2, 10)
    return m.tensor(np.exp(-((x - x[:, None]) ** 2)), dtype=getattr(m, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_wishart_stable_with_precision_matrix_as_torch(dtype):
    def program(m):
        return m.distributions.Wishart(m.tensor(10), precision_matrix=_rbf(m, dtype)).scale_tril
    assert_like_torch(program, rtol=1e-5 if dtype == "float64" else 1e-3, atol=1e-5)


def test_wishart_log_prob_and_properties_as_torch():
    """torch: test_wishart_log_prob (df in (ndim - 1, ndim), the three parameterizations,
    batched = unbatched), test_wishart_properties."""
    tril = np.linalg.cholesky(_COV)
    draws = np.stack([tril @ (z @ z.T) @ tril.T for z in _R.standard_normal((20, 3, 4))])
    cov_batch = _COVB[0]

    def program(m):
        d, cov, x = m.distributions, _f(m, _COV), _f(m, draws)
        values = [d.Wishart(_f(m, 2.6), cov).log_prob(x),
                  d.Wishart(_f(m, 2.6), precision_matrix=m.linalg.inv(cov)).log_prob(x),
                  d.Wishart(_f(m, 2.6), scale_tril=m.linalg.cholesky(cov)).log_prob(x)]
        batched = d.Wishart(_f(m, _DF["5"]), _f(m, cov_batch)).log_prob(x[:, None])
        unbatched = m.stack([d.Wishart(_f(m, _DF["5"][i]), _f(m, cov_batch[i])).log_prob(x)
                             for i in range(5)]).t()
        assert bool(m.allclose(batched, unbatched))
        w = d.Wishart(df=_f(m, 4.3), scale_tril=_f(m, tril))
        return values + [batched, w.covariance_matrix, w.precision_matrix, w.scale_tril,
                         w.mean, w.variance, w.mode, w.entropy()]
    assert_like_torch(program, rtol=1e-9, atol=1e-12)


def test_wishart_moments():
    """torch: test_wishart_moments (df in (ndim - 1, ndim), as torch's: a low-df warning)."""
    gradkit.manual_seed(0)
    tril = gradkit.tensor([[1.0, 0, 0], [0.5, 1.2, 0], [-0.3, 0.2, 0.7]])
    with pytest.warns(UserWarning, match="Low df values detected"):
        wishart = gradkit.distributions.Wishart(df=gradkit.tensor(2.5), scale_tril=tril)
    draws = wishart.rsample((90000,))
    np.testing.assert_allclose(draws.mean(0).numpy(), wishart.mean.numpy(), atol=0.5)
    np.testing.assert_allclose(draws.var(0).numpy(), wishart.variance.numpy(), atol=0.5)


# a float32 Bartlett draw of test_wishart_moments: eigenvalue -2e-9, NumPy's potrf refuses it,
# torch's (LAPACK's unblocked potf2) factors it; gradkit raised LinAlgError from rsample
_NEARLY_SINGULAR = [[0.8152487277984619, 0.16360799968242645, 0.5341378450393677],
                    [0.16360799968242645, 0.057654716074466705, 0.3220284879207611],
                    [0.5341378450393677, 0.3220284879207611, 2.2094318866729736]]


def test_cholesky_of_a_nearly_singular_draw_as_torch():
    from cpu_kernels import torch_runs_avx512_kernels  # (it needs torch, as this test)
    if torch_runs_avx512_kernels():
        pytest.skip("MKL's AVX-512 potrf finds this float32 matrix not positive-definite by "
                    "rounding; its AVX2 one (CI's CPUs) factors it, as gradkit")

    def program(m):
        x = m.tensor(_NEARLY_SINGULAR, requires_grad=True)
        lower = m.linalg.cholesky(x)
        return [lower, m.autograd.grad(lower.sum(), x)[0], m.linalg.cholesky_ex(x).info,
                m.distributions.constraints.positive_definite.check(x)]
    assert_like_torch(program, rtol=1e-5, atol=1e-6)


_ALPHA5 = np.exp(_R.standard_normal(5))
_DIRICHLET_POINTS = _R.dirichlet(_ALPHA5, 10)
_C1, _C0 = np.exp(_R.standard_normal(30)), np.exp(_R.standard_normal(30))
_BETA_POINTS = _R.beta(_C1, _C0)

PROGRAMS = {
    "dirichlet-shapes": lambda m: [tuple(m.distributions.Dirichlet(m.ones(*b)).sample(s).shape)
                                   for b in [(2, 3), (4,)] for s in [(), (5,), (1,)]],
    "dirichlet-log-prob": lambda m: m.distributions.Dirichlet(_f(m, _ALPHA5)).log_prob(
        _f(m, _DIRICHLET_POINTS)),
    "dirichlet-log-prob-zero": lambda m: m.distributions.Dirichlet(m.tensor([1, 2])).log_prob(
        m.tensor([0, 1])),
    "dirichlet-mode": lambda m: [m.distributions.Dirichlet(m.tensor(c, dtype=dtype)).mode
                                 for c in ([2, 2, 1], [3, 2, 1], [0.5, 0.2, 0.2], [1, 1, 1])
                                 for dtype in (m.float32, m.float64)],
    "beta-shapes": lambda m: [tuple(m.distributions.Beta(*a).sample(s).shape) for a in [
        (m.ones(2, 3), m.ones(2, 3)), (m.ones(4), m.ones(4)), (0.1, 0.3)] for s in [(), (5,)]],
    "beta-log-prob": lambda m: [m.distributions.Beta(float(a), float(b)).log_prob(float(x))
                                for a, b, x in zip(_C1, _C0, _BETA_POINTS)],
    "beta-tiny-concentrations": lambda m: [bool((x.isfinite() & (x > 0)).all()) for x in (
        m.distributions.Beta(m.tensor([1e-6], dtype=t), m.tensor([1e-6], dtype=t)).sample()
        for t in (m.float32, m.float64))],
    "continuous-bernoulli": lambda m: [
        tuple(m.distributions.ContinuousBernoulli(_f(m, [0.7, 0.2, 0.4])).sample((8,)).shape),
        m.distributions.ContinuousBernoulli(_f(m, [0.7, 0.2, 0.4])).entropy(),
        m.distributions.ContinuousBernoulli(_f(m, [0.0])).entropy(),
        m.distributions.ContinuousBernoulli(m.tensor([0.0])).entropy(),
        [tuple(m.distributions.ContinuousBernoulli(m.full((2, 3, 5), 0.5)).sample(s).shape)
         for s in [(), (2, 5), (2,)]]],
    "gamma-log-prob-at-zero": lambda m: [m.distributions.Gamma(c, 1).log_prob(0)
                                         for c in (0.5, 1, 2)],
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_as_torch(name):
    """torch: test_dirichlet_*, test_beta_*, test_continuous_bernoulli(_3d),
    test_gamma_log_prob_at_boundary."""
    assert_like_torch(PROGRAMS[name], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_beta_underflow(dtype):
    """torch: test_beta_underflow: no draw of Beta(0.01, 0.01) is 0 or 1; half sit near each."""
    gradkit.manual_seed(1)
    conc = gradkit.tensor(1e-2, dtype=getattr(gradkit, dtype))
    draws = gradkit.distributions.Beta(conc, conc).sample([50000]).numpy()
    assert not ((draws == 0) | (draws == 1)).any()
    assert abs((draws < 0.1).mean() - 0.5) < 0.05 and abs((draws > 0.9).mean() - 0.5) < 0.05


def _corr_of_cholesky(m):
    utils = m.distributions.utils

    def corr(x):
        x = utils.vec_to_tril_matrix(x, -1)
        x = x + (1 - (x * x).sum(-1)).sqrt().diag_embed()
        return utils.tril_matrix_to_vec(x @ x.T, -1)
    return corr


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_lkj_cholesky_log_prob_as_torch(dim):
    """torch: test_lkj_cholesky_log_prob: with concentration 1 the density of the correlation
    matrix (log_prob less log|det J| of L -> L L^T) is one constant (log 0.5 for dim 2)."""
    factors = [np.linalg.cholesky(np.corrcoef(_R.standard_normal((dim, dim + 2))))
               for _ in range(2)]

    def program(m):
        lkj = m.distributions.LKJCholesky(dim, concentration=1.0, validate_args=True)
        found = []
        for factor in factors:
            sample = _f(m, factor)
            jacobian = m.autograd.functional.jacobian(
                _corr_of_cholesky(m), m.distributions.utils.tril_matrix_to_vec(sample, -1))
            found.append(lkj.log_prob(sample) - m.linalg.slogdet(jacobian).logabsdet)
        assert bool(m.allclose(found[0], found[1]))
        if dim == 2:  # (torch compares with float32's log(0.5): within allclose's rtol)
            assert abs(found[0].item() - math.log(0.5)) < 1e-5
        with pytest.raises(ValueError, match="The right-most size of value must match"):
            lkj.log_prob(m.cat([sample, sample.new_ones(1, dim)], 0))
        return found
    assert_like_torch(program, rtol=1e-10, atol=1e-12)


def _value(name):
    torch.manual_seed(0)
    return _built(name, torch)[0].sample().detach()


@pytest.mark.parametrize("name", EXAMPLES)
def test_independent_shape_and_expand_as_torch(name):
    """torch: test_independent_shape, test_independent_expand over every example."""
    value = _value(name)

    def program(m):
        base, x = _built(name, m)[0], value if m is torch else _as_gradkit(value)
        found = []
        for ndims in range(len(base.batch_shape) + 1):
            dist = m.distributions.Independent(base, ndims)
            found += [dist.log_prob(x), tuple(dist.sample().shape), dist.has_rsample]
            for statistic in ("enumerate_support", "mean", "variance", "entropy"):
                try:
                    value_of = getattr(dist, statistic)
                    found.append(tuple((value_of() if callable(value_of) else value_of).shape))
                except NotImplementedError:
                    found.append("NotImplementedError")
            for shape in [(), (2,), (2, 3)]:
                wide = dist.expand(shape + tuple(dist.batch_shape))
                found += [tuple(wide.sample().shape), wide.log_prob(x),
                          tuple(wide.batch_shape), tuple(wide.event_shape)]
        return found
    assert_like_torch(program, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", EXAMPLES)
def test_cdf_derivative_and_exponential_family_as_torch(name, monkeypatch):
    """torch: test_cdf_log_prob (d cdf/dx, parameters detached as torch's test does),
    test_entropy_exponential_family and test_kl_exponential_family (Bregman forms)."""
    value = _value(name)
    made = expectations._t
    monkeypatch.setattr(expectations, "_t", lambda m, values, grad=False: made(m, values))

    def program(m):
        dist = _built(name, m)[0]
        x = (value if m is torch else _as_gradkit(value)).clone()
        found = []
        if not dist.support.is_discrete:
            x.requires_grad_()
        try:
            cdf = dist.cdf(x)
            found.append(m.autograd.grad(cdf.sum(), [x])[0] if x.requires_grad else cdf)
        except NotImplementedError:
            found.append("NotImplementedError")
        family = m.distributions.ExponentialFamily
        if isinstance(dist, family):
            for bregman in (lambda: family.entropy(dist),
                            lambda: m.distributions.kl._kl_expfamily_expfamily(dist, dist)):
                try:
                    found.append(bregman())
                except NotImplementedError:
                    found.append("NotImplementedError")
        return found
    assert_like_torch(program, rtol=1e-6, atol=1e-9)  # (float32 examples: an ulp)


BROADCASTS = {  # torch: test_valid_parameter_broadcasting / test_invalid_parameter_broadcasting
    "valid": lambda m: [tuple(d.sample((2,)).shape) for d in [
        m.distributions.Normal(m.tensor([0.0, 0.0]), m.tensor([[1.0], [1.0]])),
        m.distributions.FisherSnedecor(m.tensor([1.0, 1.0]), m.tensor([[1.0]])),
        m.distributions.Gamma(m.tensor([1.0, 1.0]), m.tensor([[1.0], [1.0], [1.0]])),
        m.distributions.Kumaraswamy(m.tensor([1.0]), m.tensor([[1.0]])),
        m.distributions.Pareto(scale=m.tensor([1.0, 1.0]), alpha=1),
        m.distributions.StudentT(df=1.0, loc=m.zeros(5, 1), scale=m.ones(3))]],
    "Normal": lambda m: m.distributions.Normal(m.tensor([[0, 0]]), m.tensor([1, 1, 1, 1])),
    "Normal-3d": lambda m: m.distributions.Normal(m.tensor([[[0, 0, 0], [0, 0, 0]]]),
                                                  m.tensor([1, 1])),
    "FisherSnedecor": lambda m: m.distributions.FisherSnedecor(m.tensor([1, 1]),
                                                               m.tensor([1, 1, 1])),
    "Gamma": lambda m: m.distributions.Gamma(m.tensor([0, 0]), m.tensor([1, 1, 1])),
    "Kumaraswamy": lambda m: m.distributions.Kumaraswamy(m.tensor([[1, 1]]),
                                                         m.tensor([1, 1, 1, 1])),
    "Laplace": lambda m: m.distributions.Laplace(m.tensor([0, 0]), m.tensor([1, 1, 1])),
    "Pareto": lambda m: m.distributions.Pareto(m.tensor([1, 1]), m.tensor([1, 1, 1])),
    "StudentT": lambda m: m.distributions.StudentT(m.tensor([1.0, 1.0]),
                                                   scale=m.tensor([1.0, 1.0, 1.0])),
}


@pytest.mark.parametrize("name", BROADCASTS)
def test_parameter_broadcasting_as_torch(name):
    """Invalid ones raise broadcast_tensors' RuntimeError, with its words (gradkit used
    broadcast_shapes' "Attempting to broadcast a dimension of length 4 at -1!")."""
    assert_like_torch(BROADCASTS[name])
    if name != "valid":
        with pytest.raises(RuntimeError, match=r"The size of tensor a \(\d\) must match"):
            BROADCASTS[name](gradkit)


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (2, 4, 4), (2, 2, 4, 4)], ids=str)
def test_tril_matrix_to_vec_round_trip_as_torch(shape):
    """torch: test/distributions/test_utils.py::test_tril_matrix_to_vec, every diagonal."""
    matrix = np.random.default_rng(len(shape)).standard_normal(shape)

    def program(m):
        utils, found = m.distributions.utils, []
        for diag in range(-shape[-1], shape[-1]):
            lower = _f(m, matrix).tril(diag)
            vec = utils.tril_matrix_to_vec(lower, diag)
            assert bool(m.allclose(utils.vec_to_tril_matrix(vec, diag), lower))
            found.append(vec)
        return found
    assert_like_torch(program)
