"""Activations, elementwise: sigmoid, logsigmoid, relu, silu, gelu, softplus, elu,
leaky_relu (their derivatives as in ``elementwise.py``)."""
from __future__ import annotations

import math

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.number_arguments import numbers_reader
from gradkit.ops._op import op
from gradkit.ops.grad_edges import gradient_edge
from gradkit.ops.elementwise import exp, tanh
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.selection import zero_where
from gradkit.ops.special import erf_array
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import CLAMP_COMPLEX, fixed_error, half_in_float, kernel_error


@unary(save="result", floating=True, method=True, inplace=True)
@half_in_float
def sigmoid(xp, x):
    """1 / (1 + exp(-x)) elementwise."""
    # torch's kernel, as written: exp(-x) overflows to inf below -88.7 in float32 (-709.8 in
    # float64), where the result is 0, not the subnormal exp(x) / (1 + exp(x)) would give
    return (1 / (1 + xp.exp(-x))).astype(x.dtype, copy=False)



@unary(save="x", complex_error=kernel_error("log_sigmoid_cpu"),
        integer_error=kernel_error("log_sigmoid_cpu"))
@half_in_float
def logsigmoid(xp, x):
    """log(sigmoid(x)) elementwise, computed stably."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))  # never overflows


@op(save="x", batchable=True, node_name="LogSigmoidBackwardBackward0")
def _logsigmoid_slope(xp, x):
    """logsigmoid's derivative sigmoid(-x), an op of its own whose derivative is torch's
    log_sigmoid_double_backward, (sigmoid(x) - 1) sigmoid(x): 0 where sigmoid(x) rounds to 1
    (x = 50.5), -exp(x) far below 0, as torch's."""
    return (1 / (1 + xp.exp(x))).astype(x.dtype, copy=False)


_logsigmoid_slope.defderivative(lambda x: (sigmoid(x) - 1) * sigmoid(x))
logsigmoid.defderivative(lambda x: _logsigmoid_slope(x))


@unary(save="result", complex_error=CLAMP_COMPLEX, method=True, inplace=True,
        bool_error=fixed_error(RuntimeError, "Boolean inputs not supported for relu"))
def relu(xp, x):
    """max(x, 0) elementwise; NaN and -0.0 pass through, as torch."""
    return zero_where(xp, x < 0, x)


@op(save="out", elementwise=True, node_name="ThresholdBackwardBackward0")
def _relu_backward(xp, g, out):
    """relu's gradient, torch's threshold_backward: g where out > 0 or is NaN, else 0 (a
    selection: NaN/inf in g stay out). Its derivative in ``out`` is zero but, as torch's,
    a graph edge: a second backward reaches relu's node (and the hooks of its output)."""
    return zero_where(xp, out <= 0, g)


_relu_backward.defvjp(lambda gg, out: _relu_backward(gg, out), lambda gg, out: zeros_like(out))
# torch's forward formula is zeros_like(out_t) + threshold_backward(g_t, out): a dual out
# alone (forward over reverse) gives zeros, not no tangent, and a -0.0 of g_t turns +0.0
_relu_backward.defjvp(lambda t, out: _relu_backward(t, out) + 0.0, lambda t, out: zeros_like(t))
relu.defvjp(lambda g, out: _relu_backward(g, out))
relu.defjvp(lambda t, out: _relu_backward(t, out))
relu.batchable = True



@unary(save="x", integer_error=kernel_error("silu_cpu"))
@half_in_float
def silu(xp, x):
    """x * sigmoid(x) elementwise, as torch's kernel writes it: x / (1 + exp(-x)) (the signs
    of complex zeros are the division's)."""
    return x / (1 + xp.exp(-x))


def _silu_derivative(x):
    s = sigmoid(x)
    return s * (1 + x * (1 - s))


silu.defderivative(_silu_derivative)

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@unary(save="x", complex_error=kernel_error("GeluKernelImpl"),
        integer_error=kernel_error("GeluKernelImpl"))
@half_in_float
def gelu(xp, x, approximate="none"):
    """x * Phi(x) (Gaussian CDF); ``approximate='tanh'`` for the tanh formula."""
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type(approximate).__name__}")
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return 0.5 * x * (1 + erf_array(xp, x * _INV_SQRT_2))


@op(save="x", batchable=True)
@half_in_float
def gelu_slope(xp, x, approximate="none"):
    """gelu's derivative, an op of its own whose derivative is gelu's second one in one
    expression, as torch's gelu_backward: an infinite upstream gradient then gives inf, not the
    NaN of inf - inf that differentiating the first derivative's terms would give."""
    if approximate == "tanh":
        t = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
        slope = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * slope
    # torch's cdf + x * pdf, pdf = kBeta * exp(-x²/2)
    return 0.5 * (1 + erf_array(xp, x * _INV_SQRT_2)) + x * (_INV_SQRT_2PI * xp.exp(-0.5 * x * x))


def _gelu_second_derivative(x, approximate):
    if approximate == "tanh":  # (1 - t^2) (u' - x t u'^2 + x u''/2), u = k (x + a x^3)
        t = tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
        slope = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return (1 - t * t) * (slope - x * t * slope * slope
                              + x * (3 * 0.044715 * _SQRT_2_OVER_PI) * x)
    squared = x * x  # torch's gelu_double_backward: 2 pdf - x² pdf (where pdf is 0: +0)
    density = _INV_SQRT_2PI * exp(-0.5 * squared)
    return 2 * density - squared * density


gelu_slope.defderivative(_gelu_second_derivative)
gelu.defderivative(lambda x, approximate: gelu_slope(x, approximate))


@unary(save="x", complex_error=kernel_error("softplus_cpu"),
        integer_error=kernel_error("softplus_cpu"))
@half_in_float
def softplus(xp, x, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold``, elementwise."""
    beta = beta.real  # a complex beta (imaginary part 0) computes as its real part
    bx = x * beta
    soft = xp.log1p(xp.exp(xp.minimum(bx, threshold))) / beta
    return xp.where(bx > threshold, x, soft).astype(x.dtype, copy=False)


@op(save="x", batchable=True)
@half_in_float  # exp(beta * x) overflows float16 from 11.1 on: inf / inf
def softplus_slope(xp, x, beta=1.0, threshold=20.0):
    """softplus's derivative, an op whose own derivative is torch's softplus_double_backward
    in one expression: s (1 - s) beta below the threshold, so an infinite upstream gradient
    at s = 1 gives NaN as in torch (a where() would have masked it). torch's z / (z + 1) with
    z = exp(beta * x): at beta * x = -90 in float32 that is a subnormal, where 1 / (1 + exp(90))
    overflows to 0 (an infinite upstream gradient then gives NaN, not torch's inf)."""
    bx = x * beta.real
    z = xp.exp(xp.minimum(bx, threshold))
    return xp.where(bx > threshold, 1.0, z / (z + 1)).astype(x.dtype, copy=False)


def _softplus_second_derivative(x, beta, threshold):
    if isinstance(beta, complex):  # torch's x * beta < threshold: no complex less-than
        product = x * beta
        raise kernel_error("lt_cpu")(getattr(product, "_data", product))
    s = sigmoid(x * beta)
    return s * (1 - s) * (x * beta < threshold) * beta


softplus_slope.defderivative(_softplus_second_derivative)
softplus.defderivative(lambda x, beta, threshold: softplus_slope(x, beta, threshold))
_read_softplus_numbers = numbers_reader("softplus", beta=(2, "input"), threshold=(3, "input"))


def _softplus_numbers(params: dict, positional=(), inputs=()) -> dict:
    """softplus's Scalars as its kernels read them; a complex beta stays complex (its real
    value) for the double backward, where torch's formula meets it (and refuses)."""
    raw = params.get("beta")
    given_complex = isinstance(raw, complex) or \
        isinstance(raw, Tensor) and raw._data.dtype.kind == "c"
    params = _read_softplus_numbers(params, positional, inputs)
    if given_complex:
        params["beta"] = complex(params["beta"])
    return params


softplus.numbers = _softplus_numbers


@unary(save="x", complex_error=kernel_error("elu_cpu"), integer_error=kernel_error("elu_cpu"))
@half_in_float
def elu(xp, x, alpha=1.0, scale=1, input_scale=1):  # torch's int defaults (_saved_scale)
    """scale * x if x > 0 else alpha * scale * (exp(input_scale * x) - 1), elementwise (torch's
    aten::elu: selu and celu are this with other coefficients)."""
    return elu_values(xp, x, alpha, scale, input_scale)


def elu_values(xp, x, alpha, scale, input_scale):
    """The forward of torch's elu kernel, shared with celu."""
    negative = (alpha * scale) * xp.expm1(xp.where(x > 0, 0, x) * input_scale)
    positive = x if scale == 1.0 else x * scale
    # a zero of either sign is torch's x * scale (not alpha * expm1(0), whose sign is alpha's)
    return xp.where(x >= 0, positive, negative).astype(x.dtype, copy=False)


@op(save=("grad", "x"), batchable=True)
@half_in_float
def elu_backward(xp, grad, x, alpha=1.0, scale=1.0, input_scale=1.0, is_result=False):
    """torch's elu_backward: grad * input_scale * (alpha * scale) * exp(input_scale x) where
    x <= 0, in that order, the coefficients in x's dtype (the last bit, and an overflow, as
    torch's); grad * scale elsewhere (NaN too, as its scalar kernel); exp never sees x > 0.
    ``is_result``: x is elu's result (the in-place form), grad * input_scale * (x + alpha
    scale) where x <= 0."""
    kind = x.dtype.type
    factor, product = kind(input_scale), kind(alpha) * kind(scale)
    if is_result:
        negative = grad * factor * (x + product)
    else:
        negative = grad * factor * product * xp.exp(xp.where(x < 0, x, 0) * factor)
    return xp.where(x <= 0, negative, grad * kind(scale)).astype(x.dtype, copy=False)


def _elu_double_backward(g, grad, x, alpha, scale, input_scale, is_result):
    """torch's elu_double_backward: (elu_backward of g grad input_scale, or for a result that
    product itself) masked by x < 0, a product: an inf or NaN stays NaN where a selection
    would drop it."""
    if is_result:
        return g * grad * input_scale * (x < 0)
    return elu_backward(g * grad * input_scale, x, alpha, scale, input_scale) * (x < 0)


def _elu_backward_of_g(g, grad, x, alpha, scale, input_scale, is_result):
    return elu_backward(g, x, alpha, scale, input_scale, is_result)


elu_backward.defvjp(_elu_backward_of_g, _elu_double_backward)
elu_backward.defjvp(_elu_backward_of_g, _elu_double_backward)
elu.defvjp(elu_backward)
elu.defjvp(elu_backward)
elu.numbers = numbers_reader("elu", alpha=(2, "input"), scale=(3, "input"),
                             input_scale=(4, "input"))


@unary(save="x", complex_error=kernel_error("leaky_relu_cpu"),
        integer_error=kernel_error("leaky_relu_cpu"))
@half_in_float
def leaky_relu(xp, x, negative_slope=0.01):
    """x if x > 0 else negative_slope * x, elementwise."""
    return xp.where(x > 0, x, x * negative_slope)


def positive_factor(x, negative_slope):
    """1 where x > 0, ``negative_slope`` elsewhere (NaN too), an array of x's dtype."""
    data = getattr(x, "_data", x)
    return get_array_module(data).where(data > 0, 1, negative_slope).astype(data.dtype)


leaky_relu.numbers = numbers_reader("leaky_relu", negative_slope=(2, "input"))


# torch's leaky_relu_backward keeps an edge to x whose derivative is zero: a second
# derivative through it is 0 times what came before (NaN beside an inf), as torch's
leaky_relu.defvjp(lambda g, x, negative_slope: gradient_edge(
    g, x, positive_factor(x, negative_slope), node="LeakyReluBackwardBackward0"))
leaky_relu.defjvp(lambda t, x, negative_slope: gradient_edge(
    t, x, positive_factor(x, negative_slope), node="LeakyReluBackwardBackward0"))
leaky_relu.batchable = True  # g * factor broadcasts over a leading batch dim

