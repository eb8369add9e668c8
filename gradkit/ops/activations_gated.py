"""Gated, parametric and randomized activations of torch.nn.functional: glu, prelu, rrelu,
each one op with torch's node name and derivative formulas (``GluBackward0``,
``PreluKernelBackward0`` and its double backward, ``RreluWithNoiseBackward0``)."""
from __future__ import annotations

import math
import sys

from gradkit.autograd.zero_grads import is_undefined
from gradkit.backend import get_array_module
from gradkit.generator import rng_of
from gradkit.number_arguments import number_argument, scalar_for
from gradkit.ops._op import op
from gradkit.ops.activations import sigmoid
from gradkit.ops.grad_edges import (
    LEAKY_RELU_EXTRA, call_or_write, gradient_edge, in_place_variant, negative_slope_message,
    sum_of_defined)
from gradkit.ops.joining import cat
from gradkit.ops.methods import tensor_method
from gradkit.ops.piecewise import where, zeros_like
from gradkit.ops.shape import _normalize_dim, reshape
from gradkit.ops.slicing import narrow
from gradkit.ops.unary_helpers import cpp_number, kernel_error, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters
from gradkit.ops.result_layout import empty_like_layout


@op(save="x", node_name="GluBackward0")
def _glu(xp, x, dim=-1):
    """a * sigmoid(b) for the halves a, b of x along dim."""
    a, b = xp.split(x, 2, axis=dim)
    return a / (1 + xp.exp(-b))


def _glu_halves(x, dim):
    half = x.shape[dim] // 2
    return narrow(x, dim, 0, half), narrow(x, dim, half, half)


def _glu_jvp(t, x, dim):
    """torch's glu_jvp kernel, ta s + glu (tb - s tb): inf tangents at an inf glu give NaN."""
    a, b = _glu_halves(x, dim)
    ta, tb = _glu_halves(t, dim)
    s = sigmoid(b)
    return ta * s + a * s * (tb - s * tb)


@op(save=("g", "x"), node_name="GluBackwardBackward0")
def _glu_backward(xp, g, x, dim=-1):
    """torch's glu_backward: the halves' gradients g s and g a s (1 - s), s = sigmoid(b)."""
    a, b = xp.split(x, 2, axis=dim)
    s = (1 / (1 + xp.exp(-b))).astype(x.dtype, copy=False)
    return xp.concatenate([g * s, g * a * s * (1 - s)], axis=dim)


def _glu_second_derivatives(x, dim):
    """a, s (1 - s) and torch's second_order_sh, s (1 - s)(1 - s) - s s (1 - s): computed
    before any factor a, so an infinite a meets a finite number (not inf - inf)."""
    a, b = _glu_halves(x, dim)
    s = sigmoid(b)
    slope = s * (1 - s)
    return a, s, slope, slope * (1 - s) - s * slope


def _glu_double_backward(gg, g, x, dim):
    """torch's glu_double_backward_grad_output and glu_double_backward (seed 1265138)."""
    a, s, slope, second = _glu_second_derivatives(x, dim)
    gg_a, gg_b = _glu_halves(gg, dim)
    return (gg_a * s + gg_b * (a * slope),
            cat([gg_b * g * slope, gg_b * a * g * second + gg_a * g * slope], dim))


def _glu_backward_jvp(tangents, g, x, dim):
    t_g, t_x = tangents
    a, s, slope, second = _glu_second_derivatives(x, dim)
    t_a, t_b = _glu_halves(t_x, dim) if t_x is not None else (0.0, 0.0)
    t_g = 0.0 if t_g is None else t_g
    return cat([g * slope * t_b + t_g * s,
                g * slope * t_a + g * a * second * t_b + t_g * a * slope], dim)


_glu_backward.defvjp_all(_glu_double_backward)
_glu_backward.defjvp_all(_glu_backward_jvp)
_glu.defvjp(lambda g, x, dim: _glu_backward(g, x, dim=dim))
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
@empty_like_layout  # (torch's _prelu_kernel: empty_like(x))
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
    """torch's formulas, which take x = 0 as positive (the first derivative does not), and
    skip the terms of an undefined output gradient, as torch's (gg_weight * x would be NaN
    at x = -inf: breadth seed 1186286)."""
    gg_x, gg_weight = (None if is_undefined(gg) else gg for gg in grads)
    if gg_x is None and gg_weight is None:  # no gradient came (gradcheck's undefined check)
        return None, None, None
    positive = x >= 0
    negative = sum_of_defined(gg_x if gg_x is None else gg_x * weight,
                              gg_weight if gg_weight is None else gg_weight * x)
    return (where(positive, 0.0 if gg_x is None else gg_x, negative),
            zeros_like(x) if gg_weight is None else where(positive, 0.0, g * gg_weight),
            zeros_like(g) if gg_x is None else where(positive, 0.0, g * gg_x))


def _prelu_backward_jvp(tangents, g, x, weight):
    t_g, t_x, t_weight = (0.0 if t is None else t for t in tangents)
    positive = x >= 0
    return (where(positive, t_g, t_g * weight + t_weight * g),
            where(positive, 0.0, t_x * g + x * t_g))


_prelu_kernel_backward.defvjp_all(_prelu_double_backward)
_prelu_kernel_backward.defjvp_all(_prelu_backward_jvp)
_prelu_kernel.defvjp_all(lambda g, x, weight: _prelu_kernel_backward(g, x, weight))


def _prelu_jvp(tangents, x, weight):
    """torch's where(x >= 0, t_x, weight t_x + t_weight x): x = 0 takes t_x (its backward
    takes weight g there), a missing tangent's term left out."""
    t_x, t_weight = tangents
    return where(x >= 0, 0.0 if t_x is None else t_x,
                 sum_of_defined(None if t_x is None else weight * t_x,
                                None if t_weight is None else t_weight * x))


_prelu_kernel.defjvp_all(_prelu_jvp)


@tensor_method()
@tensor_parameters("weight")
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
_RRELU_IN_PLACE = (lambda g, result, noise: gradient_edge(g, result, noise, node=_RRELU_NODE),
                   None)
_rrelu_in_place = in_place_variant(_rrelu_with_noise, "RreluWithNoiseBackward1",
                                   ("result", "noise"), _RRELU_IN_PLACE)
# torch's eval-mode backward from the result is leaky_relu's: a negative slope refuses it
_rrelu_in_place_negative = in_place_variant(
    _rrelu_with_noise, "RreluWithNoiseBackward1", ("result", "noise"), _RRELU_IN_PLACE,
    lambda: negative_slope_message("leakyReLu", LEAKY_RELU_EXTRA))


_DOUBLE_MAX = sys.float_info.max
_UNIFORM_RANGE = ("Expected to - from <= std::numeric_limits<T>::max() to be true, but got "
                  "false.  (Could this error message be improved?  If so, please report an "
                  "enhancement request to PyTorch.)")


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False):
    """Leaky relu with slope (lower + upper) / 2; when ``training``, each non-positive element
    gets its own slope drawn uniformly from [lower, upper) (gradkit's generator, not torch's)."""
    return rrelu_drawing(input, lower, upper, training, inplace, None)


def rrelu_drawing(input, lower, upper, training: bool, inplace: bool, generator):
    """``rrelu`` drawing its slopes from ``generator`` (torch.rrelu_ takes one)."""
    name = "rrelu_" if inplace else "rrelu"
    lower = number_argument(lower, name, "lower", 2, "double", optional=False)
    upper = number_argument(upper, name, "upper", 3, "double", optional=False)
    for bound, number in (("lower", lower), ("upper", upper)):
        if not inplace and not math.isfinite(number):  # (torch's rrelu_ has no such check)
            raise RuntimeError(f"rrelu: {bound} bound must be finite, got {cpp_number(number)}")
    if not lower <= upper:  # a NaN too (rrelu_ reaches this check with one)
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    lower, upper = scalar_for(lower, input), scalar_for(upper, input)
    data = input._data
    if data.dtype.kind not in "f":
        raise kernel_error("rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")(data)
    xp = get_array_module(data)
    if training:
        # torch's kernel builds a uniform distribution only for a non-positive element
        fits = upper - lower <= _DOUBLE_MAX
        if not fits and bool((data <= 0).any()):
            raise RuntimeError(_UNIFORM_RANGE)
        draws = rng_of(generator, name).uniform(lower, upper, data.shape) if fits else 1
        slopes = xp.asarray(draws, dtype=data.dtype)
        noise = xp.where(data <= 0, slopes, 1).astype(data.dtype)
    else:  # torch's leaky_relu: the slope also at NaN
        noise = xp.where(data > 0, 1, (lower + upper) / 2).astype(data.dtype)
    in_place = _rrelu_in_place_negative if not training and lower + upper < 0 else _rrelu_in_place
    return call_or_write(input, in_place if inplace else _rrelu_with_noise, inplace, noise)
