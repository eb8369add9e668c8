"""torch's test/distributions/test_constraints.py as programs run under gradkit and torch 2.13:
the symmetric / positive (semi)definite checks of its EXAMPLES table and biject_to /
transform_to over its CONSTRAINTS table (values, inverse, log|det J| and its shape)."""
import numpy as np
import pytest

pytest.importorskip("torch")
from torch_expectations.outcome import assert_like_torch  # noqa: E402

# (constraint, torch's expected check, value): torch's EXAMPLES
EXAMPLES = [
    ("symmetric", False, [[2.0, 0], [2.0, 2]]),
    ("positive_semidefinite", False, [[2.0, 0], [2.0, 2]]),
    ("positive_definite", False, [[2.0, 0], [2.0, 2]]),
    ("symmetric", True, [[3.0, -5], [-5.0, 3]]),
    ("positive_semidefinite", False, [[3.0, -5], [-5.0, 3]]),
    ("positive_definite", False, [[3.0, -5], [-5.0, 3]]),
    ("symmetric", True, [[1.0, 2], [2.0, 4]]),
    ("positive_semidefinite", True, [[1.0, 2], [2.0, 4]]),
    ("positive_definite", False, [[1.0, 2], [2.0, 4]]),
    ("symmetric", True, [[[1.0, -2], [-2.0, 1]], [[2.0, 3], [3.0, 2]]]),
    ("positive_semidefinite", False, [[[1.0, -2], [-2.0, 1]], [[2.0, 3], [3.0, 2]]]),
    ("positive_definite", False, [[[1.0, -2], [-2.0, 1]], [[2.0, 3], [3.0, 2]]]),
    ("symmetric", True, [[[1.0, -2], [-2.0, 4]], [[1.0, -1], [-1.0, 1]]]),
    ("positive_semidefinite", True, [[[1.0, -2], [-2.0, 4]], [[1.0, -1], [-1.0, 1]]]),
    ("positive_definite", False, [[[1.0, -2], [-2.0, 4]], [[1.0, -1], [-1.0, 1]]]),
    ("symmetric", True, [[[4.0, 2], [2.0, 4]], [[3.0, -1], [-1.0, 3]]]),
    ("positive_semidefinite", True, [[[4.0, 2], [2.0, 4]], [[3.0, -1], [-1.0, 3]]]),
    ("positive_definite", True, [[[4.0, 2], [2.0, 4]], [[3.0, -1], [-1.0, 3]]]),
]

# torch's CONSTRAINTS: the constructor's name and its arguments (lists become float64 tensors)
CONSTRAINTS = [
    ("real",), ("real_vector",), ("positive",),
    ("greater_than", [-10.0, -2, 0, 2, 10]), ("greater_than", 0), ("greater_than", 2),
    ("greater_than", -2), ("greater_than_eq", 0), ("greater_than_eq", 2),
    ("greater_than_eq", -2), ("less_than", [-10.0, -2, 0, 2, 10]), ("less_than", 0),
    ("less_than", 2), ("less_than", -2), ("unit_interval",),
    ("interval", [-4.0, -2, 0, 2, 4], [-3.0, 3, 1, 5, 5]), ("interval", -2, -1),
    ("interval", 1, 2), ("half_open_interval", [-4.0, -2, 0, 2, 4], [-3.0, 3, 1, 5, 5]),
    ("half_open_interval", -2, -1), ("half_open_interval", 1, 2), ("simplex",),
    ("corr_cholesky",), ("lower_cholesky",), ("positive_definite",),
]


def _constraint(m, spec):
    made = getattr(m.distributions.constraints, spec[0])
    if len(spec) == 1:
        return made
    return made(*(m.tensor(a, dtype=m.float64) if isinstance(a, list) else a for a in spec[1:]))


def _x(m, spec):
    """torch's randn(5, 5) (randn(6, 6) for corr_cholesky: 6 = 4 * 3 / 2), fixed data."""
    shape = (6, 6) if spec[0] == "corr_cholesky" else (5, 5)
    return m.tensor(np.random.default_rng(len(str(spec))).standard_normal(shape),
                    dtype=m.float64)


@pytest.mark.parametrize("name, result, value", EXAMPLES)
def test_constraint_as_torch(name, result, value):
    def program(m):
        check = getattr(m.distributions.constraints, name).check(m.tensor(value, dtype=m.float64))
        assert bool(check.all()) == result
        return check
    assert_like_torch(program)


@pytest.mark.parametrize("spec", CONSTRAINTS, ids=str)
def test_biject_to_as_torch(spec):
    """biject_to(c): bijective, its image satisfies c, inv undoes it, log|det J| has the
    batch shape of the domain."""
    def program(m):
        constraint = _constraint(m, spec)
        try:
            transform = m.distributions.biject_to(constraint)
        except NotImplementedError as error:
            return ["NotImplementedError", str(error)]
        x = _x(m, spec)
        y = transform(x)
        jacobian = transform.log_abs_det_jacobian(x, y)
        assert transform.bijective and bool(constraint.check(y).all())
        assert bool(m.allclose(x, transform.inv(y)))
        assert tuple(jacobian.shape) == tuple(x.shape[:x.dim() - transform.domain.event_dim])
        return [repr(transform), y, transform.inv(y), jacobian]
    assert_like_torch(program, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("spec", CONSTRAINTS, ids=str)
def test_transform_to_as_torch(spec):
    """transform_to(c): its image satisfies c and t(t.inv(y)) == y."""
    def program(m):
        constraint = _constraint(m, spec)
        transform = m.distributions.transform_to(constraint)
        y = transform(_x(m, spec))
        again = transform(transform.inv(y))
        assert bool(constraint.check(y).all()) and bool(m.allclose(y, again))
        return [repr(transform), y, again]
    assert_like_torch(program, rtol=1e-10, atol=1e-12)
