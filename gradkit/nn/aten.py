"""torch's top-level spellings of nn.functional's layers (``torch.conv2d``, ``torch.dropout``,
``torch.layer_norm``, ``torch.native_batch_norm`` ...), with ATen's signatures.

ATen's argument orders differ from nn.functional's (``torch.embedding(weight, indices)``,
``torch.batch_norm(input, weight, bias, running_mean, ...)``) and its ``native_*`` forms also
return the statistics or the mask they computed. Each function here is a thin adapter over
gradkit.nn.functional: the gradients are those of the functional form.

>>> gradkit.embedding(gradkit.eye(3), gradkit.tensor([2, 0])).tolist()
[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
"""
from __future__ import annotations

import numpy as np

from gradkit.int_arguments import int_parameters
from gradkit import creation
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.backend import float16, float32, get_array_module
from gradkit.nn import functional as F  # noqa: N812 - torch's convention
from gradkit.nn.functional_dropout import _dropout_impl
from gradkit.ops._op import Op
from gradkit.ops.arithmetic import mul, not_implemented
from gradkit.ops.conv import conv_nd
from gradkit.ops.embedding import embedding_renorm_
from gradkit.ops.conv_more import conv_tbc, conv_transpose_nd
from gradkit.ops.variance import welford_mean
from gradkit.ops.batch_norm_arith import batch_statistics, kernel_layout
from gradkit.ops.normalization import (
    batch_norm_unchecked, check_parameter_dtypes, group_norm_unchecked, instance_norm_unchecked,
    unbiased_variance, update_running, update_statistics)
from gradkit.ops.unary_helpers import require_real_floating, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters

# the same functions under both names
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)
pixel_shuffle, pixel_unshuffle, channel_shuffle = (
    F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle)
native_channel_shuffle = F.native_channel_shuffle  # no derivative, as torch
avg_pool1d, adaptive_avg_pool1d, bilinear = F.avg_pool1d, F.adaptive_avg_pool1d, F.bilinear

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "conv_tbc", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "native_channel_shuffle", "avg_pool1d", "adaptive_avg_pool1d", "bilinear", "dropout",
    "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout", "feature_dropout_",
    "feature_alpha_dropout", "feature_alpha_dropout_", "native_dropout", "layer_norm",
    "native_layer_norm", "batch_norm", "native_batch_norm", "batch_norm_update_stats",
    "group_norm", "native_group_norm",
    "instance_norm", "rms_norm", "embedding", "embedding_bag", "embedding_renorm_", "selu", "celu",
    "threshold"]


# torch's top-level activations take no ``inplace`` (their ``_`` forms are the in-place ones)
def selu(input: Tensor) -> Tensor:
    """torch.selu: nn.functional.selu without ``inplace``."""
    return F.selu(input)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """torch.celu: nn.functional.celu without ``inplace``."""
    return F.celu(input, alpha)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """torch.threshold: nn.functional.threshold without ``inplace``."""
    return F.threshold(input, threshold, value)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation,
                transposed: bool, output_padding, groups: int) -> Tensor:
    """torch.convolution: conv{1,2,3}d, or with ``transposed`` conv_transpose{1,2,3}d, chosen
    by the weight's rank; batched inputs only, as ATen's."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.ndim}-"
                           f"dimensional input of size {list(input.shape)} instead")
    d = weight.ndim - 2
    if transposed:
        return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation, d, f"conv_transpose{d}d")
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, d, f"conv{d}d")


# -- dropout: (input, p, train); ATen refuses a p outside [0, 1] with a RuntimeError ---------

def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def _spelling(name: str, run, doc: str):
    """torch.<name>(input, p, train): ``run(input, p, train)`` after ATen's check of p."""
    def spelling(input: Tensor, p: float, train: bool) -> Tensor:
        _check_p(p)
        return run(input, p, train)
    spelling.__name__ = spelling.__qualname__ = name
    spelling.__doc__ = doc
    return spelling


dropout = _spelling("dropout", F.dropout, "torch.dropout: F.dropout(input, p, training=train).")
dropout_ = _spelling("dropout_", lambda x, p, train: F.dropout(x, p, train, inplace=True),
                     "torch.dropout_: dropout, in place.")
alpha_dropout = _spelling("alpha_dropout", F.alpha_dropout,
                          "torch.alpha_dropout: F.alpha_dropout(input, p, training=train).")
alpha_dropout_ = _spelling(
    "alpha_dropout_", lambda x, p, train: F.alpha_dropout(x, p, train, inplace=True),
    "torch.alpha_dropout_: alpha_dropout, in place.")
feature_dropout = _spelling(
    "feature_dropout", lambda x, p, train: _dropout_impl(x, p, train, False, True, False),
    "torch.feature_dropout: one draw per (sample, channel) of a (N, C, *) input.")
feature_dropout_ = _spelling(
    "feature_dropout_", lambda x, p, train: _dropout_impl(x, p, train, True, True, False),
    "torch.feature_dropout_: feature_dropout, in place.")
feature_alpha_dropout = _spelling(
    "feature_alpha_dropout", F.feature_alpha_dropout,
    "torch.feature_alpha_dropout: F.feature_alpha_dropout(input, p, training=train).")
feature_alpha_dropout_ = _spelling(
    "feature_alpha_dropout_",
    lambda x, p, train: F.feature_alpha_dropout(x, p, train, inplace=True),
    "torch.feature_alpha_dropout_: feature_alpha_dropout, in place.")


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """torch.native_dropout: (input * mask / (1 - p), the bool keep-mask); with ``train``
    False, (a copy of input, all True). The mask is drawn from gradkit's generator."""
    xp = get_array_module(input._data)
    recording = is_grad_enabled() and input.requires_grad
    if recording and input._data.dtype.kind == "c":
        raise RuntimeError("native_dropout does not support automatic differentiation for "
                           "outputs with complex dtype.")
    if input.numel() == 0:  # ATen returns input itself, and a mask of its dtype (empty too)
        return input, Tensor._make(xp.empty(tuple(input.shape), dtype=input._data.dtype))
    if train is False:
        return input.clone(), Tensor._make(xp.ones(tuple(input.shape), dtype=bool))
    if input._data.dtype.kind in "biu":  # ATen scales the product in place by a float
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(input._data)}")
    if not 0.0 <= 1.0 - p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1.0 - p:g}")
    keep = xp.asarray(creation.bernoulli_mask(tuple(input.shape), p))
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    if input._data.dtype.kind == "c":  # torch's input * mask, then * scale: two complex
        # products, so -inf + 0j is nan + nanj (one product by mask * scale: -inf + nanj)
        kept = mul(input, Tensor._make(keep.astype(input._data.dtype)))
        return mul(kept, scale), Tensor._make(keep)
    return (mul(input, Tensor._make((keep * scale).astype(input._data.dtype))),
            Tensor._make(keep))


# -- normalization: ATen's orders, and the statistics of the native forms -------------------

@int_parameters("layer_norm", normalized_shape=(2, "int[]"))
@tensor_parameters("weight", "bias")
def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    """torch.layer_norm (``cudnn_enable`` is ignored)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def _statistics(x: Tensor, dims: tuple, eps: float, shape: tuple,
                welford: bool = True) -> tuple[Tensor, Tensor]:
    """(mean, 1/sqrt(biased variance + eps)) of ``x`` over ``dims``, reshaped to ``shape``;
    ``welford``: the mean of equal values exact, as torch's layer and group norm kernels,
    and the mean of no elements 0, as they leave it (the variance is NaN)."""
    if not np.prod([x.shape[d] for d in dims]):
        mean = x.sum(dims, keepdim=True)
    else:
        mean = welford_mean(x, dims) if welford else x.mean(dims, keepdim=True)
    rstd = (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return mean.reshape(shape), rstd.reshape(shape)


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch.native_layer_norm: (output, mean, rstd), the statistics of shape
    input.shape[:-k] + (1,) * k for k normalized dims."""
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    k = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    lead = tuple(input.shape[:input.ndim - k])
    # torch's statistics of layer and batch norm are not differentiable; group norm's are
    return (out, *_statistics(input.detach(), tuple(range(input.ndim - k, input.ndim)), eps,
                              lead + (1,) * k))


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """torch.batch_norm: F.batch_norm with ATen's argument order (and no check of more than
    one value per channel: ATen normalizes a single one to 0)."""
    return batch_norm_unchecked(input, running_mean, running_var, weight, bias, training,
                                momentum, eps)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch.native_batch_norm: (output, save_mean, save_invstd) with the batch's per-channel
    statistics while training, empty tensors (torch's on the CPU) otherwise."""
    channels = (input.shape[1],)
    require_real_floating("batch_norm", input._data)  # its kernel's, before the empty check
    if training and input.numel() == 0:  # its statistics kernel refuses (torch.batch_norm not)
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes "
                           f"= {list(input.shape)}")
    # mixed (float16 input, float32 parameters): the statistics are float32, as torch's
    x = input.detach()
    if check_parameter_dtypes(input, (weight, bias, running_mean, running_var)):
        x = x.float()
    if training and x.dtype != float16:  # torch's kernel arithmetic (batch_norm's)
        stats = batch_statistics(x, eps, kernel_layout(input))[::2]
    elif training:
        stats = _statistics(x, (0,) + tuple(range(2, input.ndim)), eps, channels, False)
    else:
        stats = tuple(creation.empty(0, dtype=x.dtype, device=input.device) for _ in "ms")
    out = batch_norm_unchecked(input, running_mean, running_var, weight, bias, training,
                               momentum, eps)
    return (out, *stats)


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None,
                            running_var: Tensor | None, momentum: float) -> tuple[Tensor, Tensor]:
    """torch.batch_norm_update_stats: (mean, biased variance) per channel of (N, C, *), the
    running statistics updated in place with the unbiased variance (NaN for one value); in
    float32 for a float16 input with float32 statistics. Torch has no derivative for it.

    >>> gradkit.batch_norm_update_stats(gradkit.tensor([[1., 2.], [3., 5.]]), None, None, 0.1)
    (tensor([2.0000, 3.5000]), tensor([1.0000, 2.2500]))
    """
    require_real_floating("batch_norm_update_stats_cpu", input._data)
    input.size(1)  # torch's IndexError below two dims
    if input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes "
                           f"= {list(input.shape)}")
    statistics = (running_mean, running_var)
    mixed = check_parameter_dtypes(input, statistics)
    x = input.detach().float() if mixed else input.detach()
    dims = (0,) + tuple(range(2, x.ndim))
    count = x.numel() // x.shape[1]
    if x.dtype != float16 and not mixed:  # torch's kernel arithmetic (batch_norm's)
        mean, var_sum, _ = batch_statistics(x, 0.0, kernel_layout(input))
        var = (var_sum / count).to(x.dtype)
        update_statistics(*statistics, mean, unbiased_variance(var_sum, count), momentum)
    else:
        mean, var = x.mean(dims), x.var(dims, unbiased=False)
        for running, batch in zip(statistics, (mean, var * (count / (count - 1) if count > 1
                                                            else float("nan")))):
            if running is not None:
                update_running(running, batch, momentum)
    # torch's outputs take an edge from each input requiring grad (the first is enough here)
    source = next((t for t in (input, *statistics) if t is not None and t.requires_grad), input)
    return tuple(_no_derivative(source, value) for value in (mean, var))


# the statistics keep an edge to the input, as torch's outputs, whose backward raises
_no_derivative = Op(lambda xp, input, value: value.copy(), name="batch_norm_update_stats",
                    node_name="NotImplemented")
_no_derivative.defvjp(*[not_implemented("batch_norm_update_stats")[0]] * 2)
_no_derivative.defjvp(*[not_implemented("batch_norm_update_stats")[1]] * 2)


@tensor_parameters("weight", "bias")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    """torch.group_norm (``cudnn_enabled`` is ignored; no check of more than one value per
    group: ATen normalizes a single one to 0)."""
    return group_norm_unchecked(input, num_groups, weight, bias, eps)


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,  # noqa: N803
                      C: int, HxW: int, group: int, eps: float  # noqa: N803 - ATen's names
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """torch.native_group_norm: (output, mean, rstd), the statistics of shape (N, group) and
    differentiable, as torch's (though torch drops their gradients when the output has none)."""
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    out = group_norm_unchecked(input, group, weight, bias, eps)
    grouped = input.reshape(N, group, C // group * HxW)  # not -1: N may be 0
    return (out, *_statistics(grouped, (2,), eps, (N, group)))


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """torch.instance_norm: F.instance_norm with ATen's argument order (and no check of more
    than one spatial element: ATen normalizes a single one to 0)."""
    return instance_norm_unchecked(input, running_mean, running_var, weight, bias,
                                   use_input_stats, momentum, eps)


@int_parameters("rms_norm", normalized_shape=(2, "int[]"))
@tensor_parameters("weight")
def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """torch.rms_norm: F.rms_norm."""
    return F.rms_norm(input, normalized_shape, weight, eps)


# -- embedding: the weight comes first ------------------------------------------------------

@tensor_parameters("indices")
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.embedding: F.embedding(indices, weight); a negative ``padding_idx`` (or one past
    the rows) is no padding, as ATen's (F.embedding wraps it before calling it)."""
    rows = weight.shape[0] if weight.ndim else 0
    padding = padding_idx if 0 <= padding_idx < rows else None
    return F.embedding(indices, weight, padding, None, 2.0, scale_grad_by_freq, sparse)


@tensor_parameters("indices", "offsets", "per_sample_weights", overloaded=True)
def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """torch.embedding_bag: (F.embedding_bag's output, offset2bag, bag_size, max_indices),
    ``mode`` 0 sum, 1 mean, 2 max. The last three are ATen's bookkeeping, as its CPU kernel
    gives them: each index's bag (empty on its fast path: a float32/float16 sum without
    padding), each bag's count of non-padding entries (zeros for a sum) and the weight row of
    each bag's maximum per column (the bag sizes unless ``mode`` is 2)."""
    for name, tensor, ranks in (("input", indices, (1, 2)), ("offsets", offsets, (1,)),
                                ("weight", weight, (2,))):  # ATen's checks (F's: ValueErrors)
        if tensor.ndim not in ranks:
            raise RuntimeError(f"{name} has to be a {' or '.join(f'{r}D' for r in ranks)} "
                               f"Tensor, but got Tensor of dimension {tensor.ndim}")
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                          ("sum", "mean", "max")[mode], sparse, per_sample_weights,
                          include_last_offset, padding_idx)
    keys = indices.detach().cpu().numpy()
    starts = offsets.detach().cpu().numpy()
    bags = len(starts) - 1 if include_last_offset else len(starts)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    bag_of = np.searchsorted(starts[:bags], np.arange(len(keys)), side="right") - 1
    kept = keys != padding_idx
    sizes = np.bincount(bag_of[kept], minlength=bags)[:bags]
    rows = np.zeros((bags, weight.shape[1]), dtype=np.int64)
    if mode == 2:
        values = weight.detach().cpu().numpy()
        for bag in range(bags):
            members = keys[(bag_of == bag) & kept]
            if members.size:  # torch's running maximum: a NaN wins only as the first row
                picked = values[members]
                best = np.argmax(np.where(np.isnan(picked), -np.inf, picked), axis=0)
                rows[bag] = members[np.where(np.isnan(picked[0]), 0, best)]
    fast = mode == 0 and padding_idx is None and weight.dtype in (float32, float16)

    def tensor(array):
        return creation.tensor(np.asarray(array, dtype=np.int64), device=weight.device)
    # a sum's sizes are zeros: one per bag for a weight that requires grad, else one per offset
    bag_size = tensor(sizes if mode else np.zeros(bags if weight.requires_grad else len(starts)))
    return (out, tensor([] if fast else bag_of), bag_size,
            tensor(rows) if mode == 2 else bag_size.clone())
