"""torch's top-level linear algebra against torch: torch.svd / qr / cholesky / lu / lu_solve /
triangular_solve / cholesky_solve / cholesky_inverse / pinverse / geqrf / orgqr / ormqr, the
deprecated norms, pdist and the functions torch keeps only to raise. Conventions, batches,
empty matrices, warnings and errors here; gradients to second order: tests/op_db.py's rows."""
import re
import warnings

import numpy as np
import pytest

import gradkit
from test_ops_linalg2 import assert_same

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(1918)
A32 = _rng.standard_normal((3, 2))
SQUARE = _rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
SPD = SQUARE @ SQUARE.transpose(0, 2, 1)
B = _rng.standard_normal((3, 2))


def _t(m, array, **options):
    return m.tensor(np.asarray(array), **options)


def _warnings_of(program, m) -> list:
    """The texts of the warnings ``program(m)`` gives (torch's C++ location dropped)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(m)
    return [re.sub(r" \(Triggered internally at .*", "", str(w.message), flags=re.S)
            for w in caught]


@pytest.mark.parametrize("name,program", [
    ("qr", lambda m: m.qr(_t(m, A32))),
    ("cholesky", lambda m: m.cholesky(_t(m, SPD))),
    ("lu", lambda m: m.lu(_t(m, SQUARE))),
    ("lu_solve", lambda m: m.lu_solve(_t(m, B), *m.linalg.lu_factor(_t(m, SQUARE[0])))),
    ("triangular_solve", lambda m: m.triangular_solve(_t(m, B), _t(m, SQUARE[0]))),
    ("nuclear_norm", lambda m: m.nuclear_norm(_t(m, A32))),
    ("frobenius_norm", lambda m: m.frobenius_norm(_t(m, A32), (0, 1))),
    ("svd", lambda m: m.svd(_t(m, A32))),
    ("pinverse", lambda m: m.pinverse(_t(m, A32))),
])
def test_deprecation_warnings_are_torchs(name, program):
    """torch warns once per process (here every time: set_warn_always); gradkit on every call
    (Python shows it once per line)."""
    always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        expected = _warnings_of(program, torch)
    finally:
        torch.set_warn_always(always)
    assert _warnings_of(program, gradkit) == expected


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("program", [
    lambda m: m.svd(_t(m, A32)), lambda m: m.svd(_t(m, A32), some=False),
    lambda m: m.svd(_t(m, SQUARE), compute_uv=False),
    lambda m: m.svd(_t(m, A32.T), some=True, compute_uv=False),
    lambda m: m.svd(_t(m, A32 + 1j * A32[::-1]), compute_uv=False),
    lambda m: m.svd(_t(m, np.zeros((0, 3)))), lambda m: m.svd(_t(m, np.zeros((2, 0, 3))), False),
    lambda m: m.svd(_t(m, np.zeros((2, 0, 3))), compute_uv=False),
    lambda m: _t(m, A32).svd(some=False).V,
    lambda m: m.qr(_t(m, A32)), lambda m: m.qr(_t(m, A32), some=False),
    lambda m: m.qr(_t(m, SQUARE)), lambda m: _t(m, A32.T).qr(False),
    lambda m: m.cholesky(_t(m, SPD)), lambda m: m.cholesky(_t(m, SPD), upper=True),
    lambda m: _t(m, SPD).cholesky(True),
    lambda m: m.lu(_t(m, SQUARE)), lambda m: m.lu(_t(m, A32), get_infos=True),
    lambda m: m.lu(_t(m, np.zeros((2, 2))), get_infos=True),
    lambda m: m.lu(_t(m, np.zeros((2, 2)))),
    lambda m: _t(m, SQUARE).lu(get_infos=True),
    lambda m: m.lu_solve(_t(m, B), *m.lu(_t(m, SQUARE))),
    lambda m: _t(m, B).lu_solve(*m.lu(_t(m, SQUARE[0]))),
    lambda m: m.pinverse(_t(m, SQUARE)), lambda m: m.pinverse(_t(m, A32), 0.5),
    lambda m: _t(m, A32).pinverse(rcond=0.5),
    lambda m: m.matrix_exp(_t(m, SQUARE)), lambda m: _t(m, SQUARE).matrix_exp(),
    lambda m: m.matrix_power(_t(m, SQUARE), 3), lambda m: _t(m, SQUARE).matrix_power(-2),
])
def test_values_shapes_and_dtypes_match_torch(program):
    assert_same(program)


def test_svd_gives_v_not_vh_and_zero_factors_without_uv():
    a = gradkit.tensor(A32, requires_grad=True)
    u, s, v = gradkit.svd(a)
    assert np.allclose((u * s @ v.mH).detach().numpy(), A32)
    u0, s0, v0 = gradkit.svd(a, compute_uv=False)
    assert u0.grad_fn is None and v0.grad_fn is None and not u0.requires_grad
    assert not u0.numpy().any() and not v0.numpy().any() and s0.grad_fn is not None


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("program", [
    lambda m: m.triangular_solve(_t(m, B), _t(m, SQUARE[0])),
    lambda m: m.triangular_solve(_t(m, B), _t(m, SQUARE[0]), upper=False, transpose=True),
    lambda m: m.triangular_solve(_t(m, B), _t(m, SQUARE[:, None]), unitriangular=True),
    lambda m: m.triangular_solve(_t(m, np.ones((2, 1))), _t(m, np.zeros((2, 2)))),
    lambda m: _t(m, B).triangular_solve(_t(m, SQUARE[0]), False),
    lambda m: m.triangular_solve(_t(m, np.zeros((2, 0, 2))), _t(m, np.zeros((0, 0)))),
    lambda m: m.cholesky_solve(_t(m, B), m.linalg.cholesky(_t(m, SPD))),
    lambda m: m.cholesky_solve(_t(m, B), m.linalg.cholesky(_t(m, SPD)).mH, upper=True),
    lambda m: m.cholesky_solve(_t(m, np.ones((4, 3, 1))), _t(m, np.eye(3)).expand(2, 1, 3, 3)),
    lambda m: _t(m, B).cholesky_solve(m.linalg.cholesky(_t(m, SPD[0]))),
    lambda m: m.cholesky_inverse(m.linalg.cholesky(_t(m, SPD))),
    lambda m: _t(m, SPD).cholesky().cholesky_inverse(),
    lambda m: m.cholesky_inverse(m.linalg.cholesky(_t(m, SPD)).mH, upper=True),
    lambda m: m.cholesky_inverse(_t(m, np.zeros((2, 0, 0)))),
])
def test_solvers_match_torch(program):
    assert_same(program)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_triangular_solve_copies_the_broadcast_coefficient_with_its_full_gradient():
    def program(m):
        a = _t(m, SQUARE[0], requires_grad=True)
        solution, copy = m.triangular_solve(_t(m, np.ones((2, 3, 1))), a)
        return (copy,) + m.autograd.grad((solution.sum() + copy.sum(),), a)
    assert_same(program)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_gradients_treat_the_factor_as_full(upper):
    """torch's formulas give the factor's unread triangle a gradient too (op_db checks the read
    triangle to second order)."""
    def program(m):
        factor = m.linalg.cholesky(_t(m, SPD), upper=upper).detach().requires_grad_()
        b = _t(m, B, requires_grad=True)
        x = m.cholesky_solve(b, factor, upper=upper)
        inverse = m.cholesky_inverse(factor, upper=upper)
        return m.autograd.grad((x * x).sum() + (inverse * inverse).sum(), (b, factor))
    assert_same(program)


def _solver_errors(name):
    """Programs that ``lib.<name>(b, A)`` refuses: dims, shapes, dtypes, batches."""
    pairs = [(np.ones(3), np.eye(3)), (np.ones((3, 1)), np.ones(3)),
             (np.ones((3, 1)), np.ones((3, 2))), (np.ones((2, 1)), np.eye(3)),
             (np.ones((3, 1), dtype=np.int64), np.eye(3, dtype=np.int64)),
             (np.ones((4, 3, 1)), np.ones((2, 3, 3)))]
    return [lambda m, b=b, a=a: getattr(m, name)(_t(m, b), _t(m, a)) for b, a in pairs] + [
        lambda m: getattr(m, name)(_t(m, np.ones((3, 1))), _t(m, np.eye(3), dtype=m.float32))]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("program", [
    lambda m: m.svd(_t(m, np.ones(3))),
    lambda m: m.svd(_t(m, np.ones((2, 2), dtype=np.int64))),
    lambda m: m.qr(_t(m, np.ones(3))),
    lambda m: m.cholesky(_t(m, np.ones(3))),
    lambda m: m.cholesky(_t(m, np.ones((2, 3)))),
    lambda m: m.cholesky(_t(m, -SPD)),
    lambda m: m.lu(_t(m, np.ones(3))), lambda m: m.lu(_t(m, np.ones((2, 2), dtype=np.int64))),
    lambda m: m.lu(_t(m, np.ones((2, 2))), pivot=False),
    lambda m: m.lu_solve(_t(m, np.ones(3)), *m.linalg.lu_factor(_t(m, np.eye(3)))),
    lambda m: m.lu_solve(_t(m, np.ones((2, 1))), *m.linalg.lu_factor(_t(m, np.eye(3)))),
    lambda m: m.lu_solve(_t(m, np.ones((3, 1)), dtype=m.float32),
                         *m.linalg.lu_factor(_t(m, np.eye(3)))),
    *_solver_errors("cholesky_solve"), *_solver_errors("triangular_solve"),
    lambda m: m.cholesky_inverse(_t(m, np.ones(3))),
    lambda m: m.cholesky_inverse(_t(m, np.ones((3, 2)))),
    lambda m: m.cholesky_inverse(_t(m, np.ones((3, 3), dtype=np.int64))),
    lambda m: m.cholesky_inverse(_t(m, np.zeros((2, 2)))),
    lambda m: m.cholesky_inverse(_t(m, np.stack([np.eye(2), np.diag([1.0, 0.0])]))),
    lambda m: m.pinverse(_t(m, np.ones((2, 2), dtype=np.int64))),
    lambda m: m.pinverse(_t(m, np.ones(2))),
    lambda m: m.matrix_power(_t(m, np.ones(3)), 2), lambda m: m.matrix_exp(_t(m, np.ones(3))),
])
def test_errors_match_torch(program):
    assert_same(program)


GEQRF_INPUTS = [A32, SQUARE, _rng.standard_normal((2, 2, 3)), np.zeros((0, 2)),
                A32 + 1j * A32[::-1]]


@pytest.mark.parametrize("a", GEQRF_INPUTS, ids=range(len(GEQRF_INPUTS)))
def test_geqrf_orgqr_and_ormqr_rebuild_lapacks_q(a):
    def program(m):
        reflectors, tau = m.geqrf(_t(m, a))
        k = tau.shape[-1]
        q = (m.orgqr(reflectors[..., :k], tau), reflectors[..., :k].orgqr(tau))
        other = m.ones(a.shape[:-2] + (a.shape[-2], 2), dtype=reflectors.dtype)
        return (reflectors, tau, q, m.ormqr(reflectors, tau, other),
                _t(m, a).geqrf().tau, reflectors.ormqr(tau, other.mT, False, True))
    assert_same(program)


def test_geqrf_has_no_derivative_as_torch():
    a = gradkit.tensor(A32, requires_grad=True)
    out = gradkit.geqrf(a)
    assert out.a.grad_fn.name() == "GeqrfBackward0"
    with pytest.raises(NotImplementedError, match="^the derivative for 'geqrf' is not "
                                                  "implemented.$"):
        out.a.sum().backward()


A43, TAU3 = np.linalg.qr(_rng.standard_normal((4, 3)), mode="raw")[0].T, _rng.random(3)


@pytest.mark.parametrize("program", [
    lambda m: m.geqrf(_t(m, np.ones(3))),
    lambda m: m.geqrf(_t(m, np.ones((2, 2), dtype=np.int64))),
    lambda m: m.orgqr(_t(m, np.ones((2, 3))), _t(m, np.ones(2))),
    lambda m: m.ormqr(_t(m, np.ones(3)), _t(m, TAU3), _t(m, np.ones((4, 2)))),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3), _t(m, np.ones(4))),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3), _t(m, np.ones((3, 2)))),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3), _t(m, np.ones((2, 3))), left=False),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3), _t(m, np.ones((2, 4))), left=False),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3[:2]), _t(m, np.ones((4, 2)))),
    lambda m: m.ormqr(_t(m, A43), _t(m, np.ones(4)), _t(m, np.ones((2, 4))), left=False),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3[None]), _t(m, np.ones((4, 2)))),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3, dtype=m.float32), _t(m, np.ones((4, 2)))),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3), _t(m, np.ones((4, 2)), dtype=m.float32)),
    lambda m: m.ormqr(_t(m, A43).expand(2, 4, 3), _t(m, TAU3), _t(m, np.ones((2, 4, 2)))),
    lambda m: m.ormqr(_t(m, A43).expand(2, 4, 3), _t(m, TAU3).expand(3, 3),
                      _t(m, np.ones((2, 4, 2)))),
    lambda m: m.ormqr(_t(m, A43).expand(2, 4, 3), _t(m, TAU3).expand(2, 3),
                      _t(m, np.ones((1, 4, 2)))),
    lambda m: m.ormqr(_t(m, A43), _t(m, TAU3), _t(m, np.ones((2, 4, 2)))),
    lambda m: m.ormqr(*(_t(m, np.ones(s, dtype=np.int64)) for s in ((3, 3), 3, (3, 3)))),
])
def test_householder_errors_match_torch(program):
    assert_same(program)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("program", [
    lambda m: m.nuclear_norm(_t(m, A32), keepdim=True),
    lambda m: m.nuclear_norm(_t(m, SQUARE)), lambda m: m.nuclear_norm(_t(m, SQUARE), (0, 1)),
    lambda m: m.nuclear_norm(_t(m, SQUARE), True),
    lambda m: m.nuclear_norm(_t(m, SQUARE), dim=(0,)),
    lambda m: m.nuclear_norm(_t(m, np.ones(3))),
    lambda m: m.frobenius_norm(_t(m, A32), (0,)), lambda m: m.frobenius_norm(_t(m, A32), ()),
    lambda m: m.frobenius_norm(_t(m, SQUARE), 1, True),
    lambda m: m.frobenius_norm(_t(m, SQUARE), (0, 1, 2)),
])
def test_deprecated_norms_match_torch(program):
    assert_same(program)


def test_removed_functions_raise_torchs_errors():
    a = np.eye(2)
    for name, args in (("solve", (a, a)), ("lstsq", (a, a)), ("eig", (a,)), ("symeig", (a,)),
                       ("matrix_rank", (a,))):
        outcomes = []
        for m in (gradkit, torch):
            calls = [getattr(m, name)] + ([getattr(m.Tensor, name)] if name != "matrix_rank"
                                          else [])
            for call in calls:
                with pytest.raises(RuntimeError) as error:
                    call(*(_t(m, x) for x in args))
                outcomes.append(str(error.value))
        assert len(set(outcomes)) == 1 and outcomes[0].startswith("This function was deprecated")
    assert not hasattr(torch.Tensor, "matrix_rank") and not hasattr(gradkit.Tensor, "matrix_rank")


ROWS = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [1.0, -1.0, 0.5], [2.0, 0.0, -1.0]])


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 0.5, 3.0, float("inf")])
def test_pdist_values_and_gradients_with_a_zero_distance(p):
    def program(m):
        x = _t(m, ROWS, requires_grad=True)
        out = m.pdist(x, p)
        return (out, m.nn.functional.pdist(x, p)) + m.autograd.grad((out * out.detach()).sum(), x)
    assert_same(program)


NON_FINITE_ROWS = np.array([[np.nan, 1.0, 5.0], [2.0, 3.0, 0.0], [1.0, 9.0, np.nan],
                            [0.0, 0.0, 0.0], [np.inf, 1.0, 1.0]])


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 0.5, 3.0, float("inf")])
def test_pdist_of_nan_and_inf_rows_as_torch(p):
    """torch's pdist(p=inf) is NaN at a NaN difference, where its cdist(p=inf) passes over it
    (gradkit gave pdist cdist's maximum: 5.0 where torch gives NaN)."""
    def program(m):
        x = _t(m, NON_FINITE_ROWS, requires_grad=True)
        out = m.nn.functional.pdist(x, p)
        return (out, m.cdist(x, x, p)) + m.autograd.grad(out.sum(), x)
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: m.pdist(_t(m, np.ones((1, 2)))), lambda m: m.pdist(_t(m, np.ones((0, 2)))),
    lambda m: m.pdist(_t(m, np.ones((3, 0)))),
    lambda m: m.pdist(_t(m, np.ones(3))), lambda m: m.pdist(_t(m, np.ones((3, 2, 2)))),
    lambda m: m.pdist(_t(m, np.ones((3, 2))), -1.0),
    lambda m: m.pdist(_t(m, np.ones((3, 2), dtype=np.int64))),
])
def test_pdist_edges_and_errors_match_torch(program):
    assert_same(program)


# -- linalg.ldl_factor(_ex), linalg.ldl_solve ------------------------------------------------------

def _symmetric(*shape, complex_=False, small_diagonal=False):
    a = _rng.standard_normal(shape) + (1j * _rng.standard_normal(shape) if complex_ else 0)
    if small_diagonal:  # Bunch-Kaufman then takes 2 x 2 pivots and interchanges
        a[..., np.arange(shape[-1]), np.arange(shape[-1])] *= 0.01
    return a


LDL_CASES = [
    (_symmetric(4, 4), False), (_symmetric(5, 5, small_diagonal=True), False),
    (_symmetric(2, 3, 3, small_diagonal=True), False),
    (np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]]), False),
    (_symmetric(4, 4, complex_=True, small_diagonal=True), False),
    (_symmetric(4, 4, complex_=True, small_diagonal=True), True),
    (_symmetric(3, 3, complex_=True), True), (_symmetric(6, 6, small_diagonal=True), True),
]


@pytest.mark.parametrize("a,hermitian", LDL_CASES, ids=range(len(LDL_CASES)))
def test_ldl_factor_and_solve_match_lapacks(a, hermitian):
    """The factor, pivots (2 x 2 blocks: both -p) and solutions of LAPACK's sytrf / hetrf;
    each matrix is read from its lower triangle (its upper one is noise here)."""
    b = _rng.standard_normal(a.shape[:-1] + (2,)).astype(a.dtype)

    def program(m):
        ld, pivots, info = m.linalg.ldl_factor_ex(_t(m, a), hermitian=hermitian)
        factors = m.linalg.ldl_factor(_t(m, a), hermitian=hermitian)
        return (ld, pivots, info, *factors,
                m.linalg.ldl_solve(ld, pivots, _t(m, b), hermitian=hermitian))
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: m.linalg.ldl_factor_ex(_t(m, np.zeros((2, 2)))),
    lambda m: m.linalg.ldl_factor_ex(_t(m, np.stack([SPD[0], np.zeros((3, 3))]))),
    lambda m: m.linalg.ldl_factor(_t(m, np.zeros((2, 0, 0)))),
    lambda m: m.linalg.ldl_factor_ex(_t(m, np.ones(3))),
    lambda m: m.linalg.ldl_factor_ex(_t(m, np.ones((2, 3)))),
    lambda m: m.linalg.ldl_factor_ex(_t(m, np.ones((2, 2), dtype=np.int64))),
    lambda m: m.linalg.ldl_factor_ex(_t(m, np.ones((2, 2)), dtype=m.float16)),
    lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(_t(m, SPD)), _t(m, np.ones((1, 3, 1)))),
    lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(_t(m, SPD[0])), _t(m, np.ones((3, 1))),
                                 hermitian=True),
])
def test_ldl_edges_match_torch(program):
    assert_same(program)


LD, PIVOTS = (torch.tensor(x) for x in (np.tril(SPD[0]), np.arange(1, 4, dtype=np.int32)))


@pytest.mark.parametrize("program", [
    lambda m: m.linalg.ldl_factor(_t(m, np.zeros((2, 2)))),
    lambda m: m.linalg.ldl_factor_ex(_t(m, np.zeros((2, 2))), check_errors=True),
    lambda m: m.linalg.ldl_solve(_t(m, LD), _t(m, PIVOTS)[:2], _t(m, np.ones((3, 1)))),
    lambda m: m.linalg.ldl_solve(_t(m, LD)[:2], _t(m, PIVOTS), _t(m, np.ones((3, 1)))),
    lambda m: m.linalg.ldl_solve(_t(m, np.ones(3)), _t(m, PIVOTS), _t(m, np.ones((3, 1)))),
    lambda m: m.linalg.ldl_solve(_t(m, LD), _t(m, PIVOTS), _t(m, np.ones(3))),
    lambda m: m.linalg.ldl_solve(_t(m, LD), _t(m, PIVOTS), _t(m, np.ones((2, 1)))),
    lambda m: m.linalg.ldl_solve(_t(m, LD), _t(m, PIVOTS), _t(m, np.ones((3, 1)),
                                                               dtype=m.float32)),
    lambda m: m.linalg.ldl_solve(_t(m, LD).expand(2, 3, 3), _t(m, PIVOTS).expand(2, 3),
                                 _t(m, np.ones((4, 3, 1)))),
])
def test_ldl_errors_match_torch(program):
    ours, theirs = [], []
    for m, outcome in ((gradkit, ours), (torch, theirs)):
        with pytest.raises(Exception) as error:  # noqa: PT011 - the type is compared below
            program(m)
        # torch 2.13 reports a singular D through an internal assert around sytrf's code
        outcome += [type(error.value).__name__.lstrip("_"),
                    re.sub(r".*please report a bug to PyTorch\. ", "", str(error.value))]
    assert ours == theirs


def test_ldl_has_no_derivative_as_torch():
    a = gradkit.tensor(SPD[0], requires_grad=True)
    ld, pivots = gradkit.linalg.ldl_factor(a)
    b = gradkit.ones(3, 1, dtype=gradkit.float64, requires_grad=True)
    x = gradkit.linalg.ldl_solve(ld.detach(), pivots, b)
    assert ld.grad_fn.name() == x.grad_fn.name() == "torch::autograd::NotImplemented"
    for out, name in ((ld, "linalg_ldl_factor_ex"), (x, "linalg_ldl_solve")):
        with pytest.raises(RuntimeError, match=f"^derivative for aten::{name} is not "
                                               "implemented$"):
            out.sum().backward()
    with gradkit.autograd.forward_ad.dual_level():
        dual = gradkit.autograd.forward_ad.make_dual(a.detach(), gradkit.ones(3, 3).double())
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with "
                                                      "aten::linalg_ldl_factor_ex that does not "
                                                      "support it.$"):
            gradkit.linalg.ldl_factor_ex(dual)
