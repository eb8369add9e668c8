"""Complex matrix products with an infinite or NaN entry, as torch's CPU kernels compute them.

NumPy's complex BLAS multiplies an infinity by 0 where torch's kernels do not, and the other
way round, so one ``inf`` entry turns different parts of the result into NaN. torch 2.13's
kernels (its MKL build) follow three rules (``tests/fuzz/complex_special.py`` checks them):

- ``by_parts``: the sum of C's products ``(ac - bd) + (ad + bc)i``: its dot (``dot``, ``vdot``,
  ``inner`` and ``matmul`` of vectors), its own small bmm kernel (fewer than 400 multiply-adds
  per matrix; ``einsum`` goes through it) and MKL's larger gemm;
- ``times_one`` of that sum: ``alpha = 1 + 0j`` times the sum as a C product, which makes the
  other part of an infinite one NaN: gemm of 1x1 matrices and the small ``baddbmm`` kernel;
- ``times_one`` of operands first: gemv (``mv``, ``addmv``, a product of one column) scales
  the vector, and the matrix when torch passes it by rows; MKL's small gemm (``mm``,
  ``addmm``, ``tensordot``, a vector times a matrix, below ``_GEMM_BY_PARTS``'s sizes)
  scales the left matrix, and the right one when torch passes it by columns.

Only complex products with a non-finite entry come here (one ``isfinite`` pass over the
operands), so real and finite products keep NumPy's kernels.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops.complex_build import from_parts

# (rows, inner size, columns) from which MKL's gemm sums by parts without scaling an operand;
# below any of them, its small kernel scales them
_GEMM_BY_PARTS = {np.dtype(np.complex64): (2, 4, 4), np.dtype(np.complex128): (4, 2, 16)}
SMALL_BMM = 400  # torch's own bmm/baddbmm loop below this many multiply-adds per matrix


def all_finite(xp, *arrays) -> bool:
    return all(bool(xp.isfinite(a).all()) for a in arrays)


def by_parts(xp, product, x, y):
    """``product`` (a bilinear real op) of complex x and y as four real products, so an
    infinity meets 0 only where C's complex product meets it; exact zeros come out +0.0, as
    torch's sums from 0 leave them."""
    (a, b), (c, d) = (xp.real(x), xp.imag(x)), (xp.real(y), xp.imag(y))
    with np.errstate(invalid="ignore", over="ignore"):
        return from_parts(xp, product(a, c) - product(b, d) + 0, product(a, d) + product(b, c) + 0,
                          x.dtype)


def times_one(xp, z):
    """``z * (1 + 0j)`` as C multiplies: an infinite part makes the other one NaN (inf * 0)."""
    real, imag = xp.real(z), xp.imag(z)
    with np.errstate(invalid="ignore"):
        return from_parts(xp, real - imag * 0, real * 0 + imag, z.dtype)


def matmul(xp, x, y, path: str):
    """torch's complex matmul of x and y (one of them not finite), by the kernel of ``path``
    (``linalg._matmul_path``: "mm", "mv", "vm" or "bmm")."""
    if (x.ndim == 1 and y.ndim == 1) or path == "bmm":
        return by_parts(xp, xp.matmul, x, y)
    rows = math.prod(x.shape[:-1]) if path == "mm" else 1
    if path == "mm" and rows == x.shape[-1] == y.shape[-1] == 1:  # gemm of one entry: alpha
        # times the sum
        return times_one(xp, by_parts(xp, xp.matmul, x, y))
    if path == "mv" or (path == "mm" and y.shape[-1] == 1 and rows > 1):
        # gemv: alpha times the vector, and times a matrix passed row by row ("t")
        matrix = x if _column_major(x, rows_first=path == "mm") else times_one(xp, x)
        return by_parts(xp, xp.matmul, matrix, times_one(xp, y))
    if all(size >= least for size, least in zip((rows, x.shape[-1], y.shape[-1]),
                                                _GEMM_BY_PARTS[x.dtype])):
        return by_parts(xp, xp.matmul, x, y)
    # MKL's small gemm: alpha times mat1 first, and times mat2 when passed transposed
    return by_parts(xp, xp.matmul, times_one(xp, x),
                    times_one(xp, y) if _column_major(y) else y)


def _column_major(a, rows_first: bool = True) -> bool:
    """Whether torch hands matrix ``a`` to BLAS by columns (a transposed view): torch's gemm
    asks for contiguous rows first, its gemv for contiguous columns first (which decides a
    matrix of one row or column). A batch folded into one matrix goes by rows."""
    if a.ndim != 2:
        return False
    (r, c), (sr, sc) = a.shape, (s // a.itemsize for s in a.strides)
    by_rows = sc == 1 and (r == 1 or sr >= max(1, c))
    by_columns = sr == 1 and (c == 1 or sc >= max(1, r))
    return by_columns and not (by_rows and rows_first)


def small_bmm(a, b) -> bool:
    """Whether torch's bmm and baddbmm run their own loop on batches of a and b."""
    return a.shape[-2] * a.shape[-1] * b.shape[-1] < SMALL_BMM
