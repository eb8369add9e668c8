"""torch's linear algebra tests (test/test_linalg.py, TestLinalg), third part: einsum,
triangular solves, matmul and the BLAS products, cross, renorm, Householder products and
LU, re-run as programs under torch 2.13 and gradkit (see
tests/test_linalg_torch_expectations.py for the conventions)."""
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
