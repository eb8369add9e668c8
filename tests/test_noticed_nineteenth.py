"""Differences from torch 2.13 noticed in earlier sessions and settled in the nineteenth
(docs/torch_expectations.md, "Noticed, nineteenth session"), each program run in both
libraries."""
import math

import numpy as np
import pytest
from cpu_kernels import torch_runs_avx512_kernels
from test_breadth_fuzz_found import _outcome

import gradkit

torch = pytest.importorskip("torch")


def _same_as_mkl(ours, theirs) -> bool:
    """gradkit's getrf rounds as torch's MKL on an AVX-512 CPU (where it was read): there the
    outcomes must agree; another CPU's MKL kernels may round a borderline pivot otherwise,
    which skips the case, named, rather than pass or fail it silently."""
    if not torch_runs_avx512_kernels() and ours != theirs:
        pytest.skip("this CPU's MKL getrf rounds this matrix otherwise than its AVX-512 one")
    return ours == theirs


def _complex_row(m):
    return m.tensor([1 + 1j, 2 + 2j, 3 + 3j, 4 - 1j])


@pytest.mark.parametrize("write", [
    lambda x: x[1:].copy_(x.conj()[:-1]), lambda x: x[:-1].copy_(x.conj()[1:]),
    lambda x: x.conj()[1:].copy_(x[:-1]), lambda x: x.conj()[1:].copy_(x.conj()[:-1]),
    lambda x: x[::2].copy_(x.conj()[1::2]), lambda x: x.conj().copy_(x),
    lambda x: x.copy_(x.conj()), lambda x: x[2:].copy_(x.conj()[:2]),
    lambda x: x.conj()[1:].add_(x[:-1]), lambda x: x[1:].add_(x.conj()[:-1]),
    lambda x: x[1:3].copy_(x[:-1].conj()[1:]),
    lambda x: x.__setitem__(slice(1, None), x.conj()[:-1])])
def test_copy_from_a_partly_overlapping_conj_view_is_refused(write):
    """torch's copy_ has no conj fallback (no copy of the conjugated side first): it reads the
    view's memory, so a source or target that partly overlaps the other through a conj view
    is refused as any partial overlap (``x[1:] = x.conj()[:-1]`` too); the same memory whole
    is no error. Other in-place ops (add_) copy the conj operand out first and go through, as
    gradkit's did. (An expanded source is not checked: test_torch_fuzz_found_more.py's
    Known of conj_views seed 327845.)"""
    def program(m):
        x = _complex_row(m)
        write(x)
        return x
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


_WITH_OUT = {
    "clamp": lambda m, out: m.clamp(m.tensor([1.0, 5.0, -3.0]), -1, 2, out=out),
    "clip": lambda m, out: m.clip(m.tensor([1.0, 5.0, -3.0]), -1, 2, out=out),
    "index_select": lambda m, out: m.index_select(m.tensor([1.0, 5.0, 7.0]), 0,
                                                  m.tensor([2, 0, 1]), out=out),
    "add": lambda m, out: m.add(m.tensor([1.0, 5.0, -3.0]), 1, out=out),
}


@pytest.mark.parametrize("name", sorted(_WITH_OUT))
def test_out_arguments_are_refused_where_torch_writes_into_them(name):
    """A deliberate difference (docs/torch_expectations.md): gradkit takes ``out=`` on no op,
    so clamp, clip and index_select refuse it as add does, with Python's TypeError naming
    it, where torch writes the result into ``out`` and returns it."""
    out = torch.empty(3)
    assert _WITH_OUT[name](torch, out) is out
    with pytest.raises(TypeError, match="'out'"):
        _WITH_OUT[name](gradkit, gradkit.empty(3))


_SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 0.5]
_POINTS = [complex(a, b) for a in _SPECIAL for b in _SPECIAL]


def _derivative_parts(m, name: str, dtype: str, incoming: complex, mode: str):
    """The gradient (or tangent) of ``m.<name>`` at every special point: its real and
    imaginary parts, NaNs made alike (a NaN's sign bit aside)."""
    kind = getattr(m, dtype)
    x = m.tensor(_POINTS, dtype=kind, requires_grad=mode != "forward")
    seed = m.full((len(_POINTS),), incoming, dtype=kind)
    if mode == "forward":
        ad = m.autograd.forward_ad
        with ad.dual_level():
            value = ad.unpack_dual(getattr(m, name)(ad.make_dual(x, seed))).tangent
    else:
        (value,) = m.autograd.grad(getattr(m, name)(x), x, seed, create_graph=mode == "graph")
    parts = np.stack([value.detach().real.numpy(), value.detach().imag.numpy()])
    return np.where(np.isnan(parts), np.nan, parts)


def _kinds(parts):
    """Each part's kind: NaN, an infinity, a zero (by its sign) or a number's sign."""
    return np.where(np.isnan(parts), 9, np.where(np.isinf(parts), 3 * np.sign(parts), np.where(
        parts == 0, np.where(np.signbit(parts), -1, 1) * 0.5, np.sign(parts))))


_MODES = pytest.mark.parametrize("mode", ["backward", "graph", "forward"])
_INCOMING = pytest.mark.parametrize("incoming", [
    1, complex(math.inf, 0), complex(0, math.inf), complex(0.0, -0.0), complex(-0.0, 0.0),
    complex(-math.inf, 1), complex(1, -2)], ids=str)
_COMPLEX = pytest.mark.parametrize("dtype", ["complex64", "complex128"])


@_MODES
@_INCOMING
@_COMPLEX
@pytest.mark.parametrize("name", ["atanh", "exp2"])
def test_complex_atanh_and_exp2_derivatives_at_special_points_agree_bitwise(
        name, dtype, incoming, mode):
    """torch's formulas in their order: atanh's ``grad * 1 / (1 - self.pow(2)).conj()`` (the
    gradient times 1 first: an infinite part makes its partner NaN, a -0 part +0; 1 - y as
    1 + (-1) y) and exp2's ``grad * result.conj() * M_LN2`` (the product by log 2 last), their
    tangents torch's auto_element_wise ones. gradkit divided by 1 - y and multiplied by
    out * log 2, so inf + NaN j where torch has NaN + NaN j, and zeros of other signs."""
    ours = _derivative_parts(gradkit, name, dtype, incoming, mode)
    assert ours.tobytes() == _derivative_parts(torch, name, dtype, incoming, mode).tobytes()


@_MODES
@_INCOMING
@_COMPLEX
@pytest.mark.parametrize("name", ["expm1", "log2", "log10", "sqrt"])
def test_complex_derivatives_at_special_points_have_torchs_zero_signs_and_nans(
        name, dtype, incoming, mode):
    """torch's formulas conjugate first: expm1's ``grad * (result.conj() + 1)``, log2's and
    log10's ``grad / (self.conj() * log b)``, sqrt's ``grad / (2 * result.conj())`` (tangents
    auto_element_wise); gradkit conjugated the whole factor, whose zero parts then had the
    other sign. Only the kinds of the parts are compared: torch's vectorized complex kernels
    (division, expm1) round an ulp from its scalar ones, by an element's position."""
    ours = _derivative_parts(gradkit, name, dtype, incoming, mode)
    assert (_kinds(ours) == _kinds(_derivative_parts(torch, name, dtype, incoming, mode))).all()


@pytest.mark.parametrize("n", [1, 3, 40])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_cholesky_inverse_of_a_factor_with_a_non_real_diagonal_is_lapacks(dtype, upper, n):
    """torch's cholesky_inverse is LAPACK's potri: trtri, then lauum, which reads each
    diagonal entry of the inverted triangle as its real part (the last one scales its row)
    and, past MKL's block of 32 (40 here), drops the block diagonal's imaginary parts in herk.
    gradkit inverted L L^H. The gradient, from the result and L, agrees with it."""
    rng = np.random.default_rng(n)
    shape = (2, n, n)  # a batch whose first factor has a real diagonal
    data = rng.standard_normal(shape) + 1j * rng.standard_normal(shape) + \
        3 * n * np.eye(n) * np.array([1, 1 + 0.5j])[:, None, None]
    data = np.triu(data) if upper else np.tril(data)
    weights = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    def program(m):
        factor = m.tensor(data, dtype=getattr(m, dtype), requires_grad=True)
        inverse = m.cholesky_inverse(factor, upper=upper)
        (inverse * m.tensor(weights, dtype=getattr(m, dtype))).real.sum().backward()
        return inverse.detach().numpy(), factor.grad.numpy()
    tolerance = 1e-4 if dtype == "complex64" else 1e-10
    for ours, theirs in zip(program(gradkit), program(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance * abs(theirs).max())


_SINGULAR = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]  # getrf: a zero third pivot
_REGULAR = [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("layout", ["rows", "columns"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_solve_ex_on_the_right_of_a_singular_matrix_goes_through_its_own_lu(dtype, layout, batch):
    """torch's solve_ex(A, B, left=False) factors A itself (whatever its layout) and solves
    A^H X^H = B^H through that LU (getrs 'C'): its info and the inf and NaN of its
    substitution, and the gradients through the same LU. gradkit factored A^T, whose LU
    fails elsewhere (NaN and inf in other places)."""
    def program(m):
        kind = getattr(m, dtype)
        a = m.tensor([_REGULAR, _SINGULAR] if batch else _SINGULAR, dtype=kind)
        if layout == "columns":
            a = a.mT.contiguous().mT
        a.requires_grad_()
        b = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0], [0.0, 1.0, 0.0], [2.0, 0.0, 1.0]],
                     dtype=kind, requires_grad=True)
        x, info = m.linalg.solve_ex(a, b, left=False)
        x.sum().abs().backward()
        return [v.detach().resolve_conj().numpy() for v in (x, info, a.grad, b.grad)]
    for ours, theirs in zip(program(gradkit), program(torch)):  # (NaN and inf where torch's)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("function", ["solve", "solve_ex"])
@pytest.mark.parametrize("shapes", [
    ((2, 3), (2, 3), "float32", "float64"), ((2, 2), (3, 1), "float32", "float32"),
    ((2, 3), (2, 3), "float32", "float32"), ((2, 2), (), "float32", "float32"),
    ((3, 2, 2), (4, 3, 2), "float32", "float32"), ((2, 2), (3, 3), "float32", "float32")],
    ids=str)
@pytest.mark.parametrize("left", [True, False])
def test_solve_checks_the_equation_as_given(function, shapes, left):
    """torch checks X A = B as it is (A's columns against B's, "XA = B (2x2 and 3x1)", A's
    own shape), the dtypes before A's squareness, and B's batch dims first in the broadcast
    message; gradkit checked the transposed equation, and solve_ex A's shape first."""
    a_shape, b_shape, a_dtype, b_dtype = shapes

    def program(m):
        a = m.ones(a_shape, dtype=getattr(m, a_dtype))
        return getattr(m.linalg, function)(a, m.ones(b_shape, dtype=getattr(m, b_dtype)),
                                           left=left)[0]
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


_RANK_DEFICIENT = {  # integer-valued singular matrices that OpenBLAS and MKL round apart
    "3x3-a": ([[5, 11, -5], [16, -8, 2], [11, -7, 2]], "float64"),
    "3x3-b": ([[4, 1, 3], [-12, -3, -9], [-17, -7, -13]], "float64"),
    "3x3-c": ([[-5, -4, -3], [-2, -1, 0], [1, 2, 3]], "float32"),
    "4x4": ([[-1, -3, 3, 3], [-9, 1, 3, 3], [-2, 1, 0, 0], [3, -13, -12, 6]], "float64"),
    "5x5": ([[3 + 5 * i + j for j in range(5)] for i in range(5)], "float64"),
    "5x5-float32": ([[3 * (5 * i + j) - 3 for j in range(5)] for i in range(5)], "float32"),
}


@pytest.mark.parametrize("function", ["inv", "solve"])
@pytest.mark.parametrize("name", sorted(_RANK_DEFICIENT))
def test_inv_of_a_matrix_singular_to_one_blas_only_follows_mkls_getrf(name, function):
    """torch's inv raises where its (MKL's) getrf meets an exact 0 pivot: that getrf scales
    the column by the pivot's reciprocal and updates with fused multiply-adds, and finds the
    zero pivots of these matrices where OpenBLAS's (NumPy's) does not, or the other way
    round. gradkit's getrf rounds as MKL's (its info is torch's), inv raises where it finds a
    zero pivot and otherwise returns the substitution through its LU (finite noise, as
    torch's other noise); it raised, or inverted, by OpenBLAS's. solve too."""
    values, dtype = _RANK_DEFICIENT[name]

    def program(m):
        a = m.tensor(values, dtype=getattr(m, dtype))
        info = int(m.linalg.lu_factor_ex(a).info)
        try:
            inverse = m.linalg.inv(a) if function == "inv" else m.linalg.solve(a, m.ones_like(a))
        except RuntimeError as error:
            return info, str(error)
        return info, bool(m.isfinite(inverse).all())
    assert _same_as_mkl(program(gradkit), program(torch))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_solve_on_the_right_decides_singularity_by_as_own_lu(dtype, transposed):
    """torch's solve(A, B, left=False) factors A (an exact 0 pivot in
    [[1, 2, 3], [2, 4, 6], [1, 0, 1]]'s LU, none in its transpose's): gradkit factored A^T,
    so it raised for the transpose and solved the matrix itself. Under create_graph
    solve_ex(left=False)'s backward solves with A^H on the right, factoring A^H."""
    def program(m):
        a = m.tensor(_SINGULAR, dtype=getattr(m, dtype))
        a = a.mT if transposed else a
        try:
            x = m.linalg.solve(a, m.eye(3, dtype=a.dtype), left=False)
        except RuntimeError as error:
            solved = str(error)
        else:
            solved = bool(m.isfinite(x).all())
        a.requires_grad_()
        x, _ = m.linalg.solve_ex(a, m.eye(3, dtype=a.dtype), left=False)
        try:
            grad = m.autograd.grad(x.abs().sum(), a, create_graph=True)[0]
        except RuntimeError as error:
            return solved, str(error)
        return solved, bool(m.isnan(grad).any())
    assert _same_as_mkl(program(gradkit), program(torch))


@pytest.mark.parametrize("left", [True, False])
def test_solves_backward_goes_through_as_own_lu_unchecked(left):
    """torch's plain backward of solve reuses A's LU (lu_solve, adjoint), unchecked: for A the
    transpose of [[1, 2, 3], [2, 4, 6], [1, 0, 1]] (no zero pivot, while A^H's LU has one)
    it gives finite noise; gradkit solved with A^H anew and raised the singular error."""
    def program(m):
        a = m.tensor(_SINGULAR, dtype=m.float64)
        a = (a.mT.contiguous() if left else a.mT).detach().requires_grad_()
        b = m.eye(3, dtype=m.float64, requires_grad=True)
        m.linalg.solve(a, b, left=left).sum().backward()
        return a.grad.numpy(), b.grad.numpy()
    ours, theirs = program(gradkit), program(torch)
    close = all(np.allclose(o, t, rtol=1e-12) for o, t in zip(ours, theirs))
    assert _same_as_mkl(close, True)
