"""torch's linear algebra tests (test/test_linalg.py, TestLinalg), second part: SVD, inverses,
solvers, pseudo-inverses, tensorsolve/tensorinv, dot/vdot, re-run as programs under torch 2.13
and gradkit (see tests/test_linalg_torch_expectations.py for the conventions)."""
import math

import numpy as np
import pytest
from test_linalg_torch_expectations import cases, hermitian_pd, randn, t
from test_ops_linalg2 import assert_same

torch = pytest.importorskip("torch")


def shape_of(m, x):
    """A tensor's shape as an int64 tensor, so that shapes are compared too."""
    return m.tensor(list(x.shape), dtype=m.int64)


def _svd_invariants(m, u, s, vh, k):
    """What any SVD shares: S, |U| and |Vh| on the k singular triplets, and every shape."""
    return (s, u[..., :k].abs(), vh[..., :k, :].abs(), shape_of(m, u), shape_of(m, vh))


# -- test_svd*, test_linalg_svd_compute_uv, test_svdvals, test_svd_errors_and_warnings ---------

def _svd_cases():
    table = []
    shapes = [(0, 0), (5, 0), (0, 5), (0, 0, 0), (0, 5, 5), (0, 5, 3), (3, 3), (5, 3, 3),
              (7, 5, 3, 3), (7, 3), (5, 7, 3), (7, 5, 7, 3), (3, 7), (5, 3, 7), (7, 5, 3, 7)]
    for shape in shapes:
        k = min(shape[-2:])
        a = randn(*shape)
        for some in (True, False):
            table += [(f"old_svd{shape}_{some}", lambda m, a=a, s=some, k=k: _svd_invariants(
                m, *(lambda u, s_, v: (u, s_, v.mT))(*m.svd(t(m, a), some=s)), k)),
                (f"old_svd_no_uv{shape}_{some}", lambda m, a=a, s=some: tuple(m.svd(
                    t(m, a), some=s, compute_uv=False))),
                (f"linalg_svd{shape}_{some}", lambda m, a=a, s=some, k=k: _svd_invariants(
                    m, *m.linalg.svd(t(m, a), full_matrices=not s), k))]
            if len(shape) > 2 and a.size:  # non-contiguous: batch dims reversed, matrix .mT
                perm = tuple(range(len(shape) - 3, -1, -1)) + (len(shape) - 1, len(shape) - 2)
                table.append((f"svd_noncontiguous{shape}_{some}", lambda m, a=a, s=some, p=perm,
                              k=k: _svd_invariants(m, *m.linalg.svd(
                                  t(m, a).permute(p), full_matrices=not s), k)))
    for shape, some, transposed in [((10, 10), True, False), ((10, 10), True, True),
                                    ((20, 5), True, False), ((20, 5), False, False),
                                    ((5, 20), True, True), ((5, 20), False, True)]:
        for cplx in (False, True):
            a = randn(*shape, complex_=cplx)
            table.append((f"svd_helper{shape}_{some}_{transposed}_{cplx}", lambda m, a=a, s=some,
                          tr=transposed: tuple(x[..., :5].abs() for x in m.svd(
                              t(m, a).mT if tr else t(m, a), some=s))))
    a = randn(10, 10, complex_=True)
    table.append(("svd_gives_v_not_vh", lambda m: (lambda u, s, v: (
        u @ m.diag(s).to(u.dtype) @ v.conj().T))(*m.svd(t(m, a), some=False))))
    a = randn(10, 11, complex_=True)
    table += [(f"linalg_svd_compute_uv_{full}", lambda m, f=full: _svd_invariants(
        m, *m.linalg.svd(t(m, a), f), 10)) for full in (True, False)]
    for batch in [(), (0,), (2,), (2, 1)]:
        for rows in (5, 2, 0):
            for cols in (5, 2, 0):
                a = randn(*batch, rows, cols, complex_=bool(rows % 2))
                table.append((f"svdvals{batch}{rows}x{cols}", lambda m, a=a: (
                    m.linalg.svdvals(t(m, a)), m.linalg.svd(t(m, a))[1])))
    wide = randn(3, 2 ** 14)
    table.append(("svd_wide_memory", lambda m: (m.linalg.svdvals(t(m, wide)),
                                                m.linalg.svd(t(m, wide), False)[1])))
    nan = np.full((3, 3), math.nan)
    batch_nan = randn(3, 6, 6)
    batch_nan[1, 0, 0] = math.nan
    for name in ("svd", "linalg_svd", "svdvals"):
        op = {"svd": lambda m: m.svd, "linalg_svd": lambda m: m.linalg.svd,
              "svdvals": lambda m: m.linalg.svdvals}[name]
        table += [(f"{name}_nan", lambda m, op=op: op(m)(t(m, nan))),
                  (f"{name}_batch_nan", lambda m, op=op: op(m)(t(m, batch_nan))),
                  (f"{name}_1d", lambda m, op=op: op(m)(t(m, np.ones(3)))),
                  (f"{name}_int", lambda m, op=op: op(m)(t(m, [[1, 2], [3, 4]])))]
    return table


@cases(_svd_cases())
def test_svd_matches_torch(program):
    """test_svd, test_svd_no_singularvectors, test_svd_complex, test_svd_square(_col_maj),
    test_svd_tall_some/all(_col_maj), test_linalg_svd_compute_uv, test_svdvals,
    test_svd_memory_allocation (2**14 columns here), test_svd_errors_and_warnings (NaN input);
    singular vectors through |U| and |Vh| on the k leading triplets."""
    assert_same(program)


def fullrank(*shape, complex_=False):
    """Well-conditioned square matrices (distinct singular values away from zero)."""
    n = shape[-1]
    return randn(*shape, complex_=complex_) + n * np.eye(n)


def _singular_batch(batch, index, n=3, at=-1):
    a = np.repeat(np.eye(n)[None], batch, axis=0)
    a[index, at, at] = 0
    return a


# -- test_inverse*, test_inv_ex*, test_inv_errors_and_warnings, test_pinv* ---------------------

def _inverse_cases():
    table = []
    ops = {"inverse": lambda m: m.inverse, "linalg_inv": lambda m: m.linalg.inv,
           "inv_ex": lambda m: lambda a: m.linalg.inv_ex(a).inverse,
           "method": lambda m: lambda a: a.inverse()}
    complex_matrix = fullrank(3, 3, complex_=True)
    for name, op in ops.items():
        for batch in [(), (0,), (2,), (2, 1)]:
            for n in (0, 5):
                a, wide = fullrank(*batch, n, n), fullrank(*batch, 2 * n, 2 * n)
                table += [(f"{name}{batch}{n}", lambda m, a=a, op=op: op(m)(t(m, a))),
                          (f"{name}_mT{batch}{n}", lambda m, a=a, op=op: op(m)(t(m, a).mT)),
                          (f"{name}_strided{batch}{n}", lambda m, a=wide, op=op: op(m)(
                              t(m, a)[..., ::2, ::2]))]
        for batch, index in [(1, 0), (2, 0), (2, 1), (4, 0), (4, 2), (10, 2)]:
            table.append((f"{name}_singular{batch}_{index}", lambda m, op=op, b=batch, i=index:
                          op(m)(t(m, _singular_batch(b, i)))))
        table += [(f"{name}_nonsquare", lambda m, op=op: op(m)(t(m, randn(2, 3, 4, 3)))),
                  (f"{name}_1d", lambda m, op=op: op(m)(t(m, randn(2)))),
                  (f"{name}_int", lambda m, op=op: op(m)(t(m, [[1, 0], [0, 1]]))),
                  (f"{name}_complex", lambda m, op=op: op(m)(t(m, complex_matrix)))]
    singular = np.eye(3)
    singular[-1, -1] = 0
    table += [("inv_ex_singular_info", lambda m: m.linalg.inv_ex(t(m, singular)).info),
              ("inv_ex_singular_checked", lambda m: m.linalg.inv_ex(t(m, singular),
                                                                    check_errors=True)),
              ("inv_ex_batch_info", lambda m: m.linalg.inv_ex(
                  t(m, _singular_batch(5, 3, at=-2))).info),
              ("inv_ex_batch_checked", lambda m: m.linalg.inv_ex(
                  t(m, _singular_batch(5, 3, at=-2)), check_errors=True))]
    big = np.repeat(np.eye(40)[None, None], 2, axis=0).repeat(3, axis=1)
    big[..., 10, 10] = 0
    table.append(("inverse_errors_large", lambda m: m.inverse(t(m, big))))
    return table


def _pinv_residuals(m, a, p):
    """The Moore-Penrose conditions' residuals (what any pseudo-inverse meets) and p itself."""
    return (p, m.linalg.matrix_norm(a @ p @ a - a) < 1e-8,
            m.linalg.matrix_norm(p @ a @ p - p) < 1e-8)


def _pinv_cases():
    table = []
    sizes = [(5, 5), (3, 5, 5), (3, 2, 5, 5), (3, 2), (5, 3, 2), (2, 5, 3, 2), (2, 3), (5, 2, 3),
             (2, 5, 2, 3), (0, 0), (0, 2), (2, 0), (3, 0, 0), (0, 3, 0), (0, 0, 3)]
    for size in sizes:
        for cplx in (False, True):
            a = randn(*size, complex_=cplx)
            rcond = np.random.default_rng(len(size)).random(size[:-2])
            table += [(f"pinv{size}{cplx}", lambda m, a=a: _pinv_residuals(
                m, t(m, a), m.linalg.pinv(t(m, a)))),
                (f"pinv_rcond{size}{cplx}", lambda m, a=a: (
                    m.linalg.pinv(t(m, a), rcond=0.3), m.linalg.pinv(t(m, a), rtol=0.3))),
                (f"pinv_rcond_tensor{size}{cplx}", lambda m, a=a, r=rcond: (
                    m.linalg.pinv(t(m, a), rcond=t(m, r)), m.linalg.pinv(t(m, a), rtol=t(m, r))))]
            for dtype in ("uint8", "int8", "int16", "int32", "int64", "float32", "bool"):
                table.append((f"pinv_rcond_{dtype}{size}{cplx}", lambda m, a=a, r=rcond, d=dtype:
                              m.linalg.pinv(t(m, a), rcond=t(m, r * 2, d))))
            if len(size) > 2:
                table.append((f"pinv_rcond_broadcast{size}{cplx}", lambda m, a=a, s=size:
                              m.linalg.pinv(t(m, a), rcond=t(m, np.linspace(0, 1, s[-3])))))
    for size in [(5, 5), (3, 5, 5), (3, 2, 5, 5), (0, 0), (3, 0, 0)]:
        for cplx in (False, True):
            a = hermitian_pd(size[-1], *size[:-2], complex_=cplx)
            table += [(f"pinv_hermitian{size}{cplx}", lambda m, a=a: (
                m.linalg.pinv(t(m, a), hermitian=True),
                m.linalg.pinv(t(m, a), hermitian=True, rtol=0.2)))]
    a = randn(3, 3)
    table += [("pinv_1d", lambda m: m.linalg.pinv(t(m, randn(1)))),
              ("pinv_complex_rcond", lambda m: m.linalg.pinv(t(m, a), rcond=m.full((), 1j))),
              ("pinv_complex_atol", lambda m: m.linalg.pinv(t(m, a), atol=m.full((), 1j))),
              ("pinv_complex_rtol", lambda m: m.linalg.pinv(t(m, a), rtol=m.full((), 1j))),
              ("pinv_int", lambda m: m.linalg.pinv(t(m, [[1, 2], [3, 4]]))),
              ("pinverse", lambda m: (m.pinverse(t(m, a)), t(m, a).pinverse(rcond=0.5)))]
    return table


@cases(_inverse_cases() + _pinv_cases())
def test_inverses_match_torch(program):
    """test_inverse, test_inv_ex_info_device, test_inv_ex_singular, test_inverse_errors,
    test_inverse_errors_large (smaller matrices), test_inv_errors_and_warnings, test_pinv,
    test_pinv_errors_and_warnings."""
    assert_same(program)


# -- test_solve*, test_old_solve*, test_cholesky_solve*, test_tensorsolve*, test_tensorinv* ----

def _solve_cases():
    table = []
    for n in (0, 5, 32):
        for batch in [(), (0,), (3,), (2, 3)]:
            for rhs in [(), (1,), (5,)]:
                a, b = fullrank(*batch, n, n), randn(*batch, n, *rhs)
                table += [(f"solve{n}{batch}{rhs}", lambda m, a=a, b=b: m.linalg.solve(
                    t(m, a), t(m, b))),
                    (f"solve_left_false{n}{batch}{rhs}", lambda m, a=a, b=b: m.linalg.solve(
                        t(m, a), t(m, b).unsqueeze(-1).mT if b.ndim == a.ndim - 1 else t(m, b).mT,
                        left=False))]
    for a_dims, b_dims in [((2, 1, 3, 4, 4), (2, 1, 3, 4, 6)), ((2, 1, 3, 4, 4), (4, 6)),
                           ((4, 4), (2, 1, 3, 4, 2)), ((1, 3, 1, 4, 4), (2, 1, 3, 4, 5)),
                           ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (1, 3))]:
        a, b = fullrank(*a_dims), randn(*b_dims)
        table.append((f"solve_broadcast{a_dims}{b_dims}", lambda m, a=a, b=b: m.linalg.solve(
            t(m, a), t(m, b))))
    for batch, index in [(1, 0), (2, 0), (2, 1), (4, 0), (4, 2), (10, 2)]:
        b = randn(batch, 3, 1)
        table.append((f"solve_singular{batch}_{index}", lambda m, b=b, bt=batch, i=index:
                      m.linalg.solve(t(m, _singular_batch(bt, i)), t(m, b))))
    table += [("solve_nonsquare", lambda m: m.linalg.solve(t(m, randn(2, 3, 4, 3)),
                                                           t(m, randn(2, 3, 4, 1)))),
              ("solve_incompatible", lambda m: m.linalg.solve(t(m, fullrank(2, 3, 3, 3)),
                                                              t(m, randn(2, 3, 2, 1)))),
              ("solve_dtype_mismatch", lambda m: m.linalg.solve(t(m, fullrank(3, 3)),
                                                                t(m, randn(3), "float32"))),
              ("solve_int", lambda m: m.linalg.solve(t(m, [[1, 0], [0, 1]]), t(m, [1, 2]))),
              ("solve_0d", lambda m: m.linalg.solve(t(m, fullrank(3, 3)), t(m, 1.0))),
              ("old_solve_removed", lambda m: m.solve(t(m, randn(3, 1)), t(m, fullrank(3, 3))))]
    a, b, b2 = fullrank(3, 3), randn(3, 2), randn(2, 3, 1)
    table += [("solve_ex", lambda m: tuple(m.linalg.solve_ex(t(m, a), t(m, b)))),
              ("solve_ex_singular", lambda m: tuple(m.linalg.solve_ex(
                  t(m, _singular_batch(2, 1)), t(m, b2))))]
    return table


def _cholesky_solve_cases():
    table = []
    for (k, n) in zip([2, 3, 5], [3, 5, 7]):
        for upper in (True, False):
            for cplx in (False, True):
                a, b = hermitian_pd(n, complex_=cplx), randn(n, k, complex_=cplx)
                table.append((f"cholesky_solve{n}x{k}_{upper}{cplx}", lambda m, a=a, b=b, u=upper:
                              m.cholesky_solve(t(m, b), m.linalg.cholesky(t(m, a), upper=u), u)))
    for upper in (True, False):
        for a_dims, b_dims in [((3, 5), (3, 5, 10)), ((2, 1, 3, 4), (2, 1, 3, 4, 6)),
                               ((2, 1, 3, 4), (4, 6)), ((4,), (2, 1, 3, 4, 2)),
                               ((1, 3, 1, 4), (2, 1, 3, 4, 5))]:
            a, b = hermitian_pd(a_dims[-1], *a_dims[:-1]), randn(*b_dims)
            table.append((f"cholesky_solve_batch{a_dims}{b_dims}_{upper}", lambda m, a=a, b=b,
                          u=upper: m.cholesky_solve(t(m, b), m.linalg.cholesky(t(m, a), upper=u),
                                                    upper=u)))
    return table


def _tensor_solve_cases():
    table = []
    for a_shape in [(2, 3, 6), (3, 4, 4, 3)]:
        for dims in (None, (0, 2)):
            for cplx in (False, True):
                a, b = randn(*a_shape, complex_=cplx), randn(*a_shape[:2], complex_=cplx)
                table.append((f"tensorsolve{a_shape}{dims}{cplx}", lambda m, a=a, b=b, d=dims:
                              m.linalg.tensorsolve(t(m, a), t(m, b), dims=d)))
    empty = np.zeros((0, 0, 1, 2, 3, 0))
    wrong = np.eye(24).reshape(6, 4, 2, 3, 4)
    table += [("tensorsolve_empty", lambda m: m.linalg.tensorsolve(
        t(m, empty), t(m, empty[:, :, 0, 0, 0, 0]))),
        ("tensorsolve_bad_shape", lambda m: m.linalg.tensorsolve(t(m, wrong), m.ones(8, 4)))]
    for a_shape, ind in [((12, 3, 4), 1), ((3, 8, 24), 2), ((18, 3, 3, 2), 1), ((1, 4, 2, 2), 2),
                         ((2, 3, 5, 30), 3), ((24, 2, 2, 3, 2), 1), ((3, 4, 2, 3, 2), 2),
                         ((1, 2, 3, 2, 3), 3), ((3, 2, 1, 2, 12), 4)]:
        a = randn(*a_shape, complex_=ind % 2 == 0)
        table.append((f"tensorinv{a_shape}_{ind}", lambda m, a=a, i=ind: m.linalg.tensorinv(
            t(m, a), ind=i)))
    for ind in range(1, 4):
        table.append((f"tensorinv_empty_{ind}", lambda m, i=ind: m.linalg.tensorinv(
            t(m, empty), ind=i)))
    for a_shape, ind in [((2, 3, 4), 1), ((1, 2, 3, 4), 3), ((12, 3, 4), -1), ((18, 3, 3, 2), 0)]:
        table.append((f"tensorinv_error{a_shape}_{ind}", lambda m, s=a_shape, i=ind:
                      m.linalg.tensorinv(m.ones(s), ind=i)))
    for a_shape, ind in [((12, 3, 4), 1), ((3, 6, 18), 2)]:
        singular = np.eye(int(np.prod(a_shape[ind:])))
        singular[-1, -1] = 0
        table.append((f"tensorinv_singular{a_shape}", lambda m, a=singular.reshape(a_shape), i=ind:
                      m.linalg.tensorinv(t(m, a), ind=i)))
    return table


@cases(_solve_cases() + _cholesky_solve_cases() + _tensor_solve_cases())
def test_solvers_match_torch(program):
    """test_solve, test_solve_errors_and_warnings, test_old_solve* (torch.solve is gone in
    2.13: its error), test_cholesky_solve, test_cholesky_solve_batched(_broadcasting),
    test_tensorsolve, test_tensorsolve_empty, test_tensorsolve_errors_and_warnings,
    test_tensorinv, test_tensorinv_empty, test_tensorinv_errors_and_warnings,
    test_tensorinv_singular_input; solve's left=False too."""
    assert_same(program)


# -- test_dot_vs_numpy, test_vdot_*, test_matrix_rank*, test_chain_matmul, test_multi_dot*,
#    test_qr* ------------------------------------------------------------------------------

def _dot_rank_cases():
    table = []
    for name in ("dot", "vdot"):
        for cplx in (False, True):
            x, y, y1 = (0.1 * randn(*s, complex_=cplx) for s in ((500,), (500,), (1,)))
            table += [(f"{name}_empty{cplx}", lambda m, n=name: getattr(m, n)(m.ones(0),
                                                                              m.ones(0))),
                      (f"{name}{cplx}", lambda m, n=name, x=x, y=y: getattr(m, n)(t(m, x),
                                                                                  t(m, y))),
                      (f"{name}_zero_stride{cplx}", lambda m, n=name, x=x, y=y1: getattr(m, n)(
                          t(m, x), t(m, y).expand(500))),
                      (f"{name}_two_stride{cplx}", lambda m, n=name, x=x, y=y: getattr(m, n)(
                          t(m, x)[::2], t(m, y)[::2]))]
            x, y = (randn(*s, complex_=cplx) for s in ((1,), (3,)))
            wide = "complex64" if cplx else "float32"
            table += [(f"{name}_dtypes{cplx}", lambda m, n=name, x=x, y=y, w=wide: getattr(m, n)(
                t(m, x, w), t(m, y))),
                (f"{name}_2d{cplx}", lambda m, n=name, x=x, y=y: getattr(m, n)(
                    t(m, x).reshape(1, 1), t(m, y))),
                (f"{name}_sizes{cplx}", lambda m, n=name, x=x, y=y: getattr(m, n)(
                    t(m, x).expand(9), t(m, y)))]
    for (rows, cols), batch in zip([(3, 3), (3, 13), (13, 3), (13, 13)],
                                   [(), (0,), (4,), (3, 5)]):
        for cplx in (False, True):
            a = randn(*batch, rows, cols, complex_=cplx)
            tol = np.abs(randn(*batch)) + 0.5
            table += [(f"matrix_rank{batch}{rows}x{cols}{cplx}", lambda m, a=a: (
                m.linalg.matrix_rank(t(m, a)), m.linalg.matrix_rank(t(m, a).mH),
                m.linalg.matrix_rank(t(m, a) @ t(m, a).mH, hermitian=True),
                m.linalg.matrix_rank(t(m, a).mH @ t(m, a), 0.01, True),
                m.linalg.matrix_rank(t(m, a), 0.01))),
                (f"matrix_rank_atol{batch}{rows}x{cols}{cplx}", lambda m, a=a, tol=tol:
                 (m.linalg.matrix_rank(t(m, a), atol=t(m, tol)),
                  m.linalg.matrix_rank(t(m, a), tol=t(m, tol)),
                  m.linalg.matrix_rank(t(m, a), atol=t(m, tol * 3, "int64")),
                  m.linalg.matrix_rank(t(m, a), atol=0.7, rtol=0.2)))]
    for batch in ((), (4,), (3, 5)):
        for rows, cols in ((0, 0), (0, 3), (3, 0)):
            table.append((f"matrix_rank_empty{batch}{rows}x{cols}",
                          lambda m, s=batch + (rows, cols):
                          (m.linalg.matrix_rank(m.ones(s)), m.linalg.matrix_rank(m.ones(s), 0.01),
                           m.linalg.matrix_rank(m.ones(s) @ m.ones(s).mH, hermitian=True))))
    singular = np.eye(10)
    singular[5, 5] = 0
    u, _, vh = np.linalg.svd(randn(9, 9))
    graded = u @ np.diag([1 + (-1) ** k / (k + 2) for k in range(9)]) @ vh
    table += [("matrix_rank_basic", lambda m: (
        m.linalg.matrix_rank(m.eye(10)), m.linalg.matrix_rank(t(m, singular), hermitian=True))),
        ("matrix_rank_atol_rtol", lambda m: tuple(
            m.linalg.matrix_rank(t(m, graded), **kw) for kw in (
                {"rtol": 0.81}, {"atol": 0.81}, {"atol": 0.81, "rtol": 0.81},
                {"rtol": t(m, 0.81)}, {"atol": t(m, 0.81)}))),
        ("matrix_rank_1d", lambda m: m.linalg.matrix_rank(m.ones(3))),
        ("matrix_rank_int", lambda m: m.linalg.matrix_rank(t(m, [[1, 2], [3, 4]]))),
        ("old_matrix_rank_removed", lambda m: m.matrix_rank(m.eye(3)))]
    return table


def _multi_dot_cases():
    table = []
    shapes = [([0], [0]), ([2], [2, 0]), ([1, 0], [0]), ([0, 2], [2, 1]), ([2, 2], [2, 0]),
              ([2, 0], [0, 3]), ([0, 0], [0, 1]), ([4, 2], [2, 0], [0, 3], [3, 2]), ([2], [2]),
              ([1, 2], [2]), ([2], [2, 1]), ([1, 2], [2, 1]), ([3, 2], [2, 4]),
              ([3], [3, 4], [4, 2], [2, 5], [5]), ([1, 2], [2, 2], [2, 3], [3, 1]),
              ([10, 100], [100, 5], [5, 50]), ([10, 20], [20, 30], [30, 5])]
    for shape in shapes:
        for cplx in (False, True):
            arrays = [randn(*s, complex_=cplx) for s in shape]
            table.append((f"multi_dot{shape}{cplx}", lambda m, v=arrays: m.linalg.multi_dot(
                [t(m, a) for a in v])))
    a2, a3, a22, a222 = randn(2), randn(3), randn(2, 2), randn(2, 2, 2)
    errors = {"none": [], "one": [a2], "first_0d": [np.float64(1.0), a2],
              "last_0d": [a2, np.float64(1.0)], "middle_1d": [a2, a2, a2],
              "middle_3d": [a2, a222, a2], "mismatch": [a2, a3],
              "mismatch_middle": [a2, randn(3, 2), a2]}
    for name, arrays in errors.items():
        table.append((f"multi_dot_error_{name}", lambda m, v=arrays: m.linalg.multi_dot(
            [t(m, a) for a in v])))
    table += [("multi_dot_dtypes", lambda m: m.linalg.multi_dot([t(m, a2, "float32"), t(m, a2)])),
              ("chain_matmul_one", lambda m: m.chain_matmul(t(m, a22))),
              ("chain_matmul_none", lambda m: m.chain_matmul()),
              ("chain_matmul_1d", lambda m: m.chain_matmul(t(m, a2), t(m, a2))),
              ("chain_matmul", lambda m: m.chain_matmul(t(m, a22), t(m, a22), t(m, a22)))]
    return table


def _qr_cases():
    table = []
    dims = [(0, 5), (0, 0), (5, 0), (2, 1, 0, 5), (2, 1, 0, 0), (2, 1, 5, 0), (2, 0, 5, 5),
            (3, 5), (5, 5), (5, 3), (7, 3, 5), (7, 5, 5), (7, 5, 3), (7, 5, 3, 5), (7, 5, 5, 5),
            (7, 5, 5, 3)]
    for shape in dims:  # Householder QR (LAPACK's geqrf) is unique once R's diagonal sign is set
        for cplx in (False, True):
            a = randn(*shape, complex_=cplx)
            table += [(f"old_qr{shape}{cplx}", lambda m, a=a: tuple(m.qr(t(m, a))) + tuple(
                m.qr(t(m, a), some=False)))]
            for mode in ("reduced", "complete", "r"):
                table.append((f"qr{shape}_{mode}{cplx}", lambda m, a=a, mode=mode: tuple(
                    m.linalg.qr(t(m, a), mode=mode))))
    a = randn(5, 7)
    table += [("qr_1d", lambda m: m.linalg.qr(t(m, a[0]))),
              ("qr_bad_mode", lambda m: m.linalg.qr(t(m, a), mode="hello")),
              ("qr_int", lambda m: m.linalg.qr(t(m, [[1, 2], [3, 4]]))),
              ("qr_r_backward", lambda m: m.linalg.qr(
                  t(m, a).requires_grad_(), mode="r")[1].sum().backward()),
              ("qr_complete_tall_backward", lambda m: m.linalg.qr(
                  t(m, a.T).requires_grad_(), mode="complete")[1].sum().backward())]
    return table


@cases(_dot_rank_cases() + _multi_dot_cases() + _qr_cases())
def test_dot_rank_multi_dot_and_qr_match_torch(program):
    """test_dot_vs_numpy, test_vdot_vs_numpy, test_dot_invalid_args, test_vdot_invalid_args,
    test_matrix_rank, test_matrix_rank_atol, test_matrix_rank_atol_rtol, test_matrix_rank_empty,
    test_matrix_rank_basic, test_old_matrix_rank (torch.matrix_rank is gone in 2.13),
    test_chain_matmul, test_multi_dot, test_multi_dot_errors, test_qr, test_qr_vs_numpy,
    test_linalg_qr_autograd_errors, test_qr_batched, test_qr_error_cases."""
    assert_same(program)
