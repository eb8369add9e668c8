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
from gradkit.ops.linalg_lu import _solve_packed, getrf
from gradkit.ops.linalg_solvers import (
    LinAlgError, _batch_prefix, _cholesky, _cholesky_jvp, _cholesky_parts, _cholesky_vjp,
    _is_vector_rhs, check_matrices, cholesky, host, inv, low_precision, solve)
from gradkit.ops.piecewise import where
from gradkit.ops.shape import unsqueeze
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


@op(name="linalg_ex_unfinished")
def _unfinished(xp, a, b, *, kind, upper=False, left=True):
    """What LAPACK returns for matrices it could not finish (a constant, no gradient)."""
    if kind == "cholesky":  # upper: U is the lower factor of a^T, transposed (as _cholesky)
        factor = xp.asarray(_cholesky_parts(xp.swapaxes(a, -1, -2) if upper else a)[0])
        return xp.swapaxes(factor, -1, -2) if upper else factor
    if not left:  # X A = B solved as A^T X^T = B^T
        a, b = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2)
    lu, pivots, _ = getrf(xp, a)
    with np.errstate(invalid="ignore", over="ignore"):
        vector = _is_vector_rhs(a, b)
        x = _solve_packed(xp, lu, pivots, b[..., None] if vector else b, False)
    x = x[..., 0] if vector else x
    return x if left else xp.swapaxes(x, -1, -2)


def _failed(info):
    return bool(host(info).any())


def _with_unfinished(info, good, unfinished, matrix_dims: int = 2):
    """The good values where info is 0, LAPACK's leftovers elsewhere."""
    mask = info > 0
    for _ in range(matrix_dims):
        mask = unsqueeze(mask, -1)
    return where(mask, unfinished, good)


def _first_failure(info) -> tuple[int, int]:
    flat = host(info).reshape(-1)
    index = int(np.argmax(flat > 0))
    return index, int(flat[index])


def _identity_where_failed(x, info):
    """x with its failed matrices replaced by the identity (so the regular op runs)."""
    n = x.shape[-1]
    eye = x.new_tensor(np.eye(n), dtype=x.dtype)
    return _with_unfinished(info, x, eye)


def inv_ex(A, *, check_errors: bool = False):  # noqa: N803 - torch's name
    """(inverse, info): info is getrf's first zero pivot (0: x is invertible)."""
    check_matrices("linalg.inv", A._data,  # torch's inv_ex checks under inv's name
                   half=low_precision("linalg.inv"))
    info = _info(A, kind="lu")
    if not _failed(info):
        return InvExResult(inv(A), info)
    if check_errors:
        index, pivot = _first_failure(info)
        raise LinAlgError(f"linalg.inv_ex: {_batch_prefix(A, index)}The diagonal element {pivot} "
                          "is zero, the inversion could not be completed because the input matrix "
                          "is singular.")
    eye = A.new_tensor(np.broadcast_to(np.eye(A.shape[-1]), tuple(A.shape)), dtype=A.dtype)
    good = inv(_identity_where_failed(A, info))
    return InvExResult(_with_unfinished(info, good, _unfinished(A, eye, kind="lu")), info)


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
    eye = xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), x.shape)
    good = _cholesky.forward(xp, xp.where(failed[..., None, None], eye, x), upper=upper)
    unfinished = _unfinished.forward(xp, x, x, kind="cholesky", upper=upper)
    return xp.where(failed[..., None, None], unfinished, good)


_cholesky_unfinished.defvjp(_cholesky_vjp)
_cholesky_unfinished.defjvp(_cholesky_jvp)


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False):  # noqa: N803 - torch's name
    """(X, info) with ``A X = B`` (``left=False``: ``X A = B``); info is getrf's first zero
    pivot of A (0: A is invertible)."""
    check_matrices("linalg.solve", A._data)
    info = _info(A, kind="lu")
    if not _failed(info):
        return SolveExResult(solve(A, B, left=left), info)
    if check_errors:
        index, _ = _first_failure(info)
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(A, index)}The solver failed "
                          "because the input matrix is singular.")
    good = solve(_identity_where_failed(A, info), B, left=left)
    leftover = _unfinished(A, B, kind="lu", left=left)
    vector = left and _is_vector_rhs(A, B)
    return SolveExResult(_with_unfinished(info, good, leftover, 1 if vector else 2), info)
