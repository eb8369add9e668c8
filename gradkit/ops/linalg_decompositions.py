"""Decompositions: svd (and svdvals), eigh (and eigvalsh), qr, with torch's derivatives.

Each has a vjp and a jvp rule written with gradkit ops (so both differentiate again). The
gradients assume distinct singular values / eigenvalues, as torch's do.
"""
from __future__ import annotations


import numpy as np

from gradkit import return_types
from gradkit.autograd.zero_grads import is_undefined
from gradkit.int_arguments import int_parameters
from gradkit.ops._op import op
from gradkit.ops.complex import _is_complex, imag, real
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_solvers import LinAlgError, _batch_prefix, check_matrices, host, mH
from gradkit.ops.linalg_triangular_solve import solve_triangular
from gradkit.ops.piecewise import where
from gradkit.ops.joining import cat
from gradkit.ops.shape import unsqueeze
from gradkit.ops.triangular import diag_embed, diagonal, tril
from gradkit.ops.unary_helpers import kernel_error
from gradkit.ops.result_layout import by_columns

SvdResult = return_types.linalg_svd
EighResult = return_types.linalg_eigh
QrResult = return_types.linalg_qr


def _phase_terms(vh_gv, g_v):
    """Im diag(V^H gV); zeros for vectors no gradient reached (torch's check skips them)."""
    if is_undefined(g_v):
        return np.zeros(host(vh_gv).shape[:-1])
    return host(imag(diagonal(vh_gv, 0, -2, -1)))


def _check_gauge(phase, message: str, reference=None) -> None:
    """torch refuses losses that depend on the arbitrary phase of complex singular/eigen
    vectors; so do we, with its lax test ``allclose(phase + reference, reference, 1e-2, 1e-2)``
    (``phase`` is the imaginary part of that dependence; a NaN in it fails too)."""
    phase = host(phase)
    bound = 1e-2 + (1e-2 * np.abs(host(reference)) if reference is not None else 0.0)
    if not (np.abs(phase) <= bound).all():
        raise RuntimeError(message)


_PHASE = "are specified up to multiplication by e^{i phi}. The specified loss function depends on"


def _diagonal_mask(values):
    """True on the diagonal of the (..., n, n) matrices of ``values`` (..., n) (values * 0 + 1
    is 1 or NaN, never 0)."""
    return diag_embed(values * 0.0 + 1.0) != 0


def _differences(values):
    """E[..., i, j] = values[j] - values[i], with ones on the diagonal (a safe divisor)."""
    e = unsqueeze(values, -2) - unsqueeze(values, -1)
    return where(_diagonal_mask(values), 1.0, e)


def _off_diagonal(m):
    """m with a zero diagonal, selected as torch's ``diagonal().zero_()`` (an infinite diagonal
    entry would give inf - inf = NaN by subtraction)."""
    return where(_diagonal_mask(diagonal(m, 0, -2, -1)), 0.0, m)


def _refuse_nan(name: str, xp, x) -> None:
    """torch refuses NaN before its SVD (inf gives NaN values); LAPACK's gesdd may never return
    on NaN input."""
    nan = xp.isnan(x).any(axis=(-2, -1)).reshape(-1)
    if nan.any():
        index = int(xp.argmax(nan))
        raise LinAlgError(f"{name}: {_batch_prefix(x, index)}The algorithm failed to converge "
                          "because the input matrix contained non-finite values.")


@op(save=("result0", "result1", "result2"), outputs=3, differentiable_outputs=(0, 1, 2),
    node_name="LinalgSvdBackward0")
@by_columns(0, 2)
def _svd(xp, x, *, full_matrices=True):
    check_matrices("linalg.svd", x, square=False, half=kernel_error("linalg_svd_cpu"))
    _refuse_nan("linalg.svd", xp, x)
    # a matrix with an infinite entry gets NaN, as from torch's MKL, without LAPACK: OpenBLAS's
    # gesdd may not converge or never return there (cgesdd of a 3 x 3 with one inf)
    bad = ~xp.isfinite(x).all(axis=(-2, -1))
    if bad.any():
        x = xp.where(bad[..., None, None], xp.zeros((), x.dtype), x)
    try:
        u, s, vh = xp.linalg.svd(x, full_matrices=full_matrices)
    except xp.linalg.LinAlgError:
        raise LinAlgError("linalg.svd: The algorithm failed to converge because the input "
                          "matrix is ill-conditioned or has too many repeated singular "
                          "values.") from None
    s = s.astype(np.finfo(x.dtype).dtype)
    if bad.any():
        u, s, vh = (xp.where(bad[(...,) + (None,) * (r.ndim - bad.ndim)],
                             xp.asarray(np.nan, r.dtype), r) for r in (u, s, vh))
    return u, s, vh


def _svd_vjp(grads, u, s, vh, full_matrices):
    """torch's svd_backward: with E_ij = s_j² - s_i², skew(X) = X - X^H,
    gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)] V^H plus the parts of gU, gV
    outside the spans of U, V (rectangular A)."""
    g_u, g_s, g_vh = grads
    k = s.shape[-1]
    if full_matrices:  # only the first k singular vectors are determined by A
        u, g_u = u[..., :k], g_u[..., :k]
        vh, g_vh = vh[..., :k, :], g_vh[..., :k, :]
    if is_undefined(g_u) and is_undefined(g_vh):  # svdvals: no division by s_j² - s_i²,
        return (matmul(u * unsqueeze(g_s, -2), vh),)  # finite at repeated values (torch)
    v, g_v = mH(vh), mH(g_vh)
    m, n = u.shape[-2], v.shape[-2]
    uh_gu, vh_gv = matmul(mH(u), g_u), matmul(mH(v), g_v)
    if _is_complex(u):
        # torch compares Im diag of the skew parts, 2 Im(U^H gU)_ii against -2 Im(V^H gV)_ii
        im_u, im_v = _phase_terms(uh_gu, g_u), _phase_terms(vh_gv, g_v)
        _check_gauge(2 * (im_u + im_v), f"svd_backward: The singular vectors in the complex case "
                     f"{_PHASE} this phase term, making it ill-defined.", -2 * im_v)
    uh_gu, vh_gv = uh_gu - mH(uh_gu), vh_gv - mH(vh_gv)
    # the diagonal is not zeroed, as torch: 0 for real skew parts, NaN where gU or gV is
    # infinite (inf - inf), the phase terms' rounding for complex ones
    core = (uh_gu * unsqueeze(s, -2) + unsqueeze(s, -1) * vh_gv) / _differences(s * s)
    core = core + diag_embed(g_s)
    if _is_complex(u):
        core = core + diag_embed(diagonal(uh_gu, 0, -2, -1) / (2 * s))
    if m > n:
        g_u_sinv = g_u / unsqueeze(s, -2)
        outside = g_u_sinv - matmul(u, matmul(mH(u), g_u_sinv))
        return (matmul(matmul(u, core) + outside, vh),)
    if m < n:
        g_v_sinv = g_v / unsqueeze(s, -2)
        outside = mH(g_v_sinv) - matmul(matmul(mH(g_v_sinv), v), vh)
        return (matmul(u, matmul(core, vh) + outside),)
    return (matmul(u, matmul(core, vh)),)


def _svd_jvp(tangents, u, s, vh, full_matrices):
    """With dP = U^H dA V: dS = Re diag(dP), dU = U (dP S + S dP^H) / E, dV = V (S dP + dP^H S)
    / E (E_ij = s_j² - s_i²), plus dA's parts outside the spans of U, V for rectangular A.
    With full_matrices, the columns beyond min(m, n) get no tangent (their gradient is
    ignored too)."""
    t = tangents[0]
    k = s.shape[-1]
    u_k, vh_k = (u[..., :k], vh[..., :k, :]) if full_matrices else (u, vh)
    v = mH(vh_k)
    m, n = u_k.shape[-2], v.shape[-2]
    dp = matmul(mH(u_k), matmul(t, v))
    diag_dp = diagonal(dp, 0, -2, -1)
    d_s = real(diag_dp)
    e = _differences(s * s)
    s_row, s_col = unsqueeze(s, -2), unsqueeze(s, -1)
    # dP less dS on its diagonal, as torch: the terms' diagonals cancel exactly (NaN where the
    # tangent is infinite), so nothing needs zeroing
    dp_off = dp - diag_embed(d_s)
    omega_u = (dp_off * s_row + s_col * mH(dp_off)) / e
    omega_v = (s_col * dp_off + mH(dp_off) * s_row) / e
    if _is_complex(u):  # the phase of each pair: split evenly between U and V, as the vjp does
        half = diag_embed(1j * imag(diag_dp) / (2 * s))
        omega_u, omega_v = omega_u + half, omega_v - half
    d_u, d_v = matmul(u_k, omega_u), matmul(v, omega_v)
    if m > n:
        t_v_sinv = matmul(t, v) / s_row
        d_u = d_u + t_v_sinv - matmul(u_k, matmul(mH(u_k), t_v_sinv))
    elif m < n:
        t_u_sinv = matmul(mH(t), u_k) / s_row
        d_v = d_v + t_u_sinv - matmul(v, matmul(mH(v), t_u_sinv))
    d_vh = mH(d_v)
    if full_matrices and m != n:  # no tangent for the undetermined columns / rows
        d_u = cat([d_u, u[..., k:] * 0.0], -1)
        d_vh = cat([d_vh, vh[..., k:, :] * 0.0], -2)
    return d_u, d_s, d_vh


_svd.defvjp_all(_svd_vjp)
_svd.defjvp_all(_svd_jvp)
_svd.name, _svd.profiler_name = "linalg_svd", "gradkit::linalg_svd"


@int_parameters("linalg_svd", full_matrices=(2, "bool"))  # (position: a function's)
def svd(A, full_matrices: bool = True, *, driver: str | None = None):  # noqa: N803
    """(U, S, Vh) with x = U diag(S) Vh; ``full_matrices=False``: the reduced factors;
    ``driver``: None (torch's cuSOLVER drivers are CUDA's)."""
    _check_driver("linalg_svd", driver)
    return SvdResult(*_svd(A, full_matrices=full_matrices))


def svdvals(A, *, driver: str | None = None):  # noqa: N803 - torch's name
    """The singular values of x, in descending order."""
    _check_driver("linalg_svdvals", driver)
    return _svd(A, full_matrices=False)[1]


def _check_driver(name: str, driver) -> None:
    """torch's refusal of a ``driver`` on the CPU (its type checked first, by its parser)."""
    if driver is not None and not isinstance(driver, str):
        raise TypeError(f"{name}(): argument 'driver' must be str, not {type(driver).__name__}")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


@op(save=("result0", "result1"), outputs=2, node_name="LinalgEighBackward0")
@by_columns(1)
def _eigh(xp, x, *, UPLO="L"):  # noqa: N803 - torch's name
    check_matrices("linalg.eigh", x, floating=False, half=kernel_error("linalg_eigh_cpu"))
    if x.dtype.kind not in "fc":  # torch's kernel passes an empty x of any dtype, as it is
        if x.size:
            raise kernel_error("linalg_eigh_cpu")(x)
        return xp.zeros(x.shape[:-1], x.dtype), x.copy()
    if UPLO not in ("L", "U", "l", "u"):  # torch takes either case
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    values, vectors = xp.linalg.eigh(x, UPLO=UPLO.upper())
    return values, vectors


def _eigh_vjp(grads, values, vectors, UPLO):  # noqa: N803
    """gA = V (diag(gL) + offdiag(skew(V^H gV)) / E) V^H with E_ij = L_j - L_i and
    skew(M) = (M - M^H) / 2 (torch's linalg_eig_backward for Hermitian A: the projection
    keeps gA Hermitian, as a perturbation of a Hermitian A is)."""
    g_values, g_vectors = grads
    if is_undefined(g_vectors):  # eigvalsh: no division by L_j - L_i, finite at repeated
        return (matmul(vectors * unsqueeze(g_values, -2), mH(vectors)),)  # values (torch)
    vh_gv = matmul(mH(vectors), g_vectors)
    if _is_complex(vectors):
        _check_gauge(_phase_terms(vh_gv, g_vectors),
                     f"linalg_eigh_backward: The eigenvectors in the complex case {_PHASE} this "
                     "quantity, so it is ill-defined.")
    inner = (vh_gv - mH(vh_gv)) / 2 / _differences(values)
    # torch copies gL onto the diagonal; with no gL (eigvalsh's double backward) it keeps the
    # skew part's own diagonal, NaN for an infinite gV (breadth 1535779)
    if not is_undefined(g_values):
        inner = _off_diagonal(inner) + diag_embed(g_values)
    return (matmul(vectors, matmul(inner, mH(vectors))),)


def _eigh_jvp(tangents, values, vectors, UPLO):  # noqa: N803
    """With dP = V^H dA V: dL = Re diag(dP), dV = V offdiag(dP) / E (E_ij = L_j - L_i)."""
    dp = matmul(mH(vectors), matmul(tangents[0], vectors))
    d_values = real(diagonal(dp, 0, -2, -1))
    return d_values, matmul(vectors, _off_diagonal(dp / _differences(values)))


_eigh.defvjp_all(_eigh_vjp)
_eigh.defjvp_all(_eigh_jvp)
_eigh.name, _eigh.profiler_name = "linalg_eigh", "gradkit::linalg_eigh"


@int_parameters("linalg_eigh", UPLO=(2, "str"))
def eigh(x, UPLO: str = "L"):  # noqa: N803
    """(eigenvalues ascending, eigenvectors) of Hermitian x, read from its ``UPLO`` triangle."""
    return EighResult(*_eigh(x, UPLO=UPLO))


@int_parameters("linalg_eigvalsh", UPLO=(2, "str"))
def eigvalsh(x, UPLO: str = "L"):  # noqa: N803
    """The eigenvalues of Hermitian x, ascending."""
    return _eigh(x, UPLO=UPLO)[0]


@op(save=("result0", "result1"), outputs=2, node_name="LinalgQrBackward0")
@by_columns(0, 1)
def _qr(xp, x, *, mode="reduced"):
    check_matrices("linalg.qr", x, square=False, half=kernel_error("geqrf_cpu"))
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    if mode == "r":
        return xp.zeros((0,), x.dtype), xp.linalg.qr(x, mode="r")
    return tuple(xp.linalg.qr(x, mode=mode))


def _qr_square_vjp(g_q, g_r, q, r):
    """gA = (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q (A with at least as many rows);
    copyltu takes M's real diagonal, as R's diagonal is real (LAPACK) for complex A too."""
    m = -matmul(mH(g_q), q)
    if not is_undefined(g_r):  # torch adds no R gR^H for an undefined gR
        m = matmul(r, mH(g_r)) + m
    lower = tril(m, -1)
    b = g_q + matmul(q, lower + mH(lower) + diag_embed(real(diagonal(m, 0, -2, -1))))
    # B R^{-H} as torch: a right solve with R^H (a plain tensor, where mH of a left solve
    # would be a conj view); as torch's trsm, a zero pivot gives inf/NaN
    return solve_triangular(mH(r), b, upper=False, left=False)


def _check_qr_differentiable(q, r, mode):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    rows, cols = q.shape[-2], r.shape[-1]
    if mode == "complete" and rows > cols:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")


def _qr_vjp(grads, q, r, mode):
    g_q, g_r = grads
    _check_qr_differentiable(q, r, mode)
    rows, cols = q.shape[-2], r.shape[-1]
    if rows >= cols:
        return (_qr_square_vjp(g_q, g_r, q, r),)
    # A = [X | Y] with X square: X = Q R_X gets the gradient of its own QR, Y = Q R_Y a product
    r_x, r_y, g_r_x, g_r_y = r[..., :rows], r[..., rows:], g_r[..., :rows], g_r[..., rows:]
    y = matmul(q, r_y)
    g_x = _qr_square_vjp(g_q + matmul(y, mH(g_r_y)), g_r_x, q, r_x)
    return (cat([g_x, matmul(q, g_r_y)], -1),)


def _qr_square_jvp(t, q, r):
    """B = Q^H dA R^{-1} = Q^H dQ + dR R^{-1}: its strictly lower part makes the skew Q^H dQ,
    the rest is dR R^{-1} (upper triangular, with a real diagonal as R's); then
    dQ = dA R^{-1} - Q dR R^{-1}."""
    t_rinv = mH(solve_triangular(mH(r), mH(t), upper=False))
    b = matmul(mH(q), t_rinv)
    lower = tril(b, -1)
    dr_rinv = b - (lower - mH(lower))
    if _is_complex(b):  # Q^H dQ's imaginary diagonal
        dr_rinv = dr_rinv - diag_embed(imag(diagonal(b, 0, -2, -1))) * 1j
    return t_rinv - matmul(q, dr_rinv), matmul(dr_rinv, r)


def _qr_jvp(tangents, q, r, mode):
    _check_qr_differentiable(q, r, mode)
    t = tangents[0]
    rows = q.shape[-2]
    if rows >= r.shape[-1]:
        return _qr_square_jvp(t, q, r)
    d_q, d_r_x = _qr_square_jvp(t[..., :rows], q, r[..., :rows])
    d_r_y = matmul(mH(q), t[..., rows:] - matmul(d_q, r[..., rows:]))
    return d_q, cat([d_r_x, d_r_y], -1)


_qr.defvjp_all(_qr_vjp)
_qr.defjvp_all(_qr_jvp)
_qr.name, _qr.profiler_name = "linalg_qr", "gradkit::linalg_qr"


@int_parameters("linalg_qr", mode=(2, "str"))
def qr(A, mode: str = "reduced"):  # noqa: N803 - torch's name
    """(Q, R) with x = Q R, Q orthonormal columns, R upper triangular (``mode='r'``: Q empty)."""
    return QrResult(*_qr(A, mode=mode))


