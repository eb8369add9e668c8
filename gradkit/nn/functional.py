"""gradkit.nn.functional: torch.nn.functional's layers, activations and losses.

The ops themselves live in ``gradkit.ops`` (one declaration each); this module
gives them torch.nn.functional's names and signatures.

>>> import gradkit.nn.functional as F
>>> F.cross_entropy(gradkit.randn(4, 3), gradkit.tensor([0, 2, 1, 0])).ndim
0
"""
from __future__ import annotations

import warnings

from gradkit.int_arguments import int_parameters
from gradkit.number_arguments import number_argument
from gradkit import ops
from gradkit._not_implemented import module_getattr
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.backend import get_array_module, to_numpy_dtype
from gradkit.memory_format import channels_last, channels_last_3d, suggested_order
from gradkit.nn import grad  # noqa: F401 - torch's F.grad is torch.nn.grad
from gradkit.nn.functional_attention import multi_head_attention_forward
from gradkit.nn.functional_aliases import (
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices, check_channel_shuffle, fractional_max_pool2d_with_indices,
    fractional_max_pool3d_with_indices, max_pool1d_with_indices, max_pool2d_with_indices,
    max_pool3d_with_indices, native_channel_shuffle, upsample, upsample_bilinear,
    upsample_nearest)
from gradkit.nn.functional_bags import bilinear, embedding_bag
from gradkit.nn.functional_linear_cross_entropy import linear_cross_entropy
from gradkit.nn.functional_dropout import (
    alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout)
from gradkit.ops.attention import (
    fold, pixel_shuffle, pixel_unshuffle, scaled_dot_product_attention, unfold)
from gradkit.ops.conv import conv2d
from gradkit.ops.ctc import ctc_loss
from gradkit.ops.grad_edges import backward_of, input_edge
from gradkit.ops.conv_more import (
    conv1d, conv3d, conv_tbc, conv_transpose1d, conv_transpose2d, conv_transpose3d)
from gradkit.ops.interpolate import interpolate
from gradkit.ops.one_node import one_node
from gradkit.ops.elementwise import tanh
from gradkit.ops.activations import gelu, logsigmoid, sigmoid, softplus
from gradkit.ops.activations_gated import glu, prelu, rrelu
from gradkit.ops.activations_inplace import (
    celu_, elu_, hardtanh_, leaky_relu_, relu_, rrelu_, selu_, threshold_)
from gradkit.ops.activations_more import (
    celu, elu_in_place, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu_in_place, mish,
    relu6, selu, softshrink, softsign, tanhshrink, threshold)
from gradkit.ops.inplace import inplace as write_inplace
from gradkit.ops.keywords import take_numpy_names
from gradkit.ops.embedding import embedding
from gradkit.ops.layers import dropout, layer_norm, linear
from gradkit.ops.distances import pdist
from gradkit.ops.linalg_norms import vector_norm
from gradkit.ops.losses import binary_cross_entropy_with_logits, cross_entropy, mse_loss, nll_loss
from gradkit.ops.losses_more import (
    binary_cross_entropy, gaussian_nll_loss, huber_loss, kl_div, l1_loss, poisson_nll_loss,
    smooth_l1_loss)
from gradkit.ops.losses_margin import (
    cosine_embedding_loss, cosine_similarity, hinge_embedding_loss, margin_ranking_loss,
    multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, pairwise_distance,
    soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)
from gradkit.ops.normalization import (
    batch_norm, group_norm, instance_norm, local_response_norm, rms_norm)
from gradkit.ops.pooling import (
    adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, max_pool1d, max_pool2d,
    max_pool3d)
from gradkit.ops.pooling_fractional import fractional_max_pool2d, fractional_max_pool3d
from gradkit.ops.node_names import pad_node_name
from gradkit.ops.padding import check_pad_value
from gradkit.ops.gumbel import gumbel_softmax
from gradkit.ops.sampling_grid import affine_grid, grid_sample
from gradkit.ops.unary_helpers import require_tensors
from gradkit.ops.unpooling import max_unpool1d, max_unpool2d, max_unpool3d
from gradkit.ops.pooling_avg import (
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, avg_pool1d, avg_pool2d,
    avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d)

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu", "celu_", "conv2d",
    "cosine_embedding_loss", "cosine_similarity", "cross_entropy", "dropout", "elu", "elu_",
    "embedding", "gaussian_nll_loss", "gelu", "glu", "hardshrink", "hardsigmoid", "hardswish",
    "hardtanh", "hardtanh_", "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "leaky_relu_", "linear", "linear_cross_entropy",
    "log_softmax", "logsigmoid",
    "margin_ranking_loss", "max_pool2d", "mish", "mse_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss", "normalize", "one_hot",
    "pad", "pairwise_distance", "poisson_nll_loss", "prelu", "relu", "relu6", "relu_", "rrelu",
    "rrelu_", "selu", "selu_", "sigmoid", "silu", "smooth_l1_loss", "soft_margin_loss",
    "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh", "tanhshrink", "threshold",
    "threshold_", "triplet_margin_loss",
    # pooling, normalization, convolution variants, attention, resampling
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm", "conv1d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "fold", "group_norm", "instance_norm",
    "interpolate", "local_response_norm", "lp_pool1d", "lp_pool2d", "max_pool1d", "max_pool3d",
    "pixel_shuffle", "pixel_unshuffle", "rms_norm", "scaled_dot_product_attention", "unfold",
    "multi_head_attention_forward", "bilinear", "embedding_bag", "channel_shuffle",
    "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
    # lane random: sampling, spatial transformers, unpooling
    "affine_grid", "ctc_loss", "grid_sample", "gumbel_softmax", "max_unpool1d", "max_unpool2d",
    "triplet_margin_with_distance_loss",
    # lane legacy
    "pdist",
    # lane nsfunc: the 3-d variants
    "adaptive_max_pool3d", "conv_transpose3d", "lp_pool3d", "max_unpool3d",
    # lane texp16
    "conv_tbc",
    # lane rnnfn
    "fractional_max_pool2d", "fractional_max_pool3d",
    # lane nnlazy: the other spellings (functional_aliases.py)
    "native_channel_shuffle", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "upsample",
    "upsample_nearest", "upsample_bilinear",
]


def relu(input, inplace: bool = False):
    """max(input, 0); ``inplace=True`` overwrites input (like ``input.relu_()``)."""
    if inplace:
        return write_inplace(input, ops.relu)
    return ops.relu(input)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """x if x > 0 else alpha * (exp(x) - 1); ``inplace=True`` overwrites input."""
    return write_inplace(input, elu_in_place, alpha) if inplace else ops.elu(input, alpha)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """x if x > 0 else negative_slope * x; ``inplace=True`` overwrites input."""
    if inplace:
        return write_inplace(input, leaky_relu_in_place, negative_slope)
    return ops.leaky_relu(input, negative_slope)


def silu(input, inplace: bool = False):
    """x * sigmoid(x); torch has no complex derivative for it, so a complex input that
    requires grad is refused while grad mode records."""
    require_tensors("silu", input)
    if input.is_complex() and input.requires_grad and is_grad_enabled():
        raise RuntimeError("silu does not support automatic differentiation for outputs with "
                           "complex dtype.")
    if inplace:
        return write_inplace(input, ops.silu)
    return ops.silu(input)


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return input.softmax(dim, _np_dtype(dtype))  # torch calls the method: its error words


def log_softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return input.log_softmax(dim, _np_dtype(dtype))  # torch calls the method: its error words


def softmin(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    return ops.neg(input).softmax(dim, _np_dtype(dtype))  # torch calls the method


def one_hot(input, num_classes: int = -1):  # noqa: A002 - torch's parser's name
    """int64 tensor with a trailing dim of ``num_classes``: 1 at each index of ``input``, 0
    elsewhere.

    >>> F.one_hot(gradkit.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    data = input._data
    if data.dtype != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    xp = get_array_module(data)
    return Tensor._make((xp.arange(num_classes) == data[..., None]).astype(data.dtype))


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """input / max(‖input‖_p along ``dim``, eps): unit vectors along ``dim``."""
    if out is not None:
        raise TypeError("gradkit's normalize does not take out=")
    # torch's input.norm(p) (None: its default, the 2-norm), then clamp_min (a complex eps fails)
    norm = vector_norm(input, 2.0 if p is None else p, dim, True).clamp_min(eps)  # (method)
    return ops.div(input, norm.expand_as(input))


CHANNELS_LAST = {4: channels_last, 5: channels_last_3d}


@int_parameters("channel_shuffle", groups=(2, "int"))
def channel_shuffle(input, groups: int):
    """(N, C, *) with the channels, read as (groups, C/groups), transposed: torch's shuffle."""
    batch, channels, *rest = check_channel_shuffle(tuple(input.shape), groups)
    # torch's output keeps the input's suggested memory format (channels last stays so)
    layout = CHANNELS_LAST.get(input.ndim) if suggested_order(input._data) else None

    def shuffle(x):
        grouped = x.reshape(batch, groups, channels // groups, *rest)
        out = grouped.transpose(1, 2).reshape(batch, channels, *rest)
        if layout is not None:
            return out.contiguous(memory_format=layout)
        return out.clone() if out._is_view() else out  # torch's is a new tensor, never a view
    return one_node("ChannelShuffleBackward0", shuffle, (input,), constants={"groups": groups})


def _np_dtype(dtype):
    if dtype is None:
        return None
    return to_numpy_dtype(dtype)


def pad(input, pad, mode: str = "constant", value=None):
    """Pad the last dims: ``pad`` = (left, right, top, bottom, ...), negative values crop."""
    value = number_argument(value, "pad", "value", 4, "float")
    check_pad_value(mode, value)
    if mode in ("reflect", "replicate"):
        # torch's node saves the input, and its backward reads it (a zero edge): one node
        node = pad_node_name({"mode": mode, "pad": pad})
        return one_node(node, lambda x: ops.pad(input_edge(x, _node=backward_of(node)),
                                                tuple(pad), mode, 0.0),
                        (input,), {"self": 0}, {"padding": tuple(pad)})
    return ops.pad(input, tuple(pad), mode, 0.0 if value is None else value)


__getattr__ = module_getattr(__name__)  # names torch features gradkit lacks
# the functions torch binds in C++ (torch._C._nn, torch.*): its parser takes NumPy's names
# there (``F.conv1d(x=t, weight=w)``), not in its Python ones (``F.relu(x=t)`` is a TypeError)
take_numpy_names(globals(), (
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "elu_", "gelu", "hardshrink",
    "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle", "one_hot",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_",
    "rrelu_", "scaled_dot_product_attention", "selu_", "softplus", "softshrink", "threshold_"))
