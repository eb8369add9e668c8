"""The derivative rules of the scaled sums addmm, addmv, baddbmm and addbmm: each factor's
rule, ``(g, the other factor, its own dtype)``, reads the other factor and its own dtype only
(torch saves a factor only when the other needs a gradient); the input's reads neither."""
from __future__ import annotations

from gradkit.ops.arithmetic import mul
from gradkit.ops.complex import conj
from gradkit.ops.conversion import astype
from gradkit.ops.linalg import MIXED_COMPLEX_GRAD, _last_two_swapped, bmm, matmul
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.scalar_overloads import mul_scalar
from gradkit.ops.shape import reshape, unsqueeze


def mH(a):
    return conj(_last_two_swapped(a))  # a matrix's t(): torch's TBackward0


def scale(v, factor):
    return v if factor == 1 else mul_scalar(v, factor)  # torch's maybe_multiply: mul.Scalar


def input_vjp(g, a_dtype, beta):
    return scale(g, beta.conjugate())


def _refuse_complex_for_real(g, dtype) -> None:
    """torch's engine refuses a complex gradient of a real input: only batch2's dtype (complex)
    on a real batch1 and input, an empty product of two dtypes, gives one."""
    if getattr(g, "_data", g).dtype.kind == "c" and dtype.kind != "c":
        raise RuntimeError(MIXED_COMPLEX_GRAD)


def baddbmm_vjp_x(g, a_dtype, beta):
    _refuse_complex_for_real(g, a_dtype)  # the input has batch1's dtype
    return input_vjp(g, a_dtype, beta)


def baddbmm_vjp_a(g, b, a_dtype):
    _refuse_complex_for_real(g, a_dtype)
    return bmm(g, mH(b))  # bmm (not matmul) answers an empty product of two dtypes, as torch


def baddbmm_vjp_b(g, a, b_dtype):
    return bmm(mH(a), g)


def addmm_vjp_a(g, b, a_dtype):
    return matmul(g, mH(b))


def addmm_vjp_b(g, a, b_dtype):
    return matmul(mH(a), g)


def addmv_vjp_a(g, b, a_dtype):
    return mul(unsqueeze(g, -1), conj(b))  # torch's grad.ger(vec.conj()): elementwise


def _no_batch(factor, shape: tuple, dtype):
    """The gradient of a factor of no batch: empty, in the factor's own dtype (it need not be
    the other's or the input's then)."""
    return astype(reshape(zeros_like(factor), shape), dtype)


def addbmm_vjp_a(g, b, a_dtype):
    return _no_batch(b, (0, g.shape[0], b.shape[1]), a_dtype) if b.shape[0] == 0 else \
        matmul(unsqueeze(g, 0), mH(b))


def addbmm_vjp_b(g, a, b_dtype):
    return _no_batch(a, (0, a.shape[2], g.shape[1]), b_dtype) if a.shape[0] == 0 else \
        matmul(mH(a), unsqueeze(g, 0))
