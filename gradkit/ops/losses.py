"""Loss functions of gradkit.nn.functional.

nll_loss, mse_loss and binary_cross_entropy_with_logits are fused ops (nodes
``NllLossBackward0``, ``MseLossBackward0``, ``BinaryCrossEntropyWithLogitsBackward0``, as torch
names them); cross_entropy is log_softmax + nll_loss as in torch; the rest is
composed from differentiable ops. Every vjp is written with gradkit ops, so all losses
are differentiable to any order.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from gradkit.backend import get_array_module
from gradkit.number_arguments import number_argument
from gradkit.ops._op import op
from gradkit.ops.activations import logsigmoid, sigmoid
from gradkit.ops.arithmetic import _check_not_bool
from gradkit.ops.conversion import astype
from gradkit.ops.grad_edges import gradient_edge
from gradkit.ops.piecewise import where
from gradkit.ops.indexing import scatter
from gradkit.ops.mse_backward import mse_backward, mse_tangent
from gradkit.ops.nll_checks import check_nll_arguments, out_of_bounds_message, refuse_grad
from gradkit.ops.promotion import category, promote_types
from gradkit.ops.reduction import expand_back, log_softmax, mean, quiet_mean, sum
from gradkit.ops.shape import reshape, unsqueeze
from gradkit.ops.scalar_overloads import div_scalar, mul_scalar
from gradkit.ops.unary_helpers import cpp_number, require_real_floating, scalar_type_name

_REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_reduction(size_average, reduce, reduction: str, stacklevel: int = 3) -> str:
    """The reduction the deprecated ``size_average``/``reduce`` pair means (``reduction``
    when both are None), with torch's warning."""
    if size_average is None and reduce is None:
        return reduction
    reduction = "none" if reduce is False else "mean" if size_average is not False else "sum"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=stacklevel)
    return reduction


def reduce_array(xp, loss, reduction: str):
    """A fused loss's per-element array reduced in its forward (an array, even 0-d)."""
    if reduction == "mean":
        return xp.asarray(quiet_mean(xp, loss))
    return xp.asarray(loss.sum()) if reduction == "sum" else loss


def reduce_loss(loss, reduction: str):
    if reduction == "mean":
        return mean(loss)
    return sum(loss) if reduction == "sum" else loss


def _class_weight(weight, classes: int, class_dim: int, ndim: int, flat: bool = True,
                  prefix: str = ""):
    """``weight`` shaped to broadcast along the class dim of an ndim-D input; torch wants it
    1-D unless ``flat`` is false (its spatial NLL kernel takes any shape of that many)."""
    if weight.numel() != classes and not flat:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if weight.numel() != classes or (flat and weight.ndim != 1):
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    return reshape(weight, (classes,) + (1,) * (ndim - class_dim - 1))


# x is saved as torch's NllLossBackward0 saves self: its gradient keeps a zero edge to x
@op(save=("x", "target", "weight", "x.shape"), node_name="NllLossBackward0")
def _nll(xp, x, target, weight, class_dim=1, reduction="mean", ignore_index=-100):
    """-x[target] per sample (weighted; ignored targets count 0), then reduced."""
    weights, safe = _target_weights(xp, target, weight, ignore_index, x.dtype)
    picked = xp.take_along_axis(x, xp.expand_dims(safe, class_dim), class_dim)
    picked = xp.squeeze(picked, class_dim) * weights
    # torch's kernels: 0 - x[t] w unbatched (+0 at a 0 log-prob); 0 at an ignored target, x inf too
    loss = xp.where(target != ignore_index, 0.0 - picked if x.ndim == 1 else -picked, 0.0)
    if reduction == "mean":
        return loss.sum() / weights.sum()
    return loss.sum() if reduction == "sum" else loss


def _target_weights(xp, target, weight, ignore_index, dtype):
    """Per-sample weights (0 where ignored) and targets safe to index with."""
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    weights = valid.astype(dtype)
    if weight is not None:
        weights = weights * weight[safe]
    return weights, safe


def _nll_vjp(g, x, target, weight, x_shape, class_dim, reduction, ignore_index):
    target, weight = getattr(target, "_data", target), getattr(weight, "_data", weight)
    xp = get_array_module(target)
    weights, safe = _target_weights(xp, target, weight, ignore_index,
                                    getattr(g, "_data", g).dtype)
    # torch's kernel: w * -(g / total weight) for a mean, -w * g unreduced; it writes only the
    # targets it reads: an ignored one stays 0, a NaN g too
    slopes = -(g / weights.sum()) * weights if reduction == "mean" else g * -weights
    rows = unsqueeze(where(target != ignore_index, slopes, 0.0), class_dim)
    # written into zeros, not added (torch's kernel: -0 at a 0 upstream stays -0)
    grad = scatter(xp.zeros(tuple(x_shape), dtype=getattr(rows, "_data", rows).dtype), class_dim,
                   xp.expand_dims(safe, class_dim).astype(xp.int64), rows)  # (a byte target)
    # torch's NllLossBackwardBackward0: a zero derivative in x, whose edge a second backward
    # reaches (zeros times an upstream NaN, say prelu's, is NaN there too)
    return gradient_edge(grad, x, xp.ones(tuple(x_shape), bool), node="NllLossBackwardBackward0")


_nll.defvjp(_nll_vjp, None, None)
# torch's nll_loss2d for a 4-D input (nll_loss_nd views 3-D and 5-D+ ones as 4-D)
_nll.node_name_rule = lambda params, arrays: \
    "NllLoss2DBackward0" if arrays[0].ndim == 4 else "NllLossBackward0"
_nll.defjvp(lambda t, x, target, weight, x_shape, class_dim, reduction, ignore_index:
            _nll(t, target, weight, class_dim=class_dim, reduction=reduction,
                 ignore_index=ignore_index), None, None)


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """Negative log-likelihood of the ``target`` classes under log-probabilities ``input``.

    >>> nll_loss(gradkit.log_softmax(gradkit.randn(3, 5), 1), gradkit.tensor([1, 0, 4])).ndim
    0
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    check_nll_arguments(input, target, weight, reduction)
    class_dim = 1 if input.ndim >= 2 else 0
    classes = input.shape[class_dim]
    labels = target._data
    wrong = (labels != ignore_index) & ((labels < 0) | (labels >= classes))
    if wrong.any():
        raise IndexError(out_of_bounds_message(int(labels[wrong].reshape(-1)[0]), labels.dtype,
                                               input.ndim == 2 and reduction == "none"))
    if weight is not None:
        weight = _class_weight(weight, classes, 0, 1, flat=input.ndim <= 2)
    if input.ndim == 3 or input.ndim > 4:  # torch's nll_loss_nd: viewed as 4-D for nll_loss2d
        spatial = (1, -1) if input.numel() else (0, 0)  # (an empty batch: no -1 to infer)
        loss = _nll(input.contiguous().view(input.shape[:2] + spatial),
                    target.contiguous().view(input.shape[:1] + spatial), weight,
                    class_dim=1, reduction=reduction, ignore_index=ignore_index)
        return loss.view(input.shape[:1] + input.shape[2:]) if reduction == "none" else loss
    return _nll(input, target, weight, class_dim=class_dim, reduction=reduction,
                ignore_index=ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """Cross entropy of logits ``input`` against class indices or class probabilities.

    >>> cross_entropy(gradkit.randn(3, 5), gradkit.tensor([1, 0, 4])).ndim
    0
    """
    label_smoothing = number_argument(label_smoothing, "cross_entropy_loss", "label_smoothing",
                                      6, "float", optional=False)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    # torch's branches: a target of the input's shape holds probabilities, others classes
    soft = tuple(target.shape) == tuple(input.shape)
    if soft and target._data.dtype.kind != "f":
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {scalar_type_name(target._data)}")
    if soft and ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if label_smoothing > 1.0:  # torch's only check: a negative (or NaN) one smooths nothing
        raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{cpp_number(label_smoothing)}")
    class_dim = 0 if input.ndim == 1 else 1  # (1 for a 0-d input too: refused, as torch)
    if soft and input.ndim == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    log_p = log_softmax(input, class_dim)
    classes = input.shape[class_dim]
    if soft:
        return _soft_cross_entropy(log_p, target, weight, reduction, label_smoothing, class_dim)
    loss = nll_loss(log_p, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing > 0.0:
        return loss
    ignored = target._data == ignore_index
    if weight is not None:  # (a spatial one of any shape passed nll_loss's check)
        # torch views it as (1, weight.size(0), 1, ...): (C, 1) passes, (1, C) is refused
        log_p = log_p * reshape(weight, tuple(weight.shape[0] if d == class_dim else 1
                                              for d in range(input.ndim)))
    smooth = where(ignored, 0.0, -sum(log_p, class_dim))
    if reduction == "mean":
        if weight is not None and weight.ndim != 1:  # torch's gather of the weights
            raise RuntimeError("Index tensor must have the same number of dimensions as input "
                               "tensor")
        labels = where(ignored, 0, target._data)
        total = sum(where(ignored, 0.0, weight[labels])) if weight is not None else \
            float((~ignored).sum())
        smooth = sum(smooth) / total
    elif reduction == "sum":
        smooth = sum(smooth)
    # torch's ret * (1 - ls) + smooth * (ls / C): two mul.Scalar (MulBackward1)
    return mul_scalar(loss, 1 - label_smoothing) + mul_scalar(smooth, label_smoothing / classes)


def _soft_cross_entropy(log_p, target, weight, reduction, label_smoothing, class_dim):
    classes = log_p.shape[class_dim]
    if label_smoothing > 0.0:  # (no class: ATen's double division gives inf)
        target = target * (1 - label_smoothing) + \
            (label_smoothing / classes if classes else math.inf)
    terms = log_p * target
    if weight is not None:
        terms = terms * _class_weight(weight, classes, class_dim, log_p.ndim,
                                       prefix="cross_entropy: ")
    if reduction not in ("mean", "sum"):
        return reduce_loss(-sum(terms, class_dim), reduction)
    # ATen's: the negated total, over the count of class vectors for the mean (NaN if none)
    if reduction == "mean" and log_p.numel() == 0:
        return -(sum(terms) * math.nan)
    total = -sum(terms)
    return total if reduction == "sum" else div_scalar(total, log_p.numel() // classes)


@op(save=("x", "y"), broadcast=True, node_name="MseLossBackward0", batchable=True)
def _mse(xp, x, y, reduction="mean"):
    dtype = promote_types(x.dtype, y.dtype)  # as torch: float32 and int64 give float32, and
    diff = x.astype(dtype) - y.astype(dtype)  # a 0-d float64 target makes it float64
    loss = diff * diff
    if reduction == "mean":
        return quiet_mean(xp, loss)
    return loss.sum() if reduction == "sum" else loss


def _difference(x, y):
    """x - y in the loss's dtype (a bool operand has no ``-``, as in torch's own backward)."""
    dtype = promote_types(getattr(x, "_data", x).dtype, getattr(y, "_data", y).dtype)
    return astype(x, dtype=dtype) - astype(y, dtype=dtype)


def _mse_grad(g, x, y, reduction):
    """torch's mse_loss_backward op (an inf 2 (x - y) times a 0 g is NaN)."""
    if reduction != "none":  # a scalar loss: its gradient (or a batch of them) meets every element
        g = expand_back(g, tuple(_difference(x, y).shape), None, False)
    return mse_backward(g, x, y, reduction=reduction)


_mse.defvjp(lambda g, x, y, reduction: _mse_grad(g, x, y, reduction),
            lambda g, x, y, reduction: _mse_grad(g, y, x, reduction))  # torch's: (y - x) g
_mse.defjvp_all(lambda ts, x, y, reduction: reduce_loss(mse_tangent(ts, x, y), reduction))


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
             weight=None):
    """Mean (or sum) of squared differences.

    >>> mse_loss(gradkit.zeros(3), gradkit.ones(3)).item()
    1.0
    """
    warn_target_size(input, target, stacklevel=3)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted_mse(input, target, weight, reduction)
    check_reduction(reduction)
    require_real_floating("mse_cpu", input._data, target._data)
    return _mse(input, target, reduction=reduction)


def _weighted_mse(input, target, weight, reduction: str):
    """torch's weighted mean squared error, composed (its mean divides by the weights' sum)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = (input - target).pow(2) * weight
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                         "'sum'.")
    if reduction == "none":
        return weighted
    return sum(weighted) if reduction == "sum" else sum(weighted) / sum(weight)


def warn_target_size(input, target, stacklevel: int) -> None:
    """torch's warning for a target that broadcasts against the input of a pointwise loss."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.",
                      stacklevel=stacklevel)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """Binary cross entropy of sigmoid(input) against ``target``, computed stably from logits.

    >>> binary_cross_entropy_with_logits(gradkit.zeros(2), gradkit.ones(2)).item()  # log 2
    0.6931471824645996
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    refuse_grad("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    if input._data.dtype.kind == "f":  # else log_sigmoid refuses it first, as in torch
        _check_bce_dtypes(*(None if w is None else w._data
                            for w in (input, target, weight, pos_weight)))
    return _bce_logits(input, target, weight, pos_weight, reduction=reduction)


def _write_into(buffer: np.dtype, other: np.dtype) -> None:
    """torch's error for an in-place op whose result type the buffer cannot hold."""
    result = promote_types(buffer, other)
    if category(result) > category(buffer):
        raise RuntimeError(f"result type {scalar_type_name(np.empty(0, result))} can't be cast "
                           f"to the desired output type {scalar_type_name(np.empty(0, buffer))}")


def _check_bce_dtypes(input, target, weight, pos_weight) -> None:
    """torch's kernel, log_sigmoid(x) * ((p - 1) * t + 1) in x's dtype and
    (1 - t).mul_(x).sub_(...).mul_(weight) in t's: the dtypes those in-place writes refuse
    (the loss then has the target's dtype, a complex one included)."""
    if pos_weight is not None:
        _check_not_bool(pos_weight, 1)
        _write_into(input.dtype, promote_types(pos_weight.dtype, target.dtype))
    _check_not_bool(target, target)  # torch's 1 - t wraps the 1 as a bool tensor
    _write_into(target.dtype, input.dtype)
    if weight is not None:
        _write_into(target.dtype, weight.dtype)


def _bce_terms(x, target, weight, pos_weight):
    """The per-element loss (1 - t) x - (1 + (p - 1) t) log sigmoid(x), weighted."""
    log_weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * x - log_weight * logsigmoid(x)
    return loss if weight is None else loss * weight


@op(save=("x", "target", "weight", "pos_weight"), node_name="BinaryCrossEntropyWithLogitsBackward0")
def _bce_logits(xp, x, target, weight, pos_weight, reduction="mean"):
    loss = _bce_terms(x, target, weight, pos_weight)
    if target.dtype.kind in "fc":  # torch works in place on terms of the target: its dtype
        loss = loss.astype(target.dtype, copy=False)
    if reduction == "mean":
        return xp.asarray(quiet_mean(xp, loss, dtype=loss.dtype))
    return xp.asarray(loss.sum(dtype=loss.dtype)) if reduction == "sum" else loss


def _bce_slopes(x, target, pos_weight):
    """d loss / d x and d loss / d target per element (before the weight and the reduction),
    term by term as torch's backward: sigmoid(x) - target is its rounding difference, which
    an infinite gradient makes inf, not inf * 0 = NaN (dist seed 31072)."""
    if pos_weight is None:
        return sigmoid(x) - target, -x
    scaled = pos_weight * target
    return (scaled + 1 - target) * sigmoid(x) - scaled, \
        logsigmoid(-x) - logsigmoid(x) * pos_weight


def spread_loss_grad(g, shape, reduction):
    """The loss gradient met by every element: g (divided by the count for a mean)."""
    if reduction == "none":
        return g
    n = 1
    for size in shape:
        n *= size
    g = expand_back(g, shape, None, False)
    return g / max(n, 1) if reduction == "mean" else g


def weighted_loss_grads(parts: list, weight, reduction: str, count: int) -> list:
    """torch's order after a loss's per-element gradients (each already times the upstream
    gradient): times the weight, then over the element count for a mean (a 0 upstream
    times an overflowing slope * weight is 0 there, not NaN)."""
    if weight is not None:
        parts = [part * weight for part in parts]
    return [part / max(count, 1) for part in parts] if reduction == "mean" else parts


def _bce_vjp(g, x, target, weight, pos_weight, reduction):
    g = spread_loss_grad(g, tuple(x.shape), "none" if reduction == "none" else "sum")
    d_x, d_target = weighted_loss_grads([d * g for d in _bce_slopes(x, target, pos_weight)],
                                        weight, reduction, math.prod(x.shape))
    return d_x, d_target, None, None


def _bce_jvp(tangents, x, target, weight, pos_weight, reduction):
    # a missing tangent adds nothing (torch's zero tensor: a target tangent's -0 stays -0)
    parts = weighted_loss_grads([d * t for t, d in zip(tangents[:2], _bce_slopes(
        x, target, pos_weight)) if t is not None], weight, "none", 0)
    return reduce_loss(parts[0] if len(parts) == 1 else parts[0] + parts[1], reduction)


_bce_logits.defvjp_all(_bce_vjp)
_bce_logits.edge_inputs = (0, 1)  # self and target: torch's node has no edge for the weights
_bce_logits.defjvp_all(_bce_jvp)
_bce_logits.no_complex_grad = "binary_cross_entropy_with_logits"  # a complex target computes
