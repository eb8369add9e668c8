"""Margin and similarity losses of torch.nn.functional: margin_ranking, hinge_embedding,
soft_margin, cosine_embedding, triplet_margin, multi_margin, multilabel_margin,
multilabel_soft_margin, with cosine_similarity and pairwise_distance. soft_margin,
multi_margin and multilabel_margin are fused ops with torch's node names (torch cannot
differentiate the last two twice: neither can gradkit, with torch's error); the rest are
composed as torch composes them (ClampMinBackward0, NormBackward1, ...)."""
from __future__ import annotations

import numpy as np

from gradkit.number_arguments import number_argument, number_parameters, scalar_for
from gradkit.autograd.grad_mode import no_grad
from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import Op, op
from gradkit.ops.activations import logsigmoid
from gradkit.ops.arithmetic import neg
from gradkit.ops.unary_breadth import clamp_min
from gradkit.ops.conversion import astype, clone
from gradkit.ops.elementwise import exp, sqrt
from gradkit.ops.grad_edges import no_derivative, no_forward_ad
from gradkit.ops.linalg_norms import vector_norm
from gradkit.ops.losses import (
    check_reduction, legacy_reduction, reduce_array, reduce_loss, refuse_grad, spread_loss_grad)
from gradkit.ops.piecewise import minimum, where, zeros_like
from gradkit.ops.promotion import promote_types, result_type
from gradkit.ops.reduction import mean, sum
from gradkit.ops.shape import broadcast_tensors, reshape
from gradkit.ops.unary_helpers import check_bound, require_real_floating, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters

_EPSILON = float(np.float32(1e-12))  # cosine_embedding_loss's: torch's is a float (1681399)

# torch's at::norm over one dim: linalg.vector_norm's forward and derivatives, its own node name
norm_over_a_dim = Op(vector_norm.forward, name="norm", save=("x", "result"),
                     node_name="NormBackward1")
norm_over_a_dim.defvjp(*vector_norm.vjps)
norm_over_a_dim.defjvp(*vector_norm.jvps)


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    """max(0, -target * (input1 - input2) + margin), reduced."""
    margin = number_argument(margin, "margin_ranking_loss", "margin", 4, "float", optional=False)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    # margin is a double in torch's kernel: integer inputs give a float loss
    return reduce_loss(clamp_min(-target * (input1 - input2) + float(margin), 0), reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """input where target is 1, max(0, margin - input) where it is -1, reduced."""
    # a float (True is 1.0), converted to the kernel's type
    margin = scalar_for(float(number_argument(margin, "hinge_embedding_loss", "margin", 3,
                                              "float", optional=False)), input)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    zeros = zeros_like(input)
    if input._data.dtype.kind in "iu":  # torch's kernel takes the margin in input's dtype
        margin = int(margin)
    beyond_margin = where(target != 1, clamp_min(margin - input, 0), zeros)
    return reduce_loss(beyond_margin + where(target != -1, input, zeros), reduction)


@op(save=("x", "target"), broadcast=True, node_name="SoftMarginLossBackward0")
def _soft_margin(xp, x, target, reduction="mean"):
    # torch's kernel writes in x's dtype (a float64 target does not widen it)
    return reduce_array(xp, xp.log1p(xp.exp(-x * target)).astype(x.dtype, copy=False), reduction)


def _soft_margin_slope(x, target):
    """torch's -t exp(-t x) / (1 + exp(-t x)), NaN where exp overflows (neg: a bool t's error)."""
    minus_t = neg(target)
    return minus_t * (z := exp(minus_t * x)) / (1 + z)


def _soft_margin_vjp(g, x, target, reduction):
    shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(target.shape)))
    return spread_loss_grad(g, shape, reduction) * _soft_margin_slope(x, target), None


_soft_margin.defvjp_all(_soft_margin_vjp)
_soft_margin.edge_inputs = (0,)  # torch's node has no edge for the target
_soft_margin.no_complex_grad = "soft_margin_loss"  # torch's derivative formula is real only
_soft_margin.defjvp(lambda t, x, target, reduction: reduce_loss(
    t * _soft_margin_slope(x, target), reduction), None)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-target * input)), reduced (target is not differentiable, as in torch)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    refuse_grad("soft_margin_loss", target=target)
    kind = input._data.dtype.kind
    if kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except ValueError:
        raise RuntimeError(_broadcast_message((input, target))) from None
    if shape != tuple(input.shape):  # torch writes the loss into a buffer of input's shape
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    # that buffer, -input, then refuses what it cannot hold: mul_(target)'s result type, or
    # exp_'s float
    promoted = np.empty(0, result_type(input._data, target._data))
    if kind in "iu" or promoted.dtype.kind == "c" and kind != "c":
        shown = promoted if promoted.dtype.kind in "fc" else np.empty(0, np.float32)
        raise RuntimeError(f"result type {scalar_type_name(shown)} can't be cast to the "
                           f"desired output type {scalar_type_name(input._data)}")
    return _soft_margin(input, target, reduction=reduction)


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    """1 - cos where target is 1, max(0, cos - margin) where it is -1 (cos along the last
    dim, squared norms guarded by 1e-12), reduced."""
    margin = float(number_argument(margin, "cosine_embedding_loss", "margin", 4, "float",
                                   optional=False))
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    dim = target.ndim
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != dim + 1 or input2.ndim != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    products = sum(input1 * input2, dim)
    squares1 = sum(input1 * input1, dim) + _EPSILON
    squares2 = sum(input2 * input2, dim) + _EPSILON
    cos = products / sqrt(squares1 * squares2)
    zeros = zeros_like(cos)
    loss = where(target == 1, 1 - cos, zeros) + where(target == -1, clamp_min(cos - margin, 0),
                                                      zeros)
    return reduce_loss(loss, reduction)


@tensor_parameters("x2")
@number_parameters("pairwise_distance", p="float", eps="float")
def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The p-norm of x1 - x2 + eps along the last dim (torch's NormBackward1)."""
    return norm_over_a_dim(x1 - x2 + eps, p, max(x1.ndim, x2.ndim) - 1, keepdim)


@tensor_parameters("x2")
@number_parameters("cosine_similarity", eps="float")
def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))) along ``dim`` (broadcasting)."""
    check_bound(eps, "eps must be non-negative, got: {}")
    dtype = promote_types(x1._data.dtype, x2._data.dtype)
    if dtype.kind != "f":
        name = scalar_type_name(np.empty(0, dtype))
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{name}")
    x1, x2 = (x if x._data.dtype.kind == "f" else astype(x, dtype=dtype) for x in (x1, x2))
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = broadcast_tensors(x1, x2)
    norm1, norm2 = clone(vector_norm(x1, 2, dim, True)), clone(vector_norm(x2, 2, dim, True))
    with no_grad():  # the floors are not differentiated, as torch's in-place clamps
        norm1.clamp_(min=eps)
        norm2.clamp_(min=eps)
    return sum((x1 / norm1) * (x2 / norm2), dim)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """max(0, margin + d(a, p) - d(a, n)), pairwise distances (``swap``: d(a, n) or d(p, n))."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    p, eps = (number_argument(v, "triplet_margin_loss", name, position, "float", optional=False)
              for position, (name, v) in ((5, ("p", p)), (6, ("eps", eps))))
    if hasattr(margin, "_data") or type(margin) is int and margin >= 2 ** 63:  # as torch's
        margin = number_argument(margin, "triplet_margin_loss", "margin", 4, "float")  # parser
    return triplet_margin_with_distance_loss(
        anchor, positive, negative, distance_function=lambda x, y: pairwise_distance(x, y, p, eps),
        margin=margin, swap=swap, reduction=reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean"):
    """triplet_margin_loss with any ``distance_function(x, y)`` (default pairwise_distance)."""
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = minimum(to_negative, distance(positive, negative))
    return reduce_loss(clamp_min(margin + to_positive - to_negative, 0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """The mean over classes of each class's binary logistic loss, reduced over samples."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = sum(loss, class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    raise ValueError(reduction + " is not valid")


# -- multi-class margins: fused, with torch's undifferentiable backward -------------------------

def _as_matrix(x):
    """Samples as rows: a vector (or number) is one sample."""
    return x.reshape(1, -1) if x.ndim < 2 else x


def _multi_margin_terms(xp, x, target, weight, margin, values):
    """``values`` of the hinges margin - x[target] + x[class] that count (positive, not the
    target's) times weight[target], +0 elsewhere (torch's kernels weigh only those); labels."""
    rows = _as_matrix(x)
    labels = target.reshape(-1).astype(xp.int64, copy=False)  # (an empty one of any dtype)
    margins = margin - xp.take_along_axis(rows, labels[:, None], 1) + rows
    counted = values(margins)
    if weight is not None:
        counted = counted * weight[labels][:, None]
    active = (margins > 0) & (xp.arange(rows.shape[1]) != labels[:, None])
    return xp.where(active, counted, 0), labels


@op(save=("x", "target", "weight"), node_name="MultiMarginLossBackward0")
def _multi_margin(xp, x, target, weight, p=1, margin=1.0, reduction="mean"):
    hinge, _ = _multi_margin_terms(xp, x, target, weight, margin,
                                   lambda m: m if p == 1 else m * m)
    # torch's kernel: the weighted hinges that count added from +0, then / C
    loss = (hinge.sum(1) / hinge.shape[1]).astype(x.dtype, copy=False)
    return _in_input_dtype(xp, reduce_array(xp, loss.reshape(target.shape), reduction), x)


def _in_input_dtype(xp, out, x):
    """Only an empty batch is integral here (torch's kernel, whose dtype check and reduction
    run for a non-empty batch only, leaves its sum and mean uninitialized): the loss keeps
    the input's dtype, 0 for an integral mean."""
    return out if out.dtype == x.dtype else xp.zeros(out.shape, x.dtype)


@op(save=("x", "target", "weight"), node_name="NotImplemented")
def _multi_margin_backward(xp, g, x, target, weight, p=1, margin=1.0, reduction="mean"):
    """torch's kernel: a class of positive hinge z gets h = u (p = 2: 2 u z), u = 1 / C (and
    / N for the mean), times weight[target]; the target class minus their sum; then all
    times the incoming gradient (an infinite one makes the zeros NaN, as torch's)."""
    samples, classes = _as_matrix(x).shape
    unit = x.dtype.type(1 / (samples * classes) if reduction == "mean" and samples
                        else 1 / classes)
    slopes, labels = _multi_margin_terms(xp, x, target, weight, margin,
                                         lambda m: unit if p == 1 else 2 * unit * m)
    # where, not a product with the mask: an infinite sum times 0 would be NaN (a running
    # sum: torch's loop subtracts one class at a time from +0, so +0 if none)
    slopes = xp.where(xp.arange(classes) == labels[:, None], 0 - xp.cumsum(slopes, 1)[:, -1:],
                      slopes)
    incoming = xp.broadcast_to(g, target.shape).reshape(-1, 1) if reduction == "none" else g
    return (slopes * incoming).reshape(x.shape).astype(x.dtype, copy=False)


_multi_margin_backward.defvjp(*[no_derivative("multi_margin_loss_backward")] * 4)
_multi_margin_backward.defjvp(*[no_derivative("multi_margin_loss_backward")] * 4)
_multi_margin.defvjp(lambda g, x, target, weight, **params:
                     _multi_margin_backward(g, x, target, weight, **params), None, None)
_multi_margin.defjvp(no_forward_ad("multi_margin_loss"), None, None)
_multi_margin.no_complex_grad = "multi_margin_loss"  # an empty complex batch passes the kernel


def _check_labels(target, lowest: int, classes: int, message: str) -> None:
    """Class indices: int64, in [lowest, classes) (torch's kernel reads no dtype of an empty
    target)."""
    if target._data.size and target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{scalar_type_name(target._data)}")
    labels = target._data
    if labels.size and (int(labels.min()) < lowest or int(labels.max()) >= classes):
        raise RuntimeError(message)


def _check_samples(input) -> None:
    if not (input.ndim == 0 or (input.ndim <= 2 and input.shape[-1] != 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean"):
    """The mean over classes of max(0, margin - x[target] + x[class])^p (p 1 or 2), weighted
    by weight[target]; torch cannot differentiate its gradient, nor can gradkit."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    margin = number_argument(margin, "multi_margin_loss", "margin", 4, optional=False)
    _check_samples(input)
    if input.numel():  # torch's kernel, and its dtype check, run for a non-empty batch only
        require_real_floating("multi_margin_loss_cpu_kernel", input._data, half=False)
    samples = input.shape[0] if input.ndim == 2 else 1
    classes = input.shape[-1] if input.ndim else 1
    if target.ndim > 1 or target.numel() != samples:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{samples}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    refuse_grad("multi_margin_loss", weight=weight)
    _check_labels(target, 0, classes, "target out of range")
    margin = scalar_for(margin, input)  # the kernel's conversion (after its checks)
    return _multi_margin(input, target, weight, p=p, margin=margin, reduction=reduction)


def _multilabel_terms(xp, x, target):
    """Per (sample, listed target, class) hinge 1 - x[target] + x[class], where it counts
    (targets before the first -1, classes not among them, positive hinges), and the one-hot
    rows of the listed targets."""
    rows, labels = _as_matrix(x), _as_matrix(target)
    listed = xp.cumprod(labels != -1, axis=1).astype(bool)
    safe = xp.where(listed, labels, 0)
    one_hot = (safe[:, :, None] == xp.arange(rows.shape[1])) & listed[:, :, None]
    hinge = 1 - xp.take_along_axis(rows, safe, 1)[:, :, None] + rows[:, None, :]
    counts = listed[:, :, None] & ~one_hot.any(1)[:, None, :] & (hinge > 0)
    return hinge, counts, one_hot


@op(save=("x", "target"), node_name="MultilabelMarginLossBackward0")
def _multilabel_margin(xp, x, target, reduction="mean"):
    hinge, counts, _ = _multilabel_terms(xp, x, target)
    classes = 1 if x.ndim == 0 else x.shape[-1]
    loss = (xp.where(counts, hinge, 0).sum((1, 2)) / classes).astype(x.dtype, copy=False)
    return _in_input_dtype(xp, reduce_array(xp, loss.reshape(x.shape[:-1] if x.ndim else ()),
                                            reduction), x)


@op(save=("x", "target"), node_name="NotImplemented")
def _multilabel_margin_backward(xp, g, x, target, reduction="mean"):
    """torch's kernel: u = 1 / C (and / N for the mean) added at each counted class and
    subtracted at its listed target, one pair at a time, then all times the incoming
    gradient."""
    _, counts, one_hot = _multilabel_terms(xp, x, target)
    samples, classes = counts.shape[0], counts.shape[2]
    unit = x.dtype.type(1 / (samples * classes) if reduction == "mean" and samples
                        else 1 / classes)
    # how many times each element gets +u (a class) or -u (a target: never a counted class);
    # n additions of u round as a running sum does
    steps = counts.sum(1).astype(xp.int64) - (one_hot * counts.sum(2)[:, :, None]).sum(1)
    most = int(abs(steps).max()) if steps.size else 0
    sums = xp.cumsum(xp.concatenate([xp.zeros(1, x.dtype), xp.full(most, unit)]))  # 0, u, u + u
    slopes = xp.sign(steps) * sums[abs(steps)]
    incoming = xp.broadcast_to(g, x.shape[:-1] if x.ndim else ()).reshape(-1, 1) \
        if reduction == "none" else g
    return (slopes * incoming).reshape(x.shape).astype(x.dtype, copy=False)


_multilabel_margin_backward.defvjp(*[no_derivative("multilabel_margin_loss_backward")] * 3)
_multilabel_margin_backward.defjvp(*[no_derivative("multilabel_margin_loss_backward")] * 3)
_multilabel_margin.defvjp(lambda g, x, target, **params:
                          _multilabel_margin_backward(g, x, target, **params), None)
_multilabel_margin.defjvp(no_forward_ad("multilabel_margin_loss_forward"), None)
_multilabel_margin.no_complex_grad = "multilabel_margin_loss_forward"  # (an empty batch)


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction: str = "mean"):
    """For each listed target class j (up to the first -1) and each other class k,
    max(0, 1 - x[j] + x[k]), summed and divided by the class count; torch cannot
    differentiate its gradient, nor can gradkit."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    _check_samples(input)
    classes = input.shape[-1] if input.ndim else 1
    fits = target.ndim <= 1 and target.numel() == classes if input.ndim <= 1 else \
        target.ndim == 2 and tuple(target.shape) == tuple(input.shape)
    if not fits:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if input.numel():  # torch's kernel, and its dtype check, run for a non-empty batch only
        require_real_floating("multilabel_margin_loss_forward_out_frame", input._data, half=False)
    _check_labels(target, -1, classes, "argument #2 'target' is out of range")
    return _multilabel_margin(input, reshape(target, tuple(input.shape)), reduction=reduction)

