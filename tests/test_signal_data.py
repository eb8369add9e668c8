"""The data helpers against torch: gradient (values over its spacing forms, dtypes, errors;
its gradients: op_db rows "gradient"), unique_consecutive, index_reduce, apply_ and map_."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

SAMPLES = [[1.0, 2, 4, 8], [10, 20, 40, 100]]


def _outcome(m, program):
    try:
        result = program(m)
    except Exception as error:  # noqa: BLE001 - the error is the observation
        return type(error).__name__, str(error).replace("torch.", "gradkit.")
    results = result if isinstance(result, (list, tuple)) else [result]
    return [(str(r.dtype).split(".")[-1], r.detach().numpy()) for r in results]


def assert_same(program):
    expected, got = _outcome(torch, program), _outcome(gradkit, program)
    if isinstance(expected, tuple):
        assert got == expected
        return
    assert len(got) == len(expected)
    for (dtype, ours), (t_dtype, theirs) in zip(got, expected, strict=True):
        assert dtype == t_dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


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
    expected = _outcome(torch, program)
    assert isinstance(expected, tuple)
    assert _outcome(gradkit, program) == expected


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
    lambda m: m.unique_consecutive(m.tensor(3.0), dim=0),
    lambda m: m.unique_consecutive(m.tensor([1 + 1j, 1 + 1j, 2]), return_counts=True)])
def test_unique_consecutive_errors_match_torch(program):
    expected = _outcome(torch, program)
    assert isinstance(expected, tuple)
    assert _outcome(gradkit, program) == expected


def test_unique_consecutive_values_have_torch_s_refusing_node():
    for m in (torch, gradkit):
        values = m.unique_consecutive(m.tensor([1.0, 1.0, 2.0], requires_grad=True))
        assert values.grad_fn.name() == "UniqueConsecutiveBackward0"
        with pytest.raises(NotImplementedError, match="the derivative for 'unique_consecutive' "
                                                      "is not implemented."):
            values.sum().backward()
