"""Op behaviour the table does not reach: error messages (torch's words), erf accuracy,
dtype promotion, 0-d/empty tensors, and einsum's equation handling."""
import math

import numpy as np
import pytest

import gradkit
from gradkit.ops.special import erf_array


def T(data, **kw):
    return gradkit.tensor(data, dtype=gradkit.float64, **kw)


# -- einsum ------------------------------------------------------------------------------------

@pytest.mark.parametrize("equation,shapes,message", [
    ("ij,jk->ik", [(2, 3), (4, 5)],
     "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    ("ij,jk->ik", [(2, 3)], "fewer operands were provided than specified in the equation"),
    ("ij", [(2, 3), (2, 3)], "more operands were provided than specified in the equation"),
    ("ij->ik", [(2, 3)], "output subscript k does not appear in the equation for any input"),
    ("ijk->i", [(2, 3)], r"the number of subscripts in the equation \(3\) does not match the "
                         r"number of dimensions \(2\) for operand 0 and no ellipsis was given"),
    ("ii->i", [(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    ("ij->ii", [(2, 3)], "output subscript i appears more than once in the output"),
    ("i1->i", [(2, 3)], "invalid subscript given at index 1 in the equation string"),
])
def test_einsum_errors_use_torchs_messages(equation, shapes, message):
    with pytest.raises(RuntimeError, match="einsum\\(\\): " + message):
        gradkit.einsum(equation, *[gradkit.ones(*s) for s in shapes])


def test_einsum_accepts_a_list_of_operands_and_spaces():
    a, b = T([[1.0, 2.0], [3.0, 4.0]]), T([1.0, -1.0])
    assert gradkit.einsum("ij, j -> i", [a, b]).tolist() == [-1.0, -1.0]


def test_einsum_implicit_output_is_sorted_like_torch():
    torch = pytest.importorskip("torch")
    a = np.random.standard_normal((2, 3))
    got = gradkit.einsum("ba", T(a))
    np.testing.assert_allclose(got.numpy(), torch.einsum("ba", torch.tensor(a)).numpy())
    assert tuple(got.shape) == (3, 2)


def test_einsum_trace_gradient_is_the_identity():
    x = T(np.random.standard_normal((3, 3)), requires_grad=True)
    gradkit.einsum("ii", x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3))
    assert x.grad.shape == (3, 3)


def test_einsum_nodes_are_torchs():
    """torch computes einsum with other ops: a sum, a permute view, a view of a bmm."""
    x = T(np.ones((2, 2)), requires_grad=True)
    assert gradkit.einsum("ij->j", x).grad_fn.name() == "SumBackward1"
    assert gradkit.einsum("ij->ji", x).grad_fn.name() == "PermuteBackward0"
    product = gradkit.einsum("ij,jk->ik", x, x)
    assert product.grad_fn.name() == "ViewBackward0"
    assert product._is_view() and product._base.shape == (1, 2, 2)


# -- erf ---------------------------------------------------------------------------------------

class _GenericNumpy:
    """NumPy seen as "some other array module", so erf takes its xp-only path (CuPy's)."""

    def __getattr__(self, name):
        return getattr(np, name)


@pytest.mark.parametrize("xp", [np, _GenericNumpy()], ids=["numpy", "generic_xp"])
def test_erf_is_accurate_to_double_precision(xp):
    x = np.concatenate([np.linspace(-7.0, 7.0, 20001), [0.0, 1e-300, -1e-8, 2.5, 30.0]])
    expected = np.array([math.erf(v) for v in x])
    got = erf_array(xp, x)
    relative = np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)
    assert relative.max() < 4e-15


@pytest.mark.parametrize("xp", [np, _GenericNumpy()], ids=["numpy", "generic_xp"])
def test_erf_keeps_dtype_and_special_values(xp):
    x = np.array([np.inf, -np.inf, np.nan, 0.5], dtype=np.float32)
    got = erf_array(xp, x)
    assert got.dtype == np.float32
    assert got[0] == 1.0 and got[1] == -1.0 and np.isnan(got[2])
    assert abs(float(got[3]) - math.erf(0.5)) < 1e-7


def test_gelu_uses_the_accurate_erf():
    torch = pytest.importorskip("torch")
    x = np.linspace(-6, 6, 101)
    np.testing.assert_allclose(gradkit.gelu(T(x)).numpy(),
                               torch.nn.functional.gelu(torch.tensor(x)).numpy(), rtol=0,
                               atol=2e-16 * 8)


# -- shapes, dims and dtypes -------------------------------------------------------------------

def test_reductions_accept_dim_0_and_minus_1_on_0d_tensors():
    x = T(2.0, requires_grad=True)
    assert gradkit.softmax(x, 0).item() == 1.0
    assert gradkit.log_softmax(x, -1).item() == 0.0
    assert gradkit.logsumexp(x, 0).item() == 2.0
    y = gradkit.cumsum(x, 0)
    assert y.shape == () and y.item() == 2.0
    y.backward()
    assert x.grad.item() == 1.0


def test_dim_out_of_range_names_the_range():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)"):
        gradkit.sum(gradkit.ones(2, 3), 2)


def test_integer_and_float_promotion_follows_torch():
    i = gradkit.tensor([1, 2])
    assert (i * 2.5).dtype == gradkit.float32
    assert (i / i).dtype == gradkit.float32
    assert gradkit.sum(i).dtype == gradkit.int64
    assert (T([1.0]) + gradkit.tensor([1.0], dtype=gradkit.float32)).dtype == gradkit.float64


def test_mean_of_integers_asks_for_a_dtype():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        gradkit.mean(gradkit.tensor([1, 2]))


def test_empty_reductions():
    empty = gradkit.zeros(0, 3, dtype=gradkit.float64, requires_grad=True)
    total = gradkit.sum(empty, 0)
    assert total.tolist() == [0.0, 0.0, 0.0]
    total.sum().backward()
    assert empty.grad.shape == (0, 3)
    with pytest.raises(RuntimeError, match="amax\\(\\): Expected reduction dim to be specified"):
        gradkit.amax(empty)


def test_max_with_dim_returns_values_and_indices_like_torch():
    x = T([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True)
    values, indices = gradkit.max(x, 1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.grad_fn is None and not indices.requires_grad
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def test_max_with_dim_supports_double_backward():
    x = T([[1.0, 5.0], [7.0, 0.0]], requires_grad=True)
    (g,) = gradkit.autograd.grad(gradkit.max(x, 0).values.pow(2).sum(), x, create_graph=True)
    (gg,) = gradkit.autograd.grad(g.sum(), x)
    assert gg.tolist() == [[0.0, 2.0], [2.0, 0.0]]


def test_prod_gradient_with_zeros():
    x = T([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]], requires_grad=True)
    gradkit.prod(x, 1).sum().backward()
    assert x.grad.tolist() == [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_pad_backward_and_negative_pad():
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = gradkit.pad(x, (1, -1))
    assert y.tolist() == [[0.0, 0.0, 1.0], [0.0, 3.0, 4.0]]
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode mirror"):
        gradkit.pad(x, (1, 1), "mirror")
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        gradkit.pad(x, (1,))


def test_sgn_of_complex_has_torchs_gradient():
    torch = pytest.importorskip("torch")
    z = np.array([1 + 2j, -3 + 0.5j, 0j])
    x = gradkit.tensor(z, requires_grad=True)
    t = torch.tensor(z, requires_grad=True)
    (gradkit.sgn(x) * gradkit.tensor([1 - 1j, 2j, 1.0])).real.sum().backward()
    (torch.sgn(t) * torch.tensor([1 - 1j, 2j, 1.0])).real.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-15)


def test_scatter_add_src_larger_than_index_gets_zero_gradient_outside():
    x = T(np.zeros((2, 3)), requires_grad=True)
    src = T([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = gradkit.scatter_add(x, 1, gradkit.tensor([[2], [0]]), src)
    assert out.tolist() == [[0.0, 0.0, 1.0], [3.0, 0.0, 0.0]]
    (out * T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    assert src.grad.tolist() == [[3.0, 0.0], [4.0, 0.0]]


def test_clamp_requires_a_bound():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        gradkit.clamp(gradkit.ones(2))


def test_matmul_shape_error_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 2x4\)"):
        gradkit.matmul(gradkit.ones(2, 3), gradkit.ones(2, 4))


PROMOTION_CASES = [
    ("maximum int with float tensor", lambda m, t: m.maximum(t([1, 2]), t([0.5, 3.0]))),
    ("where int with float tensor", lambda m, t: m.where(t([True, False]), t([1, 2]),
                                                         t([0.5, 3.0]))),
    ("clamp int with float bound", lambda m, t: m.clamp(t([1, 2]), 1.5)),
    ("clamp int with int bound", lambda m, t: m.clamp(t([1, 2]), 2)),
    ("exp of int", lambda m, t: m.exp(t([1, 2]))),
    ("sqrt of int", lambda m, t: m.sqrt(t([1, 4]))),
    ("sigmoid of int", lambda m, t: m.sigmoid(t([1, 4]))),
    ("float32 times int64 tensor", lambda m, t: t([1.0, 2.0]) * t([1, 2])),
    ("float32 vector plus float64 0-d", lambda m, t: t([1.0]) + t(2.0, dtype=m.float64)),
    ("int vector plus float64 0-d", lambda m, t: t([1]) + t(2.0, dtype=m.float64)),
    ("int32 vector plus int64 0-d", lambda m, t: t([1], dtype=m.int32) + t(2)),
    ("float64 0-d times complex64", lambda m, t: t(2.0, dtype=m.float64)
     * t([1j], dtype=m.complex64)),
]


@pytest.mark.parametrize("name,program", PROMOTION_CASES, ids=[c[0] for c in PROMOTION_CASES])
def test_dtype_promotion_matches_torch(name, program):
    torch = pytest.importorskip("torch")
    got = program(gradkit, gradkit.tensor)
    expected = program(torch, torch.tensor)
    assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
