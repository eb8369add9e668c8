"""More of torch's test/distributions/test_distributions.py against gradkit and torch 2.13:
TestNumericalStability's scores at the edges, TestLazyLogitsInitialization, TestConstraints'
parameter checks, and TestKL's shapes and edge cases over torch's example table."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradkit  # noqa: E402
from test_distributions_torch_expectations import (  # noqa: E402
    EXAMPLES, _assert_close, _assert_same_outcome, _built, _d, _outcome)

# (distribution, parameter kind, parameter, value) from TestNumericalStability
SCORES = {
    "bernoulli-zero-at-zero": ("Bernoulli", "probs", [0.0], [0.0]),
    "bernoulli-zero-at-one": ("Bernoulli", "probs", [0.0], [1.0]),
    "bernoulli-small-at-one": ("Bernoulli", "probs", [1e-4], [1.0]),
    "bernoulli-large-at-zero": ("Bernoulli", "probs", [1 - 1e-4], [0.0]),
    "bernoulli-logits-at-zero": ("Bernoulli", "logits", [math.log(9999)], [0.0]),
    "bernoulli-logits-underflow": ("Bernoulli", "logits", ["lowest"], [0.0]),
    "bernoulli-logits-overflow": ("Bernoulli", "logits", ["max"], [1.0]),
    "one-hot-degenerate": ("OneHotCategorical", "probs", [0.0, 1.0], [0.0, 1.0]),
    "one-hot-logits-inf": ("OneHotCategorical", "logits", [-math.inf, 0.0], [0.0, 1.0]),
    "one-hot-logits-inf-zero": ("OneHotCategorical", "logits", [-math.inf, 0.0], [1.0, 0.0]),
    "multinomial-degenerate": ("Multinomial", "probs", [0.0, 1.0], [0.0, 10.0]),
    "multinomial-logits-inf": ("Multinomial", "logits", [-math.inf, 0.0], [0.0, 10.0]),
    "multinomial-logits-inf-zero": ("Multinomial", "logits", [-math.inf, 0.0], [10.0, 0.0]),
    "cb-0.1-at-0.1": ("ContinuousBernoulli", "probs", [0.1], [0.1]),
    "cb-0.1-at-1": ("ContinuousBernoulli", "probs", [0.1], [1.0]),
    "cb-near-half": ("ContinuousBernoulli", "probs", [0.4999], [0.9]),
    "cb-small": ("ContinuousBernoulli", "probs", [1e-4], [1.0]),
    "cb-large": ("ContinuousBernoulli", "probs", [1 - 1e-4], [0.1]),
    "cb-logits": ("ContinuousBernoulli", "logits", [math.log(9999)], [0.0]),
    "cb-logits-near-zero": ("ContinuousBernoulli", "logits", [0.001], [0.5]),
    "cb-logits-underflow": ("ContinuousBernoulli", "logits", ["lowest"], [0.0]),
    "cb-logits-overflow": ("ContinuousBernoulli", "logits", ["max"], [1.0]),
}


def _parameter(values, dtype):
    """The parameter's numbers; "lowest"/"max" are the dtype's extremes (torch uses -1e38 and
    1e308: near them)."""
    info = np.finfo(dtype)
    extremes = {"lowest": -float(info.max) / 2, "max": float(info.max) / 2}
    return np.array([extremes.get(v, v) for v in values], dtype=dtype)


def _score(m, name, dtype):
    family, kind, parameter, value = SCORES[name]
    p = m.tensor(_parameter(parameter, dtype), requires_grad=True)
    dist = getattr(_d(m), family)(10, **{kind: p}) if family == "Multinomial" else \
        getattr(_d(m), family)(**{kind: p})
    log_prob = dist.log_prob(m.tensor(np.array(value, dtype=dtype)))
    (gradient,) = m.autograd.grad(log_prob.sum(), [p])
    return log_prob, gradient


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", SCORES)
def test_scores_at_the_edges_as_torch(name, dtype):
    """torch: TestNumericalStability (log_prob and its gradient at degenerate parameters)."""
    ours, theirs = _score(gradkit, name, dtype), _score(torch, name, dtype)
    tolerance = {"rtol": 1e-5 if dtype == "float32" else 1e-10, "atol": 1e-6}
    for got, expected, where in zip(ours, theirs, ["log_prob", "gradient"], strict=True):
        got, expected = got.detach().numpy(), expected.detach().numpy()
        assert got.dtype == expected.dtype, where
        np.testing.assert_allclose(got, expected, equal_nan=True, err_msg=where, **tolerance)


LAZY = ["Categorical-probs", "Bernoulli-probs", "Binomial-number", "Multinomial",
        "OneHotCategorical"]


def _lazy_state(name, m, by_logits):
    """Which of probs/logits each call leaves computed (torch's lazy_property), after
    log_prob or sample, enumerate_support and the shapes."""
    dist = _built(name, m)[0]
    if by_logits:
        kwargs = {"logits": dist.logits.detach()}
        if hasattr(dist, "total_count"):
            kwargs["total_count"] = 10
        dist = type(dist)(**kwargs)
        dist.log_prob(type(dist)(**kwargs).sample())
    else:
        dist.sample()
    states = [sorted(k for k in ("probs", "logits") if k in dist.__dict__)]
    _outcome(dist.enumerate_support)
    states.append(sorted(k for k in ("probs", "logits") if k in dist.__dict__))
    _ = (dist.batch_shape, dist.event_shape)
    states.append(sorted(k for k in ("probs", "logits") if k in dist.__dict__))
    return states


@pytest.mark.parametrize("by_logits", [False, True])
@pytest.mark.parametrize("name", LAZY)
def test_lazy_probs_and_logits_as_torch(name, by_logits):
    """torch: TestLazyLogitsInitialization (the other parameter is not computed)."""
    assert _lazy_state(name, gradkit, by_logits) == _lazy_state(name, torch, by_logits)


@pytest.mark.parametrize("name", EXAMPLES)
def test_parameters_satisfy_their_constraints_as_torch(name):
    """torch: TestConstraints.test_params_constraints (the same constraint names, each
    parameter's check) and test_support_constraints (the check's shape)."""
    ours, theirs = _built(name, gradkit)[0], _built(name, torch)[0]
    assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
    for key, constraint in theirs.arg_constraints.items():
        mine = ours.arg_constraints[key]
        assert type(mine).__name__ == type(constraint).__name__, key
        if type(constraint).__name__.startswith("_Dependent") or key not in theirs.__dict__:
            continue
        _assert_close(mine.check(getattr(ours, key)), constraint.check(getattr(theirs, key)),
                      key)
    torch.manual_seed(0)
    value = theirs.sample()
    mine = gradkit.tensor(value.numpy())
    _assert_close(ours.support.check(mine), theirs.support.check(value), "support check")


@pytest.mark.parametrize("name", EXAMPLES)
def test_kl_of_a_distribution_with_itself_as_torch(name):
    """torch: TestKL.test_kl_shape (kl(p, p) has the batch shape, or NotImplementedError)."""
    ours, theirs = _built(name, gradkit)[0], _built(name, torch)[0]
    expected = _outcome(lambda: torch.distributions.kl_divergence(theirs, theirs))
    got = _outcome(lambda: gradkit.distributions.kl_divergence(ours, ours))
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and got[0] == expected[0]
        return
    _assert_same_outcome(got, expected, "kl")


EDGE_KL = {
    "Bernoulli(0)": lambda m: (_d(m).Bernoulli(0), _d(m).Bernoulli(0)),
    "Bernoulli(1)": lambda m: (_d(m).Bernoulli(1), _d(m).Bernoulli(1)),
    "Categorical([0, 1])": lambda m: (_d(m).Categorical(m.tensor([0.0, 1.0])),
                                      _d(m).Categorical(m.tensor([0.0, 1.0]))),
    "Uniform(0, 1) || Beta(1, 1)": lambda m: (_d(m).Uniform(0, 1), _d(m).Beta(1, 1)),
}


@pytest.mark.parametrize("name", EDGE_KL)
def test_kl_edge_cases_are_zero_as_torch(name):
    """torch: TestKL.test_kl_edgecases (each KL is 0 exactly)."""
    got = gradkit.distributions.kl_divergence(*EDGE_KL[name](gradkit))
    expected = torch.distributions.kl_divergence(*EDGE_KL[name](torch))
    assert got.item() == expected.item() == 0


def test_kl_of_transformed_independent_normals_as_torch():
    """torch: TestKL.test_kl_transformed (issue 34859: the batch shape survives)."""
    def kls(m):
        diag = _d(m).Independent(_d(m).Normal(m.zeros(2, 3), m.ones(2, 3)), 1)
        moved = _d(m).TransformedDistribution(diag, _d(m).AffineTransform(loc=0.0, scale=2.0))
        return (_d(m).kl_divergence(diag, diag), _d(m).kl_divergence(moved, moved))
    for got, expected in zip(kls(gradkit), kls(torch), strict=True):
        _assert_close(got, expected, "kl")


def _cat_and_stack(m):
    """TestFunctors: CatTransform (uniform and non-uniform lengths, event_dim) and
    StackTransform: domain/codomain checks, forward, inverse, log|det J|."""
    d = _d(m)
    row = m.arange(1, 101, dtype=m.float64)
    x = m.cat([-row.view(1, -1), ((row - 1) / 100).view(1, -1), row.view(1, -1)])
    y = m.cat([row.view(1, -1)] * 3)
    parts = [d.ExpTransform(), d.AffineTransform(1, 100), d.identity_transform]
    cat = d.CatTransform(parts, dim=0)
    nested = d.CatTransform([parts[0], d.CatTransform(parts[1:], dim=0)], dim=0, lengths=[1, 2])
    stack = d.StackTransform(parts, dim=0)
    event = d.CatTransform([d.AffineTransform(0, 2 * m.ones(2, dtype=m.float64), event_dim=1)] * 2,
                           dim=1, lengths=[2, 2])
    xe = m.linspace(-1.0, 1.0, 64, dtype=m.float64).view(16, 4)
    return ([(t.domain.check(x), t(x), t.codomain.check(y), t.inv(y),
              t.log_abs_det_jacobian(x, y)) for t in (cat, nested)]
            + [(stack.domain.check(x), stack(x), stack.codomain.check(y), stack.inv(x),
                stack.log_abs_det_jacobian(x, y))]
            + [event.log_abs_det_jacobian(xe, event(xe))])


def test_cat_and_stack_transforms_as_torch():
    ours, theirs = _cat_and_stack(gradkit), _cat_and_stack(torch)
    flat_ours = [t for group in ours for t in (group if isinstance(group, tuple) else (group,))]
    flat_theirs = [t for group in theirs
                   for t in (group if isinstance(group, tuple) else (group,))]
    for index, (got, expected) in enumerate(zip(flat_ours, flat_theirs, strict=True)):
        _assert_close(got, expected, f"output {index}")


@pytest.mark.parametrize("name", [n for n in EXAMPLES if not n.startswith("Transformed")])
def test_invalid_log_prob_arguments_as_torch(name):
    """torch: TestValidation.test_invalid_log_probs_arg (constant values of each sign, a NaN
    value raises the support ValueError; validate_args=False answers without it)."""
    def outcomes(m):
        dist = _built(name, m)[0]
        results = []
        for v in [-2.0, -1.0, 0.0, 1.0, 2.0]:
            full = m.full(tuple(dist.batch_shape) + tuple(dist.event_shape), v,
                          dtype=m.float64)
            results.append(_outcome(lambda full=full: dist.log_prob(full)))
        valid = dist.sample()
        nan = m.full_like(valid.to(m.float64), math.nan)
        results.append(_outcome(lambda: dist.log_prob(nan)))
        return [r if not isinstance(r, tuple) else
                (r[0], r[1].replace("gradkit.", "torch.").split(",")[0]) for r in results]
    for got, expected in zip(outcomes(gradkit), outcomes(torch), strict=True):
        _assert_same_outcome(got, expected, "log_prob")


@pytest.mark.parametrize("m", [gradkit, torch], ids=["gradkit", "torch"])
def test_unimplemented_constraints_warn_as_torch(m):
    """torch: TestValidation.test_warning_unimplemented_constraints (both libraries warn)."""
    class Delta(_d(m).Distribution):
        def __init__(self, validate_args=True):
            super().__init__(validate_args=validate_args)

        def sample(self, sample_shape=()):
            return m.tensor(0.0).expand(sample_shape)

        def log_prob(self, value):
            self._validate_sample(value)
            return m.zeros_like(value)

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        delta = Delta()
    with pytest.warns(UserWarning, match="does not define `support`"):
        delta.log_prob(delta.sample((2,)))
