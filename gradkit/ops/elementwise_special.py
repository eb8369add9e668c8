"""Special elementwise functions of one input: erfc, erfinv, logit, sinc, frac, nan_to_num
(the common ones, exp ... erf, are in ``elementwise.py``)."""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import number_parameters, numbers_reader
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.ops.comparison import isfinite
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import cos, exp, sin
from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.methods import tensor_method
from gradkit.ops.piecewise import where
from gradkit.ops.special import erfc_array, erfinv_array
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import half_in_float, kernel_error, require_tensors
from gradkit.ops.result_layout import empty_like_layout
from gradkit.ops.promotion import overflow

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2


@unary(floating=True, method=True, inplace=True, complex_error=kernel_error("erfc_vml_cpu"))
def erfc(xp, x):
    """1 - erf(x) elementwise, accurate where erf(x) is near 1."""
    return erfc_array(xp, x)


erfc.defderivative(lambda x: -_TWO_OVER_SQRT_PI * exp(-(x ** 2)))


@unary(floating=True, method=True, inplace=True, complex_error=kernel_error("erfinv_vml_cpu"))
def erfinv(xp, x):
    """The inverse of erf on [-1, 1] (+-inf at +-1, NaN outside)."""
    return erfinv_array(xp, x)


# torch: sqrt(pi) / 2 * exp(erfinv(x) ** 2), recomputed from x
erfinv.defderivative(lambda x: _HALF_SQRT_PI * exp(erfinv(x) ** 2))


@unary(floating=True, method=True, inplace=True, complex_error=kernel_error("logit_cpu"))
def logit(xp, x, eps=None):
    """log(x / (1 - x)), with x first clamped to [eps, 1 - eps] when eps >= 0 is given."""
    if eps is not None and math.isfinite(eps) and abs(eps) > np.finfo(x.dtype).max:
        overflow(x.dtype)  # the kernel converts eps to x's dtype (float16's too) first
    if eps is not None and eps >= 0:  # torch's kernel: a negative eps clamps nothing
        low, high = xp.asarray(eps, dtype=x.dtype), xp.asarray(1 - eps, dtype=x.dtype)
        x = xp.where(x < low, low, xp.where(x > high, high, x))
    with np.errstate(all="ignore"):
        return xp.log(x / (1 - x))


logit.numbers = numbers_reader("logit", eps=(2, "float?"))


def _logit_derivative_times(v, x, eps=None):
    """v / (x (1 - x)) as torch's logit backward. Without grad mode (a plain backward, forward
    AD under no_grad) it is torch's kernel: NaN outside [0, 1] without eps or with a negative
    one, else 0 outside [eps, 1 - eps] (a NaN x or eps compares false: unmasked), and
    ``dy * inf`` at x = 0, -0.0 too. With grad mode, torch runs its composite formula
    instead, 0 outside [eps, 1 - eps] for any eps, a NaN x or eps included: torch's wart,
    two answers by grad mode, kept so both runs agree with torch's."""
    plain = not hasattr(v, "_data") or not is_grad_enabled()  # torch: GradMode decides
    scaled = v / (x * (1 - x) + 0.0) if plain else v / (x * (1 - x))
    if eps is None and not plain:  # NaN where x is not in [0, 1]: a NaN x takes the NaN's
        return where((x >= 0) & (x <= 1), scaled, math.nan)  # tangent 0 (forward over reverse)
    if eps is None or eps < 0 and plain:
        return where((x < 0) | (x > 1), math.nan, scaled)
    if plain:
        return where((x < eps) | (x > 1 - eps), 0.0, scaled)
    return where((x >= eps) & (x <= 1 - eps), scaled, 0.0)


logit.defvjp(_logit_derivative_times)
logit.defjvp(_logit_derivative_times)
logit.batchable = True


@unary(floating=True, method=True, inplace=True)
@half_in_float  # float16's pi x is too coarse: sinc(1) would be 3e-4, torch's is -0.0
def sinc(xp, x):
    """sin(pi x) / (pi x), 1 at 0 (complex x too)."""
    with np.errstate(all="ignore"):
        product = x * math.pi
        out = xp.asarray(xp.sin(product) / product)
    return xp.where(x == 0, xp.ones((), out.dtype), out)


def _sinc_derivative(x):
    """pi x² and (pi x cos(pi x) - sin(pi x)) / (pi x²), in torch's order: the division sees
    the zero, so a second derivative at 0 is 0 / 0 = NaN, as torch's. torch's compiled
    sinc_backward makes sin(pi x) before cos(pi x), and so the double backward sums pi x's
    gradients in that order (near 0 their sum cancels: 0 where the other order leaves -pi²/2)."""
    product = x * math.pi
    squared = x * x * math.pi  # torch's self * self * M_PI
    sine = sin(product)
    with np.errstate(divide="ignore", invalid="ignore"):
        return squared, (product * cos(product) - sine) / squared


# torch's sinc_backward masks the product with the gradient, not the derivative: a NaN or inf
# gradient at 0 gives 0 there (its jvp, auto_element_wise, the same with the tangent)
def _sinc_vjp(g, x):
    squared, derivative = _sinc_derivative(x)
    return where(squared == 0, 0.0, g * conj(derivative))


def _sinc_jvp(t, x):
    squared, derivative = _sinc_derivative(x)
    return where(squared == 0, 0.0, t * derivative)


sinc.defvjp(_sinc_vjp)
sinc.defjvp(_sinc_jvp)
sinc.batchable = True


@unary(save=(), method=True, inplace=True, integer_error=kernel_error("frac_cpu"),
       complex_error=kernel_error("frac_cpu"))
def frac(xp, x):
    """x - trunc(x): the fractional part, with x's sign (NaN at +-inf)."""
    with np.errstate(invalid="ignore"):
        return x - xp.trunc(x)


frac.defvjp(lambda g: g)
frac.defjvp(lambda t: t)
frac.batchable = True


@unary(name="nan_to_num")
@empty_like_layout  # (torch's nan_to_num: empty_like(x))
def _nan_to_num(xp, x, nan=0.0, posinf=None, neginf=None):
    if x.dtype.kind in "biu":
        return x.copy()
    info = np.finfo(x.dtype)
    with np.errstate(over="ignore"):  # a replacement out of range becomes inf, as torch
        # (torch's ``float? nan``: None is 0)
        return xp.nan_to_num(x, nan=0.0 if nan is None else nan,
                             posinf=info.max if posinf is None else posinf,
                             neginf=info.min if neginf is None else neginf)


# torch: grad * isfinite(x), a product (a NaN gradient stays NaN where x is not finite)
_nan_to_num.defvjp(lambda g, x, **params: g * isfinite(x))
_nan_to_num.defjvp(lambda t, x, **params: t * isfinite(x))
_nan_to_num.batchable = True


@tensor_method(inplace=True)
@number_parameters("nan_to_num", nan="float?", posinf="float?", neginf="float?")
def nan_to_num(input, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: the dtype's
    largest and lowest finite values); integers unchanged. As torch, no gradient through
    complex values (their parts are replaced one by one)."""
    # torch's parser reads the input and the numbers before the op's own checks
    require_tensors("nan_to_num", input)
    if input.is_complex() and input.requires_grad and is_grad_enabled():
        raise RuntimeError("nan_to_num does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return _replace(_nan_to_num, input, nan, posinf, neginf)


@number_parameters("nan_to_num", nan="float?", posinf="float?", neginf="float?")
def _nan_to_num_in_place(input, nan: float | None = 0.0, posinf: float | None = None,
                         neginf: float | None = None):
    """As ``x.nan_to_num_()`` runs it: torch's in-place form has no complex-gradient check, its
    backward is grad * isfinite(x) for complex x too (wide seed 630)."""
    require_tensors("nan_to_num", input)
    return _replace(in_place_form(_nan_to_num), input, nan, posinf, neginf)


def _replace(op, input, nan, posinf, neginf):
    # torch's ``double? nan``: None is the default 0
    return op(input, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


nan_to_num.function_words = True  # its method's errors do not count self (ops/methods.py)
nan_to_num.in_place = _nan_to_num_in_place

