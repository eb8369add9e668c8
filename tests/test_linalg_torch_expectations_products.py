"""torch's linear algebra tests (test/test_linalg.py, TestLinalg), third part: einsum,
triangular solves, matmul and the BLAS products, cross, renorm, Householder products and
LU, re-run as programs under torch 2.13 and gradkit (see
tests/test_linalg_torch_expectations.py for the conventions)."""
import itertools
import math

import numpy as np
import pytest
from test_linalg_torch_expectations import cases, randn, t
from test_ops_linalg2 import assert_same

torch = pytest.importorskip("torch")


# -- test_einsum, test_einsum_sublist_format, test_einsum_random, test_einsum_corner_cases,
#    test_einsum_error_cases ------------------------------------------------------------------

def _einsum_cases():
    table = []
    shapes = {"x": (5,), "y": (7,), "A": (3, 5), "B": (2, 5), "C": (2, 3, 5), "D": (2, 5, 7),
              "E": (7, 9), "F": (2, 3, 3, 5), "G": (5, 4, 6), "H": (4, 4), "I": (2, 3, 2),
              "J": (2, 1, 3, 1, 4), "K": (5, 3), "L": (2, 5, 2, 3)}
    left, right, w = randn(5, 20), randn(5, 40), randn(15, 10, 20)
    table += [("einsum_bilinear", lambda m: m.einsum(
        "bn,anm,bm->ba", t(m, left)[:, ::2], t(m, w), t(m, right)[:, ::2])),
        ("einsum_strided", lambda m: m.einsum(
            "bn,Anm,bm->bA", t(m, left)[:, ::4], t(m, w)[:, ::2, ::2], t(m, right)[:, ::4])),
        ("einsum_sublist_bilinear", lambda m: m.einsum(
            t(m, left[:, ::2]), [40, 41], t(m, w), [2, 41, 50], t(m, right[:, ::2]), [40, 50],
            [40, 2]))]
    for cplx in (False, True):
        v = {k: randn(*s, complex_=cplx) for k, s in shapes.items()}
        equations = [("i->", "x"), ("i,i->", "xx"), ("i,i->i", "xx"), ("i,j->ij", "xy"),
                     ("ij->ji", "A"), ("ij->j", "A"), ("ij->i", "A"), ("ij,ij->ij", "AA"),
                     ("ij,j->i", "Ax"), ("ij,kj->ik", "AB"), ("ij,ab->ijab", "AE"),
                     ("Aij,Ajk->Aik", "CD"), ("ijk,jk->i", "CA"), ("aij,jk->aik", "DE"),
                     ("abCd,dFg->abCFg", "FG"), ("ijk,jk->ik", "CA"), ("ijk,jk->ij", "CA"),
                     ("ijk,ik->j", "CB"), ("ijk,ik->jk", "CB"), ("ii", "H"), ("ii->i", "H"),
                     ("iji->j", "I"), ("ngrg...->nrg...", "J"), ("i...->...", "H"),
                     ("k...,jk->...", "KB"), ("...ik, ...j -> ...ij", "Cx"),
                     ("Bik,k...j->i...j", "CK"), ("i...j, ij... -> ...ij", "CL")]
        for equation, names in equations:
            table.append((f"einsum[{equation}]{cplx}",
                          lambda m, e=equation, a=[v[n] for n in names]: m.einsum(
                              e, *(t(m, x) for x in a))))
        table.append((f"einsum[ki,...k->i...]{cplx}", lambda m, a=v["A"], b=v["B"]: m.einsum(
            "ki,...k->i...", t(m, a).t(), t(m, b))))
        sublists = [("x", [0]), ("x", [0], []), ("x", [0], "y", [1], [0, 1]),
                    ("A", [0, 1], [1, 0]), ("A", [0, 1], "x", [1], [0]), ("A", [0, 1], "B", [2, 1]),
                    ("A", [0, 1], "B", [2, 1], [0, 2]),
                    ("J", [0, 1, 2, 1, Ellipsis], [0, 2, 1, Ellipsis]),
                    ("K", [0, 1], "B", [Ellipsis, 0]),
                    ("K", [0, 1], "B", [Ellipsis, 0], [1, Ellipsis]),
                    ("K", [0, Ellipsis], "B", [1, 0], [Ellipsis])]
        for args in sublists:
            table.append((f"einsum_sublist{args}{cplx}", lambda m, args=args, v=v: m.einsum(
                *(t(m, v[a]) if isinstance(a, str) else a for a in args))))
    return table + _einsum_random_cases() + _einsum_corner_cases()


def _label(n):
    return "..." if n is Ellipsis else chr(ord("A") + n) if n < 26 else chr(ord("a") + n - 26)


def _einsum_random_cases():
    """test_einsum_random's generator, seeded: operands of random labels, diagonals,
    broadcast size-1 dims and ellipses, as equations and as sublists, with and without an
    explicit output."""
    rng = np.random.default_rng(5)
    table = []
    for case in range(40):
        labels = rng.permutation(52)[:5]
        sizes = rng.integers(1, 5, 52)
        ellipsis_shape = rng.integers(1, 5, 2)
        operands, sublists, ell = [], [], 0
        for _ in range(rng.integers(1, 4)):
            n_dim = int(rng.integers(1, 4))
            picked = [int(x) for x in rng.choice(labels, n_dim)]
            shape = [1 if rng.random() < 0.1 else int(sizes[x]) for x in picked]
            shape = [int(sizes[x]) if any(p == x and s != 1 for p, s in zip(picked, shape))
                     else s for x, s in zip(picked, shape)]  # repeated labels: one size
            if n_dim < 3 and rng.random() < 0.5:
                k = int(rng.integers(1, 4 - n_dim))
                ell = max(ell, k)
                at = int(rng.integers(0, n_dim + 1))
                shape[at:at] = [int(s) for s in ellipsis_shape[-k:]] if k <= 2 else [1] * k
                picked.insert(at, Ellipsis)
            operands.append(randn(*shape))
            sublists.append(picked)
        equation = ",".join("".join(_label(n) for n in s) for s in sublists)
        used = sorted({n for s in sublists for n in s if n is not Ellipsis})
        out = [int(n) for n in rng.permutation(used)[:max(0, int(rng.integers(0, 4)) - ell)]]
        out.insert(int(rng.integers(0, len(out) + 1)), Ellipsis)
        arguments = [x for pair in zip(range(len(operands)), sublists) for x in pair]
        table += [(f"einsum_random{case}", lambda m, e=equation, o=operands: m.einsum(
            e, *(t(m, x) for x in o))),
            (f"einsum_random_sublist{case}", lambda m, a=arguments, o=operands: m.einsum(
                *(t(m, o[x]) if i % 2 == 0 else x for i, x in enumerate(a)))),
            (f"einsum_random_out{case}", lambda m, e=equation + "->" + "".join(map(_label, out)),
             o=operands: m.einsum(e, *(t(m, x) for x in o))),
            (f"einsum_random_sublist_out{case}", lambda m, a=arguments, o=operands, out=out:
             m.einsum(*(t(m, o[x]) if i % 2 == 0 else x for i, x in enumerate(a)), out))]
    return table


def _einsum_corner_cases():
    cube = randn(3, 0, 6)
    corner = [(" ", 1.0), (" -> ", 1.0), (" , ", 2.0, 2.0), (" , , ", 2.0, 2.0, 2.0),
              (" , -> ", 2.0, 2.0), (" i ", [1.0]), (" i -> ", [1.0]), (" i -> i ", [1.0]),
              (" i , i ", [2.0], [2.0]), (" i , i -> i ", [2.0], [2.0]), ("i", []),
              (" i j -> j", [[], []]), ("ij->i", [[], []]),
              (" i j k  ,  k  -> i j ", cube, randn(6)),
              ("i,j", [2.0], [1.0, 2.0]), ("i,ij->ij", [1.0, 2.0], [[1.0, 2, 3], [2, 3, 4]]),
              ("...", 1.0), ("...->", 1.0), ("...->...", 1.0), ("...", [1.0]), ("...->", [1.0]),
              ("z...->z", [1.0]), ("Z...->...Z", [1.0]), ("...a->", [[2.0], [4.0]]),
              ("a...b->ab", [[[1.0], [2.0]], [[3.0], [4.0]]])]
    table = [(f"einsum_corner[{e}]{i}", lambda m, e=e, o=ops: m.einsum(
        e, [t(m, x, "float32") for x in o])) for i, (e, *ops) in enumerate(corner)]
    x, y = randn(2), randn(2, 3)
    errors = [("", []), (". ..", [x]), ("... ...", [x]), ("1", [x]), (",", [x]), ("", [x, x]),
              ("", [x]), ("ai", [x]), ("ai...", [x]), ("a->... .", [x]), ("a->..", [x]),
              ("a->1", [x]), ("a->aa", [x]), ("a->i", [x]), ("aa", [y]), ("a, ba", [x, y])]
    table += [(f"einsum_error[{e}]{i}", lambda m, e=e, o=ops: m.einsum(e, [t(m, a) for a in o]))
              for i, (e, ops) in enumerate(errors)]
    table += [(f"einsum_sublist_range{n}", lambda m, n=n: m.einsum(t(m, x), [n]))
              for n in (-1, 52)]
    return table


@cases(_einsum_cases())
def test_einsum_matches_torch(program):
    """test_einsum, test_einsum_sublist_format, test_einsum_random (40 seeded cases, each in
    four forms), test_einsum_corner_cases, test_einsum_error_cases."""
    assert_same(program)


# -- test_linalg_solve_triangular(_broadcasting), test_triangular_solve* ----------------------

def _triangular(shape, upper, unit, complex_=False):
    a = randn(*shape, complex_=complex_)
    a = np.triu(a) if upper else np.tril(a)
    n = shape[-1]
    diagonal = np.ones(n) if unit else 2 + np.abs(randn(n))
    return a - a * np.eye(n) + diagonal * np.eye(n)


def _triangular_cases():
    table = []
    for b, n, k in itertools.product((1, 2, 0), (5, 0), (3, 1, 0)):
        for left, uni, upper, tr_b in itertools.product((True, False), repeat=4):
            a = _triangular((b, n, n) if left else (b, k, k), upper, uni, complex_=b == 2)
            rhs = randn(*((b, n, k) if left else (b, k, n)), complex_=b == 2)
            table.append((f"solve_triangular{b}{n}{k}_{left}{uni}{upper}{tr_b}",
                          lambda m, a=a, rhs=rhs, left=left, uni=uni, upper=upper, tr=tr_b:
                          m.linalg.solve_triangular(t(m, a), t(m, rhs).mT.contiguous().mT if tr
                                                    else t(m, rhs), upper=upper, left=left,
                                                    unitriangular=uni)))
    for size_a, size_b in (((2, 1, 3, 4, 4), (2, 1, 3, 4, 6)), ((2, 1, 3, 4, 4), (4, 6)),
                           ((4, 4), (2, 1, 3, 4, 2)), ((1, 3, 1, 4, 4), (2, 1, 3, 4, 5))):
        for left, upper, uni in itertools.product((True, False), repeat=3):
            a, rhs = _triangular(size_a, upper, uni), randn(*size_b)
            table.append((f"solve_triangular_broadcast{size_a}{size_b}_{left}{upper}{uni}",
                          lambda m, a=a, rhs=rhs, left=left, upper=upper, uni=uni:
                          m.linalg.solve_triangular(t(m, a), t(m, rhs) if left else t(m, rhs).mT,
                                                    upper=upper, left=left, unitriangular=uni)))
            table.append((f"triangular_solve_broadcast{size_a}{size_b}_{left}{upper}{uni}",
                          lambda m, a=a, rhs=rhs, tr=left, upper=upper, uni=uni: tuple(
                              m.triangular_solve(t(m, rhs), t(m, a), upper=upper, transpose=tr,
                                                 unitriangular=uni))))
    for k, n in itertools.product((0, 1, 3), (0, 5)):
        for upper, uni, tr in itertools.product((True, False), repeat=3):
            a, rhs = _triangular((n, n), upper, uni, complex_=k == 3), randn(n, k, complex_=k == 3)
            table.append((f"triangular_solve{k}{n}_{upper}{uni}{tr}", lambda m, a=a, rhs=rhs,
                          upper=upper, uni=uni, tr=tr: m.triangular_solve(
                              t(m, rhs), t(m, a), upper=upper, unitriangular=uni, transpose=tr)[0]))
    for a_dims, b_dims in (((3, 5, 5), (3, 5, 10)), ((3, 0, 0), (3, 0, 10)), ((3, 0, 0), (3, 0, 0)),
                           ((0, 5, 5), (0, 5, 10))):
        a, rhs = _triangular(a_dims, True, False), randn(*b_dims)
        table.append((f"triangular_solve_batched{a_dims}{b_dims}", lambda m, a=a, rhs=rhs: tuple(
            m.triangular_solve(t(m, rhs), t(m, a)))))
    a = _triangular((3, 3), True, False)
    table += [("solve_triangular_1d", lambda m: m.linalg.solve_triangular(
        t(m, a), t(m, a[0]), upper=True)),
        ("solve_triangular_no_upper", lambda m: m.linalg.solve_triangular(t(m, a), t(m, a))),
        ("solve_triangular_positional_upper", lambda m: m.linalg.solve_triangular(
            t(m, a), t(m, a), True)),
        ("addr_by_keyword", lambda m: m.addr(input=t(m, a), vec1=t(m, a[0]), vec2=t(m, a[1]))),
        ("baddbmm_by_keyword", lambda m: (
            m.baddbmm(input=t(m, a[None]), batch1=t(m, a[None]), batch2=t(m, a[None])),
            m.addbmm(t(m, a), batch1=t(m, a[None]), batch2=t(m, a[None])))),
        ("solve_triangular_int", lambda m: m.linalg.solve_triangular(
            t(m, [[1, 0], [0, 1]]), t(m, [[1], [2]]), upper=True)),
        ("solve_triangular_mismatch", lambda m: m.linalg.solve_triangular(
            t(m, a), t(m, randn(2, 3)), upper=True)),
        ("solve_triangular_dtypes", lambda m: m.linalg.solve_triangular(
            t(m, a), t(m, a, "float32"), upper=True))]
    return table


@cases(_triangular_cases())
def test_triangular_solves_match_torch(program):
    """test_linalg_solve_triangular (non-contiguous, expanded, left/right, unit diagonal),
    test_linalg_solve_triangular_broadcasting, test_triangular_solve,
    test_triangular_solve_batched, test_triangular_solve_batched_broadcasting."""
    assert_same(program)


# -- test_matmul_small_brute_force_*, test_linear_algebra_scalar_raises, test_blas_*, test_cross*,
#    test_linalg_cross*, test_renorm*, test_ormqr*, test_householder_product*, test_lu* ------

def _matmul_cases():
    table = []
    for m_, p, o in itertools.product(range(1, 8, 3), range(1, 8, 3), range(1, 5, 2)):
        for r in (None, 1, 3):
            batch = (o,) if r is None else (r, o)
            table += [(f"matmul_1d_nd{m_}{p}{o}{r}", lambda m, s=batch, m_=m_, p=p: (
                m.matmul(m.arange(m_), m.arange(math.prod(s) * m_ * p).reshape(*s, m_, p)),
                m.matmul(m.arange(m_), m.arange(math.prod(s) * p * m_).reshape(*s, p, m_).mT),
                m.matmul(m.arange(2 * m_)[::2],
                         m.arange(math.prod(s) * m_ * 2 * p).reshape(*s, m_, 2 * p)[..., ::2])))]
            for n in (1, 3):
                table += [(f"matmul_2d_nd{n}{m_}{p}{o}{r}", lambda m, s=batch, n=n, m_=m_, p=p: (
                    m.matmul(m.arange(n * m_).reshape(n, m_),
                             m.arange(math.prod(s) * m_ * p).reshape(*s, m_, p)),
                    m.matmul(m.arange(m_ * n).reshape(m_, n).mT,
                             m.arange(math.prod(s) * p * m_).reshape(*s, p, m_).mT),
                    m.matmul(m.arange(n * 2 * m_).reshape(n, 2 * m_)[:, ::2],
                             m.arange(math.prod(s) * m_ * 2 * p).reshape(*s, m_, 2 * p)[
                                 ..., ::2])))]
    mat, vec = randn(5, 5), randn(5)
    table += [("mv_0d", lambda m: m.mv(t(m, mat), t(m, 7.0))),
              ("addmv_0d", lambda m: m.addmv(t(m, vec), t(m, mat), t(m, 7.0)))]
    return table


def _blas_cases():
    def call(op, *shapes, **kw):
        return lambda m: getattr(m, op)(*(m.ones(s) if isinstance(s, tuple) else s
                                          for s in shapes), **kw)
    table = [(f"blas_empty_{op}{shapes}", call(op, *shapes)) for op, *shapes in [
        ("mm", (0, 0), (0, 0)), ("mm", (0, 0), (0, 5)), ("mm", (5, 0), (0, 0)),
        ("mm", (3, 2), (2, 0)), ("mm", (5, 0), (0, 6)), ("addmm", (0, 0), (0, 0), (0, 0)),
        ("addmm", (1,), (0, 17), (17, 1)), ("addmm", (5, 6), (5, 0), (0, 6)),
        ("mv", (0, 0), (0,)), ("mv", (0, 2), (2,)), ("mv", (3, 0), (0,)),
        ("addmv", (0,), (0, 0), (0,)), ("addmv", (3,), (3, 0), (0,)),
        ("bmm", (0, 0, 0), (0, 0, 0)), ("bmm", (3, 0, 0), (3, 0, 5)), ("bmm", (0, 5, 0), (0, 0, 6)),
        ("bmm", (3, 5, 0), (3, 0, 6)), ("baddbmm", (0, 0, 0), (0, 0, 0), (0, 0, 0)),
        ("baddbmm", (3, 0, 5), (3, 0, 0), (3, 0, 5)), ("baddbmm", (0, 5, 6), (0, 5, 0), (0, 0, 6)),
        ("baddbmm", (3, 5, 6), (3, 5, 0), (3, 0, 6)), ("addbmm", (0, 0), (0, 0, 0), (0, 0, 0)),
        ("addbmm", (0, 5), (3, 0, 0), (3, 0, 5)), ("addbmm", (5, 6), (0, 5, 0), (0, 0, 6)),
        ("matmul", (0,), (0,)), ("matmul", (0, 0), (0, 0)), ("matmul", (0, 0, 0), (0, 0, 0)),
        ("matmul", (5, 0, 0), (5, 0, 0)), ("matmul", (5, 3, 0), (5, 0, 4)), ("dot", (0,), (0,))]]
    c = np.arange(30.0).reshape(3, 2, 5)
    table.append(("baddbmm_beta_empty", lambda m: m.baddbmm(t(m, c), m.ones(3, 2, 0),
                                                            m.ones(3, 0, 5), beta=-2)))
    for dtype in ("uint8", "int8", "int16", "int32", "int64", "float32", "float64", "complex64",
                  "complex128"):
        cplx = dtype.startswith("complex")
        alpha, beta = (6 + 7j, 3 + 4j) if cplx else (6, 3)
        table += [(f"blas_alpha_beta_empty_{dtype}", lambda m, d=dtype, a=alpha, b=beta: (
            m.addmv(input=m.full((2,), 11, dtype=getattr(m, d)),
                    mat=m.ones((2, 0), dtype=getattr(m, d)), vec=m.ones((0,), dtype=getattr(m, d)),
                    alpha=a, beta=b),
            m.addmm(input=m.full((2, 3), 11, dtype=getattr(m, d)),
                    mat1=m.ones((2, 0), dtype=getattr(m, d)),
                    mat2=m.ones((0, 3), dtype=getattr(m, d)), alpha=a, beta=b)))]
    nm, scalar = randn(7, 5).T, randn()
    mp, bnm, bmp = randn(11, 7).T, randn(3, 7, 5), randn(3, 11, 7)
    large = randn(200, 3000)
    table += [("blas_nan_out", lambda m: (
        m.mv(t(m, nm), t(m, scalar).expand(7)), m.mm(t(m, nm), t(m, mp)),
        m.bmm(t(m, bnm).transpose(1, 2), t(m, bmp).transpose(1, 2)))),
        ("blas_mv_large_input", lambda m: m.mv(t(m, large).t(), t(m, scalar).expand(200)))]
    return table


def _cross_cases():
    x, y = randn(10, 3, 10, complex_=True), randn(10, 3, 10, complex_=True)
    a, b, e = randn(1, 3, 2), randn(4, 3, 1), randn(1, 3, 4)
    c, d, f, g = randn(4, 4, 4, 3), randn(4, 4, 4, 3), randn(12, 3), randn(18, 3)
    table = [("cross", lambda m: (m.cross(t(m, x), t(m, y), dim=1),
                                  m.linalg.cross(t(m, x), t(m, y), dim=1))),
             ("linalg_cross_broadcast", lambda m: m.linalg.cross(t(m, a), t(m, b), dim=1)),
             ("linalg_cross_channels_last", lambda m: m.linalg.cross(
                 t(m, c).contiguous(memory_format=m.channels_last),
                 t(m, d).contiguous(memory_format=m.channels_last))),
             ("linalg_cross_permuted", lambda m: m.linalg.cross(
                 t(m, a), t(m, e).permute(2, 1, 0), dim=1)),
             ("linalg_cross_strided", lambda m: m.linalg.cross(
                 t(m, f)[::2], t(m, g)[::3], dim=1)),
             ("linalg_cross_expanded", lambda m: m.linalg.cross(t(m, a[0, :1, 0]),
                                                                t(m, d[0, 0, 0])))]
    x, y = randn(100, 3), randn(100, 3)
    table.append(("cross_with_and_without_dim", lambda m: (
        m.cross(t(m, x), t(m, y), dim=1), m.cross(t(m, x), t(m, y), dim=-1),
        m.linalg.cross(t(m, x), t(m, y)))))
    errors = [((100, 3), (100, 3, 10), None), ((5, 3), (3, 5), None), ((5, 4), (5, 4), None),
              ((5, 4, 3), (5, 4, 3), 0), ((5, 3, 4), (5, 3, 4), -1), ((5, 3, 4), (5, 3, 4), -5)]
    for sa, sb, dim in errors:
        kw = {} if dim is None else {"dim": dim}
        table += [(f"cross_error{sa}{sb}{dim}", lambda m, sa=sa, sb=sb, kw=kw: m.cross(
            m.ones(sa), m.ones(sb), **kw)),
            (f"linalg_cross_error{sa}{sb}{dim}", lambda m, sa=sa, sb=sb, kw=kw: m.linalg.cross(
                m.ones(sa), m.ones(sb), **kw))]
    return table


def _renorm_cases():
    m1, m2 = randn(20, 20), randn(3, 4, 5)
    table = [("renorm", lambda m: (
        t(m, m1).renorm_(2, 1, float(np.linalg.norm(m1, axis=1).mean())),
        t(m, m2).renorm(2, 1, 1.5)))]
    x = randn(5, 5)
    table += [(f"renorm_ps_{p}", lambda m, p=p: (t(m, x).renorm(p, 1, 1),
                                                 t(m, x).renorm(p, 0, 0.5)))
              for p in (1, 2, 3, 4, math.inf)]
    return table


@cases(_matmul_cases() + _blas_cases() + _cross_cases() + _renorm_cases())
def test_products_cross_and_renorm_match_torch(program):
    """test_matmul_small_brute_force_1d_Nd, test_matmul_small_brute_force_2d_Nd (a sample of
    the sizes), test_linear_algebra_scalar_raises, test_blas_empty, test_blas_alpha_beta_empty,
    test_blas_nan_out, test_blas_mv_large_input, test_cross, test_linalg_cross,
    test_cross_with_and_without_dim, test_linalg_cross_with_and_without_dim, test_cross_errors,
    test_linalg_cross_errors, test_renorm, test_renorm_ps."""
    assert_same(program)
