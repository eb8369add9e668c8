"""``torch.cholesky_solve`` and ``torch.cholesky_inverse``: solves with A = L L^H given its
Cholesky factor, with torch's derivatives (cholesky_solve_backward / _jvp, which treat the
factor as a full matrix), and the input checks torch's older solvers share."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.int_arguments import int_parameters
from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import op
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_lauum import potri
from gradkit.ops.linalg_solvers import LinAlgError, _batch_prefix, host, mH
from gradkit.ops.linalg_triangular_solve import _substitute
from gradkit.ops.methods import tensor_method
from gradkit.ops.unary_helpers import kernel_error, scalar_type_name
from gradkit.ops.result_layout import by_columns
from gradkit.tensor_arguments import tensor_parameters


def _array(x):
    return getattr(x, "_data", x)


def check_linear_solve(name: str, b, a, kernel: str) -> tuple:
    """torch's linearSolveCheckInputs and batch broadcasting for ``name`` (b, A at least 2-D):
    the broadcast batch shape, or torch's error."""
    b, a = _array(b), _array(a)
    if b.dtype != a.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(b)} and A of type {scalar_type_name(a)} instead.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{a.shape[-1]} by {a.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    try:
        batch = np.broadcast_shapes(b.shape[:-2], a.shape[:-2])
    except ValueError:
        raise RuntimeError(_broadcast_message([np.empty(b.shape[:-2]), np.empty(a.shape[:-2])])
                           ) from None
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        raise kernel_error(kernel)(a)
    return tuple(batch)


def _potrs(xp, b, factor, upper: bool):
    """A^{-1} B for A = L L^H (``upper``: U^H U) by two triangular solves, as LAPACK's potrs."""
    batch = np.broadcast_shapes(b.shape[:-2], factor.shape[:-2])
    factor = xp.broadcast_to(factor, batch + factor.shape[-2:])
    factor_h = xp.conj(xp.swapaxes(factor, -1, -2))
    lower, upper_factor = (factor_h, factor) if upper else (factor, factor_h)
    y = _substitute(xp, lower, xp.broadcast_to(b, batch + b.shape[-2:]), upper=False,
                    unitriangular=False)
    return _substitute(xp, upper_factor, y, upper=True, unitriangular=False)


# torch saves self (B) too, readable as node._saved_self
@op(save=("B", "L", "result"), broadcast=True, node_name="CholeskySolveBackward0")
@by_columns()
def _cholesky_solve(xp, B, L, *, upper=False):  # noqa: N803 - torch's names
    return _potrs(xp, B, L, upper)


def _cholesky_solve_vjp(g, b, factor, x, upper):
    """torch's cholesky_solve_backward: gB = A^{-1} g, gL = -(gB X^H + X gB^H) L (upper:
    -U (gB X^H + X gB^H))."""
    g_b = _cholesky_solve(g, factor, upper=upper)
    common = matmul(g_b, mH(x))
    common = common + mH(common)
    return g_b, (-matmul(factor, common) if upper else -matmul(common, factor))


def _cholesky_solve_jvp(tangents, b, factor, x, upper):
    """torch's cholesky_solve_jvp: dX = A^{-1} (dB - dA X), dA = dK + dK^H with dK = dL L^H
    (upper: dU^H U)."""
    t_b, t_factor = tangents
    rhs = x * 0.0 if t_b is None else t_b + x * 0.0
    if t_factor is not None:
        d_k = matmul(mH(t_factor), factor) if upper else matmul(t_factor, mH(factor))
        rhs = rhs - matmul(d_k + mH(d_k), x)
    return _cholesky_solve(rhs, factor, upper=upper)


_cholesky_solve.defvjp_all(_cholesky_solve_vjp)
_cholesky_solve.defjvp_all(_cholesky_solve_jvp)
_cholesky_solve.name, _cholesky_solve.profiler_name = "cholesky_solve", "gradkit::cholesky_solve"
_cholesky_solve.torch_input_names = ("self", "input2")


@tensor_method()
@tensor_parameters("input2")
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """X with A X = B for A = L L^H (``upper``: A = U^H U) given its Cholesky factor: B is
    ``input``, L ``input2`` (torch's names); batch dims broadcast; only the factor's triangle
    is read."""
    for label, m in (("b", input), ("u", input2)):
        if m.ndim < 2:
            raise RuntimeError(f"{label} should have at least 2 dimensions, but has {m.ndim} "
                               "dimensions instead")
    check_linear_solve("cholesky_solve", input, input2, "cholesky_solve_cpu")
    return _cholesky_solve(input, input2, upper=upper)


@tensor_method()
@int_parameters("cholesky_inverse", upper=(1, "bool"))
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """A^{-1} for A = L L^H (``upper``: U^H U) given its Cholesky factor L, ``input`` (only
    its triangle is read); the gradient is torch's, which treats the factor as a full
    matrix."""
    name = "cholesky_inverse"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    data = _array(input)
    if data.dtype.kind not in "fc" or data.dtype == np.float16:
        raise kernel_error("cholesky_inverse_out_cpu")(data)
    diagonals = host(data).diagonal(0, -2, -1)
    zero = (diagonals == 0).reshape(int(np.prod(diagonals.shape[:-1])), input.shape[-1])
    if zero.any():  # potri inverts the triangular factor first
        index, element = (int(i) for i in np.argwhere(zero)[0])
        raise LinAlgError(f"{name}: {_batch_prefix(data, index)}The diagonal element "
                          f"{element + 1} is zero, the inversion could not be completed because "
                          "the input matrix is singular.")
    return _cholesky_inverse(input, upper=upper)


@op(save=("L", "result"), node_name="CholeskyInverseBackward0")
@by_columns()
def _cholesky_inverse(xp, L, *, upper=False):  # noqa: N803 - torch's name
    if L.dtype.kind == "c" and xp.any(L.diagonal(0, -2, -1).imag != 0):
        return potri(xp, L, upper)  # (lauum reads the diagonal's real parts)
    identity = xp.broadcast_to(xp.eye(L.shape[-1], dtype=L.dtype), L.shape)
    inverse = _potrs(xp, identity, L, upper)
    # potri computes one triangle and torch mirrors it: the result is exactly Hermitian off
    # its diagonal, so equal entries stay equal (a later sort or searchsorted ties as torch's)
    n = L.shape[-1]
    rows, cols = np.triu_indices(n, 1) if upper else np.tril_indices(n, -1)
    inverse[..., cols, rows] = xp.conj(inverse[..., rows, cols])
    return inverse


def _cholesky_inverse_vjp(g, factor, inverse, upper):
    """torch's cholesky_inverse_backward: -A^{-1} (g + g^H) A^{-1} L (upper: -U A^{-1} ...)."""
    common = matmul(inverse, matmul(g + mH(g), inverse))
    return -matmul(factor, common) if upper else -matmul(common, factor)


def _cholesky_inverse_jvp(t, factor, inverse, upper):
    """d(A^{-1}) = -A^{-1} dA A^{-1}, dA = dK + dK^H with dK = dL L^H (upper: dU^H U)."""
    d_k = matmul(mH(t), factor) if upper else matmul(t, mH(factor))
    return -matmul(inverse, matmul(d_k + mH(d_k), inverse))


_cholesky_inverse.defvjp(_cholesky_inverse_vjp)
_cholesky_inverse.defjvp(_cholesky_inverse_jvp)
_cholesky_inverse.name, _cholesky_inverse.profiler_name = \
    "cholesky_inverse", "gradkit::cholesky_inverse"
_cholesky_inverse.torch_input_names = ("self",)
