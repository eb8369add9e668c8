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
from gradkit.ops.linalg_solvers import (_trace, _unsqueeze2, check_matrices, inv, mH, nan_of,
                                         solve)
from gradkit.ops.piecewise import where
from gradkit.ops.scans import prod
from gradkit.ops.shape import expand, transpose, unsqueeze
from gradkit.ops.triangular import diag_embed
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
        out = xp.linalg.det(x)
    # a NaN reaches one of torch's pivots, whose product is then NaN (NumPy's LAPACK may take
    # it for a zero pivot and give 0)
    return xp.where(xp.isnan(x).any(axis=(-2, -1)), nan_of(x.dtype), out)


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


def solve_scaled_identity(x, h):
    """A^{-H} diag(h) as torch's derivatives of det and slogdet build it when a graph is
    recorded (create_graph): linalg_solve(A.mH, diag_embed(h.unsqueeze(-1).expand(pivots'
    shape)).mT), so the first and second backward graphs have torch's nodes."""
    scaled = diag_embed(expand(unsqueeze(h, -1), tuple(x.shape[:-1])))
    return solve(mH(x), transpose(scaled, -1, -2))


def _det_vjp(g, x, out):
    if x.shape[-1] == 1:  # its derivative is 1, also where the entry is inf/NaN
        return _unsqueeze2(g)
    values = out._data if isinstance(out, Tensor) else None
    if values is not None and not _near_singular(values).any():  # (NaN is "near" too)
        return solve_scaled_identity(x, g * conj(out))
    if values is not None and is_grad_enabled():
        _solve_where_nan(x, values)
    return _unsqueeze2(g) * _det_grad(x, out)


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
det.defjvp(lambda t, x, out: out * _trace(matmul(inv(x), t)))
det.name, det.profiler_name = "linalg_det", "gradkit::linalg_det"
