"""linalg.det and torch's derivative of it: A^{-1} where it exists, the cofactors through the
SVD where a matrix is singular (apart from linalg_solvers, as the SVD's file imports that one)."""
from __future__ import annotations


import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.backend import get_array_module
from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_decompositions import svd
from gradkit.ops.linalg_getrf import getrf, host
from gradkit.ops.linalg_lu import lu_factor_ex, lu_solve
from gradkit.ops.linalg_mkl_pivots import near_singular_each
from gradkit.ops.linalg_solvers import (LinAlgError, _batch_prefix, _trace, _unsqueeze2,
                                         check_matrices, inv, mH, nan_of, solve)
from gradkit.ops.piecewise import where, zeros_like
from gradkit.ops.scans import prod
from gradkit.ops.shape import expand, transpose, unsqueeze
from gradkit.ops.triangular import diag_embed, diagonal
from gradkit.ops.unary_helpers import kernel_error


@op(save=("x", "result"), node_name="LinalgDetBackward0", method=True)
def det(xp, x):
    """The determinant of each square matrix in the last two dims of x."""
    check_matrices("linalg.det", x, half=kernel_error("lu_cpu"))
    if x.shape[-1] == 1:  # the entry, as torch: keeps -0.0 (LAPACK's LU gives +0.0); torch
        # multiplies it by the product's 1 and the pivots' sign 1: complex inf turns NaN
        one = xp.ones_like(x[..., 0, 0])
        with np.errstate(invalid="ignore"):
            return (one * x[..., 0, 0]) * one
    with np.errstate(invalid="ignore"):
        out = _as_torchs_where_near_singular(xp, x, xp.linalg.det(x))
    # a NaN reaches one of torch's pivots, whose product is then NaN (NumPy's LAPACK may take
    # it for a zero pivot and give 0)
    return xp.where(xp.isnan(x).any(axis=(-2, -1)), nan_of(x.dtype), out)


def torchs_lu_where_near_singular(xp, x):
    """(mask, diagonal, odd) where a real A is near singular (|A| |A^{-1}| near 1 / eps, as
    for inv and solve; or A has an inf or NaN): the diagonal of torch's LU of those matrices as
    MKL rounds it (getrf replayed) and whether its pivots permute oddly; None where no det
    is. NumPy's (OpenBLAS's) LU may leave noise for a pivot MKL finds exactly 0: torch's det
    is then ±0 (slogdet's -inf) and its backward takes the singular branch (strided_breadth
    seed 1751279). torch factors A^T of a C-contiguous A (its memory read column-major: det
    A^T = det A), any other A itself."""
    if x.dtype.kind != "f" or not x.size:
        return None
    near = near_singular_each(xp, x)
    if not near.any():
        return None
    matrices = host(x[near])
    lu, pivots, _ = getrf(np, matrices.swapaxes(-1, -2) if x.flags.c_contiguous else matrices)
    odd = (pivots != np.arange(1, pivots.shape[-1] + 1)).sum(-1) % 2 == 1
    return near, np.diagonal(lu, axis1=-2, axis2=-1), odd


def _as_torchs_where_near_singular(xp, x, out):
    """det where its matrix is near singular: torch's, its LU's permutation sign times the
    product of its diagonal."""
    found = torchs_lu_where_near_singular(xp, x)
    if found is None:
        return out
    near, diagonal, odd = found
    out = out.copy() if out.ndim else xp.asarray(out)
    out[near] = xp.asarray(np.where(odd, -1, 1).astype(x.dtype) * np.prod(diagonal, axis=-1))
    return out


def _det_grad(x, out):
    """d det / dA for the gradient convention: conj(det * A^{-T}) = conj(det) A^{-H}; through
    the SVD when some matrix is singular (then A^{-1} does not exist, the cofactors do), or
    nearly so under create_graph, as torch (its second derivative follows the SVD's); NaN
    throughout for a matrix whose det is NaN, as torch's solve by its LU."""
    values = getattr(out, "_data", out)
    nan = get_array_module(values).isnan(values)[..., None, None]
    if nan.any():  # the others' gradients from a stand-in identity there
        eye = get_array_module(values).eye(x.shape[-1], dtype=values.dtype)
        return where(nan, nan_of(values.dtype), _det_grad(where(nan, eye, x), where(
            nan[..., 0, 0], 1.0, out)))
    # torch's create_graph path takes the SVD wherever |det| < 100 eps (its plain one solves)
    small = _near_singular(values) if is_grad_enabled() else values == 0
    if small.any():
        return _cofactors_grad(x)
    return _unsqueeze2(conj(out)) * mH(inv(x))


def _near_singular(values):
    """Where torch's create_graph derivative of det takes the SVD: |det| < 100 eps (or NaN)."""
    return ~(abs(values) >= 100 * np.finfo(values.dtype).eps)


def _cofactors_grad(x):
    """conj(det(A) A^{-T}) for any A = U S Vh (A^{-T} = conj(U) S^{-1} conj(Vh), U and Vh
    unitary): conj(det(U) det(Vh)) U diag(prod_{j != i} s_j) Vh, torch's singular formula."""
    u, s, vh = svd(x)
    n = s.shape[-1]
    others = prod(where(get_array_module(getattr(s, "_data", s)).eye(n, dtype=bool), 1.0,
                        unsqueeze(s, -2)), -1)
    phase = _unsqueeze2(conj(det(u) * det(vh)))
    return phase * matmul(u * unsqueeze(others, -2), vh)


def scaled_identity(x, h):
    """diag(h) per matrix of x, as torch's derivatives of det and slogdet build it:
    diag_embed(h.unsqueeze(-1).expand(pivots' shape))."""
    return diag_embed(expand(unsqueeze(h, -1), tuple(x.shape[:-1])))


def solve_scaled_identity(x, h):
    """A^{-H} diag(h) as torch's derivatives of det and slogdet build it when a graph is
    recorded (create_graph): linalg_solve(A.mH, diag(h).mT), so the first and second
    backward graphs have torch's nodes."""
    return solve(mH(x), transpose(scaled_identity(x, h), -1, -2))


def _factors_transpose(x) -> bool:
    """torch factors a contiguous real A as A.mT (its column-major A), any other A itself."""
    data = getattr(x, "_data", x)
    return data.dtype.kind != "c" and data.flags.c_contiguous


def solve_by_lu(x, b, adjoint: bool, recorded: bool = False):
    """A^{-1} B (``adjoint``: A^{-H} B) through torch's factorization of A: no error at a zero
    pivot (its division gives inf or NaN), but ``linalg.solve``'s where a backward is
    ``recorded``, as torch's solve there refuses a singular A."""
    transposed = _factors_transpose(x)
    lu, pivots, info = lu_factor_ex(transpose(x, -1, -2) if transposed else x)
    if recorded and host(info).any():
        index = int(np.argmax(host(info).reshape(-1) > 0))
        raise LinAlgError(f"torch.linalg.solve: {_batch_prefix(x, index)}The solver failed "
                          "because the input matrix is singular.")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return lu_solve(lu, pivots, b, adjoint=adjoint != transposed)


def _det_vjp(g, x, out):
    if x.shape[-1] == 0:  # torch's gradient of empty matrices has no graph to g (strided_breadth
        return zeros_like(x)  # seed 1758105: a second derivative through it is 0, not inf * 0)
    if x.shape[-1] == 1:  # its derivative is 1, also where the entry is inf/NaN
        return _unsqueeze2(g)
    values = out._data if isinstance(out, Tensor) else None
    if values is not None and not _near_singular(values).any():  # (NaN is "near" too)
        return solve_scaled_identity(x, g * conj(out))
    if values is not None and is_grad_enabled():
        _solve_where_nan(x, values)
    if values is None and _solved_as_torchs_plain_backward(x, out):  # g det* I through the
        return solve_by_lu(x, scaled_identity(x, g * conj(out)), adjoint=True)  # forward's LU
    return _unsqueeze2(g) * _det_grad(x, out)


def _solved_as_torchs_plain_backward(x, out) -> bool:
    """Whether to solve through torch's LU (replayed) rather than invert by NumPy's: where
    a det that is not 0 nor NaN is of a near-singular matrix (and NumPy's LU and torch's may
    find a pivot 0 apart: strided_breadth seed 1751279); an exact 0 takes the cofactors."""
    xp = get_array_module(out)
    return bool(xp.all(out != 0) and not xp.isnan(out).any() and x.dtype.kind == "f" and
                near_singular_each(xp, x).any())


def _solve_where_nan(x, values) -> None:
    """torch's create_graph derivative solves with the matrices whose det is not below 100 eps,
    NaN ones included (the SVD takes the rest): an exactly zero pivot there raises its
    singular error, numbered within that batch (breadth seed 1236799); NaN dets' gradient is
    NaN otherwise, as ``_det_grad`` gives it."""
    xp = get_array_module(values)
    if xp.isnan(values).any():
        matrices = mH(x.detach())
        if x.ndim > 2:
            n = x.shape[-1]
            matrices = matrices.reshape(-1, n, n)[~_near_singular(values).reshape(-1) |
                                                  xp.isnan(values).reshape(-1)]
        solve(matrices, matrices)  # (only its error is wanted)


det.defvjp(_det_vjp)
def _det_jvp(t, x, out):
    """torch's linalg_det_jvp: trace(A^{-1} t) det, solved through its LU of A with an exact
    0 pivot moved to eps (the det is C^1: a singular A's tangent is that limit, where inv
    refused it; a constant tangent of [[1, 2], [3, 4]] gives torch's -0.0, not 2e-16)."""
    transposed = _factors_transpose(x)
    lu, pivots, _ = lu_factor_ex(transpose(x, -1, -2) if transposed else x)
    eps = np.finfo(lu._data.real.dtype).eps
    lu = lu + diag_embed(where(diagonal(lu, 0, -2, -1) == 0, eps, 0.0))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _trace(lu_solve(lu, pivots, t, adjoint=transposed)) * out


det.defjvp(_det_jvp)
det.name, det.profiler_name = "linalg_det", "gradkit::linalg_det"
