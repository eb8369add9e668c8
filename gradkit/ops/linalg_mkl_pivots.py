"""Where torch's LAPACK (MKL) and NumPy's (OpenBLAS) find a matrix singular apart: MKL's getrf
replayed (linalg_getrf.py) to decide torch's singular errors, only for matrices near singular."""
from __future__ import annotations

import numpy as np

from gradkit.ops.linalg_getrf import getrf, host, solve_through_lu


def first_singular(x) -> tuple[int, int | None]:
    """(batch index, 1-based zero pivot) of x's first singular matrix, as getrf reports it;
    (0, None) when none is."""
    info = getrf(np, host(x))[2].reshape(-1)
    failed = np.flatnonzero(info)
    return (int(failed[0]), int(info[failed[0]])) if failed.size else (0, None)


def with_mkls_pivots(xp, a, rhs, compute, refusal, non_finite, vector: bool = False,
                      transposed: bool = False, computes_inverse: bool = False):
    """``compute()`` (A^{-1} rhs by NumPy's LAPACK, OpenBLAS) where torch's (MKL's) getrf
    meets the same exact 0 pivots: ``refusal`` of the factored matrix where only MKL's meets
    one (a large result of OpenBLAS's tiny pivot), getrs through MKL's LU where only
    OpenBLAS's does (finite noise; ``non_finite()`` for a matrix with inf or NaN; ``vector``:
    rhs is vectors as columns; ``transposed``: a is A^T, factored as A: A^T y = b is
    conj(A^{-H} conj(b)))."""
    factored = xp.swapaxes(a, -1, -2) if transposed else a
    try:
        result = compute()
    except np.linalg.LinAlgError:
        if first_singular(factored)[1] is not None:
            raise refusal(factored) from None
        if not xp.isfinite(a).all():
            return non_finite()
        out = solve_through_lu(xp, a, rhs, adjoint=transposed, transposed=transposed)
        return out[..., 0] if vector else out
    if result.size and a.dtype.kind == "f" and near_singular(
            xp, a, result if computes_inverse or a.shape[-1] > ALWAYS_FACTORED else None) and \
            first_singular(factored)[1] is not None:
        raise refusal(factored)
    return result


def near_singular(xp, a, large=None) -> bool:
    """Whether ``|A| |large|`` (``large``: A's inverse, or a solution of a large A; by default
    A's inverse, computed) is near 1 / eps: where OpenBLAS's getrf and MKL's may find apart a
    zero pivot, so MKL's is replayed (a Python loop per column: only then)."""
    if a.size == 0:
        return False
    if large is None:
        try:
            large = xp.linalg.inv(a)
        except np.linalg.LinAlgError:
            return True
    with np.errstate(all="ignore"):
        size = float(xp.abs(large).max()) * float(xp.abs(a).max())
    return not size <= 1e-3 / np.finfo(a.dtype).eps  # (NaN: near)


def near_singular_each(xp, a):
    """``near_singular`` for each matrix of a batch (all of it where NumPy cannot invert one)."""
    if a.size == 0:
        return xp.zeros(a.shape[:-2], bool)
    with np.errstate(all="ignore"):
        try:
            inverse = xp.linalg.inv(a)
        except np.linalg.LinAlgError:
            return xp.ones(a.shape[:-2], bool)
        size = abs(inverse).max(axis=(-2, -1)) * abs(a).max(axis=(-2, -1))
    return ~(size <= 1e-3 / np.finfo(a.dtype).eps)  # (NaN: near)


# up to this size a near-singular matrix is factored as MKL rounds (a solution of moderate
# size may come from OpenBLAS's tiny pivot where MKL's is 0); larger ones only where the
# solution is large
ALWAYS_FACTORED = 16
