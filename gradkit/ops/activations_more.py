"""More activations of torch.nn.functional: celu, selu, hardtanh/relu6, hardsigmoid, hardswish,
mish, softshrink, hardshrink, threshold, softsign, tanhshrink (glu, prelu and rrelu:
``activations_gated.py``).

Each fused torch kernel is one op here with torch's node name (``HardtanhBackward0``,
``GluBackward0``, ...) and torch's gradient at its kinks; softsign and tanhshrink are
compositions, as torch writes them in Python. The ``inplace=`` forms overwrite the input
through ``ops/inplace.py``.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import number_argument, numbers_reader, scalar_for
from gradkit.ops._op import op
from gradkit.ops.activations import (
    elu, elu_backward, elu_values, leaky_relu, positive_factor, sigmoid)
from gradkit.ops.conversion import fitted
from gradkit.ops.elementwise import exp, log1p, tanh
from gradkit.ops.grad_edges import (
    LEAKY_RELU_EXTRA, call_or_write, defmask_edge, gradient_edge, in_place_variant,
    negative_slope_refusal, no_derivative, no_forward_ad)
from gradkit.ops.piecewise import abs, where
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import (
    CLAMP_COMPLEX, cpp_number, fixed_error, half_in_float, kernel_error, scalar_type_name)
from gradkit.ops.result_layout import empty_like_layout

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH = float(np.float32(1 / 6))  # torch's kernel scales hardsigmoid's slope by a float 1/6


# -- the elu family -----------------------------------------------------------------------------

@unary(save="x", name="celu", complex_error=kernel_error("elu_cpu"),
        integer_error=kernel_error("elu_cpu"))
@half_in_float
def _celu(xp, x, alpha=1.0):
    """elu with input_scale 1 / alpha (torch's CeluBackward0)."""
    return elu_values(xp, x, alpha, 1.0, 1.0 / alpha)


def _celu_backward(g, x, alpha):
    """torch's CeluBackward0: elu_backward with input_scale 1.0 / alpha.toFloat(), the
    reciprocal of alpha rounded to single precision (its forward's is alpha's own)."""
    return elu_backward(g, x, alpha, 1.0, _single_reciprocal(alpha))


def _single_reciprocal(alpha) -> float:
    return 1.0 / float(np.float32(alpha))


_celu.defvjp(_celu_backward)
_celu.defjvp(_celu_backward)


def _elu_from_result(g, result, alpha=1.0, scale=1.0, input_scale=1.0):
    """torch's elu_backward from the result (its in-place forms' EluBackward1)."""
    return elu_backward(g, result, alpha, scale, input_scale, True)


_ELU_SLOPE = negative_slope_refusal("elu", "alpha")
elu_in_place = in_place_variant(elu, "EluBackward1", "result", (_elu_from_result,), _ELU_SLOPE)
_celu_in_place = in_place_variant(
    _celu, "CeluBackward1", "result",
    (lambda g, result, alpha: _elu_from_result(g, result, alpha, 1.0, _single_reciprocal(alpha)),),
    _ELU_SLOPE)
leaky_relu_in_place = in_place_variant(
    leaky_relu, "LeakyReluBackward1", "result",
    (lambda g, result, negative_slope: gradient_edge(
        g, result, positive_factor(result, negative_slope), node="LeakyReluBackwardBackward0"),),
    negative_slope_refusal("leakyReLu", "negative_slope", LEAKY_RELU_EXTRA))
elu_in_place.numbers = numbers_reader("elu_", alpha=(2, "input"), scale=(3, "input"),
                                      input_scale=(4, "input"))
leaky_relu_in_place.numbers = numbers_reader("leaky_relu_", negative_slope=(2, "input"))


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) elementwise."""
    # read as a double (a complex one refused so), then converted to the kernel's type
    alpha = scalar_for(number_argument(alpha, "celu_" if inplace else "celu", "alpha", 2,
                                       "double", optional=False), input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return call_or_write(input, _celu_in_place if inplace else _celu, inplace, alpha)


def selu(input, inplace: bool = False):
    """scale * elu(x, alpha) with the self-normalizing constants (torch's EluBackward0)."""
    return call_or_write(input, elu_in_place if inplace else elu, inplace, SELU_ALPHA, SELU_SCALE)


# -- piecewise linear ---------------------------------------------------------------------------

def _integer_limit(value) -> int:
    if not (math.isfinite(value) and -2.0 ** 63 <= value < 2.0 ** 63):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return math.trunc(value)


@unary(save="x", name="hardtanh", complex_error=CLAMP_COMPLEX,
        bool_error=fixed_error(RuntimeError, "Bool inputs not supported for hardtanh"))
@empty_like_layout  # (torch's hardtanh: empty_like(x))
def _hardtanh(xp, x, min_val=-1.0, max_val=1.0):
    """x limited to [min_val, max_val] as torch's clamp (max_val where min_val > max_val); NaN
    and -0.0 pass, integers stay integers; a NaN bound makes every value NaN (torch's clamp
    propagates it)."""
    if x.dtype.kind in "iu":  # torch reads the limits as int64 first (-0.5 is 0)
        min_val, max_val = _integer_limit(min_val), _integer_limit(max_val)
    if x.dtype == np.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if x.dtype.kind in "fc" and (min_val != min_val or max_val != max_val):
        return xp.full_like(x, xp.nan)
    low = xp.where(x < min_val, min_val, x)
    return xp.where(low > max_val, max_val, low).astype(x.dtype)


# torch's hardtanh_backward: zero at and beyond the edges, the gradient everywhere else (NaN too)
defmask_edge(_hardtanh, lambda x, min_val, max_val: ~((x <= min_val) | (x >= max_val)))


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """x clipped to [min_val, max_val]; the gradient is 0 at the edges, as torch's."""
    if min_val > max_val:  # torch's Python check, before its parser reads the numbers
        raise ValueError("min_val cannot be greater than max_val")
    name = "hardtanh_" if inplace else "hardtanh"
    min_val = scalar_for(number_argument(min_val, name, "min_val", 2), input)
    max_val = scalar_for(number_argument(max_val, name, "max_val", 3), input)
    return call_or_write(input, _hardtanh, inplace, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """hardtanh, in place: torch's C++ function, which does not compare the bounds."""
    min_val = number_argument(min_val, "hardtanh_", "min_val", 2)
    max_val = number_argument(max_val, "hardtanh_", "max_val", 3)
    return call_or_write(input, _hardtanh, True, min_val, max_val)


def relu6(input, inplace: bool = False):
    """min(max(0, x), 6): hardtanh(x, 0, 6), as torch (HardtanhBackward0)."""
    return call_or_write(input, _hardtanh, inplace, 0, 6)  # torch's ints (_saved_max_val)


@unary(save="x", name="hardsigmoid", complex_error=kernel_error("hardsigmoid_cpu"),
        integer_error=kernel_error("hardsigmoid_cpu"))
@half_in_float
def _hardsigmoid(xp, x):
    """relu6(x + 3) / 6 elementwise."""
    return xp.minimum(xp.maximum(x + 3, 0), 6) / 6


@op(save="x", elementwise=True, node_name="NotImplemented")
def _hardsigmoid_backward(xp, g, x):
    """g / 6 strictly inside (-3, 3), else 0; torch cannot differentiate it again."""
    return xp.where((x > -3) & (x < 3), g * _ONE_SIXTH, 0).astype(g.dtype, copy=False)


_hardsigmoid_backward.defvjp(no_derivative("hardsigmoid_backward"),
                             no_derivative("hardsigmoid_backward"))
_hardsigmoid_backward.defjvp(*[no_forward_ad("aten::hardsigmoid_backward", brief=True)] * 2)
_hardsigmoid.defvjp(lambda g, x: _hardsigmoid_backward(g, x))
_hardsigmoid.defjvp(lambda t, x: _hardsigmoid_backward(t, x))


def hardsigmoid(input, inplace: bool = False):
    """relu6(x + 3) / 6; as torch, its gradient has no derivative of its own."""
    return call_or_write(input, _hardsigmoid, inplace)


@unary(save="x", name="hardswish", complex_error=kernel_error("hardswish_cpu"),
        integer_error=kernel_error("hardswish_cpu"))
@half_in_float  # x (x + 3) overflows float16 from 256 on
def _hardswish(xp, x):
    """x * relu6(x + 3) / 6 elementwise (NaN at -inf, as torch's)."""
    with np.errstate(invalid="ignore"):
        return x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6


def _hardswish_backward(g, x):
    """torch's hardswish_backward: 0 up to -3 (included), g (x / 3 + 1/2) below 3, g from 3
    (and at NaN); the 0 replaces the product, so a NaN or inf g there gives 0 (its jvp,
    auto_element_wise, the same with the tangent). Its derivative in x, g / 3 inside (-3, 3),
    is 0 outside whatever g is, as torch's where over grad * grad_output / 3: the product
    reads g only inside."""
    inside = where((x > -3) & (x < 3), g, 0.0)
    return where(x <= -3, 0.0, where(x < 3, inside * (x / 3 + 0.5), g))


_hardswish.defvjp(_hardswish_backward)
_hardswish.defjvp(_hardswish_backward)
_hardswish.batchable = True


def hardswish(input, inplace: bool = False):
    """x * relu6(x + 3) / 6."""
    return call_or_write(input, _hardswish, inplace)


# -- smooth -------------------------------------------------------------------------------------

@unary(save="x", name="mish", complex_error=kernel_error("mish_cpu"),
        integer_error=kernel_error("mish_cpu"))
@half_in_float
def _mish(xp, x):
    """x * tanh(softplus(x)) elementwise."""
    return x * xp.tanh(xp.logaddexp(0, x))


def _mish_slope(x):
    """torch's infinitely differentiable mish_backward: tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2),
    sp = log1p(exp(x)) as it writes it (so its derivative is NaN from x = 710 on, inf / inf:
    breadth seed 1719921)."""
    t = tanh(log1p(exp(x)))
    return t + x * sigmoid(x) * (1 - t * t)


_mish.defderivative(_mish_slope)


def mish(input, inplace: bool = False):
    """x * tanh(softplus(x))."""
    return call_or_write(input, _mish, inplace)


def softsign(input):
    """x / (|x| + 1), composed as torch's (DivBackward0)."""
    return input / (abs(input) + 1)


def tanhshrink(input):
    """x - tanh(x), composed as torch's (SubBackward0)."""
    return input - tanh(input)


# -- shrinking and thresholds -------------------------------------------------------------------

def _outside(x, lambd):
    """Where the shrinks pass the gradient: |x| > lambd, and NaN (torch's kernels)."""
    return ~((x >= -lambd) & (x <= lambd))


@unary(save="x", name="softshrink", complex_error=kernel_error("softshrink_check"),
        integer_error=kernel_error("softshrink_check"))
def _softshrink(xp, x, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else x * 0 (keeping -0.0, as torch)."""
    return xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0))


defmask_edge(_softshrink, _outside)


def softshrink(input, lambd: float = 0.5):
    """Shrink towards 0 by lambd (0 inside [-lambd, lambd])."""
    # (a complex lambd refused so)
    lambd = number_argument(lambd, "softshrink", "lambd", 2, "double", optional=False)
    # a float's range (NaN out too); other dtypes get the kernel's dtype error, as torch's
    array = getattr(input, "_data", None)  # (not a tensor: the op's own TypeError)
    limit = np.finfo(array.dtype).max if array is not None and array.dtype.kind == "f" else np.nan
    if limit == limit and not 0 <= lambd <= limit:
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype "
                           f"{scalar_type_name(array)}, but found {cpp_number(float(lambd))}")
    return _softshrink(input, lambd)


@unary(save="x", name="hardshrink", method=True, complex_error=kernel_error("hardshrink_cpu"),
        integer_error=kernel_error("hardshrink_cpu"))
def hardshrink(xp, x, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return xp.where((x >= -lambd) & (x <= lambd), 0, x).astype(x.dtype, copy=False)


hardshrink.numbers = numbers_reader("hardshrink", lambd=(2, "input"))


defmask_edge(hardshrink, _outside)


@unary(save="x", name="threshold", complex_error=kernel_error("threshold_cpu"),
        bool_error=kernel_error("threshold_cpu"))
def _threshold(xp, x, threshold=0.0, value=0.0):
    """value where x <= threshold, else x (NaN stays); value cast to x's dtype first, so an
    int64 x near its max does not round through float64 (and, as torch's, refused where it
    does not fit the dtype: -2 for uint8)."""
    if x.dtype.kind in "iu":
        threshold, value = fitted(threshold, x.dtype), fitted(value, x.dtype)
    return xp.where(x <= threshold, xp.asarray(value).astype(x.dtype), x)


defmask_edge(_threshold, lambda x, threshold, value: ~(x <= threshold))


_threshold_in_place = in_place_variant(_threshold, "ThresholdBackward1")
# idempotent, so torch lets it write into an expanded tensor (its backward then refuses)
_threshold_in_place.check_overlap = lambda target, *args: True


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``value`` where x <= threshold, x elsewhere."""
    name = "threshold_" if inplace else "threshold"
    threshold = scalar_for(number_argument(threshold, name, "threshold", 2, optional=False),
                           input)
    value = scalar_for(number_argument(value, name, "value", 3, optional=False), input)
    return call_or_write(input, _threshold_in_place if inplace else _threshold, inplace, threshold,
                  value)


def threshold_(input, threshold: float, value: float):
    """threshold, in place."""
    threshold = scalar_for(number_argument(threshold, "threshold_", "threshold", 2, optional=False),
                           input)
    value = scalar_for(number_argument(value, "threshold_", "value", 3, optional=False), input)
    return call_or_write(input, _threshold_in_place, True, threshold, value)
