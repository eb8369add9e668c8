"""``linalg.ldl_factor(_ex)`` and ``linalg.ldl_solve``: the Bunch-Kaufman LDL^T (``hermitian``:
LDL^H) factorization of symmetric matrices, as LAPACK's unblocked sytf2 / hetf2 (lower) and
sytrs / hetrs compute them for torch (pivots 1-based int32; a 2 x 2 block's pivots both -p).
Like torch's, neither has a derivative: their nodes refuse backward.

The factorization runs on the host (its pivot choices are sequential); results go back to the
input's device.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit import return_types
from gradkit._tensor import Tensor
from gradkit.ops._op import op
from gradkit.ops.linalg_cholesky_solve import check_linear_solve
from gradkit.ops.linalg_solvers import check_matrices, host
from gradkit.ops.unary_helpers import kernel_error
from gradkit.ops.result_layout import by_columns

LdlFactorExResult = return_types.linalg_ldl_factor_ex
LdlFactorResult = return_types.linalg_ldl_factor

_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch-Kaufman's threshold


def _size(x):
    """LAPACK's cabs1 for complex (|re| + |im|, which its i?amax compares), |x| for real."""
    return abs(x.real) + abs(x.imag) if np.iscomplexobj(x) else abs(x)


def _first_largest(values) -> int:
    return int(np.argmax(_size(values)))


def _pivot(a, k, hermitian):
    """(kp, kstep) at column k (0-based), or (k, 0) where the column is zero (a zero pivot)."""
    n = a.shape[-1]
    absakk = abs(a[k, k].real) if hermitian else _size(a[k, k])
    imax = k + 1 + _first_largest(a[k + 1:, k]) if k < n - 1 else k
    colmax = _size(a[imax, k]) if k < n - 1 else 0.0
    if max(absakk, colmax) == 0 or np.isnan(absakk):
        return k, 0
    if absakk >= _ALPHA * colmax:
        return k, 1
    rowmax = _size(a[imax, k + _first_largest(a[imax, k:imax])])
    if imax < n - 1:
        rowmax = max(rowmax, _size(a[imax + 1 + _first_largest(a[imax + 1:, imax]), imax]))
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1
    diagonal = abs(a[imax, imax].real) if hermitian else _size(a[imax, imax])
    return imax, 1 if diagonal >= _ALPHA * rowmax else 2


def _interchange(a, k, kk, kp, kstep, hermitian):
    """Swap rows and columns kk and kp of the trailing lower triangle."""
    conj = np.conj if hermitian else (lambda v: v)
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    column, row = a[kk + 1:kp, kk].copy(), a[kp, kk + 1:kp].copy()
    a[kk + 1:kp, kk], a[kp, kk + 1:kp] = conj(row), conj(column)
    a[kp, kk] = conj(a[kp, kk])
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _update_2x2(a, k, hermitian):
    """Eliminate columns k, k+1 with the 2 x 2 pivot block, as sytf2 / hetf2."""
    if hermitian:
        d = abs(a[k + 1, k])
        d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
        d21 = a[k + 1, k] / d
        d = (1 / (d11 * d22 - 1)) / d
        first_of = lambda j: d * (d11 * a[j, k] - d21 * a[j, k + 1])  # noqa: E731
        second_of = lambda j: d * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])  # noqa: E731
    else:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        d21 = (1 / (d11 * d22 - 1)) / d21
        first_of = lambda j: d21 * (d11 * a[j, k] - a[j, k + 1])  # noqa: E731
        second_of = lambda j: d21 * (d22 * a[j, k + 1] - a[j, k])  # noqa: E731
    conj = np.conj if hermitian else (lambda v: v)
    for j in range(k + 2, a.shape[-1]):
        wk, wkp1 = first_of(j), second_of(j)
        a[j:, j] = a[j:, j] - a[j:, k] * conj(wk) - a[j:, k + 1] * conj(wkp1)
        a[j, k], a[j, k + 1] = wk, wkp1
        if hermitian:
            a[j, j] = a[j, j].real


def _sytf2(matrix, hermitian):
    """(LD, pivots, info) of one matrix, as LAPACK's unblocked lower sytf2 / hetf2."""
    a = matrix.copy()
    n = a.shape[-1]
    pivots = np.zeros(n, np.int32)
    info, k = 0, 0
    with np.errstate(all="ignore"):
        while k < n:
            kp, kstep = _pivot(a, k, hermitian)
            if kstep == 0:  # a zero column: D_kk = 0, nothing to eliminate
                info = info or k + 1
                kstep = 1
            else:
                kk = k + kstep - 1
                if kp != kk:
                    _interchange(a, k, kk, kp, kstep, hermitian)
                if kstep == 1 and k < n - 1:
                    d11 = 1 / (a[k, k].real if hermitian else a[k, k])
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= np.outer(x, d11 * (np.conj(x) if hermitian else x))
                    a[k + 1:, k] = x * d11
                elif kstep == 2 and k < n - 2:
                    _update_2x2(a, k, hermitian)
            if hermitian:  # hetf2 keeps the diagonal real
                a[np.diag_indices(n)] = np.diagonal(a).real
            pivots[k:k + kstep] = kp + 1 if kstep == 1 else -(kp + 1)
            k += kstep
    return np.tril(a), pivots, info


def _refuse_derivatives(ldl_op, name: str) -> None:
    """torch's errors for backward and forward AD through ``aten::<name>``."""
    def no_vjp(*_, **__):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    def no_jvp(*_, **__):
        raise NotImplementedError(f"Trying to use forward AD with aten::{name} that does not "
                                  "support it.")
    ldl_op.defvjp_all(no_vjp)
    ldl_op.defjvp_all(no_jvp)
    ldl_op.name, ldl_op.profiler_name = name, f"gradkit::{name}"


@op(outputs=3, differentiable_outputs=(0,), node_name="NotImplemented")
@by_columns(0)
def _ldl_factor_ex(xp, A, *, hermitian=False):  # noqa: N803 - torch's name
    check_matrices("torch.linalg.ldl_factor_ex", A)
    if A.dtype == np.float16:
        raise kernel_error("ldl_factor_kernel_cpu")(A)
    batch, n = A.shape[:-2], A.shape[-1]
    if A.size == 0:  # nothing to factor (torch's pivots count 1..n, as getrf's)
        pivots = xp.broadcast_to(xp.arange(1, n + 1, dtype=np.int32), batch + (n,))
        return A.copy(), pivots.copy(), xp.zeros(batch, np.int32)
    results = [_sytf2(m, hermitian and A.dtype.kind == "c") for m in host(A).reshape((-1, n, n))]
    ld = np.array([r[0] for r in results], A.dtype).reshape(A.shape)
    pivots = np.array([r[1] for r in results], np.int32).reshape(batch + (n,))
    info = np.array([r[2] for r in results], np.int32).reshape(batch)
    return xp.asarray(ld), xp.asarray(pivots), xp.asarray(info)


_refuse_derivatives(_ldl_factor_ex, "linalg_ldl_factor_ex")


def ldl_factor_ex(input: Tensor, *, hermitian: bool = False,  # noqa: A002 - torch's parser's
                  check_errors: bool = False) -> LdlFactorExResult:
    """(LD, pivots, info): L (unit lower, below the diagonal) and the 1 x 1 / 2 x 2 blocks of
    D (on and next to it) of A = P L D L^T P^T (``hermitian``: L D L^H), A ``input``, read
    from its lower triangle; info > 0 where D is singular (its first zero pivot)."""
    ld, pivots, info = _ldl_factor_ex(input, hermitian=hermitian)
    if check_errors and host(info).any():
        raise _ldl_error("ldl_factor_ex", info)
    return LdlFactorExResult(ld, pivots, info)


def _ldl_error(name: str, info) -> RuntimeError:
    # torch 2.13 reports a singular D with an internal assert naming sytrf's code
    code = int(host(info).reshape(-1)[np.argmax(host(info).reshape(-1) > 0)])
    return RuntimeError(f"torch.linalg.{name}: Unknown error code: {code}.")


def ldl_factor(input: Tensor, *, hermitian: bool = False) -> LdlFactorResult:  # noqa: A002
    """(LD, pivots) of ``ldl_factor_ex``; a singular D is an error."""
    ld, pivots, info = _ldl_factor_ex(input, hermitian=hermitian)
    if host(info).any():
        raise _ldl_error("ldl_factor", info)
    return LdlFactorResult(ld, pivots)


def _sytrs(ld, pivots, b, hermitian):
    """X with A X = B for one factored matrix, as LAPACK's lower sytrs / hetrs."""
    x = b.copy()
    n = ld.shape[-1]
    conj = np.conj if hermitian else (lambda v: v)
    k = 0
    while k < n:  # L D Y = P^T B
        kp = abs(int(pivots[k])) - 1
        if pivots[k] > 0:
            x[[k, kp]] = x[[kp, k]]
            x[k + 1:] -= np.outer(ld[k + 1:, k], x[k])
            x[k] = x[k] * (1 / (ld[k, k].real if hermitian else ld[k, k]))
            k += 1
            continue
        x[[k + 1, kp]] = x[[kp, k + 1]]
        x[k + 2:] -= np.outer(ld[k + 2:, k], x[k])
        x[k + 2:] -= np.outer(ld[k + 2:, k + 1], x[k + 1])
        off = ld[k + 1, k]
        first, second = ld[k, k] / conj(off), ld[k + 1, k + 1] / off
        denominator = first * second - 1
        b_first, b_second = x[k] / conj(off), x[k + 1] / off
        x[k], x[k + 1] = ((second * b_first - b_second) / denominator,
                          (first * b_second - b_first) / denominator)
        k += 2
    k = n - 1
    while k >= 0:  # L^T P^T X = Y (L^H for hermitian)
        step = 1 if pivots[k] > 0 else 2
        for row in range(k, k - step, -1):
            x[row] -= conj(ld[k + 1:, row]) @ x[k + 1:]
        kp = abs(int(pivots[k])) - 1
        x[[k, kp]] = x[[kp, k]]
        k -= step
    return x


@op(outputs=1, node_name="NotImplemented")
@by_columns()
def _ldl_solve(xp, LD, pivots, B, *, hermitian=False):  # noqa: N803 - torch's names
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    n = LD.shape[-1]
    count = int(np.prod(batch))  # not -1: an empty matrix leaves it undetermined
    lds = np.broadcast_to(host(LD), batch + LD.shape[-2:]).reshape((count, n, n))
    pivot_rows = np.broadcast_to(host(pivots).astype(np.int64), batch + (n,)).reshape((count, n))
    bs = np.broadcast_to(host(B), batch + B.shape[-2:]).reshape((count,) + B.shape[-2:])
    with np.errstate(all="ignore"):
        out = [_sytrs(ld, p, b, hermitian and LD.dtype.kind == "c")
               for ld, p, b in zip(lds, pivot_rows, bs)]
    return xp.asarray(np.array(out, LD.dtype).reshape(batch + B.shape[-2:]))


_refuse_derivatives(_ldl_solve, "linalg_ldl_solve")


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *,  # noqa: N803
              hermitian: bool = False) -> Tensor:
    """X with A X = B for A given by ``ldl_factor``'s (LD, pivots), batch dims broadcast."""
    name = "torch.linalg.ldl_solve"
    check_matrices(name, LD._data)
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if B.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         "-2)")
    check_linear_solve(name, B, LD, "ldl_solve_cpu")
    return _ldl_solve(LD, pivots, B, hermitian=hermitian)
