"""slogdet and logdet, with torch's derivatives (FunctionsManual.cpp's slogdet_backward/jvp).

torch solves A^H G = g I through the forward's LU (``linalg_solve`` under ``create_graph``):
a singular matrix gives the inf and NaN of a division by its zero pivot in a plain backward
and forward mode, and ``linalg.solve``'s error when a graph is recorded. gradkit multiplies by
A^{-H} where NumPy inverts A, and otherwise solves through its own getrf as torch does.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit import return_types
from gradkit._tensor import Tensor
from gradkit.autograd.zero_grads import is_undefined
from gradkit.ops.complex import _is_complex, conj, imag, real
from gradkit.ops.conversion import astype
from gradkit.ops.elementwise import log
from gradkit.ops._op import op
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_det import (scaled_identity, solve_by_lu, solve_scaled_identity,
                                    torchs_lu_where_near_singular)
from gradkit.ops.linalg_solvers import (
    LinAlgError, _trace, _unsqueeze2, check_matrices, host, inv, low_precision,
    mH)
from gradkit.ops.methods import tensor_method
from gradkit.ops.piecewise import where
from gradkit.ops.unary_helpers import scalar_type_name


@op(save=("x", "result0"), outputs=2, node_name="LinalgSlogdetBackward0")
def _slogdet(xp, x):
    check_matrices("linalg.slogdet", x, half=low_precision("linalg.slogdet"))
    with np.errstate(invalid="ignore"):  # torch computes NaN silently
        sign, logabsdet = xp.linalg.slogdet(x)
    found = torchs_lu_where_near_singular(xp, x)
    if found is not None:  # torch's: prod(sgn(diagonal)) times the permutation's sign, and
        near, diagonal, odd = found  # the sum of log |diagonal|
        sign, logabsdet = (v.copy() if v.ndim else xp.asarray(v) for v in (sign, logabsdet))
        with np.errstate(divide="ignore", invalid="ignore"):
            sign[near] = xp.asarray(np.prod(np.sign(diagonal), axis=-1) * np.where(odd, -1, 1))
            logabsdet[near] = xp.asarray(np.log(np.abs(diagonal)).sum(-1))
    # a NaN reaches one of torch's pivots, whose signs (0 for a NaN; complex: NaN) and log
    # magnitudes make sign and logabsdet; NumPy's LAPACK may take it for a zero pivot
    nan = xp.isnan(x).any(axis=(-2, -1))
    logabsdet = xp.where(nan | xp.isnan(logabsdet), math.nan, logabsdet).astype(logabsdet.dtype)
    sign = xp.where(xp.isnan(logabsdet), 0 if x.dtype.kind != "c" else complex(math.nan,
                                                                                math.nan), sign)
    return sign.astype(x.dtype), logabsdet


def _inverse_or_none(x):
    """A^{-1}, None where NumPy's inverse refuses A: a singular matrix, or a NaN its LAPACK
    takes for a zero pivot (torch's LU computes on with it)."""
    try:
        return inv(x)
    except LinAlgError:
        return None


def _slogdet_vjp(grads, x, sign):
    """d log det A = tr(A^{-1} dA) = d logabsdet + i d arg(sign): the gradient of
    logabsdet, plus (complex A) that of the sign's phase, times A^{-H}."""
    g_sign, g_logabsdet = grads
    if not _is_complex(x) and is_undefined(g_logabsdet):  # a real sign's gradient is 0: torch
        return (None,)  # returns none, so it solves nothing (0 / 0 at a singular A)
    h = g_logabsdet
    if _is_complex(x) and not is_undefined(g_sign):
        h = h + 1j * imag(conj(sign) * g_sign)
    elif _is_complex(x):  # the real logabsdet's gradient, solved in A's complex dtype
        h = astype(h, getattr(x, "_data", x).dtype)
    if isinstance(x, Tensor) and not host(x._data != x._data).any():  # recorded: torch's
        return (solve_scaled_identity(x, h),)  # linalg_solve (its error at a singular A)
    inverse = _inverse_or_none(x)
    if inverse is None:  # g I solved as torch does
        return (solve_by_lu(x, scaled_identity(x, h), True, recorded=isinstance(x, Tensor)),)
    return (_unsqueeze2(h) * mH(inverse),)


def _slogdet_jvp(tangents, x, sign):
    inverse = _inverse_or_none(x)
    with np.errstate(invalid="ignore"):  # inf - inf at a singular A: NaN, as torch's
        d_log = _trace(solve_by_lu(x, tangents[0], adjoint=False) if inverse is None else
                       matmul(inverse, tangents[0]))  # tr(A^{-1} dA)
    if _is_complex(x):
        return sign * 1j * imag(d_log), real(d_log)
    return sign * 0.0, d_log


_slogdet.defvjp_all(_slogdet_vjp)
_slogdet.defjvp_all(_slogdet_jvp)
_slogdet.name, _slogdet.profiler_name = "linalg_slogdet", "gradkit::linalg_slogdet"


@tensor_method()
def slogdet(input):  # noqa: A002 - torch's name
    """(sign, logabsdet) of the determinant of each square matrix of input."""
    return return_types.slogdet(*_slogdet(input))


def linalg_slogdet(A):  # noqa: N803 - torch's name
    """torch.linalg.slogdet: slogdet's pair, as the named tuple torch.linalg gives."""
    return return_types.linalg_slogdet(*_slogdet(A))


@tensor_method()
def logdet(input: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """log(det(input)) of each square matrix: slogdet's logabsdet where the determinant is
    positive, NaN where it is negative (-inf where singular); log(sign) + logabsdet for
    complex input. Composed as torch's, so its gradient is slogdet's (0 at the NaNs)."""
    kind, name = input.dtype.np.kind, scalar_type_name(input._data)
    if kind not in "fc":
        raise RuntimeError("logdet: Expected a floating point or complex tensor as input. "
                           f"Got {name}")
    if input.dtype.np.itemsize < 4:
        raise RuntimeError(f"logdet: Low precision dtypes not supported. Got {name}")
    sign, logabsdet = _slogdet(input)
    if input.dtype.np.kind == "c":
        return log(sign) + logabsdet
    return where(sign == -1, math.nan, logabsdet)
