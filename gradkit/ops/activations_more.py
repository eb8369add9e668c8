"""More activations of torch.nn.functional: celu, selu, hardtanh/relu6, hardsigmoid, hardswish,
mish, softshrink, hardshrink, threshold, glu, prelu, rrelu, softsign, tanhshrink.

Each fused torch kernel is one op here with torch's node name (``HardtanhBackward0``,
``GluBackward0``, ...) and torch's gradient at its kinks; softsign and tanhshrink are
compositions, as torch writes them in Python. The ``inplace=`` forms overwrite the input
through ``ops/inplace.py``.
"""
from __future__ import annotations

import numpy as np

from gradkit.backend import get_array_module
from gradkit.creation import uniform_draws
from gradkit.ops._op import op
from gradkit.ops.activations import (
    elu, elu_slope, elu_values, leaky_relu, sigmoid, softplus)
from gradkit.ops.elementwise import tanh
from gradkit.ops.grad_edges import (
    defmask_edge, gradient_edge, in_place_variant, negative_slope_refusal, no_derivative)
from gradkit.ops.inplace import inplace as write_inplace
from gradkit.ops.joining import cat
from gradkit.ops.piecewise import abs, where
from gradkit.ops.shape import _normalize_dim, reshape
from gradkit.ops.slicing import narrow
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import CLAMP_COMPLEX, fixed_error, kernel_error, scalar_type_name

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH = float(np.float32(1 / 6))  # torch's kernel scales hardsigmoid's slope by a float 1/6


def _apply(input, out_of_place, inplace: bool, *args):
    """``out_of_place(input, *args)``, written into ``input`` when ``inplace``."""
    return write_inplace(input, out_of_place, *args) if inplace else out_of_place(input, *args)


# -- the elu family -----------------------------------------------------------------------------

@unary(save="x", name="celu", complex_error=kernel_error("elu_cpu"),
        integer_error=kernel_error("elu_cpu"))
def _celu(xp, x, alpha=1.0):
    """elu with input_scale 1 / alpha (torch's CeluBackward0)."""
    return elu_values(xp, x, alpha, 1.0, 1.0 / alpha)


_celu.defderivative(lambda x, alpha: elu_slope(x, alpha, 1.0, 1.0 / alpha))


def _elu_from_result(g, result, alpha=1.0, scale=1.0, input_scale=1.0):
    """torch's elu_backward from the result: input_scale (result + alpha scale) where
    result <= 0 (its derivative 0 at 0, as torch's result < 0 mask), scale elsewhere."""
    negative = input_scale * (where(result < 0, result, 0.0) + alpha * scale)
    return g * where(result <= 0, negative, scale)


def _positive_factor(result, slope):
    """1 where result > 0, ``slope`` elsewhere (NaN too), as an array of result's dtype."""
    data = getattr(result, "_data", result)
    return get_array_module(data).where(data > 0, 1, slope).astype(data.dtype)


_ELU_SLOPE = negative_slope_refusal("elu", "alpha")
elu_in_place = in_place_variant(elu, "EluBackward1", "result", (_elu_from_result,), _ELU_SLOPE)
_celu_in_place = in_place_variant(
    _celu, "CeluBackward1", "result",
    (lambda g, result, alpha: _elu_from_result(g, result, alpha, 1.0, 1.0 / alpha),), _ELU_SLOPE)
leaky_relu_in_place = in_place_variant(
    leaky_relu, "LeakyReluBackward1", "result",
    (lambda g, result, negative_slope: gradient_edge(
        g, result, _positive_factor(result, negative_slope), node="LeakyReluBackwardBackward0"),),
    negative_slope_refusal(
        "leakyReLu", "negative_slope", " File an issue at https://github.com/pytorch/pytorch if "
        "you do require supporting in-place leakRelu backward calculation with negative slope"))


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) elementwise."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _apply(input, _celu_in_place if inplace else _celu, inplace, alpha)


def selu(input, inplace: bool = False):
    """scale * elu(x, alpha) with the self-normalizing constants (torch's EluBackward0)."""
    return _apply(input, elu_in_place if inplace else elu, inplace, SELU_ALPHA, SELU_SCALE)


def celu_(input, alpha: float = 1.0):
    """celu, in place."""
    return celu(input, alpha, inplace=True)


def selu_(input):
    """selu, in place."""
    return selu(input, inplace=True)


# -- piecewise linear ---------------------------------------------------------------------------

@unary(save="x", name="hardtanh", complex_error=CLAMP_COMPLEX,
        bool_error=fixed_error(RuntimeError, "Bool inputs not supported for hardtanh"))
def _hardtanh(xp, x, min_val=-1.0, max_val=1.0):
    """x limited to [min_val, max_val]; NaN and -0.0 pass, integers stay integers."""
    return xp.where(x < min_val, min_val, xp.where(x > max_val, max_val, x)).astype(x.dtype)


# torch's hardtanh_backward: zero at and beyond the edges, the gradient everywhere else (NaN too)
defmask_edge(_hardtanh, lambda x, min_val, max_val: ~((x <= min_val) | (x >= max_val)))


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """x clipped to [min_val, max_val]; the gradient is 0 at the edges, as torch's."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(input, _hardtanh, inplace, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """hardtanh, in place."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False):
    """min(max(0, x), 6): hardtanh(x, 0, 6), as torch (HardtanhBackward0)."""
    return _apply(input, _hardtanh, inplace, 0.0, 6.0)


@unary(save="x", name="hardsigmoid", complex_error=kernel_error("hardsigmoid_cpu"),
        integer_error=kernel_error("hardsigmoid_cpu"))
def _hardsigmoid(xp, x):
    """relu6(x + 3) / 6 elementwise."""
    return xp.minimum(xp.maximum(x + 3, 0), 6) / 6


@op(save="x", elementwise=True, node_name="NotImplemented")
def _hardsigmoid_backward(xp, g, x):
    """g / 6 strictly inside (-3, 3), else 0; torch cannot differentiate it again."""
    return xp.where((x > -3) & (x < 3), g * _ONE_SIXTH, 0).astype(g.dtype, copy=False)


_hardsigmoid_backward.defvjp(no_derivative("hardsigmoid_backward"),
                             no_derivative("hardsigmoid_backward"))
_hardsigmoid_backward.defjvp(no_derivative("hardsigmoid_backward"),
                             no_derivative("hardsigmoid_backward"))
_hardsigmoid.defvjp(lambda g, x: _hardsigmoid_backward(g, x))
_hardsigmoid.defjvp(lambda t, x: _hardsigmoid_backward(t, x))


def hardsigmoid(input, inplace: bool = False):
    """relu6(x + 3) / 6; as torch, its gradient has no derivative of its own."""
    return _apply(input, _hardsigmoid, inplace)


@unary(save="x", name="hardswish", complex_error=kernel_error("hardswish_cpu"),
        integer_error=kernel_error("hardswish_cpu"))
def _hardswish(xp, x):
    """x * relu6(x + 3) / 6 elementwise (NaN at -inf, as torch's)."""
    with np.errstate(invalid="ignore"):
        return x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6


# torch's hardswish_backward: 0 up to -3 (included), x / 3 + 1/2 below 3, 1 from 3 (and at NaN)
_hardswish.defderivative(lambda x: where(x <= -3, 0.0, where(x < 3, x / 3 + 0.5, 1.0)))


def hardswish(input, inplace: bool = False):
    """x * relu6(x + 3) / 6."""
    return _apply(input, _hardswish, inplace)


# -- smooth -------------------------------------------------------------------------------------

@unary(save="x", name="mish", complex_error=kernel_error("mish_cpu"),
        integer_error=kernel_error("mish_cpu"))
def _mish(xp, x):
    """x * tanh(softplus(x)) elementwise."""
    return x * xp.tanh(xp.logaddexp(0, x))


def _mish_slope(x):
    """torch's infinitely differentiable mish_backward: tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)."""
    t = tanh(softplus(x))
    return t + x * sigmoid(x) * (1 - t * t)


_mish.defderivative(_mish_slope)


def mish(input, inplace: bool = False):
    """x * tanh(softplus(x))."""
    return _apply(input, _mish, inplace)


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
    if lambd < 0:
        limit = np.finfo(input._data.dtype).max if input._data.dtype.kind == "f" else 0
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype "
                           f"{scalar_type_name(input._data)}, but found {lambd:g}")
    return _softshrink(input, lambd)


@unary(save="x", name="hardshrink", method=True, complex_error=kernel_error("hardshrink_cpu"),
        integer_error=kernel_error("hardshrink_cpu"))
def hardshrink(xp, x, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return xp.where((x >= -lambd) & (x <= lambd), 0, x).astype(x.dtype, copy=False)


defmask_edge(hardshrink, _outside)


@unary(save="x", name="threshold", complex_error=kernel_error("threshold_cpu"),
        bool_error=kernel_error("threshold_cpu"))
def _threshold(xp, x, threshold=0.0, value=0.0):
    """value where x <= threshold, else x (NaN stays)."""
    return xp.where(x <= threshold, value, x).astype(x.dtype)


defmask_edge(_threshold, lambda x, threshold, value: ~(x <= threshold))


_threshold_in_place = in_place_variant(_threshold, "ThresholdBackward1")


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``value`` where x <= threshold, x elsewhere."""
    return _apply(input, _threshold_in_place if inplace else _threshold, inplace, threshold,
                  value)


def threshold_(input, threshold: float, value: float):
    """threshold, in place."""
    return _apply(input, _threshold_in_place, True, threshold, value)


# -- gated, parametric and randomized -----------------------------------------------------------

@op(save="x", node_name="GluBackward0")
def _glu(xp, x, dim=-1):
    """a * sigmoid(b) for the halves a, b of x along dim."""
    a, b = xp.split(x, 2, axis=dim)
    return a / (1 + xp.exp(-b))


def _glu_halves(x, dim):
    half = x.shape[dim] // 2
    return narrow(x, dim, 0, half), narrow(x, dim, half, half)


def _glu_vjp(g, x, dim):
    a, b = _glu_halves(x, dim)
    s = sigmoid(b)
    return cat([g * s, g * a * s * (1 - s)], dim)


def _glu_jvp(t, x, dim):
    a, b = _glu_halves(x, dim)
    ta, tb = _glu_halves(t, dim)
    s = sigmoid(b)
    return ta * s + a * s * (1 - s) * tb


_glu.defvjp(_glu_vjp)
_glu.defjvp(_glu_jvp)


def glu(input, dim: int = -1):
    """The gated linear unit: a * sigmoid(b), a and b the halves of input along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _normalize_dim(dim, input.ndim)
    if input._data.dtype.kind in "biuc":
        raise kernel_error("glu_cpu")(input._data)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    return _glu(input, dim)


@op(save=("x", "weight"), broadcast=True, node_name="PreluKernelBackward0")
def _prelu_kernel(xp, x, weight):
    """x where x > 0, weight * x elsewhere (weight broadcast against x)."""
    return xp.where(x > 0, x, weight * x)


@op(save=("g", "x", "weight"), outputs=2, broadcast=True,
    node_name="PreluKernelBackwardBackward0")
def _prelu_kernel_backward(xp, g, x, weight):
    """torch's _prelu_kernel_backward: x's gradient and weight's (before its sum)."""
    negative = ~(x > 0)  # NaN too
    return xp.where(negative, weight * g, g), xp.where(negative, x * g, 0).astype(g.dtype)


def _prelu_double_backward(grads, g, x, weight):
    """torch's formulas, which take x = 0 as positive (the first derivative does not)."""
    gg_x, gg_weight = grads
    positive = x >= 0
    return (where(positive, gg_x, gg_x * weight + gg_weight * x),
            where(positive, 0.0, g * gg_weight), where(positive, 0.0, g * gg_x))


def _prelu_backward_jvp(tangents, g, x, weight):
    t_g, t_x, t_weight = (0.0 if t is None else t for t in tangents)
    positive = x >= 0
    return (where(positive, t_g, t_g * weight + t_weight * g),
            where(positive, 0.0, t_x * g + x * t_g))


_prelu_kernel_backward.defvjp_all(_prelu_double_backward)
_prelu_kernel_backward.defjvp_all(_prelu_backward_jvp)
_prelu_kernel.defvjp_all(lambda g, x, weight: _prelu_kernel_backward(g, x, weight))
_prelu_kernel.defjvp(lambda t, x, weight: where(x > 0, t, weight * t),
                     lambda t, x, weight: where(x > 0, 0.0, x * t))


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), one weight per channel (dim 1) or one for all."""
    if input._data.dtype.kind != "f":
        raise kernel_error("prelu_cpu")(input._data)
    if input.dtype != weight.dtype:
        raise RuntimeError("prelu: Type promoting not supported. Got "
                           f"{scalar_type_name(input._data)} and {scalar_type_name(weight._data)}")
    if weight.numel() != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if input.ndim != weight.ndim:  # torch views weight as (1, C, 1, ...) to broadcast
        shape = [1] * input.ndim
        if input.ndim > 1:
            shape[1] = weight.numel()
        weight = reshape(weight, tuple(shape))
    return _prelu_kernel(input, weight)


@op(save=("x", "noise"), elementwise=True, node_name="RreluWithNoiseBackward0")
def _rrelu_with_noise(xp, x, noise):
    """x * noise, noise 1 where x passes (torch's rrelu_with_noise)."""
    return xp.asarray(x * noise)


_RRELU_NODE = "RreluWithNoiseBackwardBackward0"
_rrelu_with_noise.defvjp(lambda g, x, noise: gradient_edge(g, x, noise, node=_RRELU_NODE), None)
_rrelu_with_noise.defjvp(lambda t, x, noise: gradient_edge(t, x, noise, node=_RRELU_NODE), None)
_rrelu_in_place = in_place_variant(
    _rrelu_with_noise, "RreluWithNoiseBackward1", ("result", "noise"),
    (lambda g, result, noise: gradient_edge(g, result, noise, node=_RRELU_NODE), None))


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False):
    """Leaky relu with slope (lower + upper) / 2; when ``training``, each non-positive element
    gets its own slope drawn uniformly from [lower, upper) (gradkit's generator, not torch's)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    data = input._data
    if data.dtype.kind not in "f":
        raise kernel_error("rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")(data)
    xp = get_array_module(data)
    if training:
        slopes = xp.asarray(uniform_draws(data.shape, lower, upper), dtype=data.dtype)
        noise = xp.where(data <= 0, slopes, 1).astype(data.dtype)
    else:  # torch's leaky_relu: the slope also at NaN
        noise = xp.where(data > 0, 1, (lower + upper) / 2).astype(data.dtype)
    return _apply(input, _rrelu_in_place if inplace else _rrelu_with_noise, inplace, noise)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """rrelu, in place."""
    return rrelu(input, lower, upper, training, inplace=True)
