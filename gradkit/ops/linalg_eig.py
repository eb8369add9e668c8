"""``linalg.eig`` and ``linalg.eigvals``: eigen-decompositions of general square matrices,
complex whatever the input, with torch's derivatives (linalg_eig_backward / _jvp)."""
from __future__ import annotations


import numpy as np

from gradkit import return_types
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.ops import _dispatch
from gradkit.ops._op import op
from gradkit.ops.complex import _is_complex, real
from gradkit.ops.conversion import astype
from gradkit.ops.linalg import matmul
from gradkit.autograd.zero_grads import is_undefined
from gradkit.ops.linalg_decompositions import _PHASE, _check_gauge, _phase_terms
from gradkit.ops.linalg_solvers import check_matrices, host, mH, solve
from gradkit.ops.shape import unsqueeze
from gradkit.ops.triangular import diag_embed, diagonal
from gradkit.ops.unary_helpers import kernel_error
from gradkit.ops.result_layout import by_columns

EigResult = return_types.linalg_eig

_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _complex_dtype(x):
    return _COMPLEX.get(x.dtype, x.dtype)


def _decompose(xp, x, vectors: bool, name: str = "linalg.eig"):
    """(eigenvalues, eigenvectors or None) in the complex dtype matching x; non-finite matrices
    (LAPACK's geev gives garbage, NumPy refuses them) get NaN."""
    check_matrices(name, x, floating=False)
    if x.dtype.kind not in "fc" or x.dtype == np.float16:
        if x.dtype.kind in "fc":
            raise kernel_error("linalg_eig_out_cpu")(x)
        raise RuntimeError(f"Unknown Complex ScalarType for {x.dtype.name.capitalize()}"
                           .replace("Int64", "Long").replace("Int32", "Int"))
    dtype = _complex_dtype(x)
    n = x.shape[-1]
    finite = xp.isfinite(x).all(axis=(-2, -1))
    if vectors and not bool(finite.all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    no_value = complex(np.nan, np.nan)  # torch's eigvals of a non-finite matrix: nan+nanj
    values = xp.full(x.shape[:-1], no_value, dtype)
    vecs = xp.full(x.shape, no_value, dtype) if vectors else None
    if x.size:
        safe = xp.where(finite[..., None, None], x, xp.eye(n, dtype=x.dtype))
        w, v = _general_eig(xp, safe)  # NumPy gives real dtypes when all eigenvalues are
        values = xp.where(finite[..., None], w.astype(dtype), values)
        if vectors:
            vecs = v.astype(dtype)
    return values, vecs


def _general_eig(xp, x):
    """xp.linalg.eig, on the host where the module has none (CuPy: torch's CUDA eig runs on
    the CPU too), the results moved back to x's module."""
    if hasattr(xp.linalg, "eig"):
        return xp.linalg.eig(x)
    w, v = np.linalg.eig(host(x))
    return xp.asarray(w), xp.asarray(v)


@op(save=("x", "result0", "result1"), outputs=2, node_name="LinalgEigBackward0")
@by_columns(1)
def _eig(xp, x):
    return _decompose(xp, x, True)


def _eig_vjp(grads, x, values, vectors):
    """torch's linalg_eig_backward: gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H
    gV))) / conj(E)) V^H, E_ij = L_j - L_i (1 on the diagonal); only the eigenvalues' part for
    an undefined gV (eigvals); the real part for a real A."""
    g_values, g_vectors = grads
    if is_undefined(g_vectors):
        g_a = solve(mH(vectors), unsqueeze(g_values, -1) * mH(vectors))
        return (g_a if _is_complex(x) else real(g_a),)
    vh_gv = matmul(mH(vectors), g_vectors)
    _check_gauge(_phase_terms(vh_gv, g_vectors), "linalg_eig_backward: The eigenvectors in the "
                 f"complex case {_PHASE} this quantity, so it is ill-defined.")
    diag_vh_gv = real(diagonal(vh_gv, 0, -2, -1))
    inner = vh_gv - matmul(mH(vectors), vectors * unsqueeze(diag_vh_gv, -2))
    conj_values = values.conj()
    e = unsqueeze(conj_values, -2) - unsqueeze(conj_values, -1)
    e = e + diag_embed(values * 0.0 + 1.0)
    inner = inner / e
    if not is_undefined(g_values):
        inner = inner - diag_embed(diagonal(inner, 0, -2, -1)) + diag_embed(g_values)
    g_a = solve(mH(vectors), matmul(inner, mH(vectors)))
    return (g_a if _is_complex(x) else real(g_a),)


def _eig_jvp(tangents, x, values, vectors):
    """dP = V^{-1} dA V: dL = diag(dP), dV = dX - V Re diag(V^H dX), dX = V offdiag(dP) / E."""
    t = astype(tangents[0], dtype=vectors.dtype)  # a real A's tangent, made complex
    d_p = solve(vectors, matmul(t, vectors))
    d_values = diagonal(d_p, 0, -2, -1)
    e = unsqueeze(values, -2) - unsqueeze(values, -1) + diag_embed(values * 0.0 + 1.0)
    d_x = matmul(vectors, (d_p - diag_embed(d_values)) / e)
    norm_terms = real(diagonal(matmul(mH(vectors), d_x), 0, -2, -1))
    return d_values, d_x - vectors * unsqueeze(norm_terms, -2)


_eig.defvjp_all(_eig_vjp)
_eig.defjvp_all(_eig_jvp)
_eig.name, _eig.profiler_name = "linalg_eig", "gradkit::linalg_eig"


def eig(x):
    """(eigenvalues, eigenvectors) of square x, complex: x = V diag(L) V^{-1}, each
    eigenvector of norm 1 (its phase is arbitrary: a loss must not depend on it)."""
    return EigResult(*_eig(x))


@op(name="linalg_eigvals")
def _eigvals(xp, x):
    return _decompose(xp, x, False, "linalg.eigvals")[0]


def eigvals(x):
    """The eigenvalues of square x (complex), in LAPACK's order. As torch, through ``eig``
    (and its checks) when a gradient may be asked for."""
    forward_ad = _dispatch._forward_ad
    if (getattr(x, "requires_grad", False) and grad_state.grad_enabled) or \
            (forward_ad is not None and forward_ad.has_tangents((x,))):
        return _eig(x)[0]
    return _eigvals(x)
