"""torch.special's own ops, with torch's node names and derivative formulas: erfcx, entr,
ndtr, ndtri, log_ndtr, i0e, i1e, xlog1py, zeta, gammainc, gammaincc (the Bessel and Airy
functions, which torch does not differentiate, are in ``special_bessel.py``, the orthogonal
polynomials in ``orthogonal_polynomials.py``; i1 is ``gamma.py``'s)."""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.ops._op import op
from gradkit.ops.arithmetic import neg
from gradkit.ops.binary_math import _floating_pair, _require_tensors
from gradkit.ops.elementwise import erf, exp, log
from gradkit.ops.gamma import lgamma
from gradkit.ops.grad_edges import no_forward_ad
from gradkit.ops.incomplete_gamma import gammainc_array, gammaincc_array
from gradkit.ops.keywords import numpy_names
from gradkit.ops.methods import register
from gradkit.ops.piecewise import first_term_materialized, sgn, where
from gradkit.ops.promotion import PY_SCALARS
from gradkit.ops.special_series import (
    SQRT_HALF, c_math, erfcx_array, hurwitz_zeta_array, i0e_array, i1e_array, log_ndtr_array,
    ndtri_array)
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import kernel_error, refuse_half



_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


@unary(save=("x", "result"), floating=True, complex_error=kernel_error("erfcx_cpu"),
       node_name="SpecialErfcxBackward0")
def erfcx(xp, x):
    """The scaled complementary error function exp(x²) erfc(x)."""
    refuse_half(x, "erfcx_cpu")
    return erfcx_array(xp, x)


# torch: (2 x erfcx(x) - 2 / sqrt(pi)) grad
erfcx.defderivative(lambda x, out: 2.0 * x * out - _TWO_OVER_SQRT_PI)


@unary(floating=True, complex_error=kernel_error("entr_cpu"), node_name="SpecialEntrBackward0")
def entr(xp, x):
    """-x log(x) for x > 0, 0 at 0, -inf below 0 (NaN stays NaN)."""
    with np.errstate(all="ignore"):
        out = -x * xp.log(x)
        out = xp.where(x == 0, x.dtype.type(0), out)
        return xp.where(x < 0, x.dtype.type(-math.inf), out)


entr.defderivative(lambda x: neg(1 + log(x)))


@unary(save=("x", "result"), floating=True, complex_error=kernel_error("ndtri_cpu"),
       node_name="SpecialNdtriBackward0")
def ndtri(xp, x):
    """The inverse of the standard normal CDF: the x at which ndtr(x) = p."""
    refuse_half(x, "ndtri_cpu")
    return ndtri_array(xp, x)


# torch: grad * sqrt(2 pi) * exp(ndtri(p)² / 2), in that order
ndtri.defvjp(lambda g, x, out: g * _SQRT_2PI * exp(out ** 2 / 2))
ndtri.defjvp(lambda t, x, out: t * _SQRT_2PI * exp(out ** 2 / 2))


@unary(save=("x", "result"), floating=True, complex_error=kernel_error("log_ndtr_cpu"),
       node_name="SpecialLogNdtrBackward0")
def log_ndtr(xp, x):
    """log of the standard normal CDF, accurate far in the lower tail."""
    refuse_half(x, "log_ndtr_cpu")
    return log_ndtr_array(xp, x)


# torch: grad / sqrt(2 pi) * exp(-(log_ndtr(x) + x² / 2)), in that order
log_ndtr.defvjp(lambda g, x, out: g / _SQRT_2PI * exp(neg(out + x ** 2 / 2)))
log_ndtr.defjvp(lambda t, x, out: t / _SQRT_2PI * exp(neg(out + x ** 2 / 2)))


def ndtr(input: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """The standard normal CDF (1 + erf(x / sqrt(2))) / 2, composed as torch's (its graph is
    MulBackward1 <- AddBackward1 <- ErfBackward0 <- MulBackward1)."""
    return (1 + erf(input * SQRT_HALF)) * 0.5


@unary(save=("x", "result"), floating=True, complex_error=kernel_error("i0e_cpu"),
       node_name="SpecialI0EBackward0")
def i0e(xp, x):
    """The exponentially scaled modified Bessel function exp(-|x|) I0(x)."""
    return i0e_array(xp, x)


@unary(save=("x", "result"), floating=True, complex_error=kernel_error("i1e_cpu"),
       node_name="SpecialI1EBackward0")
def i1e(xp, x):
    """The exponentially scaled modified Bessel function exp(-|x|) I1(x)."""
    return i1e_array(xp, x)


# torch: (i1e(x) - sgn(x) i0e(x)) grad
i0e.defderivative(lambda x, out: i1e(x) - sgn(x) * out)


def _i1e_derivative(x, out):
    """torch's i1e_backward: i0e(x) - i1e(x) (sgn(x) + 1/x), its limit 1/2 where |x| <= eps
    (x replaced by eps there, so that the unused branch stays finite). No Half kernel."""
    refuse_half(x, "i1e_backward")
    eps = float(np.finfo(x.dtype).eps)
    not_tiny = abs(x) > eps
    safe = where(not_tiny, x, eps)
    return where(not_tiny, i0e(safe) - out * (sgn(safe) + 1 / safe), 0.5)


i1e.defderivative(_i1e_derivative)


def no_scalar_pair(name: str, x, y, names=("input", "other", "self")) -> None:
    """torch's TypeError for two numbers (its overloads need one Tensor); ``names``: its
    argument names (x's as a Tensor, y's, x's as a Number)."""
    if type(x) in PY_SCALARS and type(y) in PY_SCALARS:
        first, second, number = names
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got "
            f"({type(x).__name__}, {type(y).__name__}), but expected one of:\n"
            f" * (Tensor {first}, Tensor {second}, *, Tensor out = None)\n"
            f" * (Number {number}, Tensor {second}, *, Tensor out = None)\n"
            f" * (Tensor {first}, Number {second}, *, Tensor out = None)\n")


@op(save=("x", "y"), broadcast=True, batchable=True, elementwise=True,
    node_name="SpecialXlog1PyBackward0")
def xlog1py(xp, x, y):
    """x * log1p(y), 0 where x is 0 (NaN where y is NaN); either operand may be a number."""
    no_scalar_pair("special_xlog1py", x, y)
    x, y = _floating_pair(xp, x, y, "xlog1py_cpu")
    with np.errstate(all="ignore"):
        out = xp.asarray(x * c_math(xp, "log1p", y))
    out = xp.where(x == 0, xp.zeros((), out.dtype), out)
    return xp.where(xp.isnan(y), y, out)


def _xlog1py_grad_x(g, x, y):
    # torch: xlog1py(grad, y), zeroed where x == 0 and y <= -1
    return where((x == 0) & (y <= -1), 0.0, xlog1py(g, y))


def _overload_name(base: str):
    """torch's node of a number operand: ...Backward1 for a number x, ...Backward2 for y."""
    def name(params, inputs) -> str:
        number = [type(v) in PY_SCALARS for v in inputs]
        return f"{base}Backward{1 if number[0] else 2 if number[1] else 0}"
    return name


xlog1py.node_name_rule = _overload_name("SpecialXlog1Py")
xlog1py.defvjp(_xlog1py_grad_x, lambda g, x, y: g * x / (y + 1))
# torch's: xlog1py(t_x, y) masked + t_y x / (y + 1), a missing t_x materialized
xlog1py.defjvp_all(first_term_materialized(_xlog1py_grad_x, lambda t, x, y: t * x / (y + 1)))


@op(save=("x", "q"), broadcast=True, batchable=True, elementwise=True,
    node_name="SpecialZetaBackward0")
def zeta(xp, x, q):
    """The Hurwitz zeta function sum_k (q + k) ** -x (x > 1); either operand may be a number."""
    no_scalar_pair("special_zeta", x, q)
    x, q = _floating_pair(xp, x, q, "zeta_cpu")
    refuse_half(x, "zeta_cpu")
    return hurwitz_zeta_array(xp, x, q)


def _no_zeta_derivative(*_, **__):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


zeta.node_name_rule = _overload_name("SpecialZeta")
# torch: d/dq zeta(x, q) = -x zeta(x + 1, q); none for x
zeta.defvjp(_no_zeta_derivative, lambda g, x, q: g * -x * zeta(x + 1.0, q))
zeta.defjvp(no_forward_ad("special_zeta"), no_forward_ad("special_zeta"))  # torch: no formula


@op(save=("a", "x"), broadcast=True, batchable=True, elementwise=True,
    node_name="IgammaBackward0")
def gammainc(xp, a, x):
    """The regularized lower incomplete gamma function P(a, x); both operands Tensors."""
    return _incomplete_gamma(xp, a, x, "gammainc", "igamma_cpu", gammainc_array)


@op(save=("a", "x"), broadcast=True, batchable=True, elementwise=True,
    node_name="IgammacBackward0")
def gammaincc(xp, a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete_gamma(xp, a, x, "gammaincc", "igammac_cpu", gammaincc_array)


def _incomplete_gamma(xp, a, x, name: str, kernel: str, values):
    _require_tensors(f"special_{name}", a, x)
    a, x = _floating_pair(xp, a, x, kernel, integers_to_float=False)
    dtype = a.dtype
    work = np.float64 if dtype == np.float64 else np.float32  # torch: Half through float
    # writable copies of the broadcast operands (the branches fill the result by mask)
    a, x = (v.copy() for v in xp.broadcast_arrays(a.astype(work), x.astype(work)))
    return values(xp, a, x).astype(dtype)


def _density(a, x):
    """torch's d/dx P(a, x): exp((a - 1) log x - x - lgamma(a))."""
    return exp((a - 1) * log(x) - x - lgamma(a))


def _no_derivative_in_a(name: str):
    def refuse(*_, **__):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return refuse


gammainc.defvjp(_no_derivative_in_a("igamma"), lambda g, a, x: g * _density(a, x))
gammaincc.defvjp(_no_derivative_in_a("igammac"), lambda g, a, x: -g * _density(a, x))
# torch has no forward formula for either: a dual x alone is refused too
gammainc.defjvp(no_forward_ad("igamma"), no_forward_ad("igamma"))
gammaincc.defjvp(no_forward_ad("igammac"), no_forward_ad("igammac"))


def _igamma_alias(special, name: str):
    """torch's ``igamma``/``igammac``: the special function under its older name (with that
    name in the errors), also a Tensor method with an in-place form."""
    def function(input, other):  # noqa: A002 - torch's names
        _require_tensors(name, input, other)
        return special(input, other)

    @numpy_names  # other= as x2= too
    def method(self, other):
        _require_tensors(name, other, names=("other",))
        return special(self, other)
    function.__name__ = method.__name__ = name
    function.__doc__ = method.__doc__ = f"``special.{special.name}(input, other)``."
    method.broadcast = special.broadcast  # in place, torch's output checks come first
    register(method, name, inplace=True)
    return function


igamma = _igamma_alias(gammainc, "igamma")
igammac = _igamma_alias(gammaincc, "igammac")
