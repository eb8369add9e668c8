"""``linalg.pinv``, ``linalg.lstsq`` and ``linalg.matrix_exp``, with torch's derivatives
(pinv_backward, linalg_lstsq_backward through pinv, the block-matrix rule of matrix_exp)."""
from __future__ import annotations


import numpy as np

from gradkit import return_types
from gradkit.number_arguments import hermitian_is_bool, number_parameters
from gradkit.ops._op import op
from gradkit.ops.joining import cat
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_decompositions import _refuse_nan
from gradkit.ops.linalg_solvers import check_matrices, host, mH
from gradkit.ops.linalg_triangular_solve import _substitute
from gradkit.ops.shape import unsqueeze
from gradkit.ops.unary_helpers import scalar_type_name
from gradkit.ops.result_layout import columns_first

LstsqResult = return_types.linalg_lstsq


def default_rtol(x, atol) -> float | np.ndarray:
    """torch's get_atol_rtol: eps(dtype) * max(m, n) where no atol > 0 is given, else 0."""
    if x.dtype.kind not in "fc":
        raise RuntimeError("This function doesn't handle types other than float and double")
    default = np.finfo(x.dtype).eps * max(x.shape[-2:])
    return default if atol is None else np.where(np.asarray(atol) > 0, 0.0, default)


def tolerance(atol, rtol, largest):
    """max(atol, rtol * largest), batched over the tolerances' and matrices' leading dims."""
    atol = 0.0 if atol is None else np.asarray(atol)
    return np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * largest)


def _nonfinite_to_nan(xp, x, out):
    """NaN for the matrices with inf (LAPACK's SVD gives NaN there, where it does not hang)."""
    bad = ~xp.isfinite(x).all(axis=(-2, -1))
    return xp.where(bad[..., None, None], xp.asarray(np.nan, out.dtype), out) if bad.any() \
        else out


def _pinv_array(xp, x, atol, rtol, hermitian):
    if x.size == 0:
        return xp.zeros(x.shape[:-2] + x.shape[-2:][::-1], x.dtype)
    read = xp.tril(x) if hermitian else x  # eigh reads the lower triangle only
    finite = xp.isfinite(read).all(axis=(-2, -1))
    safe = xp.where(finite[..., None, None], x, 0)
    if hermitian:
        values, vectors = xp.linalg.eigh(safe)
        size = xp.abs(values)
        tol = xp.asarray(tolerance(atol, rtol, host(size.max(-1, keepdims=True))))
        with np.errstate(divide="ignore"):
            inverse = xp.where(size > tol, 1 / values, 0).astype(x.dtype)
        out = (vectors * inverse[..., None, :]) @ xp.conj(xp.swapaxes(vectors, -1, -2))
    else:
        u, s, vh = xp.linalg.svd(safe, full_matrices=False)
        tol = xp.asarray(tolerance(atol, rtol, host(s[..., :1])))
        with np.errstate(divide="ignore"):
            inverse = xp.where(s > tol, 1 / s, 0).astype(x.dtype)
        out = (xp.conj(xp.swapaxes(vh, -1, -2)) * inverse[..., None, :]) @ \
            xp.conj(xp.swapaxes(u, -1, -2))
    if x.shape[-2:] == (1, 1):  # LAPACK's 1 x 1 decompositions are exact: |a| or NaN
        size = xp.abs(x)
        tol = xp.asarray(tolerance(atol, rtol, host(size[..., 0])))[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.where(size > tol, 1 / xp.where(size > tol, x, 1), 0).astype(x.dtype)
    return _nonfinite_to_nan(xp, read, out)


@op(save=("x", "result"), node_name="LinalgPinvBackward0")
def _pinv(xp, x, *, atol=None, rtol=None, hermitian=False):
    if x.ndim < 2 or x.dtype.kind not in "fc" or x.dtype == np.float16:
        raise RuntimeError(f"linalg.pinv({scalar_type_name(x)}{{{list(x.shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")
    if not hermitian:
        _refuse_nan("linalg.svd", xp, x)
    rtol = default_rtol(x, atol) if rtol is None else rtol
    return _pinv_array(xp, x, atol, rtol, hermitian)


def pinv_backward(g, pinv_a, a):
    """torch's pinv_backward (a constant-rank derivative, in the smaller of the two sizes)."""
    m, n = a.shape[-2:]
    pinv_ah, gh = mH(pinv_a), mH(g)
    if m <= n:
        k = matmul(gh, pinv_a)
        k_pinv_ah = matmul(k, pinv_ah)
        return -mH(matmul(pinv_a, k)) + k_pinv_ah - matmul(matmul(a, pinv_a), k_pinv_ah) + \
            matmul(matmul(pinv_ah, pinv_a), gh - matmul(k, a))
    k = matmul(pinv_a, gh)
    pinv_ah_k = matmul(pinv_ah, k)
    return -mH(matmul(k, pinv_a)) + matmul(matmul(gh - matmul(a, k), pinv_a), pinv_ah) + \
        pinv_ah_k - matmul(matmul(pinv_ah_k, pinv_a), a)


def pinv_jvp(a, pinv_a, t):
    """torch's pinv_jvp (the derivative of pinv at constant rank)."""
    m, n = a.shape[-2:]
    th, pinv_ah = mH(t), mH(pinv_a)
    if m <= n:
        k = matmul(pinv_ah, th)
        return matmul(pinv_a, k - mH(k) - matmul(k, matmul(a, pinv_a))) + \
            matmul(th - matmul(pinv_a, matmul(a, th)), matmul(pinv_ah, pinv_a))
    k = matmul(pinv_a, t)
    kh = mH(k)
    return matmul(kh - k - matmul(matmul(pinv_a, a), kh), pinv_a) + \
        matmul(matmul(pinv_a, pinv_ah), th - matmul(matmul(th, a), pinv_a))


_pinv.defvjp(lambda g, x, out, atol, rtol, hermitian: pinv_backward(g, out, x))
_pinv.defjvp(lambda t, x, out, atol, rtol, hermitian: pinv_jvp(x, out, t))
_pinv.name, _pinv.profiler_name = "linalg_pinv", "gradkit::linalg_pinv"


def _as_tolerance(value, name: str):
    if value is None:
        return None
    value = np.asarray(getattr(value, "_data", value))
    if value.dtype.kind == "c":
        raise RuntimeError(f"torch.linalg.pinv: {name} tensor of complex type is not supported. "
                           f"Got {scalar_type_name(value)}")
    return value


@number_parameters("linalg_pinv", True, rcond="float|Tensor", atol="float|Tensor?",
                   rtol="float|Tensor?", signature=hermitian_is_bool)
def pinv(x, rcond=None, hermitian: bool = False, *, atol=None, rtol=None):
    """The Moore-Penrose pseudo-inverse of x: singular values (``hermitian``: |eigenvalues|)
    at most max(atol, rtol * largest) are treated as zero. ``rcond`` (torch's older
    positional form) is rtol with atol 0."""
    if rcond is not None:
        return _pinv(x, atol=_as_tolerance(0.0, "atol"), rtol=_as_tolerance(rcond, "rcond"),
                     hermitian=hermitian)
    return _pinv(x, atol=_as_tolerance(atol, "atol"), rtol=_as_tolerance(rtol, "rtol"),
                 hermitian=hermitian)


def _is_vector_rhs(a, b) -> bool:
    """torch's linalg_solve_is_vector_rhs: b is one vector per matrix of a."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def _check_lstsq(a, b, driver):
    name = "torch.linalg.lstsq"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {scalar_type_name(a)} and other's dtype "
                           f"{scalar_type_name(b)}")
    if not (a.ndim >= b.ndim and a.ndim - b.ndim <= 1):
        raise RuntimeError(f"{name}: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = _is_vector_rhs(a, b)
    if (b.shape[-1] if vector else b.shape[-2]) != a.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match "
                           f"other.size({-1 if vector else -2})")
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")


@op(save=("a", "b", "result"), broadcast=True, outputs=4, differentiable_outputs=(0, 1),
    node_name="LinalgLstsqBackward0")  # torch saves the solution: a write into it is refused
def _lstsq(xp, a, b, *, rcond=None, driver=None):
    _check_lstsq(a, b, driver)
    driver = driver or "gelsy"
    vector = _is_vector_rhs(a, b)
    rhs = b[..., None] if vector else b
    m, n = a.shape[-2:]
    real = np.finfo(a.dtype).dtype
    rcond = _rcond(a, rcond)
    s, rank = _rank(xp, a, rcond)
    if m >= n > 0 and bool((rank == n).all()) and bool(xp.isfinite(a).all()):
        x = _by_qr(xp, a, rhs)
    else:  # rank-deficient or wide: the minimum-norm solution (NaN for non-finite matrices)
        x = _pinv_array(xp, a, None, rcond, False) @ rhs
    empty = xp.zeros((0,), real)
    residuals = empty
    if _residuals_computed(a, rank, driver):
        residuals = (xp.abs(rhs - a @ x) ** 2).sum(-2).astype(real)
    return (x[..., 0] if vector else columns_first(xp, x, max(m, n)), residuals,
            rank if driver != "gels" else xp.zeros((0,), np.int64),
            s if driver in ("gelsd", "gelss") else empty)


def _rcond(a, rcond):
    """LAPACK's default cutoff: eps * max(m, n) where none (or a negative one) is given."""
    return np.finfo(a.dtype).eps * max(a.shape[-2:]) if rcond is None or rcond < 0 else rcond


def _rank(xp, a, rcond):
    """(singular values, rank) of each matrix: those above rcond times the largest count
    (a non-finite matrix's are taken of zeros)."""
    real = np.finfo(a.dtype).dtype
    finite = xp.isfinite(a).all(axis=(-2, -1))
    s = xp.linalg.svd(xp.where(finite[..., None, None], a, 0), compute_uv=False).astype(real)
    rank = (s > _rcond(a, rcond) * s[..., :1]).sum(-1).astype(np.int64) if min(a.shape[-2:]) \
        else xp.zeros(a.shape[:-2], np.int64)
    return s, rank


def _residuals_computed(a, rank, driver) -> bool:
    """torch reports residuals for tall matrices, except with gelsy, and (but for gels) only
    where every matrix has full column rank."""
    m, n = a.shape[-2:]
    driver = driver or "gelsy"
    return m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all()))


def _by_qr(xp, a, rhs):
    """R^{-1} Q^H B for a = Q R of full column rank, as LAPACK's QR-based drivers (a single
    row's Q is 1, which LAPACK never multiplies: a -0.0 in B stays)."""
    q, r = xp.linalg.qr(a)
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    terms = xp.conj(q)[..., :, :, None] * rhs[..., :, None, :]
    q_h_b = terms[..., 0, :, :] if a.shape[-2] == 1 else terms.sum(-3)
    r = xp.broadcast_to(r, batch + r.shape[-2:])
    return _substitute(xp, r, xp.broadcast_to(q_h_b, batch + q_h_b.shape[-2:]), upper=True,
                       unitriangular=False)


def _residual(a, rhs, x):
    """A X - B, whose squared column norms are the residuals."""
    return matmul(a, x) - rhs


def _lstsq_vjp(g, a, b, solution, rcond, driver):
    """torch's linalg_lstsq_backward: the solution is pinv(A) B for the gradients; the
    residuals ||A X - B||^2 at the optimum (A^H (A X - B) = 0, so X's own change drops out)
    give 2 R g A-side times X^H and -2 R g to B."""
    g_x, g_residuals = g
    vector = _is_vector_rhs(a, b)
    if vector:
        g_x, rhs, x = unsqueeze(g_x, -1), unsqueeze(b, -1), unsqueeze(solution, -1)
    else:
        rhs, x = b, solution
    pinv_a = _pinv(a)
    g_a = pinv_backward(matmul(g_x, mH(rhs)), pinv_a, a)
    g_b = matmul(mH(pinv_a), g_x)
    if 0 not in g_residuals.shape:  # computed (tall matrices, per driver): else empty
        weighted = _residual(a, rhs, x) * unsqueeze(g_residuals, -2) * 2
        g_a = g_a + matmul(weighted, mH(x))
        g_b = g_b - weighted
    return g_a, (g_b[..., 0] if vector else g_b)


def _lstsq_jvp(tangents, a, b, solution, rcond, driver):
    """torch's linalg_lstsq_jvp: dX = d(pinv(A)) B + pinv(A) dB."""
    t_a, t_b = tangents
    vector = _is_vector_rhs(a, b)
    rhs = unsqueeze(b, -1) if vector else b
    pinv_a = _pinv(a)
    d_x = None if t_a is None else matmul(pinv_jvp(a, pinv_a, t_a), rhs)
    if t_b is not None:
        term = matmul(pinv_a, unsqueeze(t_b, -1) if vector else t_b)
        d_x = term if d_x is None else d_x + term
    # torch's residuals always have a tangent: empty where they are not computed
    d_residuals = a.new_zeros((0,), dtype=a.dtype.to_real())
    host_a = host(a)
    if _residuals_computed(host_a, _rank(np, host_a, rcond)[1], driver):
        x = unsqueeze(solution, -1) if vector else solution
        change = -(unsqueeze(t_b, -1) if vector else t_b) if t_b is not None else 0
        change = change + (matmul(t_a, x) if t_a is not None else 0)
        d_residuals = (_residual(a, rhs, x).conj() * change).real.sum(-2) * 2
    return (d_x[..., 0] if vector else d_x), d_residuals, None, None


_lstsq.defvjp_all(_lstsq_vjp)
_lstsq.defjvp_all(_lstsq_jvp)
_lstsq.name, _lstsq.profiler_name = "linalg_lstsq", "gradkit::linalg_lstsq"


def lstsq(input, b, rcond: float | None = None, *, driver: str | None = None):  # noqa: A002
    """(solution, residuals, rank, singular_values) of min ||A X - B|| (A ``input``, B ``b``:
    torch's parser's names), as torch.linalg.lstsq reports them per ``driver`` (default
    'gelsy'); the solution and residuals differentiable."""
    return LstsqResult(*_lstsq(input, b, rcond=rcond, driver=driver))


# Higham (2005)'s [13/13] Pade coefficients and the 1-norm bound of its scaling
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm(xp, a):
    """exp(a) for one matrix: scaling and squaring of the [13/13] Pade approximant."""
    norm = float(xp.abs(a).sum(-2).max()) if a.size else 0.0
    steps = int(max(0, np.ceil(np.log2(norm / _THETA13)))) if np.isfinite(norm) and norm else 0
    a = a / 2.0 ** steps
    b = _PADE13
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 +
             b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + \
        b[0] * eye
    with np.errstate(invalid="ignore", over="ignore"):
        try:
            r = xp.linalg.solve(v - u, v + u)
        except np.linalg.LinAlgError:  # non-finite input: no meaningful value
            return xp.full(a.shape, np.nan, a.dtype)
        for _ in range(steps):
            r = r @ r
    return r


@op(save="x", node_name="LinalgMatrixExpBackward0")
def matrix_exp(xp, x):
    """exp(x) of each square matrix of x (the power series sum_k x^k / k!)."""
    check_matrices("linalg.matrix_exp", x)
    if x.dtype == np.float16:  # LAPACK has no half: computed in float32, rounded once
        return matrix_exp.forward(xp, x.astype(np.float32)).astype(np.float16)
    if x.shape[-1] == 1:  # torch's shortcut: the entry's exp
        return xp.exp(x)
    flat = x.reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])
    out = xp.stack([_expm(xp, m) for m in flat]) if flat.size else flat.copy()
    return out.reshape(x.shape)


def _exp_differential(x, direction, adjoint: bool):
    """The top-right block of exp([[A, E], [0, A]]) (Mathias 1996): the derivative of exp at
    A along E (``adjoint``: A^H, for the vjp)."""
    from_a = mH(x) if adjoint else x
    zeros = from_a * 0.0
    block = cat([cat([from_a, direction], -1), cat([zeros, from_a], -1)], -2)
    n = x.shape[-1]
    return matrix_exp(block)[..., :n, n:]




matrix_exp.defvjp(lambda g, x: _exp_differential(x, g, True))
matrix_exp.defjvp(lambda t, x: _exp_differential(x, t, False))
matrix_exp.name, matrix_exp.profiler_name = "linalg_matrix_exp", "gradkit::linalg_matrix_exp"
