"""LAPACK's potri (the inverse from a Cholesky factor) step by step, for complex factors
whose diagonal is not real: potri inverts the triangle (trtri) and multiplies it by its
conjugate transpose with lauum, whose unblocked lauu2 takes each diagonal entry's real part
(and herk of the blocked one drops the block diagonal's imaginary parts), so torch's result is
not the inverse of L L^H there. A factor with a real diagonal never comes here: its inverse
is the same matrix, from two solves (linalg_cholesky_solve.py)."""
from __future__ import annotations

from gradkit.ops.linalg_triangular_solve import _substitute

_BLOCK = 32  # MKL's lauum block (torch's LAPACK; tests/test_noticed_nineteenth.py checks it)


def _mh(xp, a):
    return xp.conj(xp.swapaxes(a, -1, -2))


def _lauu2(xp, a) -> None:
    """LAPACK's lauu2 of lower triangles, in place: W^H W with each diagonal entry of W read
    as its real part (the last one scales its row, its own entry too)."""
    n = a.shape[-1]
    for i in range(n):
        aii = a[..., i, i].real.copy()
        if i == n - 1:
            a[..., i, :] *= aii[..., None]
            continue
        below = a[..., i + 1:, i]
        a[..., i, :i] = aii[..., None] * a[..., i, :i] + (
            xp.conj(below)[..., None, :] @ a[..., i + 1:, :i])[..., 0, :]
        a[..., i, i] = aii * aii + (below.real ** 2 + below.imag ** 2).sum(-1)


def _lauum(xp, a) -> None:
    """LAPACK's blocked lauum of lower triangles (its lauu2 when one block holds them), in
    place: per block row, trmm by the block's conjugate transpose, lauu2 of the block, then
    gemm and herk of the rows below (herk leaves the diagonal real)."""
    n = a.shape[-1]
    if n <= _BLOCK:
        _lauu2(xp, a)
        return
    for i in range(0, n, _BLOCK):
        end = min(i + _BLOCK, n)
        block = a[..., i:end, i:end]
        a[..., i:end, :i] = _mh(xp, xp.tril(block)) @ a[..., i:end, :i]
        _lauu2(xp, block)
        if end < n:
            rows = a[..., end:, i:end]
            a[..., i:end, :i] += _mh(xp, rows) @ a[..., end:, :i]
            product = _mh(xp, rows) @ rows
            diagonal = block.diagonal(0, -2, -1).real + product.diagonal(0, -2, -1).real
            block += xp.tril(product, -1)
            k = xp.arange(end - i)
            block[..., k, k] = diagonal


def potri(xp, factor, upper: bool):
    """torch's cholesky_inverse of a complex factor: LAPACK's trtri and lauum of the lower
    triangle (of U^H for ``upper``, as the upper lauum mirrors it), mirrored Hermitian."""
    lower = _mh(xp, factor) if upper else factor
    identity = xp.broadcast_to(xp.eye(lower.shape[-1], dtype=lower.dtype), lower.shape)
    w = xp.tril(_substitute(xp, xp.tril(lower), identity, upper=False, unitriangular=False))
    _lauum(xp, w)
    out = xp.tril(w) + _mh(xp, xp.tril(w, -1))
    return _mh(xp, out) if upper else out
