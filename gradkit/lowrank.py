"""Randomized low-rank factorizations: ``torch.svd_lowrank`` and ``torch.pca_lowrank``
(Halko, Martinsson and Tropp 2009), step for step as torch's ``torch/_lowrank.py``.

A Gaussian test matrix R (n, q) from gradkit's generator spans A's range by power iterations,
each re-orthonormalised with QR; the SVD of the small projection Qᴴ A gives the factors. Every
step is a gradkit op, so gradients flow through A (and M) as in torch. Given the same R the
results are torch's to rounding; gradkit's generator draws other numbers than torch's.

>>> a = gradkit.outer(gradkit.arange(1.0, 5.0), gradkit.arange(1.0, 4.0))
>>> u, s, v = gradkit.svd_lowrank(a, q=2)
>>> bool(gradkit.allclose(u @ gradkit.diag(s) @ v.mT, a, atol=1e-5))
True
"""
from __future__ import annotations

from gradkit import creation
from gradkit._tensor import Tensor
from gradkit.ops.aliases import adjoint
from gradkit.ops.arithmetic import sub
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_decompositions import qr, svd
from gradkit.ops.reduction import mean
from gradkit.ops.shape import broadcast_to

__all__ = ["svd_lowrank", "pca_lowrank"]


def get_approximate_basis(A: Tensor, q: int, niter: int | None = 2,  # noqa: N803
                          M: Tensor | None = None) -> Tensor:  # noqa: N803 - torch's names
    """Q (m, q) with orthonormal columns approximately spanning the range of A - M, after
    ``niter`` power iterations (None: 2)."""
    niter = 2 if niter is None else niter
    a, m = A, M
    dtype = a.dtype if a.is_floating_point() or a.is_complex() else creation.float32
    test_matrix = creation.randn(a.shape[-1], q, dtype=dtype, device=a.device)
    a_h, m_h = adjoint(a), None if m is None else adjoint(m)
    basis = qr(_product(a, m, test_matrix)).Q
    for _ in range(niter):
        basis = qr(_product(a_h, m_h, basis)).Q
        basis = qr(_product(a, m, basis)).Q
    return basis


def _product(x: Tensor, m: Tensor | None, y: Tensor) -> Tensor:
    """(x - m) y as torch computes it: x y - m y (just x y without m)."""
    return matmul(x, y) if m is None else sub(matmul(x, y), matmul(m, y))


def _svd_lowrank(a: Tensor, q: int | None = 6, niter: int | None = 2,
                 m: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    q = 6 if q is None else q
    rows, cols = a.shape[-2:]
    if m is not None:
        m = broadcast_to(m, tuple(a.shape))
    if rows < cols:  # work on the tall one
        a = adjoint(a)
        m = None if m is None else adjoint(m)
    basis = get_approximate_basis(a, q, niter=niter, M=m)
    small = matmul(adjoint(basis), a)
    if m is not None:
        small = sub(small, matmul(adjoint(basis), m))
    u, s, vh = svd(small, full_matrices=False)
    u, v = matmul(basis, u), adjoint(vh)
    return (v, s, u) if rows < cols else (u, s, v)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,  # noqa: N803
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """torch.svd_lowrank: (U, S, V) with A - M ≈ U diag(S) Vᴴ of rank ``q`` (random: the
    factors come from gradkit's generator's draws)."""
    return _svd_lowrank(A, q=q, niter=niter, m=M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """torch.pca_lowrank: (U, S, V) of the (column-centred when ``center``) data A;
    ``q`` defaults to min(6, m, n)."""
    rows, cols = A.shape[-2:]
    if q is None:
        q = min(6, rows, cols)
    elif not 0 <= q <= min(rows, cols):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(rows, cols)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter)
    return _svd_lowrank(sub(A, mean(A, -2, keepdim=True)), q, niter=niter)
