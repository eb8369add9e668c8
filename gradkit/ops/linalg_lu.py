"""LU with partial pivoting: ``linalg.lu_factor(_ex)``, ``linalg.lu``, ``lu_unpack``,
``linalg.lu_solve``, with torch's derivatives (FunctionsManual.cpp's linalg_lu_backward, ...).

The factorization is LAPACK's getrf written on ``xp`` arrays (pivots 1-based int32, ``info``
the first zero pivot), so it runs on NumPy and CuPy and never hangs on NaN input.
"""
from __future__ import annotations


import numpy as np

from gradkit import return_types
from gradkit.ops._op import op
from gradkit.ops.joining import cat
from gradkit.autograd.zero_grads import is_undefined
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_getrf import _row_order, _solve_packed, getrf
from gradkit.ops.linalg_solvers import _batch_prefix, check_matrices, host, mH
from gradkit.ops.linalg_triangular_solve import check_solvable, solve_triangular
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.triangular import tril, triu
from gradkit.ops.unary_helpers import kernel_error, scalar_type_name
from gradkit.ops.result_layout import by_columns, columns_first
from gradkit.tensor_arguments import tensor_parameters

LuFactorResult = return_types.linalg_lu_factor
LuFactorExResult = return_types.linalg_lu_factor_ex
LuResult = return_types.linalg_lu
LuUnpackResult = return_types.lu_unpack


def _permutation(xp, pivots, m: int, dtype):
    """P with A = P L U (P[perm[i], i] = 1)."""
    perm = _row_order(pivots, m)
    p = np.zeros(perm.shape + (m,), dtype)
    p[np.arange(perm.shape[0])[:, None], perm, np.arange(m)] = 1
    return xp.asarray(p.reshape(pivots.shape[:-1] + (m, m)))


def _unpack_arrays(xp, lu):
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = xp.tril(lu[..., :k], -1) + xp.eye(m, k, dtype=lu.dtype)
    return lower, xp.triu(lu[..., :k, :])


def _check_factor(name: str, x) -> None:
    x = getattr(x, "_data", x)  # a Tensor's array (the public functions check before the op)
    if x.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(x.shape)} instead")
    if (x.dtype.kind not in "fc" or x.dtype == np.float16) and x.size:
        raise kernel_error("lu_cpu")(x)  # (torch returns an empty input before its kernel)


@op(save=("result0", "result1"), outputs=3, differentiable_outputs=(0,),
    node_name="LinalgLuFactorExBackward0")
@by_columns(0)
def _lu_factor_ex(xp, x):
    _check_factor("torch.lu_factor", x)
    return getrf(xp, x)


def _lu_factor_vjp(g, lu, pivots):
    """torch's lu_factor_ex_backward: L's gradient is gLU's first k columns, U's its first k
    rows (linalg_lu_backward reads only their triangles)."""
    p, lower, upper = lu_unpack(lu, pivots)
    k = min(lu.shape[-2:])
    return lu_backward(g[..., :k], g[..., :k, :], p, lower, upper), None


def _sum_defined(*terms):
    present = [t for t in terms if t is not None]
    return present[0] if len(present) == 1 else present[0] + present[1]


def lu_backward(g_l, g_u, p, lower, upper):
    """torch's linalg_lu_backward for A = P L U (L m x k, U k x n); a None gradient is torch's
    undefined one: its terms are skipped (with an inf in L or U they would be NaN)."""
    m, n = lower.shape[-2], upper.shape[-1]
    k = min(m, n)
    if m == n:  # P L^{-H} [L^H gL o 1_L + gU U^H o 1_U] U^{-H}
        g_a = _sum_defined(None if g_l is None else tril(matmul(mH(lower), g_l), -1),
                           None if g_u is None else triu(matmul(g_u, mH(upper))))
        g_a = solve_triangular(mH(upper), g_a, upper=False, left=False)
        g_a = solve_triangular(mH(lower), g_a, upper=True, unitriangular=True)
    elif m < n:  # wide: A2's gradient is P L^{-H} gU2
        u1 = upper[..., :k]
        g_a = _sum_defined(None if g_l is None else matmul(mH(lower), g_l),
                           None if g_u is None else -matmul(triu(g_u), mH(upper)))
        g_a = solve_triangular(mH(u1), tril(g_a, -1), upper=False, left=False)
        if g_u is not None:
            g_a = cat([g_a + triu(g_u[..., :k]), g_u[..., k:]], -1)
        g_a = solve_triangular(mH(lower), g_a, upper=True, unitriangular=True)
        if g_u is None:
            g_a = cat([g_a, zeros_like(upper[..., k:])], -1)
    else:  # tall: A2's gradient is P gL2 U^{-H}
        l1 = lower[..., :k, :]
        g_a = _sum_defined(None if g_u is None else matmul(g_u, mH(upper)),
                           None if g_l is None else -matmul(mH(lower), tril(g_l, -1)))
        g_a = solve_triangular(mH(l1), triu(g_a), upper=True, unitriangular=True)
        if g_l is not None:
            g_a = cat([g_a + tril(g_l[..., :k, :], -1), g_l[..., k:, :]], -2)
        g_a = solve_triangular(mH(upper), g_a, upper=False, left=False)
        if g_l is None:
            g_a = cat([g_a, zeros_like(lower[..., k:, :])], -2)
    return matmul(p, g_a)


def _lu_tangents(t, p, lower, upper):
    """torch's linalg_lu_jvp: with dK = L1^{-1} P^T dA1 U1^{-1}, dL1 = L1 tril(dK, -1),
    dU1 = triu(dK) U1; the rest of L (tall) or U (wide) follows from P^T dA = dL U + L dU."""
    m, n = lower.shape[-2], upper.shape[-1]
    k = min(m, n)
    pda = matmul(mH(p), t)
    l1, u1 = lower[..., :k, :], upper[..., :k]
    dk = solve_triangular(l1, pda[..., :k, :k], upper=False, unitriangular=True)
    dk = solve_triangular(u1, dk, upper=True, left=False)
    d_l, d_u = matmul(l1, tril(dk, -1)), matmul(triu(dk), u1)
    if m < n:
        d_u2 = solve_triangular(l1, pda[..., k:], upper=False, unitriangular=True) - \
            matmul(tril(dk, -1), upper[..., k:])
        d_u = cat([d_u, d_u2], -1)
    elif m > n:
        d_l2 = solve_triangular(u1, pda[..., k:, :], upper=True, left=False) - \
            matmul(lower[..., k:, :], triu(dk))
        d_l = cat([d_l, d_l2], -2)
    return d_l, d_u


def _lu_factor_jvp(tangents, lu, pivots):
    """torch's lu_factor_ex_jvp: dL and dU packed as LU is."""
    p, lower, upper = lu_unpack(lu, pivots)
    d_l, d_u = _lu_tangents(tangents[0], p, lower, upper)
    m, n = lu.shape[-2:]
    if m == n:
        return d_l + d_u, None, None
    if m < n:
        return cat([d_l + d_u[..., :m], d_u[..., m:]], -1), None, None
    return cat([d_l[..., :n, :] + d_u, d_l[..., n:, :]], -2), None, None


_lu_factor_ex.defvjp_all(_lu_factor_vjp)
_lu_factor_ex.defjvp_all(_lu_factor_jvp)
_lu_factor_ex.name, _lu_factor_ex.profiler_name = "linalg_lu_factor_ex", \
    "gradkit::linalg_lu_factor_ex"


def _zero_pivot_error(name: str, x, info) -> RuntimeError:
    flat = host(info).reshape(-1)
    index = int(np.argmax(flat > 0))
    pivot = int(flat[index])
    return RuntimeError(f"{name}: {_batch_prefix(x, index)}U[{pivot},{pivot}] is zero and using "
                        "it on lu_solve would result in a division by zero. If you still want to "
                        "perform the factorization, consider calling linalg.lu(A, pivot) or "
                        "linalg.lu_factor_ex(A, pivot)")


def _refuse_no_pivoting(name: str, pivot: bool) -> None:
    if not pivot:  # torch's CPU kernel has none either
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False):  # noqa: N803 - torch's name
    """(LU, pivots, info): the packed LU factors of x, getrf's 1-based int32 row swaps, and
    per matrix the 1-based index of its first zero pivot (0: none)."""
    _refuse_no_pivoting("linalg.lu_factor", pivot)
    lu, pivots, info = _lu_factor_ex(A)
    if check_errors and host(info).any():
        raise _zero_pivot_error("torch.linalg.lu_factor_ex", A, info)
    return LuFactorExResult(lu, pivots, info)


def lu_factor(A, *, pivot: bool = True):  # noqa: N803 - torch's name
    """(LU, pivots) of x; a zero pivot is an error (``lu_factor_ex`` reports it instead)."""
    _refuse_no_pivoting("linalg.lu_factor", pivot)
    lu, pivots, info = _lu_factor_ex(A)
    if host(info).any():
        raise _zero_pivot_error("torch.linalg.lu_factor", A, info)
    return LuFactorResult(lu, pivots)


@op(save=("LU.shape",), outputs=3, differentiable_outputs=(1, 2), node_name="LuUnpackBackward0")
def _lu_unpack(xp, LU, pivots, *, unpack_data=True, unpack_pivots=True):  # noqa: N803
    if LU.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU.shape)} instead")
    if unpack_pivots and pivots.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    empty = xp.zeros((0,), LU.dtype)
    lower, upper = _unpack_arrays(xp, LU) if unpack_data else (empty, empty)
    p = _permutation(xp, pivots, LU.shape[-2], LU.dtype) if unpack_pivots else empty
    return p, lower, upper


def _lu_unpack_vjp(grads, shape, unpack_data, unpack_pivots):
    """torch's lu_unpack_backward: L's strict lower triangle and U's upper one, side by side."""
    g_l, g_u = grads  # P has no gradient
    m, n = shape[-2:]
    k = min(m, n)
    if m == n:
        return tril(g_l, -1) + triu(g_u), None
    block = tril(g_l[..., :k, :], -1) + triu(g_u[..., :k])
    rest = g_l[..., k:, :] if m > n else g_u[..., k:]
    return cat([block, rest], -2 if m > n else -1), None


def _lu_unpack_jvp(tangents, shape, unpack_data, unpack_pivots):
    m, n = shape[-2:]
    k = min(m, n)
    t = tangents[0]
    return None, tril(t[..., :k], -1), triu(t[..., :k, :])


_lu_unpack.defvjp_all(_lu_unpack_vjp)
_lu_unpack.edge_inputs = (0,)  # torch's derivatives.yaml names LU_data only (next_functions)
_lu_unpack.defjvp_all(_lu_unpack_jvp)


@tensor_parameters("LU_pivots")
def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True,  # noqa: N803 - torch's names
              unpack_pivots: bool = True):
    """(P, L, U) from ``lu_factor``'s packed LU and pivots (``torch.lu_unpack``)."""
    return LuUnpackResult(*_lu_unpack(LU_data, LU_pivots, unpack_data=unpack_data,
                                      unpack_pivots=unpack_pivots))


@op(save=("result0", "result1", "result2"), outputs=3, differentiable_outputs=(1, 2),
    node_name="LinalgLuBackward0")
def _lu(xp, x):
    _check_factor("linalg.lu", x)
    lu_data, pivots, _ = getrf(xp, x)
    lower, upper = _unpack_arrays(xp, lu_data)
    return _permutation(xp, pivots, x.shape[-2], x.dtype), lower, upper


def _lu_vjp(grads, p, lower, upper):
    g_l, g_u = (None if is_undefined(g) else g for g in grads)
    if g_l is None and g_u is None:
        return (None,)  # torch's undefined gradient
    return (lu_backward(g_l, g_u, p, lower, upper),)


_lu.defvjp_all(_lu_vjp)
_lu.defjvp_all(lambda tangents, p, lower, upper: (None, *_lu_tangents(tangents[0], p, lower,
                                                                      upper)))
_lu.name, _lu.profiler_name = "linalg_lu", "gradkit::linalg_lu"


def lu(A, *, pivot: bool = True):  # noqa: N803 - torch's name
    """(P, L, U) with x = P L U: P a permutation, L unit lower, U upper triangular."""
    _refuse_no_pivoting("linalg.lu_factor", pivot)
    return LuResult(*_lu(A))


def _check_lu_solve(lu_data, pivots, b, left):
    name = "linalg.lu_solve"
    if b.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    check_matrices("torch.linalg.lu_solve", lu_data)
    check_solvable(name, lu_data, b, left)
    if lu_data.dtype != b.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {scalar_type_name(lu_data)} and B of type "
                           f"{scalar_type_name(b)} instead")
    if pivots.dtype != np.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    if tuple(pivots.shape) != tuple(lu_data.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots.shape)} instead")


@op(save=("LU", "pivots", "result"), broadcast=True, node_name="LinalgLuSolveBackward0")
def _lu_solve(xp, LU, pivots, B, *, left=True, adjoint=False):  # noqa: N803
    _check_lu_solve(LU, pivots, B, left)
    if left:
        return columns_first(xp, _solve_packed(xp, LU, pivots, B, adjoint))
    # X A = B is A^H X^H = B^H, and X A^H = B is A X^H = B^H
    b_h = xp.conj(xp.swapaxes(B, -1, -2))
    solution_h = columns_first(xp, _solve_packed(xp, LU, pivots, b_h, not adjoint))
    return xp.conj(xp.swapaxes(solution_h, -1, -2))  # (rows first, as torch's)


def _lu_solve_vjp(g, lu_data, pivots, x, left, adjoint):
    """gB = lu_solve(gX, adjoint flipped); gLU: torch's linalg_lu_solve_LU."""
    g_b = _lu_solve(lu_data, pivots, g, left=left, adjoint=not adjoint)
    p, lower, upper = lu_unpack(lu_data, pivots)
    if left != adjoint:
        g_r = solve_triangular(mH(upper), -(matmul(g, mH(x)) if left else matmul(mH(g), x)),
                               upper=False)
        g_l = tril(solve_triangular(mH(lower), matmul(g_r, mH(upper)), upper=True,
                                    unitriangular=True), -1)
        return g_l + triu(g_r), None, g_b
    g_r = -matmul(matmul(matmul(mH(p), x if left else mH(x)), mH(g) if left else g), p)
    g_r = solve_triangular(mH(lower), g_r, upper=True, left=False, unitriangular=True)
    g_u = triu(solve_triangular(mH(upper), matmul(mH(lower), g_r), upper=False, left=False))
    return tril(g_r, -1) + g_u, None, g_b


def _lu_solve_jvp(tangents, lu_data, pivots, x, left, adjoint):
    """torch's linalg_lu_solve_jvp: S = lu_solve(dB) plus the term of dLU (dL = tril(dLU, -1),
    dU = triu(dLU))."""
    t_lu, _, t_b = tangents
    d_x = None if t_b is None else _lu_solve(lu_data, pivots, t_b, left=left, adjoint=adjoint)
    if t_lu is None:
        return d_x
    if left != adjoint:  # R = -U^{-1} (dU + L^{-1} dL U)
        upper = triu(lu_data)
        r = solve_triangular(lu_data, tril(t_lu, -1), upper=False, unitriangular=True)
        r = -solve_triangular(upper, triu(t_lu) + matmul(r, upper), upper=True)
        term = matmul(r, x) if left else matmul(x, mH(r))
    else:  # R = -op(X)^H P (L dU U^{-1} + dL) L^{-1} P^T
        p, lower, upper = lu_unpack(lu_data, pivots)
        r = solve_triangular(upper, matmul(lower, triu(t_lu)), upper=True, left=False) + \
            tril(t_lu, -1)
        r = solve_triangular(lower, -matmul(matmul(mH(x) if left else x, p), r), upper=False,
                             left=False, unitriangular=True)
        r = matmul(r, mH(p))
        term = mH(r) if left else r
    return term if d_x is None else d_x + term


_lu_solve.defvjp_all(_lu_solve_vjp)
_lu_solve.edge_inputs = (0, 2)  # LU and B: torch's node has no edge for the pivots
_lu_solve.defjvp_all(_lu_solve_jvp)
_lu_solve.name, _lu_solve.profiler_name = "linalg_lu_solve", "gradkit::linalg_lu_solve"


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False):  # noqa: N803
    """X with ``A X = B`` for A given by ``lu_factor``'s (LU, pivots); ``adjoint``: A^H X = B;
    ``left=False``: X A = B."""
    return _lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
