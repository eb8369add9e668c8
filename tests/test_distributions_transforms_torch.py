"""torch's test/distributions/test_transforms.py as programs run under gradkit and torch 2.13:
its get_transforms table (cached and not, and their inverses) through inv.inv, equality,
with_cache, forward/inverse and log|det J| on generate_data's inputs; the composed shapes,
TransformedDistribution's shapes over torch's grid, and pickling after log_prob."""
import io
import itertools
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradkit  # noqa: E402
from torch_expectations.outcome import assert_like_torch  # noqa: E402

_R = np.random.default_rng(0)
_EXPONENTS = _R.standard_normal(2)
_LOC5, _SCALE5 = _R.standard_normal(5), _R.standard_normal(5)
_AFFINE45 = _R.standard_normal((6, 4, 5))


def _t(m, values):
    return m.tensor(np.asarray(values, dtype=np.float64), dtype=m.float64)


def _transforms(m, cache_size):
    """torch's get_transforms(cache_size): the transforms, then their inverses."""
    d, c = m.distributions, cache_size

    def affine(i, j):
        return d.AffineTransform(_t(m, _AFFINE45[i]), _t(m, _AFFINE45[j]), cache_size=c)
    made = [
        d.AbsTransform(cache_size=c), d.ExpTransform(cache_size=c),
        d.PowerTransform(exponent=2, cache_size=c),
        d.PowerTransform(exponent=_t(m, _EXPONENTS[0]), cache_size=c),
        d.PowerTransform(exponent=_t(m, _EXPONENTS[1]), cache_size=c),
        d.SigmoidTransform(cache_size=c), d.TanhTransform(cache_size=c),
        d.AffineTransform(0, 1, cache_size=c), d.AffineTransform(1, -2, cache_size=c),
        d.AffineTransform(_t(m, _LOC5), _t(m, _SCALE5), cache_size=c), affine(0, 1),
        d.SoftmaxTransform(cache_size=c), d.SoftplusTransform(cache_size=c),
        d.StickBreakingTransform(cache_size=c), d.LowerCholeskyTransform(cache_size=c),
        d.CorrCholeskyTransform(cache_size=c), d.PositiveDefiniteTransform(cache_size=c),
        d.ComposeTransform([affine(0, 1)]),
        d.ComposeTransform([affine(0, 1), d.ExpTransform(cache_size=c)]),
        d.ComposeTransform([d.AffineTransform(0, 1, cache_size=c), affine(2, 3),
                            d.AffineTransform(1, -2, cache_size=c), affine(4, 5)]),
        d.ReshapeTransform((4, 5), (2, 5, 2)),
        d.IndependentTransform(d.AffineTransform(_t(m, _LOC5), _t(m, _SCALE5), cache_size=c), 1),
        d.CumulativeDistributionTransform(d.Normal(0, 1)),
    ]
    return made + [t.inv for t in made]


_COUNT = len(_transforms(gradkit, 0))


def _data(m, transform):
    """torch's generate_data: an input in the transform's domain (NumPy's fixed draws)."""
    d, c = m.distributions, m.distributions.constraints
    rng = np.random.default_rng(1)
    while isinstance(transform, d.IndependentTransform):
        transform = transform.base_transform
    if isinstance(transform, d.ReshapeTransform):
        return _t(m, rng.standard_normal(tuple(transform.in_shape)))
    if isinstance(transform.inv, d.ReshapeTransform):
        return _t(m, rng.standard_normal(tuple(transform.inv.out_shape)))
    domain = transform.domain
    while isinstance(domain, c.independent) and domain is not c.real_vector:
        domain = domain.base_constraint
    if domain in (c.lower_cholesky, c.positive_definite):
        x = rng.standard_normal((6, 6))
        x = np.tril(x, -1) + np.diag(np.exp(np.diag(x)))
        return _t(m, x @ x.T if domain is c.positive_definite else x)
    if transform.codomain in (c.lower_cholesky, c.positive_definite):
        return _t(m, rng.standard_normal((6, 6)))
    x = {c.real: lambda: rng.standard_normal((4, 5)),
         c.real_vector: lambda: rng.standard_normal((3, 6)),
         c.positive: lambda: np.exp(rng.standard_normal((4, 5))),
         c.unit_interval: lambda: rng.uniform(size=(4, 5))}.get(domain)
    if x is not None:
        return _t(m, x())
    if isinstance(domain, c.interval):
        low, high = domain.lower_bound, domain.upper_bound
        return _t(m, rng.uniform(size=(4, 5)) * (high - low) + low)
    if domain is c.simplex:
        x = np.exp(rng.standard_normal((4, 5)))
        return _t(m, x / x.sum(-1, keepdims=True))
    assert domain is c.corr_cholesky, domain
    x = np.tril(rng.standard_normal((4, 5, 5)))
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    x[..., range(5), range(5)] = np.abs(x[..., range(5), range(5)])
    return _t(m, x)


@pytest.mark.parametrize("cached", [True, False])
@pytest.mark.parametrize("cache_size", [1, 0])
@pytest.mark.parametrize("index", range(_COUNT))
def test_forward_inverse_and_jacobian_as_torch(index, cache_size, cached):
    """torch: test_inv_inv, test_with_cache, test_forward_inverse, test_jacobian (the value
    compared with torch's own, which its test checks against autograd's jacobian)."""
    def program(m):
        transform = _transforms(m, cache_size)[index]
        assert transform.inv.inv is transform
        x = _data(m, transform).requires_grad_()
        assert bool(transform.domain.check(x).all())
        y = transform(x)
        if transform._cache_size:  # (Reshape, Independent, CDF: built without a cache)
            assert transform(x) is y
        assert tuple(y.shape) == tuple(transform.forward_shape(x.shape))
        back = transform.inv(y if cached else y.clone())
        assert tuple(back.shape) == tuple(transform.inverse_shape(y.shape))
        again = transform(back)
        if transform.bijective:
            assert bool(m.allclose(back, x, atol=1e-4, equal_nan=True))
        assert bool(m.allclose(again, y, atol=1e-4, equal_nan=True))
        jacobian = transform.log_abs_det_jacobian(x, y)
        assert tuple(jacobian.shape) == tuple(x.shape[:x.dim() - transform.domain.event_dim])
        cached_one = transform.with_cache(1)
        return [transform.bijective, transform.event_dim, cached_one._cache_size,
                cached_one(x) is cached_one(x), y, back, again, jacobian]
    assert_like_torch(program, rtol=1e-9, atol=1e-11)


def test_equality_as_torch():
    """torch: test_equality: a transform equals itself only (none of the table are twins)."""
    def program(m):
        made = _transforms(m, 0)
        assert m.distributions.identity_transform == m.distributions.identity_transform.inv
        return [[a == b for b in made] for a in made]
    assert_like_torch(program)
    made = _transforms(gradkit, 0)
    assert [[a == b for b in made] for a in made] == np.eye(len(made), dtype=bool).tolist()


def _distributions(m):
    """test_transformed_distribution_shapes' table."""
    d = m.distributions
    exp, softmax, cholesky = d.ExpTransform(), d.SoftmaxTransform(), d.LowerCholeskyTransform()
    bases = [d.Normal(m.zeros(4, 4), m.ones(4, 4)), d.Dirichlet(m.ones(4, 4))]
    made = list(bases)
    for base in bases:
        made += [d.TransformedDistribution(base, [t]) for t in (exp, softmax, cholesky)]
        made += [d.TransformedDistribution(base, list(p)) for p in
                 itertools.permutations([exp, softmax, cholesky], 2)]
    base = d.Normal(m.zeros(3, 4, 4), m.ones(3, 4, 4))
    return made + [base] + [d.TransformedDistribution(base, p) for p in (
        [cholesky], [exp, cholesky], [softmax, cholesky], [cholesky, exp], [cholesky, softmax])]


def test_transformed_distribution_shapes_as_torch():
    """torch: test_compose_transform_shapes, test_transformed_distribution_shapes."""
    def program(m):
        d = m.distributions
        exp, softmax, cholesky = d.ExpTransform(), d.SoftmaxTransform(), d.LowerCholeskyTransform()
        event_dims = [exp.event_dim, softmax.event_dim, cholesky.event_dim] + [
            d.ComposeTransform(list(p)).event_dim
            for p in ((exp, softmax), (exp, cholesky), (softmax, cholesky))]
        shapes = [(tuple(dist.batch_shape), tuple(dist.event_shape),
                   tuple(dist.log_prob(dist.rsample()).shape), repr(dist.support))
                  for dist in _distributions(m)]
        return [event_dims, shapes]
    assert_like_torch(program)


@pytest.mark.parametrize("event_dims", [(0,), (1,), (2, 3), (0, 1, 2), (1, 2, 0), (2, 0, 1)],
                         ids=str)
def test_compose_affine_as_torch(event_dims):
    def program(m):
        d = m.distributions
        parts = [d.AffineTransform(m.zeros((1,) * e), 1, event_dim=e) for e in event_dims]
        transform = d.ComposeTransform(parts)
        assert transform.domain.event_dim == transform.codomain.event_dim == max(event_dims)
        base = d.Normal(0, 1)
        if transform.domain.event_dim:
            base = base.expand((1,) * transform.domain.event_dim)
        normal = d.TransformedDistribution(base, transform.parts)
        base = d.Dirichlet(m.ones(5))
        if transform.domain.event_dim > 1:
            base = base.expand((1,) * (transform.domain.event_dim - 1))
        dirichlet = d.TransformedDistribution(base, parts)
        assert normal.support.event_dim == max(event_dims)
        assert dirichlet.support.event_dim == max(1, *event_dims)
        return [repr(normal.support), repr(dirichlet.support)]
    assert_like_torch(program)


@pytest.mark.parametrize("batch_shape", [(), (6,), (5, 4)], ids=str)
def test_compose_reshape_as_torch(batch_shape):
    def program(m):
        d = m.distributions
        parts = [d.ReshapeTransform((), ()), d.ReshapeTransform((2,), (1, 2)),
                 d.ReshapeTransform((3, 1, 2), (6,)), d.ReshapeTransform((6,), (2, 3))]
        transform = d.ComposeTransform(parts)
        data = m.ones(batch_shape + (3, 2))
        dist = d.TransformedDistribution(d.Normal(data, 1), parts)
        return [transform.codomain.event_dim, transform.domain.event_dim,
                tuple(transform(data).shape), tuple(dist.batch_shape), tuple(dist.event_shape),
                dist.support.event_dim]
    assert_like_torch(program)


@pytest.mark.parametrize("base_batch_dim, base_event_dim, transform_dim, num_transforms",
                         list(itertools.product(range(3), range(3), range(3), range(4))))
def test_transformed_distribution_as_torch(base_batch_dim, base_event_dim, transform_dim,
                                           num_transforms):
    """torch: test_transformed_distribution (both sample shapes): the ValueError when the base
    has too few dims, else sample and log_prob shapes and distinct draws."""
    def program(m):
        d, shape = m.distributions, (2, 3, 4, 5)
        base = d.Normal(0, 1).expand(shape[4 - base_batch_dim - base_event_dim:])
        if base_event_dim:
            base = d.Independent(base, base_event_dim)
        parts = [d.AffineTransform(m.zeros(shape[4 - transform_dim:]), 1),
                 d.ReshapeTransform((4, 5), (20,)),
                 d.ReshapeTransform((3, 20), (6, 10))][:num_transforms]
        try:
            dist = d.TransformedDistribution(base, parts)
        except ValueError as error:
            assert base_batch_dim + base_event_dim < d.ComposeTransform(parts).domain.event_dim
            return ["ValueError", str(error).replace("gradkit.", "torch.")]
        found = []
        for sample_shape in [(), (7,)]:
            x = dist.sample(sample_shape)
            assert len(set(x.reshape(-1).tolist())) >= 0.9 * x.numel()
            y = x
            while y.dim() > len(dist.event_shape):
                y = y[0]
            found.append([tuple(x.shape), tuple(dist.batch_shape), tuple(dist.event_shape),
                          tuple(dist.log_prob(x).shape), tuple(dist.log_prob(y).shape)])
        return found
    assert_like_torch(program)


def test_pickled_transformed_distribution_after_log_prob():
    """torch: test_save_load_transform (log_prob leaves a weakref'd inverse behind; the pickle
    must not hold it). gradkit.save stores tensors and containers only (never pickles:
    docs/serialization.md), so Python's pickle carries the distribution here."""
    for m in (gradkit, torch):
        dist = m.distributions.TransformedDistribution(
            m.distributions.Normal(0, 1), [m.distributions.AffineTransform(2, 3)])
        x = m.linspace(0, 1, 10)
        log_prob = dist.log_prob(x)
        assert bool(m.allclose(log_prob, pickle.loads(pickle.dumps(dist)).log_prob(x)))
    with pytest.raises(TypeError, match="cannot store obj, an object of type "
                                        "TransformedDistribution"):
        gradkit.save(dist, io.BytesIO())
