"""batch_norm, instance_norm, group_norm, rms_norm and local_response_norm.

Each is composed of existing ops, the same arithmetic as torch's kernels (mean, biased
variance, ``(x - mean) * rsqrt(var + eps)``, then the per-channel affine), so its gradients are
torch's to any order. Running statistics are updated in place, outside the graph, with
torch's rule: ``(1 - momentum) * running + momentum * batch``, the batch variance unbiased.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.autograd.grad_mode import no_grad, records_graph
from gradkit.backend import float16, float32, get_array_module, to_numpy_dtype
from gradkit.int_arguments import int_argument
from gradkit.number_arguments import number_argument
from gradkit.memory_format import (channels_last, channels_last_3d, contiguous_format,
                                   suggested_order)
from gradkit.ops import _dispatch
from gradkit.ops.arithmetic import add, div, mul, pow as pow_, sub
from gradkit._tensor import Tensor
from gradkit.ops.batch_norm_arith import (_with_value, batch_statistics, channel_shape,
                                          fused_multiply_add, kernel_layout, normalized_affine)
from gradkit.ops.conversion import astype, clone
from gradkit.ops.elementwise import rsqrt
from gradkit.ops.grad_edges import kept_for_backward
from gradkit.ops.layers import checked_normalized_shape
from gradkit.ops.half_scalar import HALF
from gradkit.ops.norm_saved import batch_norm_node, group_norm_node
from gradkit.ops.padding import pad
from gradkit.ops.pooling_avg import avg_pool2d, avg_pool3d
from gradkit.ops.reduction import mean, sum as sum_
from gradkit.ops.shape import repeat, reshape, squeeze, unsqueeze
from gradkit.ops.slicing import select
from gradkit.ops.unary_helpers import kernel_error, require_real_floating, scalar_type_name
from gradkit.ops.variance import welford_mean


def _normalize(x, axes, eps, rounded: bool = False, welford: bool = False):
    """((x - mean) * rsqrt(var + eps), mean, biased var) over ``axes`` (kept); ``rounded``:
    with the mean and rsqrt rounded to float16 (torch's all-float16 batch norm normalizes
    with the statistics it saves in float16); ``welford``: the mean of equal values exact
    (torch's group norm kernel)."""
    mu = welford_mean(x, axes) if welford else mean(x, axes, True)
    centered = sub(x, mu)
    var = mean(mul(centered, centered), axes, True)
    rstd = rsqrt(add(var, eps))
    if rounded:
        return mul(sub(x, _through_half(mu)), _through_half(rstd)), mu, var
    return mul(centered, rstd), mu, var


def _through_half(t):  # the value rounded, the gradient not: torch's backward is in float
    return _with_value(t, t._data.astype(HALF).astype(np.float32))


def _affine(out, weight, bias, input):
    if weight is not None:
        out = mul(out, reshape(weight, channel_shape(input)))
    if bias is not None:
        out = add(out, reshape(bias, channel_shape(input)))
    return out


def _opmath(input, *tensors) -> tuple:
    """``tensors`` in float32 for a float16 ``input``: torch's batch and group norm kernels
    compute in float32 whatever the parameters' dtype (see _in_input_layout's rounding)."""
    if input._data.dtype != HALF:
        return tensors
    return tuple(None if t is None else astype(t, np.float32) for t in tensors)


def _in_input_layout(out, input, dense_too: bool = False):
    """``out`` in ``input``'s dtype (rounded once), laid out as torch's CPU batch and group norm
    kernels allocate their result: channels last (3d) when the input's strides suggest it
    (a sliced channels-last input too) or, ``dense_too`` (batch norm's kernel), when it is
    channels-last contiguous and not C-contiguous (size-1 dims); else C order (a transposed
    input too)."""
    if out._data.dtype != input._data.dtype:
        out = astype(out, input._data.dtype)
    layout = channels_last if out.ndim == 4 else channels_last_3d
    if out.ndim in (4, 5) and (suggested_order(input._data) is not None or dense_too and (
            not input.is_contiguous() and input.is_contiguous(memory_format=layout))):
        return clone(out, memory_format=layout)
    return out if out.is_contiguous() else clone(out, memory_format=contiguous_format)


def _check_size(name: str, tensor, size: int) -> None:
    if tensor is not None and tensor.numel() != size:
        raise RuntimeError(f"{name} should contain {size} elements not {tensor.numel()}")


def update_running(running, batch_value, momentum, fused: bool = False) -> None:
    """running <- momentum batch_value + (1 - momentum) running, in place, unrecorded, each
    product rounded; ``fused`` and float32 (ATen's update of a float32 running variance),
    the sum with the first product rounded once."""
    with no_grad():
        batch = batch_value.detach().reshape(running.shape)
        if running._data.dtype == HALF:
            running.mul_(1 - momentum).add_(batch, alpha=momentum)
        elif fused and running._data.dtype == np.float32:
            rate = Tensor._make(get_array_module(running._data).asarray(
                momentum, running._data.dtype))
            running.copy_(fused_multiply_add(batch, rate, running * (1 - momentum)))
        else:
            running.copy_(batch * momentum + running * (1 - momentum))


def update_statistics(running_mean, running_var, mu, unbiased, momentum) -> None:
    """Both running statistics updated from the batch's (each may be None)."""
    for running, batch, fused in ((running_mean, mu, False), (running_var, unbiased, True)):
        if running is not None:
            update_running(running, batch, momentum, fused)


def unbiased_variance(var_sum, count: int):
    """``var_sum / (count - 1)`` in var_sum's dtype, NaN for one value (ATen's 0 / 0)."""
    return div(var_sum, count - 1) if count > 1 else mul(var_sum, math.nan)


def _refuse_grad_of_statistics(running_mean, running_var) -> None:
    """torch's native_batch_norm takes the running statistics as constants: its autograd
    layer (before any kernel check) refuses them requiring grad in grad mode."""
    for name, running in (("running_mean", running_mean), ("running_var", running_var)):
        if running is not None and running.requires_grad and records_graph():
            raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with "
                               f"respect to argument '{name}'. This input cannot have "
                               "requires_grad True.")


def _refuse_tangents_of_statistics(training: bool, differentiable: tuple,
                                   statistics: tuple) -> None:
    """torch's batch_norm_jvp in evaluation mode (run when the input, weight or bias has a
    tangent) reads the running statistics as constants: it refuses tangents on them."""
    forward_ad = _dispatch._forward_ad
    if not training and forward_ad is not None and forward_ad.has_tangents(differentiable) \
            and forward_ad.has_tangents(statistics):
        raise RuntimeError("batch_norm is not differentiable wrt running_mean and running_var, "
                           "they cannot have forward grad defined")


def check_parameter_dtypes(input, params: tuple) -> bool:
    """Whether ATen's CPU batch_norm runs mixed: its first given parameter's dtype is not the
    input's; then all must be float32 and the input float16; otherwise every parameter must
    have the input's dtype. Torch's checks, in its order and words."""
    given = [p for p in params if p is not None]
    if given and given[0].dtype != input.dtype:
        if any(p.dtype != float32 for p in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype != float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return True
    for p in given:  # the kernel reads each parameter as the input's scalar type
        if p.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {scalar_type_name(input._data)} but found "
                               f"{scalar_type_name(p._data)}")
    return False


def _empty_norm(input, weight, bias):
    """ATen's batch_norm of an empty input, before any check of its arguments: a clone times
    ``weight[0]`` plus ``bias[0]`` (0-d, so they promote as numbers do: an empty int64 input
    with a float bias gives float32), which keeps weight and bias in the graph."""
    out = input.clone()
    if weight is not None:
        out = mul(out, select(weight, 0, 0))
    if bias is not None:
        out = add(out, select(bias, 0, 0))
    return out


def _half_batch_norm(source, input, weight, bias, training: bool, mixed: bool, eps: float,
                     running_mean, running_var, update_statistics):
    """float16 batch norm, computed in float32 (torch's opmath): its statistics rounded to
    float16 unless the parameters are float32 (torch's mixed kernel)."""
    x, weight, bias = _opmath(source, input, weight, bias)
    if training:
        out, mu, var = _normalize(x, (0,) + tuple(range(2, input.ndim)), eps, rounded=not mixed)
        count = input.shape[0] * math.prod(input.shape[2:])
        update_statistics(mu, mul(var, count / (count - 1) if count > 1 else math.nan))
    else:
        shape = channel_shape(input)
        mean_, var_ = _opmath(source, running_mean.detach(), running_var.detach())
        out = mul(sub(x, reshape(mean_, shape)), rsqrt(add(reshape(var_, shape), eps)))
    return _affine(out, weight, bias, input)


def batch_norm(input, running_mean, running_var, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5):
    """torch.nn.functional.batch_norm over (N, C, *): per-channel statistics of N and *.

    >>> batch_norm(gradkit.randn(4, 3), None, None, training=True).shape
    gradkit.Size([4, 3])
    """
    if training and input.ndim > 1 and input.shape[0] * math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         f"{input.shape}")
    # F's Python checks (torch.batch_norm, ATen's, has none)
    if eps <= 0.0 if training else eps < 0.0:
        must = "positive during training" if training else "non-negative"
        raise ValueError(f"batch_norm eps must be {must}, but got {eps}")
    momentum, eps = (number_argument(v, "batch_norm", name, position, "float", optional=False)
                     for position, name, v in ((7, "momentum", momentum), (8, "eps", eps)))
    return batch_norm_unchecked(input, running_mean, running_var, weight, bias, training,
                                momentum, eps)


def batch_norm_unchecked(input, running_mean, running_var, weight, bias,  # noqa: A002
                         training: bool, momentum: float, eps: float):
    """batch_norm without F's Python check of more than one value per channel (ATen's
    torch.batch_norm normalizes a single one to 0, its running variance to NaN)."""
    if input.numel() == 0:
        return _empty_norm(input, weight, bias)
    _refuse_grad_of_statistics(running_mean, running_var)
    channels = input.shape[1] if input.ndim > 1 else 0
    for name, tensor in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                         ("running_var", running_var)):
        _check_size(name, tensor, channels)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be "
                           "defined in evaluation mode")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    require_real_floating("batch_norm", input._data)
    mixed = check_parameter_dtypes(input, (weight, bias, running_mean, running_var))
    _refuse_tangents_of_statistics(training, (input, weight, bias), (running_mean, running_var))
    # torch's kernels sum float16 in float32 (its opmath type), rounding the result once
    half = input.dtype == float16

    def _update_statistics(mu, unbiased):
        update_statistics(running_mean, running_var, mu, unbiased, momentum)

    def normalized(source, weight, bias):
        input = kept_for_backward(source)  # torch's NativeBatchNormBackward0 saves the input
        count = input.shape[0] * math.prod(input.shape[2:])
        if half:
            out = _half_batch_norm(source, input, weight, bias, training, mixed, eps,
                                   running_mean, running_var, _update_statistics)
        elif training:
            layout = kernel_layout(source)
            mu, var_sum, invstd = batch_statistics(input, eps, layout)
            _update_statistics(mu, unbiased_variance(var_sum, count))
            out = normalized_affine(input, mu, invstd, weight, bias, layout)
        else:  # constants: a tangent of theirs alone gives the result none, as torch's
            out = normalized_affine(input, running_mean.detach(),
                                    rsqrt(add(running_var.detach(), eps)), weight, bias,
                                    kernel_layout(source))
        return _in_input_layout(out, source, dense_too=True)
    return batch_norm_node(normalized, (input, weight, bias), running_mean, running_var,
                           training, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """torch.nn.functional.instance_norm: each (sample, channel) normalized over its * dims."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    eps = number_argument(eps, "instance_norm", "eps", 8, "float", optional=False)
    return instance_norm_unchecked(input, running_mean, running_var, weight, bias,
                                   use_input_stats, momentum, eps)


def instance_norm_unchecked(input, running_mean, running_var, weight, bias,  # noqa: A002
                            use_input_stats: bool, momentum: float, eps: float):
    """instance_norm without F's Python check of the spatial size (ATen's torch.instance_norm
    normalizes a single element to 0, its running variance's unbiased update to NaN)."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    n, channels = input.shape[0], input.shape[1]
    if input.numel() == 0:  # ATen: batch_norm's empty result of (1, N * C, *), weights repeated
        return _empty_instance_norm(input, running_mean, running_var, weight, bias,
                                    use_input_stats)
    require_real_floating("batch_norm", input._data)
    for name, tensor in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                         ("running_var", running_var)):
        if tensor is not None and tensor.numel() != channels:  # torch checks its N copies
            raise RuntimeError(f"{name} should contain {n * channels} elements not "
                               f"{n * tensor.numel()}")
    # ATen's: a batch_norm of the (1, N * C, *) view of a C-order input (a copy that the node
    # saves if not), the N copies of the running statistics averaged back after it (its
    # graph: ViewBackward0 of NativeBatchNormBackward0)
    copies = [None if t is None else repeat(t, (n,))
              for t in (running_mean, running_var, weight, bias)]
    folded = reshape(input.contiguous(), (1, n * channels) + tuple(input.shape[2:]))
    out = batch_norm_unchecked(folded, *copies, use_input_stats, momentum, eps)
    for running, copy in zip((running_mean, running_var), copies[:2]):
        if running is not None and use_input_stats:
            with no_grad():
                running.copy_(mean(reshape(copy, (n, channels)), 0))
    return reshape(out, tuple(input.shape))


def _empty_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats):
    """ATen's instance_norm of an empty input: the running statistics become the mean of
    their N copies (NaN for N = 0) when it uses the input's statistics, the result
    batch_norm's of an empty input."""
    n, channels = input.shape[0], input.shape[1]
    for running in (running_mean, running_var):
        if running is not None and use_input_stats:
            with no_grad():
                running.copy_(mean(reshape(repeat(running, (n,)), (n, channels)), 0))
    return _empty_norm(input, None if weight is None else repeat(weight, (n,)),
                       None if bias is None else repeat(bias, (n,)))


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """torch.nn.functional.group_norm: channels split into groups, each normalized with its *.

    >>> group_norm(gradkit.randn(2, 4, 3), 2).shape
    gradkit.Size([2, 4, 3])
    """
    if input.ndim >= 2 and not input.shape[1] % num_groups:
        rows = [input.shape[0] * input.shape[1] // num_groups, num_groups] + \
            list(input.shape[2:])
        if math.prod(rows[:1] + rows[2:]) == 1:  # torch's check of the grouped batch
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {rows}")
    eps = number_argument(eps, "group_norm", "eps", 5, "float", optional=False)
    return group_norm_unchecked(input, num_groups, weight, bias, eps)


def group_norm_unchecked(input, num_groups: int, weight=None, bias=None,  # noqa: A002
                         eps: float = 1e-5):
    """group_norm without F's Python check of more than one value per group (ATen's
    torch.group_norm normalizes a single one to 0)."""
    num_groups = int_argument(num_groups, "group_norm", "num_groups", 2)  # (its C++ parser)
    if input.ndim < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, channels = input.shape[:2]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if channels % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and (tensor.ndim != 1 or tensor.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{list(tensor.shape)} and input of shape {list(input.shape)}")
    require_real_floating("GroupNormKernelImpl", input._data)

    def normalized(input, weight, bias):
        # torch's NativeGroupNormBackward0 saves the input
        kept, weight, bias = _opmath(input, kept_for_backward(input), weight, bias)
        grouped = reshape(kept, (n, num_groups, math.prod(input.shape[1:]) // num_groups))
        out, _, _ = _normalize(grouped, (2,), eps, welford=True)
        out = _affine(reshape(out, tuple(input.shape)), weight, bias, input)
        if weight is not None and n and not grouped.shape[2]:
            # NaN, as torch's weight gradient and its input gradient's derivative in the weight
            out = add(out, mul(reshape(weight, channel_shape(input)), sum_(grouped) * math.nan))
        return _in_input_layout(out, input)
    return group_norm_node(normalized, (input, weight, bias), num_groups, eps)


def rms_norm(input, normalized_shape, weight=None, eps: float | None = None):
    """torch.nn.functional.rms_norm: x / sqrt(mean(x², trailing dims) + eps), times weight."""
    eps = number_argument(eps, "rms_norm", "eps", 4, "float")
    shape = checked_normalized_shape(input, normalized_shape, {"weight": weight}, "*")
    k = len(shape)
    if input._data.dtype.kind in "biu":
        raise kernel_error("rms_norm")(input._data)
    dtype = to_numpy_dtype(input.dtype)
    # torch upcasts float16 to float32 (its opmath type), eps included (float32's default),
    # so x² of a half above 256 stays finite; the weight multiplies the wide result, rounded
    # once, to the input's dtype whatever the weight's; x² is pow's (backward 2x: NaN at 1e308)
    wide = np.dtype(np.float32) if dtype == HALF else dtype
    eps = float(np.finfo(wide).eps) if eps is None else float(dtype.type(eps))
    upcast = astype(input, wide) if wide != dtype else input
    axes = tuple(range(input.ndim - k, input.ndim))
    out = mul(upcast, rsqrt(add(mean(pow_(upcast, 2), axes, True), eps)))
    out = mul(out, weight) if weight is not None else out
    return astype(out, dtype) if out._data.dtype != dtype else out


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0):
    """torch.nn.functional.local_response_norm: x / (k + alpha * mean of x² over nearby
    channels) ** beta, composed as torch composes it."""
    dim = input.ndim
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    squares = mul(input, input)
    if dim == 3:
        squares = pad(unsqueeze(squares, 1), (0, 0, size // 2, (size - 1) // 2))
        squares = squeeze(avg_pool2d(squares, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        squares = reshape(squares, (sizes[0], 1, sizes[1], sizes[2], -1))
        squares = pad(squares, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        squares = reshape(squeeze(avg_pool3d(squares, (size, 1, 1), stride=1), 1), sizes)
    return div(input, squares.mul(alpha).add(k).pow(beta))  # torch's methods (their errors)
