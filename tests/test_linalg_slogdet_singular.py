"""slogdet, logdet (and det) at singular and NaN matrices, against torch 2.13: torch solves
A^H G = g I through its LU, so a plain backward (and forward mode) gives the inf and NaN of a
division by the zero pivot, a recorded backward (create_graph) raises linalg.solve's error,
and a NaN makes the sign 0 (complex: NaN), logabsdet and det NaN (breadth fuzz seed 136086)."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

NAN = math.nan
SINGULAR = {  # name: (values, dtype)
    "zero_1x1": ([[0.0]], "float64"),
    "rank_one": ([[1.0, 2.0], [2.0, 4.0]], "float64"),
    "zeros": ([[0.0, 0.0], [0.0, 0.0]], "float64"),
    "rank_two_3x3": ([[1.0, 2.0, 4.0], [2.0, 4.0, 8.0], [1.0, 0.0, 1.0]], "float64"),
    "zero_row": ([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 3.0, 1.0]], "float64"),
    "batch_one_singular": ([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]]], "float64"),
    "float32": ([[1.0, 2.0], [2.0, 4.0]], "float32"),
    "complex": ([[1 + 1j, 2 + 2j], [2 + 2j, 4 + 4j]], "complex128"),
    "complex_zero_column": ([[0j, 1.0], [0j, 2.0]], "complex128"),
}
NAN_MATRICES = {
    "nan_1x1": ([[NAN]], "float64"),
    "nan_first": ([[NAN, 1.0], [1.0, 1.0]], "float64"),
    "nan_corner": ([[1.0, NAN], [1.0, 1.0]], "float64"),
    "complex_nan": ([[NAN + 0j, 1.0], [1.0, 1.0]], "complex128"),
}


def _leaf(m, values, dtype, transposed=False):
    x = m.tensor(values, dtype=getattr(m, dtype))
    x = x.mT.contiguous().mT if transposed else x  # a column-major A: torch factors A itself
    return x.requires_grad_()


def _host(t):
    return t.detach().resolve_conj().numpy(force=True) if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def _same(got, expected):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # inf, -inf and NaN where torch has them, finite values to rounding
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("function", ["slogdet", "logdet"])
@pytest.mark.parametrize("case", sorted({**SINGULAR, **NAN_MATRICES}))
def test_plain_backward_solves_through_the_lu_as_torch(case, function, transposed):
    """The gradient of logabsdet (logdet) at a singular or NaN matrix: torch's LU solve of
    g I, its zero pivot giving inf and NaN, and no error."""
    values, dtype = {**SINGULAR, **NAN_MATRICES}[case]
    results = []
    for m in (torch, gradkit):
        x = _leaf(m, values, dtype, transposed)
        out = m.linalg.slogdet(x)[1] if function == "slogdet" else m.logdet(x)
        (grad,) = m.autograd.grad((out.real if out.is_complex() else out).sum(), x)
        results.append((_host(out), _host(grad)))
    for got, expected in zip(results[1], results[0]):
        _same(got, expected)


@pytest.mark.parametrize("case", sorted(SINGULAR))
def test_recorded_backward_refuses_a_singular_matrix_as_torch(case):
    """create_graph: torch solves with linalg.solve, which refuses the singular matrix (naming
    the batch element)."""
    values, dtype = SINGULAR[case]
    messages = []
    for m in (torch, gradkit):
        x = _leaf(m, values, dtype)
        with pytest.raises(m.linalg.LinAlgError) as raised:
            m.autograd.grad(m.linalg.slogdet(x)[1].sum(), x, create_graph=True)
        messages.append(str(raised.value))
    assert messages[1] == messages[0]
    assert "The solver failed because the input matrix is singular." in messages[0]


@pytest.mark.parametrize("case", sorted(NAN_MATRICES))
def test_recorded_backward_of_a_nan_matrix_is_nan(case):
    """create_graph at a NaN matrix: torch's solve computes NaN, and so does gradkit (NumPy's
    inverse refuses such a matrix), with a graph."""
    values, dtype = NAN_MATRICES[case]
    grads = []
    for m in (torch, gradkit):
        x = _leaf(m, values, dtype)
        (grad,) = m.autograd.grad(m.linalg.slogdet(x)[1].sum(), x, create_graph=True)
        assert grad.requires_grad
        grads.append(_host(grad))
    _same(grads[1], grads[0])


@pytest.mark.parametrize("case", sorted({**SINGULAR, **NAN_MATRICES}))
def test_forward_mode_at_a_singular_matrix(case):
    """slogdet's jvp tr(A^{-1} dA) through the LU: NaN or inf at a singular matrix."""
    values, dtype = {**SINGULAR, **NAN_MATRICES}[case]
    tangents = []
    for m in (torch, gradkit):
        x = m.tensor(values, dtype=getattr(m, dtype))
        with m.autograd.forward_ad.dual_level():
            dual = m.autograd.forward_ad.make_dual(x, m.ones_like(x))
            sign, logabsdet = m.linalg.slogdet(dual)
            tangents.append([_host(m.autograd.forward_ad.unpack_dual(t).tangent)
                             for t in (sign, logabsdet)])
    for got, expected in zip(tangents[1], tangents[0]):
        _same(got, expected)


@pytest.mark.parametrize("case", sorted({**NAN_MATRICES, "inf_1x1": ([[math.inf]], "float64"),
                                         "complex_inf": ([[math.inf + 0j]], "complex128")}))
def test_sign_of_a_nan_matrix(case):
    """torch's sign is the product of its pivots' signs: 0 for a NaN pivot (complex: NaN),
    logabsdet NaN; an infinite real pivot keeps its sign."""
    values, dtype = {**NAN_MATRICES, "inf_1x1": ([[math.inf]], "float64"),
                     "complex_inf": ([[math.inf + 0j]], "complex128")}[case]
    got, expected = ([_host(t) for t in m.linalg.slogdet(m.tensor(values, dtype=getattr(
        m, dtype)))] for m in (gradkit, torch))
    for g, e in zip(got, expected):
        _same(g, e)


@pytest.mark.parametrize("values", [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]])
def test_real_sign_alone_has_no_gradient(values):
    """A real sign's gradient is none in torch (no solve, so nothing NaN at a singular A)."""
    for m in (torch, gradkit):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        assert m.autograd.grad(m.linalg.slogdet(x)[0].sum(), x, allow_unused=True) == (None,)


def test_complex_division_by_a_zero_pivot_is_nan():
    """BLAS divides a complex value by a zero pivot to nan+nanj (NumPy's division gives inf):
    solve_triangular (trsm) and lu_solve (getrs), as slogdet's forward mode above uses."""
    results = []
    for m in (torch, gradkit):
        a = m.tensor([[0j, 1.0], [0j, 2.0]], dtype=m.complex128)
        b = m.tensor([[1 + 0j, 0], [0j, 0]], dtype=m.complex128)
        lu, pivots, _ = m.linalg.lu_factor_ex(a)
        results.append([_host(t) for t in (
            m.linalg.solve_triangular(a, b, upper=True), m.linalg.lu_solve(lu, pivots, b),
            m.linalg.lu_solve(lu, pivots, b, adjoint=True), m.linalg.solve_ex(a, b).result)])
    for got, expected in zip(*results[::-1]):
        for part in (np.real, np.imag):  # nan+nanj, not inf+nanj
            _same(part(got), part(expected))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("values", [[[NAN, 1.0], [1.0, 1.0]], [[1.0, NAN], [0.0, 1.0]],
                                    [[[NAN, 1.0], [1.0, 1.0]], [[1.0, 2.0], [3.0, 4.0]]],
                                    [[[0.0, 0.0], [0.0, 0.0]], [[NAN, 2.0], [3.0, 4.0]]]])
def test_det_of_a_nan_matrix_is_nan_with_nan_gradient(values, dtype, create_graph):
    """A NaN reaches one of torch's pivots: det is NaN (NumPy's LAPACK gave 0 for some) and
    its gradient NaN throughout (gradkit's raised from its SVD); the batch's other matrices
    keep theirs."""
    results = []
    for m in (torch, gradkit):
        x = _leaf(m, values, dtype)
        det = m.linalg.det(x)
        (grad,) = m.autograd.grad((det.real if det.is_complex() else det).sum(), x,
                                  create_graph=create_graph)
        results.append([_host(det), _host(grad)])
    for got, expected in zip(results[1], results[0]):
        for part in (np.real, np.imag):
            _same(part(got), part(expected))
