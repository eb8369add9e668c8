"""The data helpers against torch: gradient (values over its spacing forms, dtypes, errors;
its gradients: op_db rows "gradient"), unique_consecutive, index_reduce, apply_ and map_."""
import numpy as np
import pytest

import gradkit
from signal_twins import assert_same, assert_same_error

torch = pytest.importorskip("torch")

SAMPLES = [[1.0, 2, 4, 8], [10, 20, 40, 100]]


# -- gradient -----------------------------------------------------------------------------------

def _x(m):
    return m.tensor(SAMPLES)


@pytest.mark.parametrize("program", [
    lambda m: m.gradient(_x(m)), lambda m: m.gradient(_x(m), spacing=2.0),
    lambda m: m.gradient(_x(m), spacing=2), lambda m: m.gradient(_x(m), dim=1),
    lambda m: m.gradient(_x(m), dim=[1]), lambda m: m.gradient(_x(m), spacing=[2.0, 3.0]),
    lambda m: m.gradient(_x(m), spacing=(m.tensor([0.0, 1.0]), m.tensor([0.0, 1, 1.5, 3.5]))),
    lambda m: m.gradient(_x(m), spacing=[m.tensor([0.0, 1, 1.5, 3.5])], dim=1, edge_order=2),
    lambda m: m.gradient(_x(m), spacing=[m.tensor([0, 1, 2, 4])], dim=1),
    lambda m: m.gradient(_x(m).int()), lambda m: m.gradient(_x(m).int(), spacing=2),
    lambda m: m.gradient(_x(m).double(), edge_order=2, dim=1),
    lambda m: m.gradient(_x(m), edge_order=2, dim=-1, spacing=0.5),
    lambda m: m.gradient(_x(m).int(), edge_order=2, dim=-1),
    lambda m: m.gradient(_x(m), spacing=[m.tensor([0.0, 1.0, 3.0])], dim=0),
    lambda m: m.gradient(_x(m), spacing=(2.0,), dim=0),
    lambda m: m.gradient(_x(m) + 1j * _x(m)),
    lambda m: m.gradient(_x(m), spacing=[m.tensor([0.0, 1], dtype=m.float64)], dim=0),
    lambda m: m.gradient(_x(m), spacing=[1, 2.5]), lambda m: m.gradient(m.tensor(3.0))])
def test_gradient_matches_torch(program):
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: m.gradient(_x(m).to(m.uint8)), lambda m: m.gradient(_x(m), spacing=[1.0, 2, 3]),
    lambda m: m.gradient(_x(m), spacing=[1.0, 2, 3], dim=[0, 1]),
    lambda m: m.gradient(_x(m), edge_order=3), lambda m: m.gradient(_x(m), edge_order=2),
    lambda m: m.gradient(_x(m), dim=2), lambda m: m.gradient(_x(m), dim=[1, 1]),
    lambda m: m.gradient(_x(m), spacing=[m.tensor([[0.0, 1.0]])], dim=0)])
def test_gradient_errors_match_torch(program):
    assert_same_error(program)


def test_gradient_is_exact_for_quadratics():
    """Central differences (and second-order edges) are exact on x², at uneven points too."""
    t = gradkit.tensor([0.0, 0.5, 1.5, 2.0, 4.0], dtype=gradkit.float64)
    (slope,) = gradkit.gradient(t * t, spacing=[t], edge_order=2)
    np.testing.assert_allclose(slope.numpy(), 2 * t.numpy(), rtol=1e-12)


# -- unique_consecutive -------------------------------------------------------------------------

RUNS = [[1, 1, 2], [1, 1, 2], [0, 1, 2], [1, 1, 2]]


@pytest.mark.parametrize("program", [
    lambda m: m.unique_consecutive(m.tensor([1.0, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True,
                                   return_counts=True),
    lambda m: m.unique_consecutive(m.tensor([1.0, 1, 2, 2, 3, 1, 1, 2])),
    lambda m: m.unique_consecutive(m.tensor(RUNS), dim=0, return_inverse=True,
                                   return_counts=True),
    lambda m: m.unique_consecutive(m.tensor(RUNS), dim=1, return_inverse=True,
                                   return_counts=True),
    lambda m: m.unique_consecutive(m.tensor(RUNS), dim=-1, return_counts=True),
    lambda m: m.unique_consecutive(m.tensor(RUNS), return_inverse=True, return_counts=True),
    lambda m: m.unique_consecutive(m.tensor([]), return_inverse=True, return_counts=True),
    lambda m: m.unique_consecutive(m.tensor(3.0), return_inverse=True, return_counts=True),
    lambda m: m.unique_consecutive(m.tensor([1.0, 1.0, 1.0]).log() * 0 / 0,
                                   return_counts=True)[1],
    lambda m: m.unique_consecutive(m.tensor([True, True, False])),
    lambda m: m.unique_consecutive(m.zeros(0, 3), dim=0, return_inverse=True,
                                   return_counts=True),
    lambda m: m.unique_consecutive(m.zeros(0, 3), return_inverse=True, return_counts=True),
    lambda m: m.tensor(RUNS).unique_consecutive(return_inverse=True),
    lambda m: m.unique_consecutive(m.tensor([[1.0, 2], [1, 2], [3, 4]]).reshape(3, 1, 2), dim=0,
                                   return_inverse=True, return_counts=True)])
def test_unique_consecutive_matches_torch(program):
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: m.unique_consecutive(m.tensor(RUNS), dim=2),
    lambda m: m.unique_consecutive(m.zeros(0, 3), dim=1),
    lambda m: m.unique_consecutive(m.zeros(0, 0), dim=1),
    lambda m: m.unique_consecutive(m.zeros(0, 2, 0), dim=1),
    lambda m: m.unique_consecutive(m.tensor(3.0), dim=0),
    lambda m: m.unique_consecutive(m.tensor([1 + 1j, 1 + 1j, 2]), return_counts=True)])
def test_unique_consecutive_errors_match_torch(program):
    assert_same_error(program)


def test_unique_consecutive_values_have_torch_s_refusing_node():
    for m in (torch, gradkit):
        values = m.unique_consecutive(m.tensor([1.0, 1.0, 2.0], requires_grad=True))
        assert values.grad_fn.name() == "UniqueConsecutiveBackward0"
        with pytest.raises(NotImplementedError, match="the derivative for 'unique_consecutive' "
                                                      "is not implemented."):
            values.sum().backward()


# -- index_reduce -------------------------------------------------------------------------------

def _reduce_operands(m):
    x = m.tensor([[1.0, 2], [3, 4], [5, 6]])
    source = m.tensor([[10.0, 20], [30, 40], [50, 60], [70, 80]])
    return x, m.tensor([0, 2, 0, 1]), source


def _reduced(reduce, include_self=True, cast=None):
    def program(m):
        x, index, source = _reduce_operands(m)
        if cast is not None:
            x, source = getattr(x, cast)(), getattr(source, cast)()
        return m.index_reduce(x, 0, index, source, reduce, include_self=include_self)
    return program


@pytest.mark.parametrize("program", [
    *[_reduced(reduce, include_self) for reduce in ("prod", "mean", "amax", "amin")
      for include_self in (True, False)],
    _reduced("mean", cast="int"), _reduced("prod", cast="cfloat"),
    _reduced("mean", cast="cfloat"), _reduced("mean", cast="half"),
    _reduced("amax", cast="bool"), _reduced("prod", cast="bool"),
    lambda m: m.index_reduce(m.ones(3, 2, dtype=m.bool), 0, m.tensor([], dtype=m.int64),
                             m.ones(0, 2, dtype=m.bool), "mean"),
    lambda m: m.index_reduce(m.ones(3, 2) + 0j, 0, m.tensor([], dtype=m.int64),
                             m.ones(0, 2) + 0j, "amax"),
    lambda m: m.index_reduce(m.ones(3, 2), 1, m.tensor([1, 1, 0]), m.ones(3, 3) * 2, "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), -1, m.tensor([1, 1, 0]),
                             m.tensor([[2.0, 3, 4]] * 3), "mean"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor(1), m.ones(1, 2) * 3, "prod"),
    lambda m: m.index_reduce(m.tensor(2.0), 0, m.tensor([0]), m.tensor(3.0), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([], dtype=m.int64), m.zeros(0, 2),
                             "prod"),
    lambda m: m.ones(3, 2).index_reduce(0, m.tensor([1, 1]), m.ones(2, 2) * 5, "amin",
                                        include_self=False)])
def test_index_reduce_matches_torch(program):
    assert_same(program)


def test_index_reduce_warns_as_torch():
    """torch's text (torch warns once per process, Python's filters decide here)."""
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta and the API may "
                                         "change at any time"):
        gradkit.index_reduce(gradkit.ones(2), 0, gradkit.tensor([1]), gradkit.ones(1), "prod")


def test_index_reduce_in_place_matches_torch():
    def program(m):
        x, index, source = _reduce_operands(m)
        y = x.clone()
        assert y.index_reduce_(0, index, source, "amax") is y
        return y
    assert_same(program)


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("program", [
    _reduced("sum"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0.0, 1]), m.ones(2, 2), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0, 1, 2]), m.ones(2, 2), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([[0, 1]]), m.ones(2, 2), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 2, m.tensor([0, 1]), m.ones(2, 2), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0, 1]), m.ones(2, 1), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0, 3]), m.ones(2, 2), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0, -1]), m.ones(2, 2), "prod"),
    lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0, 1]), m.ones(2, 2).double(), "mean"),
    lambda m: m.index_reduce(m.ones(3, 2) + 0j, 0, m.tensor([0, 1]), m.ones(2, 2) + 0j,
                             "amax"),
    lambda m: m.index_reduce(m.tensor(2.0), 0, m.tensor([0, 0]), m.ones(2), "prod"),
    lambda m: m.index_reduce(m.ones(1, 1) + 0j, 0, m.tensor([0, 0]), m.ones(2, 1) + 0j, "amax",
                             include_self=False),
    lambda m: m.index_reduce(m.ones(1, 1, dtype=m.cdouble), 0, m.tensor([0, 0]),
                             m.ones(2, 1, dtype=m.cdouble), "mean", include_self=False),
    lambda m: m.index_reduce((m.ones(3, 2) + 0j).requires_grad_(), 0, m.tensor([0, 0]),
                             m.ones(2, 2) + 0j, "prod"),
    lambda m: m.index_reduce(m.ones(3) + 0j, 0, m.tensor([0, 0]), m.ones(2) + 0j, "mean"),
    lambda m: m.index_reduce(m.ones(3) + 0j, 0, m.tensor([0, 0]), m.ones(2) + 0j, "amax"),
    lambda m: m.index_reduce(m.zeros(0) + 0j, 0, m.tensor([0, 0]), m.ones(2) + 0j, "prod"),
    *[lambda m, reduce=reduce, include_self=include_self: m.index_reduce(
        m.ones(3, 2, dtype=m.bool), 0, m.tensor([0, 0]), m.ones(2, 2, dtype=m.bool), reduce,
        include_self=include_self)
      for reduce, include_self in (("mean", True), ("mean", False), ("amax", False))],
    lambda m: m.index_reduce(m.ones(3, dtype=m.bool), 0, m.tensor([0, 0]),
                             m.ones(2, dtype=m.bool), "prod"),
    lambda m: m.index_reduce(m.ones(3, dtype=m.bool), 0, m.tensor([], dtype=m.int64),
                             m.ones(0, dtype=m.bool), "mean"),
    lambda m: m.index_reduce((m.ones(3, 2) + 0j).requires_grad_(), 0,
                             m.tensor([], dtype=m.int64), m.ones(0, 2) + 0j, "prod"),
    lambda m: m.index_reduce(m.zeros(0), 0, m.tensor([0, 0]), m.ones(2), "mean"),
    lambda m: m.index_reduce(m.zeros(0), 0, m.tensor([0, 0]), m.ones(2), "mean",
                             include_self=False),
    lambda m: m.index_reduce(m.zeros(0, 3, 1), 0, m.tensor([0, 0]), m.ones(2, 3, 1), "amin",
                             include_self=False)])
def test_index_reduce_errors_match_torch(program):
    assert_same_error(program)


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
def test_reductions_keep_infinite_gradients_where_torch_selects(reduce, include_self):
    """Where src is written without self, x's gradient is 0 even for an infinite upstream
    gradient (torch masks it; a multiplication by 0 made NaN; fuzz seed 1552 of the signal
    class), and prod's src gradient picks one of its two formulas (seeds 12330, 13404)."""
    def program(m):
        inf = float("inf")
        x = m.tensor([[1.0, 2], [3, inf], [5, 6]], requires_grad=True)
        src = m.tensor([[1.0, 3], [0, inf]], requires_grad=True)
        upstream = m.tensor([[1.0, inf], [inf, 2], [1, -inf]])
        out = m.scatter_reduce(x, 0, m.tensor([[2, 2], [1, 1]]), src, reduce,
                               include_self=include_self)
        grads = m.autograd.grad(out, (x, src), upstream)
        if reduce == "sum":
            return grads
        out = m.index_reduce(x, 0, m.tensor([2, 1]), src, reduce, include_self=include_self)
        return grads + m.autograd.grad(out, (x, src), upstream)
    assert_same(program)


@pytest.mark.filterwarnings("ignore:index_reduce")
def test_index_reduce_records_torch_s_node():
    for m in (torch, gradkit):
        x = m.ones(3, 2, requires_grad=True)
        out = m.index_reduce(x, 0, m.tensor([0, 0]), m.ones(2, 2), "mean")
        assert out.grad_fn.name() == "IndexReduceBackward0"


# -- apply_ and map_ ----------------------------------------------------------------------------

def _floats(m):
    return m.tensor([1.0, 2, 3])


@pytest.mark.parametrize("program", [
    lambda m: _floats(m).apply_(lambda v: v * 2),
    lambda m: m.tensor([1, 2, 3]).apply_(lambda v: v / 2),
    lambda m: m.tensor([1, 2, 3]).apply_(lambda v: v * 2.7),
    lambda m: m.tensor([[1.0, 2], [3, 4]]).t().apply_(lambda v: v * 10),
    lambda m: m.tensor([True, False]).apply_(lambda v: not v),
    lambda m: (_floats(m) + 0j).apply_(lambda v: v * 1j),
    lambda m: m.tensor([1.0, 2]).apply_(lambda v: True),
    lambda m: m.tensor([True]).apply_(lambda v: 5),
    lambda m: m.tensor([1.0, 2]).half().apply_(lambda v: v / 3),
    lambda m: m.tensor([1.0, 2]).apply_(lambda v: m.tensor(3.0)),
    lambda m: m.tensor([1, 2], dtype=m.uint8).apply_(lambda v: v - 5),
    lambda m: m.tensor([1.0, 2]).apply_(lambda v: 1e300),
    lambda m: _floats(m).map_(m.tensor([10.0, 20, 30]), lambda a, b: a + b),
    lambda m: _floats(m).map_(m.tensor([10.0]), lambda a, b: a * b)])
def test_apply_and_map_match_torch(program):
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: _floats(m).apply_(lambda v: "a"), lambda m: _floats(m).apply_(5),
    lambda m: _floats(m).requires_grad_().apply_(lambda v: v),
    lambda m: (_floats(m).requires_grad_() * 1).apply_(lambda v: v),
    lambda m: _floats(m).map_(m.tensor([10, 20, 30]), lambda a, b: a + b),
    lambda m: _floats(m).map_(5, lambda a, b: a),
    lambda m: _floats(m).apply_(lambda v: None),
    lambda m: m.tensor([1, 2]).apply_(lambda v: 2 ** 70),
    lambda m: _floats(m).requires_grad_().map_(_floats(m), lambda a, b: a),
    lambda m: _floats(m).map_(_floats(m).requires_grad_(), lambda a, b: a),
    lambda m: m.tensor([1, 2]).apply_(lambda v: "a"),
    lambda m: m.tensor([1, 2]).apply_(lambda v: 2.5 + 1j),
    lambda m: m.tensor([True]).apply_(lambda v: "x"),
    lambda m: m.tensor([1, 2], dtype=m.int8).apply_(lambda v: v * 100)])
def test_apply_and_map_errors_match_torch(program):
    assert_same_error(program)


def test_apply_writes_through_views_without_a_version_bump():
    for m in (torch, gradkit):
        base = m.tensor([[1.0, 2], [3, 4]])
        row = base[0]
        assert row.apply_(lambda v: -v) is row
        assert base.tolist() == [[-1.0, -2.0], [3.0, 4.0]] and base._version == 0
