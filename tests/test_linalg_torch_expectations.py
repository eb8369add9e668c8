"""torch's own linear algebra tests (test/test_linalg.py, TestLinalg), re-run as programs under
torch 2.13 and gradkit: same values, dtypes, shapes, or the same error (type and message).

Each block names the torch tests it covers. Data comes from seeded NumPy generators outside the
programs, so both libraries see the same numbers. Eigenvectors and singular vectors are only
defined up to a sign or phase, so those are compared through invariants (reconstructions, |v|).
Out of scope (see docs/torch_expectations.md, "Linear algebra"): CUDA, MAGMA/cuSOLVER, out=,
sparse, torch.compile, bfloat16, TF32, and the ops gradkit lacks.
"""
import math

import numpy as np
import pytest
from test_ops_linalg2 import assert_same

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
RNG = np.random.default_rng(20261206)
INF = math.inf


def t(m, array, dtype=None):
    """A tensor of library ``m`` from NumPy data (its own dtype unless ``dtype`` names one)."""
    return m.tensor(np.asarray(array), dtype=None if dtype is None else getattr(m, dtype))


def randn(*shape, complex_=False):
    """Seeded standard normal data, complex when asked."""
    values = RNG.standard_normal(shape)
    return values + 1j * RNG.standard_normal(shape) if complex_ else values


def hermitian_pd(n, *batch, complex_=False):
    """A batch of well-conditioned Hermitian positive-definite matrices."""
    a = randn(*batch, n, n, complex_=complex_)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


def cases(table):
    """Parametrize a test over (id, program) pairs."""
    return pytest.mark.parametrize("program", [p for _, p in table], ids=[n for n, _ in table])


# -- test_inner, test_outer, test_outer_ger_addr_legacy_tests, test_kron, test_kron_empty -------

def _inner_cases():
    sizes = [([], []), ([], [0]), ([], [3]), ([], [2, 3, 4]), ([0], [0]), ([0], [2, 0]),
             ([2], [2]), ([2], [3, 1, 2]), ([2], [3, 0, 2]), ([1, 2], [3, 2]), ([1, 2], [3, 4, 2]),
             ([2, 1, 3, 2], [1, 3, 2, 2])]
    table = []
    for a_size, b_size in sizes:
        for x, y in ((a_size, b_size), (b_size, a_size)):
            for cplx in (False, True):
                a, b = randn(*x, complex_=cplx), randn(*y, complex_=cplx)
                table.append((f"inner{x}{y}{'c' if cplx else ''}",
                              lambda m, a=a, b=b: m.inner(t(m, a), t(m, b))))
    a, b = randn(2, 3), randn(2, 2)
    table.append(("inner_mismatch", lambda m: t(m, a).inner(t(m, b))))
    return table


def _outer_cases():
    a, b = randn(50), randn(50)
    table = []
    for name in ("outer", "ger"):
        table += [(f"{name}", lambda m, n=name: getattr(m, n)(t(m, a), t(m, b))),
                  (f"{name}_method", lambda m, n=name: getattr(t(m, a), n)(t(m, b))),
                  (f"{name}_zero_stride", lambda m, n=name: getattr(m, n)(
                      t(m, a[:1]).expand(50), t(m, b)))]
        for size in ((0, 0), (0, 5), (5, 0)):
            table.append((f"{name}_empty{size}", lambda m, n=name, s=size: getattr(m, n)(
                t(m, np.ones(s[0])), t(m, np.ones(s[1])))))
        table += [(f"{name}_0d_right", lambda m, n=name: getattr(m, n)(t(m, a[:5]), t(m, 6.0))),
                  (f"{name}_0d_left", lambda m, n=name: getattr(m, n)(t(m, 6.0), t(m, a[:5])))]
    for dtype_a in ("bool", "uint8", "int32", "int64", "float32", "float64", "complex128"):
        for dtype_b in ("bool", "int16", "float16", "float64", "complex64"):
            table.append((f"outer_promotes_{dtype_a}_{dtype_b}", lambda m, x=dtype_a, y=dtype_b:
                          m.outer(t(m, a[:5] * 3, x), t(m, b[:5] * 3, y))))
    return table


def _kron_cases():
    shapes = [(4,), (2, 2), (1, 2, 3), (1, 2, 3, 3)]
    table = []
    for a_shape in shapes:
        for b_shape in reversed(shapes):
            a, b = randn(*a_shape), randn(*b_shape, complex_=True)
            table.append((f"kron{a_shape}{b_shape}", lambda m, a=a, b=b: m.kron(t(m, a), t(m, b))))
    for empty in [(0,), (2, 0), (1, 0, 3)]:
        table += [(f"kron_eye_empty{empty}", lambda m, e=empty: m.kron(m.eye(3), m.empty(e))),
                  (f"kron_empty_eye{empty}", lambda m, e=empty: m.kron(m.empty(e), m.eye(3)))]
    return table


@cases(_inner_cases() + _outer_cases() + _kron_cases())
def test_products_match_torch(program):
    """test_inner, test_outer, test_outer_type_promotion, test_outer_ger_addr_legacy_tests,
    test_kron, test_kron_empty."""
    assert_same(program)


# -- test_linalg_lstsq*, test_cholesky*, test_cholesky_ex*, test_old_cholesky* -----------------

def _lstsq_cases():
    table = []
    for batch in [(), (2,), (2, 2)]:
        for m_rows, n_cols in [(4, 2), (4, 4), (2, 4), (1, 1)]:
            for driver in (None, "gelsd", "gelss", "gelsy", "gels"):
                if driver == "gels" and m_rows < n_cols:
                    continue  # gels of a wide matrix has no unique answer to compare
                a, b = randn(*batch, m_rows, n_cols), randn(*batch, m_rows, 3)
                table.append((f"lstsq{batch}{m_rows}x{n_cols}_{driver}",
                              lambda m, a=a, b=b, d=driver: m.linalg.lstsq(
                                  t(m, a), t(m, b), driver=d)[:2]))
    a = randn(3, 3) + 3 * np.eye(3)
    table += [(f"lstsq_broadcast{batch}", lambda m, b=batch: m.linalg.lstsq(
        t(m, a).reshape(*[1] * len(b), 3, 3), t(m, randn(*b, 3, 3))).solution)
        for batch in [(), (0,), (2,), (2, 2), (2, 2, 2)]]
    a, b = randn(1, 3, 1, 3, 3, 3), randn(3, 1, 3, 1, 3, 2)
    table += [("lstsq_broadcast_both", lambda m: m.linalg.lstsq(t(m, a), t(m, b)).solution),
              ("lstsq_broadcast_vectors", lambda m: m.linalg.lstsq(
                  t(m, a), t(m, b[..., :1])).solution),
              ("lstsq_vector_rhs", lambda m: m.linalg.lstsq(t(m, a), t(m, b[..., 0])).solution)]
    empties = [((0, 0, 3, 3), (0, 0, 3, 2)), ((2, 2, 0, 0), (2, 2, 0, 0)),
               ((2, 2, 3, 0), (2, 2, 3, 0)), ((2, 2, 3, 0), (2, 2, 3, 2)),
               ((2, 2, 0, 3), (2, 2, 0, 3))]
    table += [(f"lstsq_empty{sa}{sb}", lambda m, sa=sa, sb=sb: m.linalg.lstsq(
        m.ones(sa, dtype=m.float64), m.ones(sb, dtype=m.float64))) for sa, sb in empties]
    a2, b1 = randn(2, 3), randn(3)
    table += [
        ("lstsq_1d_input", lambda m: m.linalg.lstsq(t(m, b1), t(m, b1))),
        ("lstsq_0d_other", lambda m: m.linalg.lstsq(t(m, a2), t(m, 1.0))),
        ("lstsq_vector_mismatch", lambda m: m.linalg.lstsq(t(m, a2), t(m, b1))),
        ("lstsq_matrix_mismatch", lambda m: m.linalg.lstsq(t(m, a2), t(m, b1[:, None]))),
        ("lstsq_dtype_mismatch", lambda m: m.linalg.lstsq(
            t(m, randn(2, 2, 2, 2)), t(m, randn(2, 2, 2) * 100, "int64"))),
        ("lstsq_bad_driver", lambda m: m.linalg.lstsq(
            t(m, randn(2, 2, 2, 2)), t(m, randn(2, 2, 2)), driver="fictitious_driver")),
        ("lstsq_int_inputs", lambda m: m.linalg.lstsq(t(m, [[1, 2], [3, 4]]), t(m, [[1], [2]]))),
    ]
    return table


def _cholesky_cases():
    table = []
    for n in (0, 3, 5):
        for batch in ((), (3,), (2, 2)):
            for cplx in (False, True):
                a = hermitian_pd(n, *batch, complex_=cplx)
                name = f"{n}{batch}{'c' if cplx else ''}"
                table += [(f"cholesky{name}", lambda m, a=a: m.linalg.cholesky(t(m, a))),
                          (f"cholesky_mT{name}", lambda m, a=a: m.linalg.cholesky(t(m, a).mT)),
                          (f"cholesky_upper{name}", lambda m, a=a: m.linalg.cholesky(
                              t(m, a), upper=True)),
                          (f"cholesky_ex{name}", lambda m, a=a: m.linalg.cholesky_ex(t(m, a))),
                          (f"old_cholesky{name}", lambda m, a=a: (
                              m.cholesky(t(m, a)), m.cholesky(t(m, a), True))),
                          (f"cholesky_method{name}", lambda m, a=a: t(m, a).cholesky(upper=True))]
    not_pd = np.eye(3)
    not_pd[-1, -1] = 0
    batch_not_pd = np.repeat(np.eye(3)[None], 5, axis=0)
    batch_not_pd[4, -1, -1] = 0
    batch_not_pd_ex = np.repeat(np.eye(3)[None], 5, axis=0)
    batch_not_pd_ex[3, -2, -2] = 0
    table += [
        ("cholesky_nonsquare", lambda m: m.linalg.cholesky(t(m, randn(2, 3)))),
        ("cholesky_batch_nonsquare", lambda m: m.linalg.cholesky(t(m, randn(2, 2, 3)))),
        ("cholesky_1d", lambda m: m.linalg.cholesky(t(m, randn(2)))),
        ("cholesky_not_pd", lambda m: m.linalg.cholesky(t(m, not_pd))),
        ("cholesky_not_pd_complex", lambda m: m.linalg.cholesky(t(m, not_pd + 0j))),
        ("cholesky_batch_not_pd", lambda m: m.linalg.cholesky(t(m, batch_not_pd))),
        ("cholesky_ex_not_pd", lambda m: m.linalg.cholesky_ex(t(m, not_pd)).info),
        ("cholesky_ex_not_pd_checked", lambda m: m.linalg.cholesky_ex(
            t(m, not_pd), check_errors=True)),
        ("cholesky_ex_batch_not_pd", lambda m: m.linalg.cholesky_ex(t(m, batch_not_pd_ex)).info),
        ("cholesky_ex_batch_not_pd_checked", lambda m: m.linalg.cholesky_ex(
            t(m, batch_not_pd_ex), check_errors=True)),
        ("cholesky_int", lambda m: m.linalg.cholesky(t(m, [[2, 1], [1, 2]]))),
        ("old_cholesky_empty", lambda m: (m.cholesky(m.empty(0, 0)), m.cholesky(m.empty(0, 0),
                                                                               True))),
    ]
    return table


@cases(_lstsq_cases() + _cholesky_cases())
def test_lstsq_and_cholesky_match_torch(program):
    """test_linalg_lstsq (solution and residuals per driver), test_linalg_lstsq_batch_broadcasting,
    test_linalg_lstsq_input_checks, test_cholesky, test_cholesky_errors_and_warnings,
    test_old_cholesky, test_old_cholesky_batched, test_old_cholesky_empty, test_cholesky_ex,
    test_cholesky_ex_non_pd."""
    assert_same(program)


# -- test_addr_*, test_det, test_eigh*, test_eigvalsh*, test_eig*, test_eigvals* ---------------

def _addr_cases():
    table = []
    for dtype in ("bool", "int64", "float64", "complex128"):
        for beta, alpha in [(True, False), (False, True), (2.0, 1), (2, 1.0), (True, 1), (2, True),
                            (0, 2), (2, 2), (0.5, 2), (0.1j, 0.2 - 0.2j)]:
            data = [randn(*s) * 2 for s in ((5, 5), (5,), (5,))]
            table.append((f"addr_{dtype}_{beta}_{alpha}", lambda m, d=dtype, x=beta, y=alpha,
                          v=data: m.addr(*(t(m, a, d) for a in v), beta=x, alpha=y)))
    nan_mat, a, b, mat = randn(5, 5), randn(5), randn(5), randn(5, 5)
    nan_mat[0, 1], nan_mat[2, 2] = INF, math.nan
    table += [("addr_beta0_drops_nan", lambda m: m.addr(t(m, nan_mat), t(m, a), t(m, b), beta=0)),
              ("addr_scalar_self", lambda m: m.addr(t(m, 1.0), t(m, a), t(m, b))),
              ("addr_transposed", lambda m: t(m, mat).mT.addr(t(m, a), t(m, b))),
              ("addr_0d_vec", lambda m: m.addr(t(m, randn(5, 6)), t(m, a), t(m, 6.0))),
              ("addr_0d_vec_left", lambda m: m.addr(t(m, randn(5, 6)), t(m, 6.0), t(m, a)))]
    for dtypes in [("int64", "float32", "bool"), ("uint8", "int8", "int16"),
                   ("float32", "complex64", "float64"), ("bool", "bool", "float16")]:
        table.append((f"addr_promotes{dtypes}", lambda m, d=dtypes: m.addr(
            t(m, np.ones((5, 5)), d[2]), t(m, np.ones(5), d[0]), t(m, np.ones(5), d[1]))))
    for size in ((0, 0), (0, 5), (5, 0)):
        table.append((f"addr_empty{size}", lambda m, s=size: m.addr(
            m.zeros(s), m.ones(s[0]), m.ones(s[1]))))
    return table


def _det_cases():
    table = []
    for shape in [(2, 2), (29, 29), (3, 12, 12), (4, 2, 6, 6), (0, 3, 3), (2, 0, 0)]:
        for cplx in (False, True):
            a = randn(*shape, complex_=cplx)
            table += [(f"det{shape}{cplx}", lambda m, a=a: (
                m.det(t(m, a)), t(m, a).det(), m.linalg.det(t(m, a)))),
                (f"slogdet{shape}{cplx}", lambda m, a=a: tuple(m.linalg.slogdet(t(m, a)))),
                (f"logdet{shape}{cplx}", lambda m, a=a: m.logdet(t(m, a)))]
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    table += [("det_1d", lambda m: m.linalg.det(t(m, randn(1)))),
              ("det_nonsquare", lambda m: m.linalg.det(t(m, randn(2, 3)))),
              ("det_int", lambda m: m.linalg.det(t(m, [[1, 2], [3, 4]]))),
              ("det_singular", lambda m: (m.linalg.det(t(m, singular)),
                                          tuple(m.linalg.slogdet(t(m, singular))),
                                          m.logdet(t(m, singular)))),
              ("logdet_negative_det", lambda m: m.logdet(t(m, [[0.0, 1.0], [1.0, 0.0]])))]
    return table


def _symmetric(n, *batch, complex_=False):
    a = randn(*batch, n, n, complex_=complex_)
    return a + np.conj(np.swapaxes(a, -1, -2))


def _eigh_cases():
    table = []
    for n in (0, 3, 5):
        for batch in ((), (3,), (2, 2)):
            for uplo in ("U", "L"):
                for cplx in (False, True):
                    a = _symmetric(n, *batch, complex_=cplx)
                    name = f"{n}{batch}{uplo}{'c' if cplx else ''}"
                    table += [(f"eigh{name}", lambda m, a=a, u=uplo: (
                        m.linalg.eigh(t(m, a), UPLO=u)[0],
                        m.linalg.eigh(t(m, a), UPLO=u)[1].abs())),
                        (f"eigvalsh{name}", lambda m, a=a, u=uplo: m.linalg.eigvalsh(
                            t(m, a), UPLO=u))]
    a = randn(2, 2, 3, 3)  # not symmetric: UPLO picks the triangle that is read
    for uplo in ("u", "l"):
        table += [(f"eigh_lower_case_{uplo}", lambda m, u=uplo: (
            m.linalg.eigh(t(m, a), UPLO=u)[0], m.linalg.eigh(t(m, a), UPLO=u)[1].abs())),
            (f"eigvalsh_lower_case_{uplo}", lambda m, u=uplo: m.linalg.eigvalsh(t(m, a), UPLO=u))]
    for name in ("eigh", "eigvalsh"):
        table += [(f"{name}_nonsquare", lambda m, n=name: getattr(m.linalg, n)(t(m, randn(2, 3)))),
                  (f"{name}_1d", lambda m, n=name: getattr(m.linalg, n)(t(m, randn(3)))),
                  (f"{name}_int", lambda m, n=name: getattr(m.linalg, n)(t(m, [[1, 0], [0, 1]])))]
        table += [(f"{name}_uplo_{u}", lambda m, n=name, u=u: getattr(m.linalg, n)(
            t(m, randn(3, 3)), UPLO=u)) for u in ("a", "wrong")]
    return table


def _sorted_eigenvalues(m, w):
    """Eigenvalues in one order (LAPACK's order is its own), real part then imaginary part."""
    values = w.detach().numpy() if hasattr(w.detach(), "numpy") else w
    keys = np.lexsort((np.round(values.imag, 8), np.round(values.real, 8)), axis=-1)
    return m.tensor(np.take_along_axis(values, keys, axis=-1))


def _eig_residual(m, a, w, v):
    """||A V - V diag(w)|| per matrix and the columns' norms: what any eigenvectors share."""
    a = a.to(v.dtype)
    return (m.linalg.matrix_norm(a @ v - v * w.unsqueeze(-2)) < 1e-9,
            m.linalg.vector_norm(v, dim=-2))


def _eig_cases():
    table = []
    for shape in [(0, 0), (5, 5), (0, 0, 0), (0, 5, 5), (2, 5, 5), (2, 1, 5, 5)]:
        for kind in ("real", "symmetric", "complex"):
            a = (_symmetric(shape[-1], *shape[:-2]) if kind == "symmetric"
                 else randn(*shape, complex_=kind == "complex"))
            table += [(f"eig{shape}{kind}", lambda m, a=a: (
                _sorted_eigenvalues(m, m.linalg.eig(t(m, a))[0]),
                *_eig_residual(m, t(m, a), *m.linalg.eig(t(m, a))))),
                (f"eigvals{shape}{kind}", lambda m, a=a: _sorted_eigenvalues(
                    m, m.linalg.eigvals(t(m, a))))]
    for name in ("eig", "eigvals"):
        table += [(f"{name}_1d", lambda m, n=name: getattr(m.linalg, n)(t(m, randn(2)))),
                  (f"{name}_nonsquare", lambda m, n=name: getattr(m.linalg, n)(t(m, randn(2, 3)))),
                  (f"{name}_int", lambda m, n=name: getattr(m.linalg, n)(t(m, [[1, 0], [0, 1]])))]
    for value in (INF, math.nan):  # eig refuses; eigvals of a graph-less NaN matrix crashes
        for batch in ((), (10,)):  # torch 2.13 (MKL's DGEBAL), of an inf one gives nan+nanj
            a = randn(*batch, 5, 5)
            a[..., -1, -1] = value
            table += [(f"eig_with_{value}{batch}", lambda m, a=a: m.linalg.eig(t(m, a))),
                      (f"eigvals_with_grad_{value}{batch}", lambda m, a=a: m.linalg.eigvals(
                          t(m, a).requires_grad_()))]
            if value == INF:
                table.append((f"eigvals_with_inf{batch}", lambda m, a=a: m.linalg.eigvals(t(m, a))))
    rotation = np.array([[3.0, -2.0], [4.0, -1.0]])  # eigenvalues 1 +- 2i
    table.append(("eig_complex_pair", lambda m: _sorted_eigenvalues(
        m, m.linalg.eigvals(t(m, rotation)))))
    return table


@cases(_addr_cases() + _det_cases() + _eigh_cases() + _eig_cases())
def test_addr_det_and_eigen_match_torch(program):
    """test_addr_bool, test_addr_integral, test_addr_float_and_complex, test_addr_type_promotion,
    test_outer_ger_addr_legacy_tests, test_det, test_eigh, test_eigh_lower_uplo,
    test_eigh_errors_and_warnings, test_eigvalsh, test_eigvalsh_errors_and_warnings,
    test_eig_numpy, test_eig_errors_and_warnings, test_eig_with_nan, test_eigvals_numpy,
    test_eigvals_errors_and_warnings; eigenvectors through |v| (eigh) and A V = V diag(w)."""
    assert_same(program)


# -- norms: test_norm_dtype, test_vector_norm*, test_norm_vector, test_norm_matrix, test_cond*,
#    test_norm_errors, test_norm_complex, test_*_extreme_values, test_matrix_norm,
#    test_norm_*_degenerate_shapes, test_norm_fastpaths, test_norm_old*, test_nuclear_norm_* --

VECTOR_ORDS = [0, 0.1, -0.1, 0.9, 1, -1, 2, -2, 3, -3, 4.5, -4.5, INF, -INF, None]
MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, INF, -INF, None]


def _norm_dtype_cases():
    table = []
    dtypes = ("float32", "float64", "complex64", "complex128")
    for size, ords in (((10,), VECTOR_ORDS), ((10, 10), MATRIX_ORDS)):
        data = {d: randn(*size, complex_=d.startswith("complex")) for d in dtypes}
        for ord_ in ords:
            for keepdim in (False, True):
                for source in dtypes:
                    for target in (None,) + dtypes:
                        table.append((f"norm{size}_{ord_}_{keepdim}_{source}_{target}",
                                      lambda m, o=ord_, k=keepdim, a=data[source], s=source,
                                      d=target: m.linalg.norm(
                                          t(m, a, s), o, keepdim=k,
                                          dtype=None if d is None else getattr(m, d))))
    return table


def _vector_norm_cases():
    table = []
    sizes = [(10,), (4, 5), (3, 4, 5), (0,), (0, 10), (0, 0), (10, 0, 10)]
    for size in sizes:
        data = randn(*size) * 9
        for ord_ in [0, 0.9, 1, 2, 3, INF, -0.5, -1, -2, -3, -INF]:
            for dim in (None, len(size) - 1, 0):
                for dtype in (None, "float32", "complex128", "float16"):
                    table.append((f"vector_norm{size}_{ord_}_{dim}_{dtype}",
                                  lambda m, a=data, o=ord_, d=dim, k=dtype: (
                                      m.linalg.vector_norm(t(m, a), o, dim=d, dtype=None
                                                           if k is None else getattr(m, k)),
                                      m.linalg.vector_norm(t(m, a), o, dim=d, keepdim=True))))
    for dim in [(0,), (1,), (-2,), (0, -1), (0, 0), (0, -2), (0, 1.0), (None,)]:
        for kind in (tuple, list):
            size = (4,) if len(dim) == 1 and dim[0] in (0, 1, -2) else (4, 3)
            table.append((f"vector_norm_dims{size}{kind(dim)}", lambda m, d=kind(dim), s=size:
                           m.linalg.vector_norm(m.ones(s), dim=d)))
    table += [("vector_norm_complex_to_real_dtype", lambda m: m.linalg.vector_norm(
        t(m, randn(10, complex_=True)), dtype=m.float64)),
        ("vector_norm_int", lambda m: m.linalg.vector_norm(t(m, [1, 2, 3]))),
        ("vector_norm_int_with_dtype", lambda m: m.linalg.vector_norm(t(m, [1, 2, 3]),
                                                                      dtype=m.float64))]
    values = [INF, -INF, 0.0, math.nan, 1.0]
    for x in values:
        for y in values:
            for ord_ in [0, 1, 2, 3, INF, -1, -2, -3, -INF]:
                table += [(f"vector_norm_extreme[{x},{y}]_{ord_}", lambda m, v=[x, y], o=ord_:
                           (m.linalg.vector_norm(t(m, v), o), m.linalg.norm(t(m, v), o))),
                          (f"norm_old_extreme[{x},{y}]_{ord_}", lambda m, v=[x, y], o=ord_:
                           m.norm(t(m, v), p=o))]
            for ord_ in MATRIX_ORDS[:-1]:
                table += [(f"matrix_norm_extreme[{x},{y}]_{ord_}", lambda m, v=[[x, y]], o=ord_:
                           (m.linalg.norm(t(m, v), o), m.linalg.norm(t(m, v).mT, o)))]
    return table


def _norm_dim_cases():
    table = []
    for size, dims in (((10,), [None, 0]), ((10, 10, 10), [0, 1, 2, -1, -2])):
        data = randn(*size)
        for ord_ in VECTOR_ORDS:
            for dim in dims:
                table.append((f"norm_vector{size}_{ord_}_{dim}", lambda m, a=data, o=ord_, d=dim: (
                    m.linalg.norm(t(m, a), o, d), m.linalg.norm(t(m, a), o, d, True))))
    for size, dims in (((10, 10), [None, (0, 1), (1, 0)]),
                       ((4, 5, 6, 7), [(2, 0), (-1, -2), (-1, -3), (-3, 2)])):
        data = randn(*size)
        for ord_ in MATRIX_ORDS:
            for dim in dims:
                table.append((f"norm_matrix{size}_{ord_}_{dim}", lambda m, a=data, o=ord_, d=dim: (
                    m.linalg.norm(t(m, a), o, d), m.linalg.norm(t(m, a), o, d, True))))
                if ord_ is not None and dim is not None:
                    table.append((f"matrix_norm{size}_{ord_}_{dim}",
                                  lambda m, a=data, o=ord_, d=dim: (
                                      m.linalg.matrix_norm(t(m, a), o, d),
                                   m.linalg.matrix_norm(t(m, a), o, d, True))))
    for ord_ in MATRIX_ORDS[:-1]:
        data = randn(25, 25, complex_=True)
        table.append((f"norm_complex_matrix_{ord_}", lambda m, o=ord_, a=data: m.linalg.norm(
            t(m, a), o)))
    errors = [((10,), "fro", None), ((10,), "nuc", None), ((10, 10), 3.5, None),
              ((10, 10), 0, None), ((10, 10), "nuc", 0), ((10, 10), "fro", 0),
              ((10, 10), "nuc", (0, 0)), ((10, 10), "fro", (0, 0)), ((10, 10), 0, (0, 0)),
              ((10, 10), "fro", (0, 4)), ((10, 10), "nuc", (0, 4)), ((10, 10), 0, (0, 4)),
              ((10,), 0, (4,)), ((10,), None, (0, 0)), ((10, 10, 10), 1, (0, 1, 2)),
              ((10, 10, 10), 1, None), ((10, 10), "garbage", (0, 1))]
    for size, ord_, dim in errors:
        table.append((f"norm_error{size}_{ord_}_{dim}", lambda m, s=size, o=ord_, d=dim:
                      m.linalg.norm(m.ones(s), o, d)))
    a = randn(2, 2, 2)
    table += [("matrix_norm_vector", lambda m: m.linalg.matrix_norm(t(m, a[0, 0]))),
              ("matrix_norm_one_dim", lambda m: m.linalg.matrix_norm(t(m, a), dim=(0,))),
              ("matrix_norm_ord0", lambda m: m.linalg.matrix_norm(t(m, a), ord=0)),
              ("matrix_norm_ord3", lambda m: m.linalg.matrix_norm(t(m, a), ord=3.0)),
              ("matrix_norm_default", lambda m: (m.linalg.matrix_norm(t(m, a)),
                                                 m.linalg.norm(t(m, a), dim=(-2, -1)))),
              ("matrix_norm_int", lambda m: m.linalg.matrix_norm(t(m, [[1, 2], [3, 4]])))]
    return table


def _degenerate_norm_cases():
    table = []
    for size, dim in [((0,), None), ((0, 10), 0), ((0, 10), 1), ((10, 0), 0), ((10, 0), 1)]:
        for ord_ in [0, 0.5, 1, 2, 3, INF, -0.5, -1, -2, -3, -INF, None]:
            table.append((f"norm_vector_degenerate{size}_{ord_}_{dim}", lambda m, s=size, o=ord_,
                          d=dim: (m.linalg.norm(m.ones(s), o, d), m.linalg.norm(m.ones(s), o, d,
                                                                                True))))
    for size, dim in [((0, 0), None), ((0, 10), None), ((10, 0), None), ((10, 10, 0), (0, 1)),
                      ((1, 10, 0), (0, 1)), ((0, 0, 10), (0, 1)), ((0, 0, 10), (1, 0))]:
        for ord_ in MATRIX_ORDS:
            for cplx in (False, True):
                data = randn(*size, complex_=cplx)
                table.append((f"norm_matrix_degenerate{size}_{ord_}_{dim}_{cplx}",
                              lambda m, a=data, o=ord_, d=dim: m.linalg.norm(t(m, a), o, d)))
                if ord_ is not None and dim is not None:
                    table.append((f"matrix_norm_degenerate{size}_{ord_}_{dim}_{cplx}",
                                  lambda m, a=data, o=ord_, d=dim: m.linalg.matrix_norm(
                                      t(m, a), o, d, True)))
    return table


def _old_norm_cases():
    table = []
    x, x2, x4 = randn(25), randn(25, 25), randn(5, 6, 7, 8)
    xc, x2c = randn(25, complex_=True), randn(25, 25, complex_=True)
    for keepdim in (False, True):
        for p in [0, 1, 2, 3, 4, INF, -INF, -1, -2, -3, 1.5]:
            table += [(f"norm_old_{p}_{keepdim}", lambda m, p=p, k=keepdim: (
                t(m, x).norm(p, keepdim=k), t(m, x2).norm(p, 1, keepdim=k),
                t(m, xc).norm(p, keepdim=k)))]
        for p in ("fro", "nuc"):
            table += [(f"norm_old_{p}_{keepdim}", lambda m, p=p, k=keepdim: (
                t(m, x2).norm(p, keepdim=k), t(m, x2c).norm(p, keepdim=k)))]
            for d0 in range(4):
                for d1 in range(4):
                    if d0 != d1:
                        table.append((f"norm_old_4d_{p}_{d0}{d1}_{keepdim}",
                                      lambda m, p=p, d=(d0, d1), k=keepdim: t(m, x4).norm(
                                          p=p, dim=d, keepdim=k)))
        table.append((f"norm_old_0d_{keepdim}", lambda m, k=keepdim: t(m, 1.5).norm(keepdim=k)))
    for size in [(0,), (10,), (0, 0), (4, 30), (0, 45), (45, 10, 23), (0, 23, 59), (23, 0, 37),
                 (0, 0, 348), (5, 3, 8, 1, 3, 5)]:
        ndim = len(size)
        dims = [None] + list(range(-ndim, ndim)) + [
            (d0, d1) for d0 in range(-ndim, ndim) for d1 in range(d0 + 1, ndim)
            if d0 % ndim != d1 % ndim]
        data = randn(*size).astype(np.float32)
        for dim in dims:
            table.append((f"norm_fro_2{size}_{dim}", lambda m, a=data, d=dim: (
                m.norm(t(m, a), p=2, dim=d), m.norm(t(m, a), p="fro", dim=d, keepdim=True))))
    for n, m_, o in [(1, 1, 1), (1, 2, 2), (2, 2, 1), (2, 1, 2)]:
        data = randn(7 * o, 5 * n, 2 * m_)
        for axes in [(0, 1), (1, 0), (0, 2), (2, 1)]:
            table += [(f"nuclear_{n}{m_}{o}_{axes}", lambda m, a=data, d=axes: (
                m.norm(t(m, a), "nuc", dim=d), m.norm(t(m, a)[::7, ::5, ::2], "nuc", dim=d),
                m.norm(t(m, a).mT, "nuc", dim=d)))]
    for values in ([], [1.0], [1.0, 2.0]):
        for axes in ((), (0,), (0, 1)):
            table.append((f"nuclear_error{values}{axes}", lambda m, v=values, d=axes: m.norm(
                t(m, v, "float64"), "nuc", d)))
    six = [[0.0, 1, 2], [3, 4, 5]]
    table += [("nuclear_duplicate", lambda m: m.norm(t(m, six), "nuc", (0, 0))),
              ("nuclear_out_of_range", lambda m: m.norm(t(m, six), "nuc", (0, 2)))]
    return table


def _cond_cases():
    table = []
    shapes = [((12, 12), MATRIX_ORDS), ((2, 3, 3, 3), MATRIX_ORDS), ((0, 3, 3), MATRIX_ORDS),
              ((0, 2, 5, 5), MATRIX_ORDS), ((6, 12), [2, -2, None]), ((12, 6), [2, -2, None]),
              ((2, 3, 5, 3), [2, -2, None]), ((2, 3, 3, 5), [2, -2, None])]
    for size, ords in shapes:
        for cplx in (False, True):
            data = randn(*size, complex_=cplx)
            table += [(f"cond{size}_{p}_{cplx}", lambda m, a=data, p=p: m.linalg.cond(t(m, a), p))
                      for p in ords]
    singular = np.eye(3)
    singular[-1, -1] = 0
    batch_singular = np.repeat(np.eye(3)[None], 3, axis=0)
    batch_singular[1, -1, -1] = 0
    for p in MATRIX_ORDS:
        table += [(f"cond_singular_{p}", lambda m, p=p: m.linalg.cond(t(m, singular), p)),
                  (f"cond_batch_singular_{p}", lambda m, p=p: m.linalg.cond(
                      t(m, batch_singular), p)),
                  (f"cond_1d_{p}", lambda m, p=p: m.linalg.cond(m.ones(3), p))]
        if p not in (2, -2, None):
            table.append((f"cond_nonsquare_{p}", lambda m, p=p: m.linalg.cond(m.ones(3, 2), p)))
    for size in [(0, 0), (2, 5, 0, 0)]:
        table += [(f"cond_empty{size}_{p}", lambda m, s=size, p=p: m.linalg.cond(
            m.ones(s, dtype=m.complex128), p)) for p in ("fro", 2)]
    table += [(f"cond_invalid_{p}", lambda m, p=p: m.linalg.cond(m.ones(3, 3), p))
              for p in ("wrong_norm", 5)]
    table.append(("cond_int", lambda m: m.linalg.cond(t(m, [[1, 2], [3, 4]]))))
    return table


@cases(_norm_dtype_cases() + _vector_norm_cases() + _norm_dim_cases() + _degenerate_norm_cases()
       + _old_norm_cases() + _cond_cases())
def test_norms_and_cond_match_torch(program):
    """test_norm_dtype, test_vector_norm, test_vector_norm_dim_tuple_arg, test_norm_vector,
    test_norm_matrix, test_cond, test_cond_errors_and_warnings, test_norm_errors,
    test_norm_complex, test_vector_norm_extreme_values, test_matrix_norm,
    test_norm_extreme_values, test_norm_vector_degenerate_shapes,
    test_norm_matrix_degenerate_shapes, test_norm_fastpaths, test_norm_old,
    test_norm_old_nan_propagation, test_norm_complex_old, test_norm_fro_2_equivalence_old,
    test_nuclear_norm_axes_small_brute_force_old, test_nuclear_norm_exceptions_old."""
    assert_same(program)
