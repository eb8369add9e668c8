"""``torch.lobpcg``, basic: the k largest or smallest eigenpairs of a symmetric matrix by the
locally optimal block preconditioned conjugate gradient method (Knyazev 2001).

Each iteration does a Rayleigh-Ritz step on an orthonormal basis (QR) of the current vectors X,
their residuals A X - X diag(E) and the previous step's directions P, until every wanted pair's
relative residual ‖r‖ / (‖A‖ + |λ|) is below ``tol`` (‖A‖ estimated by the largest Ritz value).
The iteration is not recorded; the gradient is torch's (``LOBPCGAutogradFunction``): the
symmetric eigenproblem's, split into the found eigenspace and its complement.

>>> a = gradkit.diag(gradkit.arange(1.0, 11.0, dtype=gradkit.float64))
>>> values, vectors = gradkit.lobpcg(a, k=2)
>>> [round(v, 6) for v in values.tolist()]
[10.0, 9.0]
"""
from __future__ import annotations

import numpy as np

from gradkit import creation
from gradkit._tensor import Tensor
from gradkit.autograd.function import Function
from gradkit.ops.joining import stack
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_decompositions import qr
from gradkit.ops.linalg_solvers import solve
from gradkit.ops.triangular import diag_embed

__all__ = ["lobpcg"]

_EPS = {"float32": 1.2e-07, "float64": 2.23e-16}


def _rayleigh_ritz(a: np.ndarray, basis: np.ndarray, count: int, largest: bool):
    """The ``count`` extreme Ritz pairs of ``a`` on an orthonormal ``basis``: (values,
    coefficients, largest absolute Ritz value)."""
    values, vectors = np.linalg.eigh(basis.T @ a @ basis)
    order = np.argsort(-values if largest else values, kind="stable")[:count]
    return values[order], vectors[:, order], float(np.abs(values).max())


def _iterate(a: np.ndarray, x: np.ndarray, k: int, niter: int, tol: float, largest: bool):
    """(eigenvalues, eigenvectors) of the ``k`` wanted pairs, from start vectors ``x``."""
    n = x.shape[1]
    basis = np.linalg.qr(x)[0]
    values, coefficients, norm = _rayleigh_ritz(a, basis, n, largest)
    x, directions = basis @ coefficients, None
    for _ in range(niter):
        residuals = a @ x - x * values
        errors = np.linalg.norm(residuals, axis=0) / (norm + np.abs(values))
        if (errors[:k] < tol).all():
            break
        blocks = [x, residuals] + ([] if directions is None else [directions])
        basis = np.linalg.qr(np.concatenate(blocks, axis=1))[0]
        values, coefficients, norm = _rayleigh_ritz(a, basis, n, largest)
        new_x = basis @ coefficients
        directions = new_x - x @ (x.T @ new_x)  # the step outside the old X
        x = new_x
    return values[:k], x[:, :k]


def _symeig_backward(values_grad, vectors_grad, a, values, vectors):
    """torch's gradient of (some) eigenpairs of a symmetric ``a`` (that of linalg.eigh with
    the other pairs' gradients zero): in the found eigenspace U (diag(dE) + F ∘ skew(Uᵀ dU)) Uᵀ
    with F_ij = 1 / (λ_j - λ_i); outside it each vector's share t_i = -Q⊥ (Q⊥ᵀ (A - λ_i) Q⊥)⁻¹
    Q⊥ᵀ dU_i as sym(t_i u_iᵀ) (Q⊥ an orthonormal complement of U; any basis gives the same)."""
    gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
    eye = creation.eye(values.shape[-1], dtype=values.dtype)
    inverse_gaps = (1 - eye) / (gaps + eye)
    products = matmul(vectors.mT, vectors_grad)
    inside = diag_embed(values_grad) + (products - products.mT) * 0.5 * inverse_gaps
    grad = matmul(vectors, matmul(inside, vectors.mT))
    m, k = vectors.shape[-2:]
    if k == m:
        return grad
    # an orthonormal complement that follows U, so second derivatives flow through it too:
    # QR of (I - U Uᵀ) times a fixed random matrix, as torch's backward projects one
    fixed = creation.tensor(np.random.default_rng(0).standard_normal((m, m - k)), dtype=a.dtype)
    complement = qr(fixed - matmul(vectors, matmul(vectors.mT, fixed))).Q
    restricted = matmul(complement.mT, matmul(a, complement))
    projected = matmul(complement.mT, vectors_grad)  # (m - k, k)
    for i in range(k):
        shifted = restricted - values[i] * creation.eye(m - k, dtype=a.dtype)
        share = matmul(complement, solve(shifted, projected[:, i:i + 1]))
        outer = matmul(share, vectors[:, i:i + 1].mT)
        grad = grad - (outer + outer.mT) * 0.5
    return grad


class LOBPCGAutogradFunction(Function):
    """The iteration as one node: forward on arrays, torch's eigenproblem gradient."""

    @staticmethod
    def forward(ctx, a, start, k, niter, tol, largest):
        values, vectors = _iterate(a.detach().numpy(), start, k, niter, tol, largest)
        values = creation.tensor(values, dtype=a.dtype)
        vectors = creation.tensor(vectors, dtype=a.dtype)
        ctx.save_for_backward(a, values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, values_grad, vectors_grad):
        a, values, vectors = ctx.saved_tensors
        if values_grad is None:
            values_grad = creation.zeros_like(values)
        if vectors_grad is None:
            vectors_grad = creation.zeros_like(vectors)
        return (_symeig_backward(values_grad, vectors_grad, a, values, vectors),
                None, None, None, None, None)


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None,  # noqa: N803
           X: Tensor | None = None, n: int | None = None, iK: Tensor | None = None,  # noqa: N803
           niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None) -> tuple[Tensor, Tensor]:
    """torch.lobpcg for a dense symmetric ``A`` (m, m) or a batch (*, m, m): (E (*, k,),
    X (*, m, k)), the ``k`` largest
    (``largest=False``: smallest) eigenvalues, sorted so, and their eigenvectors (signs are
    arbitrary). ``X`` gives the start vectors (else ``n`` (default k) drawn from gradkit's
    generator), ``niter`` (default 1000) bounds the iterations, ``tol`` (default √eps) the
    relative residuals. ``B``, ``iK``, complex ``A`` and ``method``/``tracker``/``ortho_*`` are
    not supported (NotImplementedError)."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and tuple(A.shape) != tuple(B.shape):
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    unsupported = {"B": B, "iK": iK, "method": method, "tracker": tracker,
                   "ortho_iparams": ortho_iparams, "ortho_fparams": ortho_fparams,
                   "ortho_bparams": ortho_bparams}
    given = [name for name, value in unsupported.items() if value is not None]
    if given or A.is_complex():
        what = ", ".join(given) or "complex A"
        raise NotImplementedError(f"gradkit's lobpcg takes a real A only, not {what}")
    dtype = A.dtype if A.is_floating_point() else creation.float32
    tol = _EPS[str(dtype).split(".")[-1]] ** 0.5 if tol is None else tol
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    if A.ndim > 2:  # one problem per matrix of the batch, as torch's loop over them
        return _lobpcg_of_a_batch(A, k, X, n, niter, tol, largest)
    start = creation.randn(m, n, dtype=dtype, device=A.device) if X is None else X
    if tuple(start.shape) != (m, n):
        raise AssertionError(f"X shape mismatch: got {start.shape}, expected {(m, n)}")
    if A.requires_grad:  # as torch: a symmetric A's gradient stays symmetric, and one entry
        # moved alone moves the result as that gradient says (torch's A_sym)
        A = (A + A.mT) / 2
    return LOBPCGAutogradFunction.apply(A, start.detach().numpy(), k,
                                        1000 if niter is None else niter, tol,
                                        True if largest is None else largest)


def _lobpcg_of_a_batch(A: Tensor, k: int, X: Tensor | None, n: int, niter, tol,  # noqa: N803
                       largest) -> tuple[Tensor, Tensor]:
    batch = tuple(A.shape[:-2])
    if X is not None and tuple(X.shape[:-2]) != batch:
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected "
                             f"{batch + tuple(A.shape[-1:]) + (n,)}")
    matrices = A.reshape(-1, *A.shape[-2:])
    starts = [None] * len(matrices) if X is None else X.reshape(-1, *X.shape[-2:])
    pairs = [lobpcg(a, k=k, X=x, n=n, niter=niter, tol=tol, largest=largest)
             for a, x in zip(matrices, starts)]
    values = stack([e for e, _ in pairs]).reshape(*batch, k)
    vectors = stack([v for _, v in pairs]).reshape(*batch, *A.shape[-1:], k)
    return values, vectors
