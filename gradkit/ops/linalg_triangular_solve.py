"""Triangular solves, as BLAS's trsm solves them for torch: substitution with no singularity
check (a zero pivot gives inf or NaN, an infinite one zeros), differentiable to any order."""
from __future__ import annotations

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_solvers import mH
from gradkit.ops.triangular import tril, triu


@op(save=("a", "result"), name="linalg_solve_triangular")
def solve_triangular(xp, a, b, *, upper=True):
    """X with ``A X = B`` for triangular A (its ``upper`` or lower triangle is read)."""
    dtype = np.result_type(a.dtype, b.dtype)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    a = xp.broadcast_to(a, shape[:-2] + a.shape[-2:])
    x = xp.zeros(shape, dtype)
    n = a.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in reversed(range(n)) if upper else range(n):
            known = slice(i + 1, n) if upper else slice(0, i)
            rest = (a[..., i, known, None] * x[..., known, :]).sum(-2)
            x[..., i, :] = _divide(xp, b[..., i, :] - rest, a[..., i, i, None])
    return x


def _divide(xp, numerator, pivot):
    """trsm's division by a pivot: a complex one multiplies by its reciprocal, which is NaN for
    an infinite pivot (conj(p) / |p|^2 is inf / inf), where NumPy's division gives 0."""
    quotient = numerator / pivot
    if quotient.dtype.kind == "c":
        quotient = xp.where(xp.isinf(pivot), xp.asarray(complex("nan+nanj"), quotient.dtype),
                            quotient)
    return quotient


def _solve_triangular_vjp(g, a, x, upper):
    """gB = A^{-H} gX (A^H is triangular the other way), gA = -gB X^H on A's triangle."""
    g_b = solve_triangular(mH(a), g, upper=not upper)
    g_a = -matmul(g_b, mH(x))
    return (triu(g_a) if upper else tril(g_a)), g_b


solve_triangular.defvjp_all(lambda g, a, x, upper: _solve_triangular_vjp(g, a, x, upper))
solve_triangular.defjvp(
    lambda t, a, x, upper: solve_triangular(a, -matmul(triu(t) if upper else tril(t), x),
                                            upper=upper),
    lambda t, a, x, upper: solve_triangular(a, t, upper=upper))
