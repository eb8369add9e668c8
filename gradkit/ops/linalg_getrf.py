"""LAPACK's getrf (LU with partial pivoting) step by step, as torch's CPU LAPACK (MKL) rounds
it: which pivot it finds exactly zero decides torch's singular errors and ``info``; and getrs,
the substitution through its LU."""
from __future__ import annotations

import numpy as np

from gradkit.ops.fused import fused_multiply_add
from gradkit.ops.linalg_triangular_solve import _substitute


def idamax(xp, size):
    """LAPACK's i?amax along the last axis of ``size`` (|entry|, or |re| + |im|): the first
    largest entry, where a NaN never compares larger, so only a NaN in first place is picked
    (NumPy's argmax would pick the first NaN anywhere)."""
    first = xp.isnan(size[..., 0])
    return xp.where(first, 0, xp.argmax(xp.where(xp.isnan(size), -1, size), axis=-1))


def getrf(xp, a):
    """(LU, pivots, info) of a batch of matrices, as LAPACK's getrf: at step j the row with
    the largest |entry| (|re| + |im| for complex, the first of ties) is swapped up; a zero
    pivot leaves its column unscaled and sets info to its 1-based index (the first one).
    Real matrices round as torch's MKL getrf: the column times the pivot's reciprocal, the
    rank-1 update fused, which finds the zero pivots MKL finds (docs/torch_expectations.md,
    "Noticed, nineteenth session")."""
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:  # nothing to factor (torch's pivots count 1..k, its info is 0)
        pivots = xp.broadcast_to(xp.arange(1, k + 1, dtype=np.int32), a.shape[:-2] + (k,))
        return a.copy(), pivots.copy(), xp.zeros(a.shape[:-2], np.int32)
    lu = a.reshape((-1, m, n)).copy()
    count = lu.shape[0]
    rows = xp.arange(count)
    pivots = xp.zeros((count, k), np.int32)
    info = xp.zeros(count, np.int32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(k):
            column = lu[:, j:, j]
            size = xp.abs(column.real) + xp.abs(column.imag) if lu.dtype.kind == "c" else \
                xp.abs(column)
            p = j + idamax(xp, size) if m > j else xp.full(count, j)
            pivots[:, j] = p + 1
            row_j = lu[rows, j].copy()
            lu[rows, j] = lu[rows, p]
            lu[rows, p] = row_j
            pivot = lu[:, j, j]
            zero = pivot == 0
            info = xp.where((info == 0) & zero, j + 1, info).astype(np.int32)
            safe = xp.where(zero, 1, pivot)
            if lu.dtype.kind == "f":  # MKL's: times 1 / pivot (divided below sfmin, as
                # LAPACK's getf2, and in a 2 x 2), the update one fma per entry
                column = lu[:, j + 1:, j]
                divided = (xp.abs(safe) < np.finfo(lu.dtype).tiny)[:, None] | (k <= 2)
                lu[:, j + 1:, j] = xp.where(divided, column / safe[:, None],
                                            column * (1 / safe)[:, None])
                lu[:, j + 1:, j + 1:] = fused_multiply_add(
                    xp, -lu[:, j + 1:, j, None], lu[:, j, None, j + 1:], lu[:, j + 1:, j + 1:])
                continue
            lu[:, j + 1:, j] = lu[:, j + 1:, j] / safe[:, None]
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    batch = a.shape[:-2]
    return lu.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def host(t) -> np.ndarray:
    """A tensor's or array's values as a NumPy array (copied from the device for CuPy)."""
    values = getattr(t, "_data", t)
    return np.asarray(values.get() if hasattr(values, "get") else values)


def _row_order(pivots, m: int) -> np.ndarray:
    """perm with (P^T A)[i] = A[perm[i]] from getrf's row swaps (host, batch flattened)."""
    flat = host(pivots).reshape((int(np.prod(pivots.shape[:-1])), pivots.shape[-1])) - 1
    if flat.size and (flat.min() < 0 or flat.max() >= m):
        raise RuntimeError("torch.lu_unpack: pivots must be in [1, LU.size(-2)], as "
                           "linalg.lu_factor gives them")
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for j in range(flat.shape[-1]):
        swap = perm[rows, flat[:, j]].copy()
        perm[rows, flat[:, j]] = perm[:, j]
        perm[:, j] = swap
    return perm


def _solve_packed(xp, lu_data, pivots, b, adjoint):
    """A^{-1} B (``adjoint``: A^{-H} B) for A = P L U by substitution, as getrs/trsm (the rows
    are permuted by indexing, which keeps each value as it is)."""
    batch = np.broadcast_shapes(lu_data.shape[:-2], b.shape[:-2])
    n = lu_data.shape[-1]
    lu_data = xp.broadcast_to(lu_data, batch + lu_data.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    order = _row_order(xp.broadcast_to(pivots, batch + pivots.shape[-1:]), n)
    if adjoint:  # A^H = U^H L^H P^T: solve, then x[perm] = y, i.e. x = y[argsort(perm)]
        lu_h = xp.conj(xp.swapaxes(lu_data, -1, -2))
        y = _substitute(xp, lu_h, b, upper=False, unitriangular=False, trsm=False)
        y = _substitute(xp, lu_h, y, upper=True, unitriangular=True, trsm=False)
        back = xp.asarray(np.argsort(order, axis=-1).reshape(batch + (n, 1)))
        return xp.take_along_axis(y, xp.broadcast_to(back, y.shape), axis=-2)
    perm = xp.asarray(order.reshape(batch + (n, 1)))
    rows = xp.take_along_axis(b, xp.broadcast_to(perm, b.shape), axis=-2)
    y = _substitute(xp, lu_data, rows, upper=False, unitriangular=True, trsm=False)
    return _substitute(xp, lu_data, y, upper=True, unitriangular=False, trsm=False)


def solve_through_lu(xp, a, rhs, adjoint: bool = False, transposed: bool = False):
    """A^{-1} rhs (``adjoint``: A^{-H} rhs) through getrf's LU of A, unchecked, as getrs: a
    zero pivot gives inf and NaN. ``transposed``: ``a`` is A^T, factored as A (torch's X A = B),
    the result conj(... conj(rhs))."""
    with np.errstate(all="ignore"):
        lu, pivots, _ = getrf(xp, xp.swapaxes(a, -1, -2) if transposed else a)
        if transposed:
            return xp.conj(_solve_packed(xp, lu, pivots, xp.conj(rhs), adjoint))
        return _solve_packed(xp, lu, pivots, rhs, adjoint)
