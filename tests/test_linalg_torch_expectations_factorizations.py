"""torch's linear algebra tests (test/test_linalg.py, TestLinalg), fourth part: Householder
products and ormqr, LU, lobpcg, pinverse, matrix_power and matrix_exp, re-run as programs
under torch 2.13 and gradkit (see tests/test_linalg_torch_expectations.py for the
conventions)."""
import numpy as np
import pytest
from test_linalg_torch_expectations import cases, hermitian_pd, randn, t
from test_linalg_torch_expectations_solvers import fullrank
from test_ops_linalg2 import assert_same

torch = pytest.importorskip("torch")


# -- test_householder_product*, test_ormqr* ---------------------------------------------------

def _householder_cases():
    table = []
    for shape in [(0, 0), (5, 0), (5, 5), (5, 3), (0, 0, 0), (0, 5, 5), (0, 5, 3), (2, 5, 5),
                  (2, 5, 3), (2, 1, 5, 5), (2, 1, 5, 3)]:
        for cplx in (False, True):
            a = randn(*shape, complex_=cplx)
            table += [(f"householder_product{shape}{cplx}", lambda m, a=a: (
                m.linalg.householder_product(*m.geqrf(t(m, a))), m.linalg.qr(t(m, a))[0])),
                (f"householder_product_no_tau{shape}{cplx}", lambda m, a=a: (
                    m.linalg.householder_product(m.geqrf(t(m, a))[0], m.zeros(
                        *a.shape[:-2], 0, dtype=getattr(m, str(a.dtype))))))]
    for a_size, tau_size in [((10,), (2,)), ((10, 6), (20,)), ((6, 10), (5,))]:
        table.append((f"householder_product_error{a_size}{tau_size}", lambda m, a=a_size,
                      tau=tau_size: m.linalg.householder_product(m.ones(a), m.ones(tau))))
    table.append(("householder_product_int_tau", lambda m: m.linalg.householder_product(
        m.ones(3, 3), m.ones(3, dtype=m.int32))))
    return table


def _ormqr_cases():
    table = []
    for batch in [(), (0,), (2,), (2, 1)]:
        for rows, cols in [(5, 5), (5, 2), (2, 5), (0, 0), (5, 0), (0, 2)]:
            a = randn(*batch, rows, cols, complex_=rows == cols)
            right, left = (randn(*batch, *s, complex_=rows == cols) for s in ((rows, cols),
                                                                              (cols, rows)))
            for fortran in (True, False):
                table.append((f"ormqr{batch}{rows}x{cols}{fortran}", lambda m, a=a, c=right,
                              d=left, f=fortran: (lambda r, tau: (
                                  m.ormqr(r if f else r.contiguous(), tau, t(m, c)),
                                  m.ormqr(r, tau, t(m, d), left=False),
                                  m.ormqr(r, tau, t(m, c), transpose=True),
                                  m.ormqr(r, tau, t(m, d), left=False, transpose=True),
                                  m.ormqr(r, m.zeros_like(tau), t(m, c))))(*m.geqrf(t(m, a)))))
    for sizes in [((10,), (2,), (2,)), ((2, 2), (2,), (2,)), ((10, 6), (20,), (10, 6)),
                  ((6, 6), (5,), (5, 5)), ((1, 2, 2), (2, 2), (1, 2, 2)),
                  ((1, 2, 2), (1, 2), (2, 2, 2))]:
        table.append((f"ormqr_error{sizes}", lambda m, s=sizes: m.ormqr(*(m.ones(x) for x in s))))
    return table


# -- test_linalg_lu_factor_and_lu, test_lu_unpack*, test_blas_empty (lu) ----------------------

def _random_matrix(rows, cols, *batch, singular=False):
    """A matrix of rank min(rows, cols) (singular: one less)."""
    a = randn(*batch, rows, cols)
    if singular and min(rows, cols) > 0:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        s[..., -1] = 0
        a = (u * s[..., None, :]) @ vh
    return a


def _lu_cases():
    table = []
    for rows, cols in [(3, 3), (5, 5), (4, 2), (3, 4), (0, 0), (0, 1), (1, 0)]:
        for batch in [(0,), (2,), (3,), (1, 0), (3, 5)]:
            for singular in (True, False):
                a = _random_matrix(rows, cols, *batch, singular=singular)
                if a.size == 0 and not singular:
                    continue
                # LU with partial pivoting of a matrix with a zero pivot: the factors are
                # LAPACK's own rounding, compared through P L U = A and the pivots' shape
                table += [(f"lu_factor{rows}x{cols}{batch}{singular}", lambda m, a=a: (
                    lambda lu, piv: (m.dist(m.matmul(*m.lu_unpack(lu, piv)[:2]) @
                                            m.lu_unpack(lu, piv)[2], t(m, a)) < 1e-10,
                                     m.tensor(list(piv.shape)), m.tensor(list(lu.shape))))(
                    *m.linalg.lu_factor_ex(t(m, a))[:2])),
                    (f"old_lu{rows}x{cols}{batch}{singular}", lambda m, a=a: tuple(
                        m.tensor(list(x.shape)) for x in m.lu(t(m, a), get_infos=True)))]
    ones = np.ones((5, 3, 3))
    table += [("lu_factor_ex_info_rank_deficient", lambda m: m.linalg.lu_factor_ex(
        t(m, ones)).info),
        ("lu_factor_singular_checked", lambda m: m.linalg.lu_factor(t(m, ones))),
        ("lu_no_pivot_cpu", lambda m: m.lu(m.empty(1, 2, 2), pivot=False)),
        ("lu_factor_no_pivot_cpu", lambda m: m.linalg.lu_factor(m.empty(1, 2, 2), pivot=False))]
    for shape in [(0, 5, 5), (0, 0, 0), (2, 0, 0)]:
        table.append((f"lu_empty{shape}", lambda m, s=shape: m.lu(m.ones(s))))
    for shape in [(3, 3), (5, 3, 3), (7, 3, 5, 5), (7, 5, 3, 3, 3), (3, 5), (5, 3), (3, 3, 5),
                  (3, 5, 3), (7, 5, 3, 5, 3), (7, 5, 3, 3, 5), (0, 0), (0, 0, 0), (0, 3, 3)]:
        for cplx in (False, True):
            a = 0.1 * randn(*shape, complex_=cplx)
            table.append((f"lu_unpack{shape}{cplx}", lambda m, a=a: m.lu_unpack(*m.lu(t(m, a)))))
    x = fullrank(5, 5, 5)
    table += [("lu_unpack_long_pivots", lambda m: (lambda lu, piv: m.lu_unpack(lu, piv.long()))(
        *m.lu(t(m, x)))),
        ("lu_unpack_noncontiguous_pivots", lambda m: (lambda lu, piv: m.lu_unpack(lu, piv.mT))(
            *m.lu(t(m, x)))),
        ("lu_unpack_flags", lambda m: (lambda lu, piv: tuple(
            m.zeros(()) if y is None else y for y in
            m.lu_unpack(lu, piv, unpack_data=False) + m.lu_unpack(lu, piv, unpack_pivots=False)
            + m.lu_unpack(lu, piv, unpack_data=False, unpack_pivots=False)))(*m.lu(t(m, x))))]
    return table


# -- test_lobpcg_basic/ortho (their invariants), test_pinverse, test_matrix_power_*,
#    test_linalg_matrix_exp_* -----------------------------------------------------------------

def _lobpcg_cases():
    """The standard problem on one real matrix: gradkit's lobpcg has no B, method, tracker
    or batches (NotImplementedError, documented)."""
    table = []
    for m_, n, k in [(9, 3, 1), (9, 3, 2), (9, 2, 2), (20, 6, 2)]:
        a, x = hermitian_pd(m_), randn(m_, n)
        for largest in (False, True):
            table.append((f"lobpcg{m_}{n}{k}{largest}", lambda m, a=a, x=x, k=k, largest=largest:
                          (lambda e, v: (e, m.dist(t(m, a) @ v, v * e) < 1e-6))(
                              *m.lobpcg(t(m, a), k=k, X=t(m, x), largest=largest, tol=1e-10,
                                        niter=1000))))
    return table


def _power_exp_cases():
    table = []
    for size in [(5, 5), (3, 5, 5), (3, 7, 5, 5), (3, 2), (5, 3, 2), (7, 5, 3, 2), (2, 3),
                 (5, 2, 3), (7, 5, 2, 3), (0, 0), (0, 2), (2, 0), (3, 0, 0), (0, 3, 0), (0, 0, 3)]:
        for cplx in (False, True):
            a = randn(*size, complex_=cplx)
            table.append((f"pinverse{size}{cplx}", lambda m, a=a: m.pinverse(t(m, a))))
    for size in [(5, 5), (3, 5, 5), (3, 7, 5, 5)]:
        a = fullrank(*size)
        table.append((f"pinverse_invertible{size}", lambda m, a=a: m.pinverse(t(m, a)) @ t(m, a)))
    for size in [(0, 0), (1, 1), (5, 5), (0, 3, 3), (2, 3, 3)]:
        for cplx in (False, True):
            a = randn(*size, complex_=cplx)
            table.append((f"matrix_power{size}{cplx}", lambda m, a=a: tuple(
                m.linalg.matrix_power(t(m, a), n) for n in range(8))))
    for size in [(0, 0), (5, 5), (2, 0, 0), (0, 3, 3), (2, 3, 3), (2, 3, 5, 5)]:
        for cplx in (False, True):
            a = fullrank(*size, complex_=cplx)
            table.append((f"matrix_power_negative{size}{cplx}", lambda m, a=a: tuple(
                m.linalg.matrix_power(t(m, a), n) for n in range(-7, 0))))
    singular = np.ones((2, 3, 3))
    table += [("matrix_power_nonsquare", lambda m: m.linalg.matrix_power(m.ones(2, 3), 2)),
              ("matrix_power_1d", lambda m: m.linalg.matrix_power(m.ones(3), 2)),
              ("matrix_power_float_n", lambda m: m.linalg.matrix_power(m.eye(3), 2.0)),
              ("matrix_power_singular_negative", lambda m: m.linalg.matrix_power(
                  t(m, singular), -1)),
              ("matrix_power_int", lambda m: (m.linalg.matrix_power(t(m, [[1, 2], [3, 4]]), 3),
                                              m.linalg.matrix_power(t(m, [[1, 2], [3, 4]]), 0))),
              ("matrix_power_int_negative", lambda m: m.linalg.matrix_power(
                  t(m, [[1, 2], [3, 4]]), -1))]
    table += [("matrix_exp_int", lambda m: m.linalg.matrix_exp(m.ones(3, 3, dtype=m.int32))),
              ("matrix_exp_1d", lambda m: m.linalg.matrix_exp(m.ones(3))),
              ("matrix_exp_nonsquare", lambda m: m.linalg.matrix_exp(m.ones(3, 2, 1))),
              ("matrix_exp_1x1", lambda m, a=randn(3, 3, 1, 1): m.linalg.matrix_exp(t(m, a))),
              ("matrix_exp_zero", lambda m: m.linalg.matrix_exp(m.zeros(20, 20)))]
    for n in [(2, 2), (3, 3), (5, 5), (40, 40), (3, 2, 2), (3, 5, 5), (3, 3, 4, 4)]:
        for cplx in (False, True):
            q = np.eye(n[-1]) + np.random.default_rng(n[-1]).random(n) / n[-1] ** 2
            d = randn(*n[:-1], complex_=cplx)
            x = q @ (d[..., :, None] * np.linalg.inv(q))
            for norm in (1e-8, 3e-4, 5e-2, 0.3, 1.1, 3.0, 8.0):
                scale = norm / np.abs(x).sum(-2).max(-1)[..., None, None]
                table.append((f"matrix_exp{n}{cplx}_{norm}", lambda m, a=x * scale:
                              m.linalg.matrix_exp(t(m, a))))
    return table


@cases(_householder_cases() + _ormqr_cases() + _lu_cases() + _lobpcg_cases() + _power_exp_cases())
def test_factorizations_match_torch(program):
    """test_householder_product, test_householder_product_errors_and_warnings, test_ormqr,
    test_ormqr_errors_and_warnings, test_linalg_lu_factor_and_lu, test_lu_unpack,
    test_lu_unpack_check_input, test_blas_empty (lu), test_lobpcg_basic/ortho (the standard
    problem on one dense matrix: its eigenvalues and A V = V E), test_pinverse,
    test_matrix_power_non_negative, test_matrix_power_negative,
    test_linalg_matrix_exp_boundary_cases, test_linalg_matrix_exp_analytic (norms across
    every Pade degree), test_linalg_matrix_exp_batch."""
    assert_same(program)


# -- beyond the stored test file (newer functions and the list): vander, vecdot,
#    ldl_factor/ldl_solve, linalg.diagonal, linalg.lu, integer inputs across the ops --------

def _newer_cases():
    table = []
    x, y = randn(4), randn(2, 3, complex_=True)
    for kw in ({}, {"N": 0}, {"N": 1}, {"N": 6}):
        table += [(f"vander{kw}", lambda m, kw=kw: m.linalg.vander(t(m, x), **kw)),
                  (f"vander_batch_complex{kw}", lambda m, kw=kw: m.linalg.vander(t(m, y), **kw)),
                  (f"vander_int{kw}", lambda m, kw=kw: m.linalg.vander(t(m, [1, 2, 3]), **kw))]
    table += [("vander_0d", lambda m: m.linalg.vander(m.tensor(2.0))),
              ("vander_negative_n", lambda m: m.linalg.vander(t(m, x), N=-1)),
              ("vander_bool", lambda m: m.linalg.vander(t(m, [True, False])))]
    a, b = randn(2, 3, 4, complex_=True), randn(3, 4, complex_=True)
    table += [("vecdot", lambda m: m.linalg.vecdot(t(m, a), t(m, b))),
              ("vecdot_dim", lambda m: m.linalg.vecdot(t(m, a), t(m, b[:, :1]).expand(3, 4),
                                                       dim=-2)),
              ("vecdot_int", lambda m: m.linalg.vecdot(t(m, [1, 2]), t(m, [3, 4]))),
              ("vecdot_mismatch", lambda m: m.linalg.vecdot(t(m, a), t(m, b[:, :3]))),
              ("vecdot_dtypes", lambda m: m.linalg.vecdot(t(m, a), t(m, b.real))),
              ("vecdot_method", lambda m: t(m, a).real.vecdot(t(m, b.real)) if hasattr(
                  t(m, a), "vecdot") else m.linalg.vecdot(t(m, a).real, t(m, b.real)))]
    for hermitian in (False, True):
        for cplx in (False, True):
            s = hermitian_pd(4, 2, complex_=cplx) - 3 * np.eye(4)  # indefinite
            rhs = randn(2, 4, 3, complex_=cplx)
            table.append((f"ldl{hermitian}{cplx}", lambda m, s=s, r=rhs, h=hermitian: (
                lambda ld, piv: (m.dist(t(m, s) @ m.linalg.ldl_solve(ld, piv, t(m, r), hermitian=h),
                                        t(m, r)) < 1e-8, m.tensor(list(piv.shape))))(
                *m.linalg.ldl_factor(t(m, s), hermitian=h))))
    table += [("ldl_factor_ex_info", lambda m: m.linalg.ldl_factor_ex(m.zeros(3, 3)).info),
              ("ldl_factor_1d", lambda m: m.linalg.ldl_factor(m.ones(3))),
              ("ldl_factor_nonsquare", lambda m: m.linalg.ldl_factor(m.ones(2, 3))),
              ("cholesky_ex_1d", lambda m: m.linalg.cholesky_ex(m.ones(3))),
              ("cholesky_ex_nonsquare", lambda m: m.linalg.cholesky_ex(m.ones(2, 3)))]
    d = randn(2, 3, 4)
    table += [("linalg_diagonal", lambda m: (m.linalg.diagonal(t(m, d)),
                                             m.linalg.diagonal(t(m, d), offset=1, dim1=0, dim2=2))),
              ("linalg_diagonal_same_dims", lambda m: m.linalg.diagonal(t(m, d), dim1=1, dim2=1))]
    for shape in [(3, 3), (4, 2), (2, 4), (2, 3, 3), (0, 3, 3)]:
        a_ = randn(*shape)
        table.append((f"linalg_lu{shape}", lambda m, a=a_: (lambda p, lo, up: (
            m.dist(p @ lo @ up, t(m, a)) < 1e-10, m.tensor(list(lo.shape)),
            m.tensor(list(up.shape))))(
            *m.linalg.lu(t(m, a)))))
    ints = np.array([[2, 1], [1, 2]])
    for name in ("det", "slogdet", "inv", "inv_ex", "cholesky", "cholesky_ex", "eigh", "eigvalsh",
                 "eig", "eigvals", "svd", "svdvals", "qr", "matrix_exp", "cond", "matrix_rank",
                 "pinv", "lu_factor", "lu", "matrix_norm", "vector_norm", "norm", "ldl_factor",
                 "householder_product", "tensorinv", "matrix_power", "diagonal"):
        args = {"householder_product": lambda m: (t(m, ints), t(m, [1, 1])),
                "matrix_power": lambda m: (t(m, ints), 2)}.get(name, lambda m: (t(m, ints),))
        table.append((f"int_input_{name}", lambda m, n=name, args=args: getattr(m.linalg, n)(
            *args(m))))
    return table


@cases(_newer_cases())
def test_newer_functions_and_integer_inputs_match_torch(program):
    """linalg.vander, vecdot, ldl_factor/ldl_solve (hermitian or not), diagonal, lu, and an
    integer matrix given to each function of torch.linalg (refused or computed as torch)."""
    assert_same(program)
