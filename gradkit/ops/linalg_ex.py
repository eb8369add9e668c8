"""The ``_ex`` forms of torch.linalg's factorizations and solvers: cholesky_ex, inv_ex,
solve_ex (lu_factor_ex lives with the LU). They return LAPACK's ``info`` (int32 per matrix:
0, or the failing pivot / leading minor) instead of raising, unless ``check_errors=True``.

Where a matrix fails, its values are what LAPACK leaves, as torch returns them: the
partial Cholesky factor (potrf stops at the failing pivot, left in place), or the LU solve
by substitution (a zero pivot gives inf and NaN). Gradients flow to the other matrices
(cholesky_ex's to the failed ones too, by cholesky's formula, as torch's).
"""
from __future__ import annotations


import numpy as np

from gradkit import return_types
from gradkit.ops._op import op
from gradkit.backend import get_array_module
from gradkit.ops.linalg_getrf import getrf, solve_through_lu
from gradkit.ops.linalg_lu import _lu_solve
from gradkit.ops.linalg_solvers import (
    LinAlgError, _as_columns, _batch_prefix, _cholesky, _cholesky_jvp, _cholesky_parts,
    _cholesky_vjp, _is_vector_rhs, _solve, check_matrices, check_solve, cholesky, host, inv,
    inv_jvp, inv_vjp, low_precision, mH, solve, solve_jvp, solve_vjp_a)
from gradkit.ops.shape import squeeze
from gradkit.ops.unary_helpers import kernel_error

InvExResult = return_types.linalg_inv_ex
CholeskyExResult = return_types.linalg_cholesky_ex
SolveExResult = return_types.linalg_solve_ex


@op(name="linalg_ex_info")
def _info(xp, x, *, kind):
    """LAPACK's info per matrix ("lu": getrf's first zero pivot, "cholesky": potrf's failing
    leading minor); a constant (no gradient)."""
    if kind == "lu":
        return getrf(xp, x)[2]
    return xp.asarray(_cholesky_parts(x)[1])


def _unfinished(xp, a, b, *, kind, upper=False, lu_of_adjoint=False):
    """What LAPACK returns for matrices it could not finish (the ops below differentiate it);
    ``lu_of_adjoint``: a is A^H, solved through A's own LU (getrs 'C', as torch's X A = B)."""
    if kind == "cholesky":  # upper: U is the lower factor of a^T, transposed (as _cholesky)
        factor = xp.asarray(_cholesky_parts(xp.swapaxes(a, -1, -2) if upper else a)[0])
        return xp.swapaxes(factor, -1, -2) if upper else factor
    vector = _is_vector_rhs(a, b)
    x = solve_through_lu(xp, _mh(xp, a) if lu_of_adjoint else a, b[..., None] if vector else b,
                         adjoint=lu_of_adjoint)
    return x[..., 0] if vector else x


def _failed(info):
    return bool(host(info).any())


def _leftovers_where_failed(xp, x, failed, regular, leftovers, rhs_dims: int = 2):
    """``regular`` of x where each matrix succeeded (the failed ones replaced by the identity
    so it runs), LAPACK's ``leftovers`` where it failed (``rhs_dims``: the result's own dims
    after the batch)."""
    eye = xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), x.shape)
    good = regular(xp.where(failed[..., None, None], eye, x))
    return xp.where(failed.reshape(failed.shape + (1,) * rhs_dims), leftovers, good)


def _first_failure(info) -> tuple[int, int]:
    flat = host(info).reshape(-1)
    index = int(np.argmax(flat > 0))
    return index, int(flat[index])


def inv_ex(A, *, check_errors: bool = False):  # noqa: N803 - torch's name
    """(inverse, info): info is getrf's first zero pivot (0: x is invertible)."""
    check_matrices("linalg.inv", A._data,  # torch's inv_ex checks under inv's name
                   half=low_precision("linalg.inv"))
    info = _info(A, kind="lu")
    if not _failed(info):
        try:
            return InvExResult(inv(A), info)
        except LinAlgError:  # OpenBLAS met an exact 0 pivot that getrf's rounding (MKL's) missed
            return InvExResult(_inv_unfinished(A), info)
    if check_errors:
        index, pivot = _first_failure(info)
        raise LinAlgError(f"linalg.inv_ex: {_batch_prefix(A, index)}The diagonal element {pivot} "
                          "is zero, the inversion could not be completed because the input matrix "
                          "is singular.")
    return InvExResult(_inv_unfinished(A), info)


@op(save="result", node_name="LinalgInvExBackward0", name="linalg_inv_ex")
def _inv_unfinished(xp, x):
    """inv_ex's inverses where some matrix failed: getrs's leftovers there (inf, NaN). torch's
    node differentiates every matrix by inv's formula, the failed ones' too (NaN, inf), where
    gradkit gave them 0 (the scan of opinfo_layout.py's expanded, singular, matrices)."""
    unfinished = _unfinished(xp, x, xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), x.shape),
                             kind="lu")
    try:
        return _leftovers_where_failed(xp, x, getrf(xp, x)[2] > 0,
                                       lambda a: inv.forward(xp, a), unfinished)
    except LinAlgError:  # singular to OpenBLAS only: getrf's substitution, as info says 0
        return unfinished


_inv_unfinished.defvjp(inv_vjp)
_inv_unfinished.defjvp(inv_jvp)


def cholesky_ex(x, *, upper: bool = False, check_errors: bool = False):
    """(L, info): info is the order of the first leading minor that is not positive-definite
    (0: x is positive-definite)."""
    check_matrices("linalg.cholesky", x._data, half=kernel_error("cholesky_cpu"))  # its name
    # upper: potrf('U') reads x's upper triangle, the lower one of x^T
    info = _info(x.mT if upper else x, kind="cholesky")
    if not _failed(info):
        return CholeskyExResult(cholesky(x, upper=upper), info)
    if check_errors:
        index, order = _first_failure(info)
        raise LinAlgError(f"linalg.cholesky_ex: {_batch_prefix(x, index)}The factorization could "
                          "not be completed because the input is not positive-definite (the "
                          f"leading minor of order {order} is not positive-definite).")
    return CholeskyExResult(_cholesky_unfinished(x, upper=upper), info)


@op(save="result", node_name="LinalgCholeskyExBackward0", name="linalg_cholesky_ex")
def _cholesky_unfinished(xp, x, *, upper=False):
    """cholesky_ex's factors where some matrix failed: potrf's partial factor there. torch's
    node (saving L: a write into it refuses backward, breadth seed 1183280) differentiates
    every matrix by cholesky's formula, the failed ones' too (NaN, inf at a zero pivot)."""
    failed = xp.asarray(_cholesky_parts(xp.swapaxes(x, -1, -2) if upper else x)[1] > 0)
    return _leftovers_where_failed(xp, x, failed,
                                   lambda a: _cholesky.forward(xp, a, upper=upper),
                                   _unfinished(xp, x, x, kind="cholesky", upper=upper))


_cholesky_unfinished.defvjp(_cholesky_vjp)
_cholesky_unfinished.defjvp(_cholesky_jvp)


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False):  # noqa: N803 - torch's name
    """(X, info) with ``A X = B`` (``left=False``: ``X A = B``); info is getrf's first zero
    pivot of A (0: A is invertible)."""
    check_solve(A._data, B._data, left)
    info = _info(A, kind="lu")
    if not _failed(info):
        return SolveExResult(solve(A, B, left=left), info)
    if check_errors:
        index, _ = _first_failure(info)
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(A, index)}The solver failed "
                          "because the input matrix is singular.")
    if left:
        return SolveExResult(_solve_unfinished(A, B), info)
    # X A = B as A^H X^H = B^H, through A's own LU as torch's lu_solve (getrs 'C'): its info
    # and its inf and NaN, where the LU of A^H fails elsewhere (or not at all)
    return SolveExResult(mH(_solve_unfinished(mH(A), mH(B), lu_of_adjoint=True)), info)


def _mh(xp, a):
    return xp.conj(xp.swapaxes(a, -1, -2))


@op(save=("a", "result"), broadcast=True, node_name="LinalgSolveExBackward0",
    name="linalg_solve_ex")
def _solve_unfinished(xp, a, b, *, lu_of_adjoint=False):
    """solve_ex's solutions where some A failed: the LU substitution's there (inf, NaN). torch's
    node differentiates those by solve's formula through A's LU, unchecked (inf, NaN), where
    gradkit gave them 0 (opinfo_layout.py's expanded, singular, matrices). ``lu_of_adjoint``:
    a is A^H (X A = B), whose LU is A's own, adjoint."""
    failed = getrf(xp, _mh(xp, a) if lu_of_adjoint else a)[2] > 0
    return _leftovers_where_failed(xp, a, failed, lambda m: _solve.forward(xp, m, b),
                                   _unfinished(xp, a, b, kind="lu", lu_of_adjoint=lu_of_adjoint),
                                   1 if _is_vector_rhs(a, b) else 2)


def _through_lu(a, rhs, adjoint=False, lu_of_adjoint=False):
    """A^{-1} rhs (``adjoint``: A^{-H} rhs) through A's LU, unchecked, as torch's solve_ex
    backward and jvp: a zero pivot gives inf and NaN (``lu_of_adjoint``: through the LU of
    A^H, adjoint). Under create_graph torch's backward solves anew, checked: a singular A
    raises."""
    data = getattr(a, "_data", a)
    if data is not a and adjoint:  # a tensor: create_graph (forward mode goes on); for X A = B
        # torch solves with A^H on the right, factoring A^H (a here)
        return mH(solve(a, mH(rhs), left=False)) if lu_of_adjoint else solve(mH(a), rhs)
    xp = get_array_module(data)
    lu, pivots, _ = getrf(xp, _mh(xp, data) if lu_of_adjoint else data)
    return _lu_solve(lu, pivots, rhs, adjoint=adjoint != lu_of_adjoint)


def _unfinished_vjp_b(g, a, x, lu_of_adjoint=False):
    gb = _through_lu(a, _as_columns(a, g), adjoint=True, lu_of_adjoint=lu_of_adjoint)
    return squeeze(gb, -1) if _is_vector_rhs(a, x) else gb


_solve_unfinished.defvjp(
    lambda g, a, x, lu_of_adjoint: solve_vjp_a(
        g, a, x, lambda *args: _unfinished_vjp_b(*args, lu_of_adjoint)), _unfinished_vjp_b)
_solve_unfinished.defjvp_all(lambda tangents, a, x, lu_of_adjoint: solve_jvp(
    tangents[0], tangents[1], a, x,
    lambda *args: _through_lu(*args, lu_of_adjoint=lu_of_adjoint)))
