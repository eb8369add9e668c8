"""gradkit.distributions against torch.distributions, case by case (distribution_cases.py):
values, dtypes and shapes of every statistic and their gradients in the parameters, gradcheck
and gradgradcheck of log_prob, expand, float32, and the samples' shapes, dtypes, support and
moments."""
import numpy as np
import pytest

import gradkit
from distribution_cases import CASES
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

STATISTICS = ("mean", "variance", "stddev", "mode", "entropy", "cdf", "icdf", "perplexity")


def _host(t):
    return t.detach().numpy() if isinstance(t, gradkit.Tensor) else t.detach().cpu().numpy()


def _statistic(m, dist, name, case, dtype=None):
    """("ok", array, dtype name) or ("raises", error type name) of one statistic."""
    try:
        if name == "cdf":
            out = dist.cdf(case.value_of(m, dtype))
        elif name == "icdf":
            if case.quantile is None:
                return ("skipped",)
            out = dist.icdf(m.tensor(case.quantile, dtype=getattr(m, dtype or case.dtype)))
        elif name in ("entropy", "perplexity"):
            out = getattr(dist, name)()
        else:
            out = getattr(dist, name)
    except NotImplementedError:
        return ("raises", "NotImplementedError")
    return ("ok", _host(out), str(out.dtype).split(".")[-1])


def _torch_words(text):
    """gradkit's text as torch prints it (``gradkit.Size`` is ``torch.Size``)."""
    return text.replace("gradkit.", "torch.")


def _same(got, expected, rtol):
    assert got[0] == expected[0], (got, expected)
    if got[0] == "ok":
        assert got[2] == expected[2]
        assert got[1].shape == expected[1].shape
        np.testing.assert_allclose(got[1], expected[1], rtol=rtol, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_statistics_match_torch(case):
    dists = {m: case.build(m, case.leaves(m)) for m in (gradkit, torch)}
    got, expected = dists[gradkit], dists[torch]
    assert tuple(got.batch_shape) == tuple(expected.batch_shape)
    assert tuple(got.event_shape) == tuple(expected.event_shape)
    assert got.has_rsample == expected.has_rsample
    assert got.has_enumerate_support == expected.has_enumerate_support
    # one line: a long tensor bound wraps where each library's printer wraps it
    assert " ".join(_torch_words(repr(got.support)).split()) == " ".join(
        repr(expected.support).split())
    assert _torch_words(repr(got)) == repr(expected)
    rtol = 1e-10 if case.dtype == "float64" else 1e-5
    _same(("ok", _host(got.log_prob(case.value_of(gradkit))), "x"),
          ("ok", _host(expected.log_prob(case.value_of(torch))), "x"), rtol)
    for name in STATISTICS:
        _same(_statistic(gradkit, got, name, case), _statistic(torch, expected, name, case),
              rtol)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_statistic_gradients_match_torch(case):
    if not case.grad:
        pytest.skip("no parameter tensor")
    rtol, atol = (1e-9, 1e-12) if case.dtype == "float64" else (1e-5, 1e-6)
    # log_prob, and whichever of entropy, cdf, mean and variance torch implements
    for name in ("log_prob", "entropy", "cdf", "mean", "variance"):
        grads = {}
        for m in (gradkit, torch):
            leaves = case.leaves(m)
            dist = case.build(m, leaves)
            term = _differentiable(dist, name, case.value_of(m))
            if term is None:
                grads[m] = None
                continue
            try:
                grads[m] = [_host(g) for g in m.autograd.grad(
                    term.sum(), [leaves[n] for n in case.grad], allow_unused=True,
                    materialize_grads=True)]
            except NotImplementedError as e:  # a derivative torch does not have either
                grads[m] = str(e)
        if grads[torch] is None or grads[gradkit] is None:
            assert grads[gradkit] is grads[torch], name  # both without a graph
            continue
        if isinstance(grads[torch], str):
            assert grads[gradkit] == grads[torch], name
            continue
        for got, expected in zip(grads[gradkit], grads[torch]):
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=name)


def _differentiable(dist, name, value):
    """dist's statistic ``name`` if it is implemented, finite and has a graph, else None."""
    try:
        if name in ("log_prob", "cdf"):
            return getattr(dist, name)(value)
        out = getattr(dist, name)
        out = out() if name == "entropy" else out
    except NotImplementedError:
        return None
    finite = np.all(np.isfinite(_host(out)))
    return out if finite and out.requires_grad else None


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_log_prob_gradcheck(case):
    if not case.grad:
        pytest.skip("no parameter tensor")
    if case.dtype != "float64":
        pytest.skip("torch's log_prob refuses float64 parameters (test_distributions_api.py)")
    fixed = case.leaves(gradkit)
    value = case.value_of(gradkit)

    def log_prob(*params):
        return case.build(gradkit, {**fixed, **dict(zip(case.grad, params))}).log_prob(value)

    inputs = tuple(fixed[n] for n in case.grad)
    assert gradcheck(log_prob, inputs)
    assert gradgradcheck(log_prob, inputs)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_float32_log_prob_and_samples(case):
    dists = {m: case.build(m, case.leaves(m, "float32")) for m in (gradkit, torch)}
    got = dists[gradkit].log_prob(case.value_of(gradkit, "float32"))
    expected = dists[torch].log_prob(case.value_of(torch, "float32"))
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(_host(got), _host(expected), rtol=2e-5, atol=1e-5)
    sample, torch_sample = dists[gradkit].sample((3,)), dists[torch].sample((3,))
    assert str(sample.dtype).split(".")[-1] == str(torch_sample.dtype).split(".")[-1]
    assert tuple(sample.shape) == tuple(torch_sample.shape)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_expand_matches_torch(case):
    results = {}
    for m in (gradkit, torch):
        dist = case.build(m, case.leaves(m))
        wide = dist.expand((2,) + tuple(dist.batch_shape))
        results[m] = (tuple(wide.batch_shape), tuple(wide.event_shape),
                      _host(wide.log_prob(case.value_of(m))), tuple(wide.sample().shape))
    got, expected = results[gradkit], results[torch]
    assert got[0] == expected[0] and got[1] == expected[1] and got[3] == expected[3]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-10 if case.dtype == "float64" else 1e-5)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_samples_lie_in_the_support_with_the_right_moments(case):
    gradkit.manual_seed(1)
    dist = case.build(gradkit, case.leaves(gradkit))
    n = 4000
    sample = dist.sample((n,))
    assert tuple(sample.shape) == (n,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert not sample.requires_grad
    assert bool(dist.support.check(sample).all())
    assert np.all(np.isfinite(_host(dist.log_prob(sample))))  # a draw is never impossible
    if dist.has_rsample:
        assert dist.rsample((2,)).requires_grad == bool(case.grad)
    try:
        mean, variance = _host(dist.mean), _host(dist.variance)
    except NotImplementedError:
        return
    if case.heavy_tail or not np.all(np.isfinite(variance)):
        return
    values = _host(sample).astype(np.float64)
    # the sample mean is within 5 standard errors of the mean (fixed seed)
    np.testing.assert_array_less(np.abs(values.mean(0) - mean), 5 * np.sqrt(variance / n) + 1e-9)
