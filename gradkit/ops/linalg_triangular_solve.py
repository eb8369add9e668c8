"""Triangular solves, as BLAS's trsm solves them for torch: substitution with no singularity
check (a zero pivot gives inf or NaN, an infinite one zeros), differentiable to any order."""
from __future__ import annotations

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.linalg import matmul
from gradkit.ops.shape import transpose
from gradkit.ops.triangular import tril, triu
from gradkit.ops.unary_helpers import kernel_error
from gradkit.ops.result_layout import by_columns

_NAME = "linalg.solve_triangular"



def mH(x):  # noqa: N802 - torch's name
    """The conjugate transpose of the last two dims."""
    return conj(transpose(x, -1, -2))

def check_solvable(name: str, a, b, left: bool) -> None:
    """torch's error when B's rows (``left``) or columns do not match square A's size."""
    if (b.shape[-2] if left else b.shape[-1]) != a.shape[-1]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")


def _check(a, b, left: bool) -> None:
    """torch's errors, in its order."""
    for label, m in (("B", b), ("A", a)):
        if m.ndim < 2:
            raise RuntimeError(f"{_NAME}: The input tensor {label} must have at least 2 "
                               "dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{_NAME}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    check_solvable(_NAME, a, b, left)
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        raise kernel_error("triangular_solve_cpu")(a)


def _substitute(xp, a, b, upper, unitriangular, trsm=True):
    """X with A X = B, row by row from the known end (A, B batched alike); ``trsm``: divide
    complex values as torch's triangular solve does (getrs-based solves divide as NumPy)."""
    x = xp.zeros(b.shape, a.dtype)
    n = a.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in reversed(range(n)) if upper else range(n):
            known = slice(i + 1, n) if upper else slice(0, i)
            row = b[..., i, :] - _sum_of_products(xp, a[..., i, known, None] * x[..., known, :])
            pivot = a[..., i, i, None]
            x[..., i, :] = row if unitriangular else _divide(xp, row, pivot, trsm)
    return x


def _sum_of_products(xp, products):
    """The products' sum over dim -2, as BLAS subtracts them from B one by one: a zero sum is
    -0.0 where a product has its sign bit, which turns B's -0.0 into +0.0 as each subtraction
    of -0.0 does (NumPy's sum from its +0.0 identity would leave it: strided seed 39798)."""
    total = products.sum(-2)
    if products.dtype.kind != "f":
        return total
    return xp.where((total == 0) & xp.signbit(products).any(-2), -0.0, total)


def _divide(xp, numerator, pivot, trsm: bool):
    """BLAS's division by a pivot: a complex zero one gives NaN (NumPy's gives inf), and
    trsm's multiplies by the reciprocal, which is NaN for an infinite pivot too (conj(p) / |p|^2
    is inf / inf), where NumPy's division gives 0; a large finite pivot divides exactly, as
    torch's."""
    quotient = numerator / pivot
    if quotient.dtype.kind == "c":
        refused = (pivot == 0) | xp.isinf(pivot) if trsm else pivot == 0
        quotient = xp.where(refused, xp.asarray(complex("nan+nanj"), quotient.dtype), quotient)
    return quotient


@op(save=("a", "result"), broadcast=True, name="linalg_solve_triangular")
@by_columns()
def solve_triangular(xp, a, b, *, upper=None, left=True, unitriangular=False):
    """X with ``A X = B`` (``left=False``: ``X A = B``) for triangular A: only its ``upper`` or
    lower triangle is read (``unitriangular``: its diagonal is taken as ones)."""
    if upper is None:  # required, as torch's (its parser's words)
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    _check(a, b, left)
    return _solve(xp, a, b, upper, left, unitriangular)


def _solve(xp, a, b, upper, left, unitriangular):
    if b.dtype != a.dtype:  # torch solves in A's dtype (B's imaginary part is dropped)
        b = (b.real if b.dtype.kind == "c" and a.dtype.kind != "c" else b).astype(a.dtype)
    if not left:  # X A = B is A^T X^T = B^T, A^T triangular the other way
        a, b, upper = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), not upper
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    x = _substitute(xp, a, xp.broadcast_to(b, batch + b.shape[-2:]), upper, unitriangular)
    return x if left else xp.swapaxes(x, -1, -2)


def _on_triangle(m, upper: bool, unitriangular: bool):
    """The part of m in A's read triangle (strictly, when A's diagonal is taken as ones)."""
    return triu(m, int(unitriangular)) if upper else tril(m, -int(unitriangular))


def _solve_triangular_vjp(g, a, x, upper, left, unitriangular):
    """torch's linalg_solve_triangular_backward: gB = A^{-H} gX (A^H is triangular the other
    way), gA = -gB X^H (left) or -X^H gB, on A's triangle."""
    g_b = solve_triangular(mH(a), g, upper=not upper, left=left, unitriangular=unitriangular)
    g_a = -matmul(g_b, mH(x)) if left else -matmul(mH(x), g_b)
    return _on_triangle(g_a, upper, unitriangular), g_b


def _solve_triangular_jvp(tangents, a, x, upper, left, unitriangular):
    """dX = A^{-1} (dB - dA X) (left), with dA on A's triangle."""
    t_a, t_b = tangents
    rhs = 0.0 if t_b is None else t_b
    if t_a is not None:
        t_a = _on_triangle(t_a, upper, unitriangular)
        rhs = rhs - (matmul(t_a, x) if left else matmul(x, t_a))
    rhs = rhs + x * 0.0  # the solution's (broadcast) shape and dtype
    return solve_triangular(a, rhs, upper=upper, left=left, unitriangular=unitriangular)


def _keyword_only(params: dict, positional=(), inputs=()) -> dict:
    """torch's parser: upper, left and unitriangular are keyword-only."""
    if positional:
        raise TypeError(f"linalg_solve_triangular() takes from 3 to 2 positional arguments but "
                        f"{2 + len(positional)} were given")
    return params


solve_triangular.numbers = _keyword_only
solve_triangular.defvjp_all(_solve_triangular_vjp)
solve_triangular.defjvp_all(_solve_triangular_jvp)


# torch.triangular_solve's node saves self (B) too, though its gradients do not read it: a
# write into B before backward is refused
@op(save=("b", "a", "result"), broadcast=True, node_name="TriangularSolveBackward0")
@by_columns()
def triangular_solve_saving_b(xp, b, a, *, upper, unitriangular=False):
    """X with ``A X = B`` for triangular A, as a node that also saves B (shapes checked by
    the caller, torch.triangular_solve)."""
    return _solve(xp, a, b, upper, True, unitriangular)


triangular_solve_saving_b.defvjp_all(
    lambda g, b, a, x, upper, unitriangular: _solve_triangular_vjp(
        g, a, x, upper, True, unitriangular)[::-1])
triangular_solve_saving_b.defjvp_all(
    lambda tangents, b, a, x, upper, unitriangular: _solve_triangular_jvp(
        tangents[::-1], a, x, upper, True, unitriangular))
solve_triangular.torch_input_names = ("self", "B")  # (torch parser's B=, its node's _saved_self)
