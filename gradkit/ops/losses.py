"""Loss functions of gradkit.nn.functional, composed from differentiable ops.

Composed (not fused) so that every loss is differentiable to any order for free;
each node in the graph is then the op that computed it (``NegBackward0``, ...).
"""
from __future__ import annotations

import warnings

from gradkit.ops.elementwise import logsigmoid, where
from gradkit.ops.indexing import gather
from gradkit.ops.reduction import log_softmax, mean, sum
from gradkit.ops.shape import reshape, squeeze, unsqueeze

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return mean(loss)
    return sum(loss) if reduction == "sum" else loss


def _class_weight(weight, classes: int, class_dim: int, ndim: int):
    """``weight`` shaped to broadcast along the class dim of an ndim-D input."""
    if weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    return reshape(weight, (classes,) + (1,) * (ndim - class_dim - 1))


def _check_targets(input, target):
    if target._data.dtype.kind not in "iu":
        name = target.dtype.name.capitalize()
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {name}")
    if input.ndim >= 2 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 0}).")
    if input.ndim > 2 and tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        if target.ndim == 1:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.ndim}")
        raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, "
                           f"got {list(target.shape)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """Negative log-likelihood of the ``target`` classes under log-probabilities ``input``.

    >>> nll_loss(gradkit.log_softmax(gradkit.randn(3, 5), 1), gradkit.tensor([1, 0, 4])).ndim
    0
    """
    _check_reduction(reduction)
    _check_targets(input, target)
    class_dim = 1 if input.ndim >= 2 else 0
    classes = input.shape[class_dim]
    labels = target._data
    valid = labels != ignore_index
    wrong = valid & ((labels < 0) | (labels >= classes))
    if wrong.any():
        raise IndexError(f"Target {int(labels[wrong].reshape(-1)[0])} is out of bounds.")
    safe = where(valid, labels, 0)
    picked = squeeze(gather(input, class_dim, unsqueeze(safe, class_dim)), class_dim)
    weights = valid.astype(picked._data.dtype)
    if weight is not None:
        _class_weight(weight, classes, 0, 1)
        weights = weight[safe] * weights
    loss = -picked * weights
    if reduction == "mean":
        return sum(loss) / sum(weights)
    return sum(loss) if reduction == "sum" else loss


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """Cross entropy of logits ``input`` against class indices or class probabilities.

    >>> cross_entropy(gradkit.randn(3, 5), gradkit.tensor([1, 0, 4])).ndim
    0
    """
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 1 if input.ndim >= 2 else 0
    classes = input.shape[class_dim]
    log_p = log_softmax(input, class_dim)
    if target._data.dtype.kind in "fc":
        return _soft_cross_entropy(log_p, target, weight, ignore_index, reduction,
                                   label_smoothing, class_dim)
    loss = nll_loss(log_p, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return loss
    ignored = target._data == ignore_index
    if weight is not None:
        log_p = log_p * _class_weight(weight, classes, class_dim, input.ndim)
    smooth = where(ignored, 0.0, -sum(log_p, class_dim))
    if reduction == "mean":
        labels = where(ignored, 0, target._data)
        total = sum(where(ignored, 0.0, weight[labels])) if weight is not None else \
            float((~ignored).sum())
        smooth = sum(smooth) / total
    elif reduction == "sum":
        smooth = sum(smooth)
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / classes)


def _soft_cross_entropy(log_p, target, weight, ignore_index, reduction, label_smoothing,
                        class_dim):
    if tuple(target.shape) != tuple(log_p.shape):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if ignore_index != -100:
        raise RuntimeError("ignore_index is not supported for floating point target")
    classes = log_p.shape[class_dim]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = log_p * target
    if weight is not None:
        terms = terms * _class_weight(weight, classes, class_dim, log_p.ndim)
    return _reduce(-sum(terms, class_dim), reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Mean (or sum) of squared differences.

    >>> mse_loss(gradkit.zeros(3), gradkit.ones(3)).item()
    1.0
    """
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=2)
    diff = input - target
    return _reduce(diff * diff, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """Binary cross entropy of sigmoid(input) against ``target``, computed stably from logits.

    >>> binary_cross_entropy_with_logits(gradkit.zeros(2), gradkit.ones(2)).item()  # log 2
    0.6931471824645996
    """
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    log_weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * input - log_weight * logsigmoid(input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)
