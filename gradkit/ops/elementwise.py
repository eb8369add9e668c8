"""Elementwise math: exponentials and logarithms, powers and roots, trigonometric and
hyperbolic functions and their inverses, erf (activations: ``activations.py``; rounding, sign,
where and max/min: ``piecewise.py``).

Most ops state only f'(x) (``defderivative``): the vjp ``g * conj(f')`` and the
jvp ``t * f'`` follow. Ops whose derivative is cheapest from the output save
``"result"`` instead of the input.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops._op import Op
from gradkit.ops.complex import _is_complex, conj
from gradkit.ops.fused import complex_quotient
from gradkit.ops.methods import register
from gradkit.ops.special import erf_array
from gradkit.ops.promotion import promote
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import half_in_float, kernel_error


def _over(g, d):
    """g / d, complex NumPy arrays divided as torch's kernel divides (complex_quotient: by a
    zero, c10's infinite parts, where NumPy's are NaN); tensors divide so already."""
    if type(d) is np.ndarray and type(g) is np.ndarray and d.dtype.kind == "c":
        return complex_quotient(np, g, d)
    return g / d


def divided_by(op_: Op, denominator, times_one: bool = False, of_conj: bool = False) -> None:
    """An elementwise op whose derivative is 1 / denominator(saved): vjp g / conj(d) and jvp
    t / d, divisions as torch's formulas write them (a multiplication by 1 / d rounds twice,
    and by a complex zero gives NaN where torch's quotient is inf + inf j). Closer to torch's
    formula, as its zero and NaN parts come out: ``times_one``, its ``grad * 1 / d`` (the
    gradient multiplied by 1 first); ``of_conj``, its d of the conjugate (``2 * result.conj()``,
    not conj(2 * result)). Either makes the tangent torch's auto_element_wise one."""
    def vjp(g, saved):
        d = denominator(conj(saved)) if of_conj else denominator(saved)
        return _over(g * 1 if times_one else g, conj(d) if _is_complex(d) and not of_conj else d)
    op_.defvjp(vjp)
    op_.defjvp((lambda t, saved: conj(vjp(conj(t), saved))) if times_one or of_conj
               else (lambda t, saved: _over(t, denominator(saved))))
    op_.batchable = True


def _by_quotient(op: Op, denominator, of_conj: bool = False) -> None:
    """f'(x) = 1 / denominator(x), applied as torch's backward: ``g / conj(denominator)``, a
    quotient, not ``g * (1 / x)``, whose reciprocal overflows at a float32 subnormal x (a zero
    gradient then gives 0 * inf = NaN where torch's 0 / x is 0); ``of_conj``: torch's formula
    is ``g / denominator(conj(x))`` (log2's self.conj() * log 2, whose zero parts' signs
    differ from conj(x * log 2)'s)."""
    op.defderivative(lambda x: 1 / denominator(x))
    if of_conj:
        divided_by(op, denominator, of_conj=True)
        return
    op.defvjp(lambda g, x: g / conj(denominator(x)))
    op.defjvp(lambda t, x: t / denominator(x))


@unary(save="result", floating=True, method=True, inplace=True)
def exp(xp, x):
    """e ** x elementwise."""
    return xp.exp(x)


exp.defderivative(lambda out: out)


@unary(save="result", floating=True, method=True, inplace=True)
def exp2(xp, x):
    """2 ** x elementwise."""
    return xp.exp2(x)


exp2.defderivative(lambda out: out * math.log(2.0))
# torch's grad * result.conj() * M_LN2, in that order: for complex, an infinite grad times
# conj(out) is NaN + NaN j where out * log 2 first left an infinite part (and -0 parts +0)
exp2.defvjp(_exp2_vjp := lambda g, out: g * conj(out) * math.log(2.0))
exp2.defjvp(lambda t, out: conj(_exp2_vjp(conj(t), out)))  # torch's auto_element_wise


@unary(floating=True, method=True, inplace=True)
def log(xp, x):
    """Natural logarithm, elementwise."""
    return xp.log(x)


_by_quotient(log, lambda x: x)


@unary(floating=True, method=True, inplace=True)
def log2(xp, x):
    """Base-2 logarithm, elementwise."""
    return xp.log2(x)


_by_quotient(log2, lambda x: x * math.log(2.0), of_conj=True)


@unary(floating=True, method=True, inplace=True)
def log10(xp, x):
    """Base-10 logarithm, elementwise."""
    return xp.log10(x)


_by_quotient(log10, lambda x: x * math.log(10.0), of_conj=True)


@unary(floating=True, method=True, inplace=True)
def log1p(xp, x):
    """log(1 + x) elementwise, accurate near 0."""
    return _complex_log1p(xp, x) if x.dtype.kind == "c" else xp.log1p(x)


def _complex_log1p(xp, z):
    """torch's CPU log1p of a complex z (Kahan's, as NumPy's issue 22611 proposed): with
    u = 1 + z, z where u is 1, log(u) where u - 1 is z, else log(u) * (z / (u - 1)). NumPy's
    log1p differs at infinities (0.3 + inf j is NaN there) and near 0 (1e-300 is 0 there)."""
    u = _plus_real(xp, z, 1)
    u_minus_1 = _plus_real(xp, u, -1)
    with np.errstate(all="ignore"):
        log_u = xp.log(u)
        scaled = log_u * complex_quotient(xp, z, u_minus_1)
    return xp.where(u == 1, z, xp.where(u_minus_1 == z, log_u, scaled))


def _plus_real(xp, z, number: float):
    """z + number on the real part only (C++'s complex + real: the imaginary part, -0.0 too,
    is kept; NumPy's z + 1 adds 0j to it)."""
    out = z.copy()
    out.real += number
    return out


_by_quotient(log1p, lambda x: x + 1)


@unary(save="result", floating=True, method=True, inplace=True)
def expm1(xp, x):
    """exp(x) - 1 elementwise, accurate near 0."""
    return xp.expm1(x)


expm1.defderivative(lambda out: out + 1)
# torch's grad * (result.conj() + 1): conj(out) + 1, not conj(out + 1) (the signs of zeros)
expm1.defvjp(_expm1_vjp := lambda g, out: g * (conj(out) + 1))
expm1.defjvp(lambda t, out: conj(_expm1_vjp(conj(t), out)))  # torch's auto_element_wise


@unary(save="result", floating=True, method=True, inplace=True)
def sqrt(xp, x):
    """Square root, elementwise."""
    return xp.sqrt(x)


# as torch, grad / (2 * out.conj()): for complex, 2 * (inf + 0j) is inf + nanj, so the gradient
# is NaN there (0.5 / out gives the limit 0)
divided_by(sqrt, lambda out: 2 * out, of_conj=True)


@unary(save="result", floating=True, method=True, inplace=True)
@half_in_float
def rsqrt(xp, x):
    """1 / sqrt(x) elementwise."""
    if x.dtype.kind == "c":  # torch's 1 / sqrt(0) is inf + nan j, its NaN's sign bit clear
        return xp.where(x == 0, x.dtype.type(complex(math.inf, math.nan)), 1 / xp.sqrt(x))
    return 1 / xp.sqrt(x)


rsqrt.defderivative(lambda out: -0.5 * out * out * out)


def _rsqrt_vjp(g, out):
    """torch's (-0.5 * grad) * conj(out ** 3), in this order: the zero parts of a complex
    gradient keep torch's signs, and a float32 out³ of a huge x stays a subnormal a huge
    gradient scales (-0.5 * out³ first underflowed to 0: 0 for 1e30, NaN for inf)."""
    if not _is_complex(out):
        return (-0.5 * g) * (out * out * out)
    return (-0.5 * g) * conj(out * out * out)


rsqrt.defvjp(_rsqrt_vjp)
# torch's auto_element_wise: the backward of the tangent's conjugate, conjugated: (-0.5 t) out³,
# -0.5 multiplied as a complex number (an inf tangent gives NaN parts, as torch's)
rsqrt.defjvp(lambda t, out: conj(_rsqrt_vjp(conj(t), out)))


@unary(method=True, inplace=True)
def square(xp, x):
    """x * x elementwise (pow(x, 2): bools square to int64, as in torch)."""
    x, _ = promote(xp, x, 2)
    return x * x


square.defderivative(lambda x: 2 * x)


@unary(save="result", floating=True, method=True, inplace=True)
def reciprocal(xp, x):
    """1 / x elementwise."""
    if x.dtype.kind == "c":  # torch's 1 / z is its complex division's (an ulp from NumPy's)
        return complex_quotient(xp, xp.ones_like(x), x)
    return 1 / x


reciprocal.defderivative(lambda out: -(out * out))


@unary(floating=True, method=True, inplace=True)
def sin(xp, x):
    """sin(x) elementwise."""
    return xp.sin(x)


sin.defderivative(lambda x: cos(x))


@unary(floating=True, method=True, inplace=True)
def cos(xp, x):
    """cos(x) elementwise."""
    return xp.cos(x)


cos.defderivative(lambda x: -sin(x))


@unary(save="result", floating=True, method=True, inplace=True)
def tan(xp, x):
    """tan(x) elementwise."""
    return xp.tan(x)


tan.defderivative(lambda out: 1 + out ** 2)


@unary(floating=True, method=True, inplace=True)
def sinh(xp, x):
    """sinh(x) elementwise."""
    return xp.sinh(x)


sinh.defderivative(lambda x: cosh(x))


@unary(floating=True, method=True, inplace=True)
def cosh(xp, x):
    """cosh(x) elementwise."""
    return xp.cosh(x)


cosh.defderivative(lambda x: sinh(x))


@unary(save="result", floating=True, method=True, inplace=True)
def tanh(xp, x):
    """tanh(x) elementwise."""
    return xp.tanh(x)


# (its vjp: ops/activation_backward.py, torch's tanh_backward)


@unary(floating=True, method=True, inplace=True)
def asin(xp, x):
    """arcsin(x) elementwise."""
    return xp.arcsin(x)


# torch's (-x * x + 1): 1 - z would multiply z by -1 + 0j, NaN beside an inf part
asin.defderivative(lambda x: rsqrt(-x * x + 1))


@unary(floating=True, method=True, inplace=True)
def acos(xp, x):
    """arccos(x) elementwise."""
    if x.dtype == np.complex128:  # torch's complex<double> acos: pi/2 - asin(z), whose zero
        return math.pi / 2 - xp.arcsin(x)  # imaginary parts are +0 (arccos's keep the sign)
    return xp.arccos(x)


acos.defderivative(lambda x: -rsqrt(-x * x + 1))


@unary(floating=True, method=True, inplace=True)
def atan(xp, x):
    """arctan(x) elementwise."""
    return xp.arctan(x)


divided_by(atan, lambda x: x * x + 1)


@unary(floating=True, method=True)
def asinh(xp, x):
    """arsinh(x) elementwise."""
    return xp.arcsinh(x)


asinh.defderivative(lambda x: rsqrt(x ** 2 + 1))  # torch's self.pow(2): 2x may overflow


@unary(floating=True, method=True)
def acosh(xp, x):
    """arcosh(x) elementwise (NaN below 1)."""
    return xp.arccosh(x)


# torch's formulas: rsqrt(x² - 1) for real x (inf at -1 too), and for complex x the product
# rsqrt(x + 1) rsqrt(x - 1), which keeps acosh's branch where Re x < 0; x - 1 written x + (-1),
# as torch subtracts (and the saved x may be a NumPy array): at x = -0j, Im(x - 1) is +0
acosh.defderivative(lambda x: rsqrt(x + 1) * rsqrt(x + (-1)) if _is_complex(x)
                    else rsqrt(x * x - 1))


@unary(floating=True, method=True)
def atanh(xp, x):
    """artanh(x) elementwise (±inf at ±1, NaN beyond)."""
    return xp.arctanh(x)


# torch's grad * 1 / (1 - self.pow(2)).conj(): for complex, grad * 1 makes an infinite part's
# partner NaN (inf * 0) and -0 parts +0; 1 - y is torch's 1 + (-1) y, whose product makes NaN
# beside an infinite part of y where NumPy's 1 - y keeps the other part
divided_by(atanh, lambda x: x ** 2 * -1 + 1, times_one=True)


@unary(floating=True, method=True, inplace=True, complex_error=kernel_error("erf_vml_cpu"))
def erf(xp, x):
    """The error function, elementwise."""
    return erf_array(xp, x)


erf.defderivative(lambda x: (2 / math.sqrt(math.pi)) * exp(-(x ** 2)))


# NumPy's spellings, as torch's methods (x.arcsin(), x.arcsin_())
for _op, _alias in ((asin, "arcsin"), (acos, "arccos"), (atan, "arctan")):
    register(_op, _alias, inplace=True)


def _underivable_in_place(function: Op) -> Op:
    """torch's in-place acosh_/asinh_/atanh_: the values of ``function``, recorded by a node
    (``AcoshBackward1``) whose backward raises, and no forward-mode derivative."""
    name = function.name

    def no_derivative(*_, **__):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not "
                                  "implemented.")

    def no_tangent(*_, **__):
        raise NotImplementedError(
            f"Trying to use forward AD with {name}_ that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
            "pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
            "its implementation.")
    in_place = Op(function.forward, name=name, elementwise=True,
                  node_name=function.node_name[:-1] + "1")
    in_place.defvjp(no_derivative)
    in_place.defjvp(no_tangent)
    return in_place


for _op, _alias in ((asinh, "arcsinh"), (acosh, "arccosh"), (atanh, "arctanh")):
    _in_place = _underivable_in_place(_op)
    register(_in_place, _op.name, method=False, inplace=True)
    register(_in_place, _alias, method=False, inplace=True)
    register(_op, _alias)
