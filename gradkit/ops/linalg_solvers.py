"""Square-matrix linear algebra: inv, solve, cholesky (torch's derivatives; det is in linalg_det).

Forwards call ``xp.linalg`` (NumPy or CuPy); rules are written with gradkit ops, so they run
on arrays in a plain backward and record themselves under ``create_graph=True``.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.backend import get_array_module
from gradkit.int_arguments import int_parameters
from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import op
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_getrf import host, solve_through_lu
from gradkit.ops.linalg_mkl_pivots import (ALWAYS_FACTORED, first_singular, near_singular,
                                           with_mkls_pivots)
from gradkit.ops.linalg_triangular_solve import check_solvable, mH, solve_triangular
from gradkit.ops.reduction import sum
from gradkit.ops.shape import squeeze, transpose, unsqueeze
from gradkit.ops.triangular import diag_embed, diagonal, tril
from gradkit.ops.unary_helpers import fixed_error, kernel_error, scalar_type_name
from gradkit.ops.result_layout import by_columns


class LinAlgError(RuntimeError):
    """A matrix that the factorization or solver cannot handle (torch.linalg.LinAlgError)."""


def low_precision(name: str):
    """torch's refusal of half matrices by its dtype check (``half=`` of check_matrices)."""
    return fixed_error(RuntimeError, f"{name}: Low precision dtypes not supported. Got Half")


def check_matrices(name: str, x, square: bool = True, floating: bool = True,
                   half=None) -> None:
    """torch's errors for inputs that are not (batches of square) floating matrices; ``half``:
    the error of a float16 x (the kernel's, LAPACK has none)."""
    if x.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if floating and x.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(x)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{x.shape[-2]} by {x.shape[-1]} matrices")
    if half is not None and x.dtype == np.float16:
        raise half(x)


def _batch_prefix(x, index) -> str:
    return f"(Batch element {index}): " if x.ndim > 2 else ""


def _singular_inverse_error(x) -> LinAlgError:
    index, pivot = first_singular(x)
    pivot = x.shape[-1] if pivot is None else pivot
    return LinAlgError(f"linalg.inv: {_batch_prefix(x, index)}The diagonal element {pivot} is "
                       "zero, the inversion could not be completed because the input matrix is "
                       "singular.")


@op(save="result", node_name="LinalgInvExBackward0", method="inverse")
@by_columns()
def inv(xp, x):
    """The inverse of each square matrix in the last two dims of x."""
    check_matrices("linalg.inv", x, half=low_precision("linalg.inv"))
    # (OpenBLAS's getrf stopped at a zero pivot that NaN arithmetic left in a non-finite
    # matrix; torch's (MKL's) reads on through the NaN, to NaN: breadth seed 1328713)
    return with_mkls_pivots(
        xp, x, xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), x.shape),
        lambda: _nan_matrices(xp, x, xp.linalg.inv(x), 2), _singular_inverse_error,
        lambda: _nan_where(xp, x, ~xp.isfinite(x).all(axis=(-2, -1)), xp.linalg.inv, 2),
        computes_inverse=True)


def _through_own_lu(a, g, transposed: bool):
    """A plain backward's a^{-H} g as torch's: lu_solve through A's own LU (saved by the
    forward), unchecked, where a solve with A^H would refuse a zero pivot of A^H's own LU
    (A^T of [[1, 2, 3], [2, 4, 6], [1, 0, 1]]); a = A^T of X A = B (``transposed``) makes it
    conj(A^{-1} conj(g))."""
    vector = _is_vector_rhs(a, g)
    out = solve_through_lu(np, a, g[..., None] if vector else g, adjoint=not transposed,
                           transposed=transposed)
    return out[..., 0] if vector else out


def inv_vjp(g, out):
    return -matmul(mH(out), matmul(g, mH(out)))


def inv_jvp(t, out):  # torch's order, (A^{-1} dA) A^{-1}: the same inf and NaN
    return -matmul(matmul(out, t), out)


inv.defvjp(inv_vjp)
inv.defjvp(inv_jvp)
inv.name, inv.profiler_name = "linalg_inv", "gradkit::linalg_inv"
inv.input_keywords = ("A",)  # torch.linalg.inv(A=)


def _unsqueeze2(x):
    return unsqueeze(unsqueeze(x, -1), -1)


def _trace(m):
    return sum(diagonal(m, 0, -2, -1), -1)


def _is_vector_rhs(a, b) -> bool:
    """torch: B is a (batch of) vector(s) when 1-D or of A's shape without its last dim."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def _check_dtypes(a, b) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {scalar_type_name(a)} and B of type {scalar_type_name(b)} "
                           "instead")


def _check_b_dims(b) -> None:
    if b.ndim < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")


def check_solve(a, b, left: bool) -> None:
    """torch's checks of linalg.solve(_ex) in its order, before gradkit transposes X A = B
    (``left=False``): A's kind, the dtypes, vectors (which X A = B cannot take), B's dims, A
    square, the sizes, the batch dims (B's first)."""
    check_matrices("linalg.solve", a, square=False)
    _check_dtypes(a, b)
    vector = _is_vector_rhs(a, b)
    if vector and not left:
        n = a.shape[-1]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"XA = B ({n}x{n} and {b.shape[-1]}x1)")
    _check_b_dims(b[..., None] if vector else b)
    check_matrices("linalg.solve", a)
    columns = b[..., None] if vector else b
    check_solvable("linalg.solve", a, columns, left)
    try:
        np.broadcast_shapes(columns.shape[:-2], a.shape[:-2])
    except ValueError:
        raise RuntimeError(_broadcast_message([np.empty(columns.shape[:-2]),
                                               np.empty(a.shape[:-2])])) from None


@op(save=("a", "result"), broadcast=True, node_name="LinalgSolveExBackward0")
@by_columns()
def _solve(xp, a, b, *, transposed=False):
    """A^{-1} B (``transposed``: a is A^T of X A = B, whose singularity torch decides by A's
    own LU)."""
    check_matrices("linalg.solve", a)
    _check_dtypes(a, b)
    if b.ndim == 0:
        _check_b_dims(b)
    vector = _is_vector_rhs(a, b)
    rows = b.shape[-1] if vector else b.shape[-2]
    if rows != a.shape[-1]:
        cols = 1 if vector else b.shape[-1]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({a.shape[-2]}x{a.shape[-1]} and {rows}x{cols})")
    dims = 1 if vector else 2
    # (NumPy's LAPACK took a NaN for a zero pivot; torch's MKL solves on, to NaN there)
    return with_mkls_pivots(
        xp, a, b[..., None] if vector else b,
        lambda: _nan_matrices(xp, a, _solve_arrays(xp, a, b, vector), dims),
        _singular_solve_error, lambda: _nan_where(xp, a, xp.isnan(a).any(axis=(-2, -1)), lambda m:
                                                  _solve_arrays(xp, m, b, vector), dims), vector,
        transposed)


def _singular_solve_error(a) -> LinAlgError:
    return LinAlgError(f"torch.linalg.solve: {_batch_prefix(a, first_singular(a)[0])}The "
                       "solver failed because the input matrix is singular.")


def _solve_arrays(xp, a, b, vector: bool):
    return xp.linalg.solve(a, b[..., None])[..., 0] if vector else xp.linalg.solve(a, b)


def _nan_where(xp, a, bad, compute, trailing: int):
    """``compute(a)`` with the matrices ``bad`` marks (a's batch shape) replaced by the identity,
    their results NaN, as MKL's LAPACK gives where NumPy's stops; ``trailing``: the result's
    dims after the batch."""
    out = compute(xp.where(bad[..., None, None], xp.eye(a.shape[-1], dtype=a.dtype), a))
    return _nan_where_bad(xp, bad, out, trailing)


def _nan_matrices(xp, a, out, trailing: int):
    """``out`` NaN for every matrix of ``a`` holding a NaN: torch's (MKL's) inverse and solve
    of one are all NaN, where NumPy's LAPACK leaves some entries finite when no pivot is
    zero (a NaN pivot: ``[[nan, 0], [1, 2]]`` solves to ``[nan, 0.5]``)."""
    bad = xp.isnan(a).any(axis=(-2, -1))
    return _nan_where_bad(xp, bad, out, trailing) if bad.any() else out


def _nan_where_bad(xp, bad, out, trailing: int):
    return xp.where(bad.reshape(bad.shape + (1,) * trailing), nan_of(out.dtype), out)


def nan_of(dtype):
    """NaN of a real or complex dtype (nan+nanj)."""
    return complex(math.nan, math.nan) if np.dtype(dtype).kind == "c" else math.nan


def _as_columns(a, m):
    """A right-hand side or solution as matrices (vectors become one-column matrices)."""
    return unsqueeze(m, -1) if _is_vector_rhs(a, m) else m


def _solve_vjp_b(g, a, x, transposed=False):
    _ = x  # torch's node keeps the result for B's gradient too: a write into it is refused
    if type(a) is np.ndarray and type(g) is np.ndarray and a.shape[-1] <= ALWAYS_FACTORED \
            and near_singular(np, a):
        return _through_own_lu(a, g, transposed)
    try:
        if transposed:  # a = A^T of X A = B: torch solves gX A^{-H} on the right, factoring A^H
            return transpose(solve(mH(transpose(a, -1, -2)), transpose(g, -1, -2), left=False),
                             -1, -2)
        return solve(mH(a), g)
    except LinAlgError:
        data = getattr(a, "_data", a)
        if bool(get_array_module(data).isfinite(data).all()):
            raise
        # A's solve went through but A^H's pivots met an exact 0 its inf or NaN made: torch's
        # backward reuses A's LU, unchecked, which gives NaN (breadth seed 1205874)
        return g * float("nan")


def solve_vjp_a(g, a, x, vjp_b=_solve_vjp_b):
    """gA = -gB X^H, gB by ``vjp_b`` (solve_ex's failed matrices: through A's LU)."""
    gb = _as_columns(a, vjp_b(g, a, x))
    return -matmul(gb, mH(_as_columns(a, x)))


def solve_jvp(tangent_a, tangent_b, a, x, solver=None):
    """dX = A^{-1} (dB - dA X), solved by ``solver`` (default: solve)."""
    rhs = (0.0 if tangent_b is None else _as_columns(a, tangent_b))
    if tangent_a is not None:
        rhs = rhs - matmul(tangent_a, _as_columns(a, x))
    out = (solver or solve)(a, rhs)
    return squeeze(out, -1) if _is_vector_rhs(a, x) else out


_solve.defvjp(lambda g, a, x, transposed: solve_vjp_a(
    g, a, x, lambda *args: _solve_vjp_b(*args, transposed)), _solve_vjp_b)
_solve.defjvp_all(lambda tangents, a, x, transposed: solve_jvp(tangents[0], tangents[1], a, x))
_solve.name, _solve.profiler_name = "linalg_solve", "gradkit::linalg_solve"


def solve(A, B, *, left: bool = True):  # noqa: N803 - torch's name
    """X with ``A X = B`` (``left=False``: ``X A = B``); B may be a (batch of) vector(s)."""
    check_solve(getattr(A, "_data", A), getattr(B, "_data", B), left)
    if left:
        return _solve(A, B)
    return transpose(_solve(transpose(A, -1, -2), transpose(B, -1, -2), transposed=True), -1, -2)


def _potf2(matrix: np.ndarray):
    """LAPACK's unblocked lower Cholesky of one matrix: (factor, info); at a failing pivot
    (not > 0, or NaN) the pivot's reduced value stays and the rest of A's lower triangle too."""
    n = matrix.shape[-1]
    factor = np.tril(matrix).astype(matrix.dtype)
    for j in range(n):
        row = factor[j, :j]
        pivot = (matrix[j, j] - np.vdot(row, row)).real
        if not pivot > 0:
            factor[j, j] = pivot
            return factor, j + 1
        factor[j, j] = np.sqrt(pivot)
        factor[j + 1:, j] = (matrix[j + 1:, j] - factor[j + 1:, :j] @ np.conj(row)) / \
            factor[j, j]
    return factor, 0


def _cholesky_parts(x):
    """(factors, infos) of every matrix of x on the host."""
    flat = host(x).reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])
    parts = [_potf2(m) for m in flat]
    factors = np.stack([f for f, _ in parts]) if parts else flat.copy()
    infos = np.array([i for _, i in parts], np.int32)
    return factors.reshape(x.shape), infos.reshape(x.shape[:-2])


def _not_positive_definite(x, infos) -> LinAlgError:
    """torch's error for the first matrix of ``x`` whose potrf ``infos`` says failed."""
    flat = np.asarray(infos).reshape(-1)
    index = int(np.argmax(flat > 0))
    return LinAlgError(
        f"linalg.cholesky: {_batch_prefix(x, index)}The factorization could not be completed "
        "because the input is not positive-definite (the leading minor of order "
        f"{int(flat[index])} is not positive-definite).")


@op(save="result", node_name="LinalgCholeskyExBackward0")
@by_columns()
def _cholesky(xp, x, *, upper=False):
    check_matrices("linalg.cholesky", x, half=kernel_error("cholesky_cpu"))
    # upper: LAPACK's potrf('U') reads x's upper triangle, which is the lower one of x^T, and
    # U is that factor transposed (not conjugated: its zeros keep potrf's +0j; seed 70864)
    source = xp.swapaxes(x, -1, -2) if upper else x
    try:
        lower = xp.linalg.cholesky(source)
    except np.linalg.LinAlgError:
        lower = None
    # LAPACK's unblocked potf2 decides, as cholesky_ex's info does, where NumPy's potrf and
    # torch's part at rounding level on nearly singular matrices (a Wishart draw, eigenvalue
    # -2e-9 in float32; torch factors what it passes), where NumPy's returns a NaN pivot, and
    # for a non-finite matrix, whose NaN OpenBLAS's potrf may lose ([[inf, nan], [nan, inf]]
    # factors to [[inf, 0], [0, inf]] there; MKL's, in torch, fails: breadth seed 1070435)
    if lower is None or xp.isnan(lower).any() or not xp.isfinite(source).all():
        factors, infos = _cholesky_parts(source)
        if infos.any():
            raise _not_positive_definite(source, infos) from None
        lower = xp.asarray(factors) if lower is None else lower
    return xp.swapaxes(lower, -1, -2) if upper else lower


def _cholesky_vjp(g, out, upper):
    """torch's cholesky_backward (Murray 2016): L^{-H} Φ(L^H gL) L^{-1}, Φ taking the lower
    triangle with its diagonal halved, made Hermitian."""
    lower, g_lower = (mH(out), mH(g)) if upper else (out, g)
    phi = tril(matmul(mH(lower), g_lower))
    phi = 0.5 * (phi + mH(tril(phi, -1)))
    # triangular solves, as torch's: a failed factor's zero pivot gives inf and NaN
    phi = solve_triangular(mH(lower), phi, upper=True)
    return solve_triangular(lower, phi, upper=False, left=False)


def _cholesky_jvp(t, out, upper):
    """dL = L Φ(L^{-1} dA L^{-H}) with Φ the lower triangle, its diagonal halved."""
    lower = mH(out) if upper else out
    inverse = inv(lower)
    middle = matmul(inverse, matmul(t, mH(inverse)))
    phi = tril(middle, -1) + 0.5 * _diagonal_part(middle)
    d_lower = matmul(lower, phi)
    return mH(d_lower) if upper else d_lower


def _diagonal_part(m):
    return diag_embed(diagonal(m, 0, -2, -1))


_cholesky.defvjp(_cholesky_vjp)
_cholesky.defjvp(_cholesky_jvp)
_cholesky.name, _cholesky.profiler_name = "linalg_cholesky", "gradkit::linalg_cholesky"


@int_parameters("linalg_cholesky", upper=(None, "bool"))
def cholesky(x, upper: bool = False):
    """The lower (``upper=True``: upper) Cholesky factor of Hermitian positive-definite x."""
    return _cholesky(x, upper=upper)
