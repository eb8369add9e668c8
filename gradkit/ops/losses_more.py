"""Regression and probabilistic losses of torch.nn.functional: l1, smooth_l1, huber, kl_div,
binary_cross_entropy, poisson_nll and gaussian_nll.

smooth_l1, huber and binary_cross_entropy are fused ops with torch's node names; their slopes
are d clipped to [-beta, beta] (or delta), whose derivative is torch's double backward's mask
``|d| < beta``: 0 at the edges and at NaN. The rest are composed as torch composes them.
"""
from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from gradkit.number_arguments import number_argument
from gradkit.autograd.grad_mode import no_grad
from gradkit.ops.conversion import astype, clone
from gradkit.ops._op import op
from gradkit.ops.elementwise import exp, log
from gradkit.ops.elementwise_special import logit
from gradkit.ops.bce_backward import bce_input_grad
from gradkit.ops.binary_math import xlogy
from gradkit.ops.masked_fill import masked_fill
from gradkit.ops.losses import (
    check_reduction, legacy_reduction, reduce_array, reduce_loss, refuse_grad, spread_loss_grad,
    warn_target_size, weighted_loss_grads)
from gradkit.ops.piecewise import abs, ones_like, zeros_like
from gradkit.ops.promotion import result_type
from gradkit.ops.reduction import mean, sum
from gradkit.ops.shape import broadcast_tensors, expand, unsqueeze
from gradkit.ops.unary_helpers import check_bound, require_real_floating, scalar_type_name



def _expanded(input, target):
    """input and target broadcast to one shape, after torch's warning when they differ."""
    warn_target_size(input, target, stacklevel=4)
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    return broadcast_tensors(input, target)


def _declare_piecewise_quadratic(name: str, terms, slope, in_input_dtype=False):
    """A fused loss of d = input - target whose per-element gradient is ``slope(d, width)``;
    ``in_input_dtype``: torch's kernel writes in input's dtype, and its backward refuses a
    target of another dtype."""
    def forward(xp, x, y, reduction="mean", width=1.0):
        written = x.dtype
        if x.dtype != y.dtype:  # torch's promotion (int64 with float32 is float32)
            dtype = result_type(x, y)
            x, y = x.astype(dtype, copy=False), y.astype(dtype, copy=False)
        loss = terms(xp, xp.abs(x - y), width)
        return reduce_array(xp, loss.astype(written) if in_input_dtype else loss, reduction)
    forward.__name__ = name
    loss = op(save=("x", "y"), node_name=name.title().replace("_", "") + "Backward0")(forward)

    def slopes_of(g, x, y, reduction, width, of):
        """The gradient of operand ``of`` (0: input, 1: target): torch's backward kernel reads
        the operand differentiated as its input (so a dtype error names it so)."""
        if in_input_dtype:
            _check_output_dtype(*((x, getattr(y, "_data", y).dtype) if of == 0 else
                                  (y, getattr(x, "_data", x).dtype)))
        with_bool = _is_bool(x) or _is_bool(y)
        if with_bool:  # torch's first backward is a kernel that takes a bool operand
            dtype = result_type(getattr(x, "_data", x), getattr(y, "_data", y))
            x, y = (astype(v, dtype) if _is_bool(v) else v for v in (x, y))
        # torch's target gradient is its kernel with the operands swapped: slope(y - x), so
        # at x == y a zero of g's sign, not its negation
        slopes = spread_loss_grad(g, tuple(x.shape), reduction) * slope(y - x if of else x - y,
                                                                        width)
        return _subtracts_a_bool(slopes) if with_bool else slopes

    loss.defvjp(lambda g, x, y, reduction, width: slopes_of(g, x, y, reduction, width, 0),
                lambda g, x, y, reduction, width: slopes_of(g, x, y, reduction, width, 1))
    # torch's: its backward kernel of each tangent, input's at x - y plus target's at y - x, a
    # missing one zeros (so at x == y a target tangent gives +0, not slope * -t = -0)
    loss.defjvp_all(lambda tangents, x, y, reduction, width: reduce_loss(
        slope(x - y, width) * (0.0 if tangents[0] is None else tangents[0])
        + slope(y - x, width) * (0.0 if tangents[1] is None else tangents[1]), reduction))
    return loss


@op(save="x", node_name="HardtanhBackward0")
def _clipped(xp, x, width=1.0):
    """x clipped to [-width, width] (NaN stays NaN)."""
    return xp.clip(x, -width, width)


# torch's smooth_l1/huber double backward: grad * (|d| < width), 0 at NaN (hardtanh's is 1)
_clipped.defvjp(lambda g, x, width: g * (abs(x) < width))
_clipped.defjvp(lambda t, x, width: t * (abs(x) < width))


@op(save=("x",))
def _unit_slope(xp, x, width=1.0):
    """x / width clipped to [-1, 1] (NaN stays NaN), in double as torch's scalar kernel, which
    compares and divides by the double beta: a float32 x with beta 1e-300 (0 in float32) has
    slope sign(x), with beta 1e300 (inf) a signed 0, and +-1 at +-inf."""
    wide = x.astype(np.float64)
    return (xp.clip(wide, -width, width) / width).astype(x.dtype)


# the derivative of clip(x, -width, width) / width: torch's double backward (as _clipped's)
_unit_slope.defvjp(lambda g, x, width: g / width * (abs(x) < width))
_unit_slope.defjvp(lambda t, x, width: t / width * (abs(x) < width))


# torch's kernels: 0.5 d^2 / beta below beta, d - beta / 2 above; slope d / beta clipped to 1
_smooth_l1 = _declare_piecewise_quadratic(
    "smooth_l1_loss",
    lambda xp, d, beta: xp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta),
    lambda d, beta: _unit_slope(d, width=beta))
# 0.5 d^2 below delta, delta (d - delta / 2) above; slope d clipped to delta
_huber = _declare_piecewise_quadratic(
    "huber_loss",
    lambda xp, d, delta: xp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)),
    lambda d, delta: _clipped(d, width=delta), in_input_dtype=True)


def _is_bool(v) -> bool:
    return getattr(getattr(v, "_data", v), "dtype", None) == np.bool_


@op(node_name="SmoothL1LossBackwardBackward0")
def _subtracts_a_bool(xp, slopes):
    """slopes itself; differentiating it raises as torch's double backward of the loss, which
    subtracts the bool operand."""
    return slopes


def _refuse_bool_subtraction(g):
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you "
                       "are trying to invert a mask, use the `~` or `logical_not()` operator "
                       "instead.")


_subtracts_a_bool.defvjp(_refuse_bool_subtraction)
_subtracts_a_bool.defjvp(lambda t: t)


def _check_output_dtype(input, dtype) -> None:
    """torch's error where a kernel writing in input's dtype meets another one."""
    expected = getattr(input, "_data", input).dtype
    if dtype != expected:
        raise RuntimeError(f"Found dtype {scalar_type_name(np.empty(0, dtype))} but expected "
                           f"{scalar_type_name(np.empty(0, expected))}")


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
            weight=None):
    """Mean (or sum) of |input - target|; with ``weight``, the mean is over sum(weight)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _expanded(input, target)
    if weight is None:
        check_reduction(reduction)
        return reduce_loss(abs(input - target), reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = abs(input - target) * weight
    return _weighted_reduction(weighted, reduction, sum(weight))


def _weighted_reduction(weighted, reduction: str, total=None):
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return sum(weighted)
    if reduction == "mean":
        return mean(weighted) if total is None else sum(weighted) / total
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0):
    """Quadratic below ``beta``, linear above (l1_loss for beta 0)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _expanded(input, target)
    if beta == 0.0:  # torch's Python check, then its parser reads beta
        return l1_loss(input, target, reduction=reduction)
    beta = number_argument(beta, "smooth_l1_loss", "beta", 4, "float", optional=False)
    check_reduction(reduction)
    check_bound(beta, "smooth_l1_loss does not support negative values for beta.")
    require_real_floating("smooth_l1_cpu", input._data, target._data)
    return _smooth_l1(input, target, reduction=reduction, width=beta)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """Quadratic below ``delta``, delta-scaled linear above; ``weight`` scales each term."""
    delta = number_argument(delta, "huber_loss", "delta", 4, "float", optional=False)
    input, target = _expanded(input, target)
    check_bound(delta, "huber_loss does not support non-positive values for delta.", strict=True)
    require_real_floating("huber_cpu", input._data, target._data)
    if input._data.dtype.kind in "biu":  # torch's kernel writes the loss in input's dtype
        result = np.empty(0, result_type(input._data, target._data))
        raise RuntimeError(f"result type {scalar_type_name(result)} can't be cast to the desired "
                           f"output type {scalar_type_name(input._data)}")
    if weight is None:
        check_reduction(reduction)
        return _huber(input, target, reduction=reduction, width=delta)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return _weighted_reduction(_huber(input, target, reduction="none", width=delta) * weight,
                               reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False):
    """KL divergence of ``target`` from log-probabilities ``input`` (``batchmean``: sum over
    the batch size, the mathematical definition)."""
    legacy = size_average is not None or reduce is not None
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean" and not legacy:
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction != "batchmean":
        check_reduction(reduction)
    kinds = input._data.dtype.kind + target._data.dtype.kind
    if "c" in kinds:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if any(kind in "biu" for kind in kinds):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    # torch's C++ (GCC) computes the right operand first, so its node runs last in backward
    # and the gradients reaching target add in that order
    if log_target:
        difference = target - input
        loss = exp(target) * difference
    else:
        product = target * input
        loss = xlogy(target, target) - product
    if reduction == "batchmean":
        total = sum(loss)
        return total / input.shape[0] if input.ndim else total
    return reduce_loss(loss, reduction)


@op(save=("x", "target", "weight"), node_name="BinaryCrossEntropyBackward0")
def _binary_cross_entropy(xp, x, target, weight, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log floored at -100 as torch's kernel."""
    # torch checks each element's input, then its target, in order; NaN fails both checks
    bad_x, bad_t = (~((v >= 0) & (v <= 1)).ravel() for v in xp.broadcast_arrays(x, target))
    if (bad_x | bad_t).any():
        first = int((bad_x | bad_t).argmax())
        raise RuntimeError(f"all elements of {'input' if bad_x[first] else 'target'} should be "
                           "between 0 and 1")
    with_floor = xp.maximum  # log 0 = -inf becomes -100
    loss = (target - 1) * with_floor(xp.log1p(-x), -100) - target * with_floor(xp.log(x), -100)
    if weight is not None:
        loss = loss * weight
    return reduce_array(xp, loss.astype(x.dtype, copy=False), reduction)


def _bce_vjp(g, x, target, weight, reduction):
    """torch's: its backward kernel for x (an op: bce_backward.py) and -logit(x) g for the
    target, each times the weight, then over the count for a mean."""
    g = spread_loss_grad(g, tuple(x.shape), "none" if reduction == "none" else "sum")
    d_x, d_target = weighted_loss_grads([bce_input_grad(g, x, target), -logit(x) * g], weight,
                                        reduction, math.prod(x.shape))
    return d_x, d_target, None


def _bce_jvp(tangents, x, target, weight, reduction):
    """torch's: the backward's two formulas of the tangents (weighted each), reduced; a
    missing input tangent is zeros there (its +-0 signs the sum), a missing target's is
    left out (torch's -logit(x) * 0 is NaN at x = 0 or 1, where the tangent is finite)."""
    t_x, t_target = tangents[0], tangents[1]
    parts = [bce_input_grad(zeros_like(x) if t_x is None else t_x, x, target)]
    if t_target is not None:
        parts.append(-logit(x) * t_target)
    parts = weighted_loss_grads(parts, weight, "none", 0)
    return reduce_loss(parts[0] if len(parts) == 1 else parts[0] + parts[1], reduction)


_binary_cross_entropy.defvjp_all(_bce_vjp)
_binary_cross_entropy.edge_inputs = (0, 1)  # self and target: torch's node has none for weight
_binary_cross_entropy.defjvp_all(_bce_jvp)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """Binary cross entropy of probabilities ``input`` against ``target`` (same shape)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    refuse_grad("binary_cross_entropy", weight=weight)
    require_real_floating("binary_cross_entropy", input._data)
    _check_output_dtype(input, target._data.dtype)
    if weight is not None and tuple(weight.shape) != tuple(target.shape):
        weight = expand(weight, tuple(target.shape))
    return _binary_cross_entropy(input, target, weight, reduction=reduction)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None, reduction: str = "mean"):
    """Poisson negative log likelihood: exp(input) - target * input for log-rates, else
    input - target * log(input + eps); ``full`` adds Stirling's term where target > 1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    eps = number_argument(eps, "poisson_nll_loss", "eps", 5, "float",  # torch's parser
                          optional=False)
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        stirling = target * log(target) - target + 0.5 * log(2 * math.pi * target)
        loss = loss + masked_fill(stirling, target <= 1, 0)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean"):
    """Gaussian negative log likelihood, 0.5 (log var + (input - target)^2 / var), with var
    floored at ``eps`` (the floor is not differentiated, as torch's in-place clamp)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = unsqueeze(var, -1)
        elif not (input.ndim == var.ndim and builtins.sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = clone(var)
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)

