"""More torch.nn layers: Conv1d, ConvTranspose2d, the normalization layers (BatchNorm1d/2d,
InstanceNorm2d, GroupNorm, RMSNorm) and the pooling layers (MaxPool1d, AvgPool1d/2d,
AdaptiveAvgPool2d), each a thin Module over ``gradkit.nn.functional`` with torch's names,
defaults, buffers and repr.
"""
from __future__ import annotations

import warnings

from gradkit import creation
from gradkit._tensor import Size
from gradkit.autograd.grad_mode import no_grad
from gradkit.backend import int64
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.function_layer import FunctionLayer
from gradkit.nn.layers import _ConvNd, _MaxPoolNd, _ntuple, scale_and_shift
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) inputs; weight (out, in/groups, k).

    >>> gradkit.nn.Conv1d(2, 4, 3, padding=1)(gradkit.ones(5, 2, 8)).shape
    gradkit.Size([5, 4, 8])
    """

    dims = 1

    function = staticmethod(F.conv1d)


class ConvTranspose2d(_ConvNd):
    """The adjoint of Conv2d as a layer; weight (in, out/groups, kH, kW).

    >>> gradkit.nn.ConvTranspose2d(2, 3, 2, stride=2)(gradkit.ones(1, 2, 4, 4)).shape
    gradkit.Size([1, 3, 8, 8])
    """

    transposed = True
    function = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)
        self.output_padding = _ntuple(output_padding, self.dims)

    def forward(self, input, output_size=None):
        return self.function(input, self.weight, self.bias, self.stride, self.padding,
                             self._output_padding(input, output_size), self.groups,
                             self.dilation)

    def _output_padding(self, x, output_size) -> tuple:
        """torch's: the output_padding that makes the output ``output_size`` (if given)."""
        if output_size is None:
            return self.output_padding
        n = self.dims
        lead = 2 if x.ndim == n + 2 else 1
        size = output_size[lead:] if len(output_size) == lead + n else output_size
        if len(size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {x.ndim}D input, output_size must have {n} "
                             f"or {lead + n} elements (got {len(size)})")
        lows = [(x.shape[lead + d] - 1) * self.stride[d] - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        highs = [low + s - 1 for low, s in zip(lows, self.stride, strict=True)]
        if any(not low <= n <= high for n, low, high in zip(size, lows, highs, strict=True)):
            raise ValueError(f"requested an output size of {size}, but valid sizes range from "
                             f"{lows} to {highs} (for an input of {Size(x.shape[lead:])})")
        return tuple(n - low for n, low in zip(size, lows, strict=True))


class _Norm(Module):
    """BatchNorm / InstanceNorm: affine weight and bias per channel, running statistics as
    buffers (with torch's num_batches_tracked) when ``track_running_stats``."""

    def __init__(self, num_features: int, eps: float, momentum: float | None, affine: bool,
                 track_running_stats: bool, device, dtype, bias: bool) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        scale_and_shift(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean",
                                 creation.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var",
                                 creation.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 creation.tensor(0, dtype=int64, device=device))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    _version = 2  # torch's: num_batches_tracked came with version 2

    def _upgrade_state_dict(self, state_dict, dot: str, local_metadata: dict) -> None:
        """A state dict older than version 2 (or a plain dict) may lack num_batches_tracked:
        the module keeps its own count, as torch."""
        version = local_metadata.get("version")
        if (version is None or version < 2) and self.track_running_stats:
            state_dict.setdefault(dot + "num_batches_tracked", self.num_batches_tracked)

    def reset_parameters(self) -> None:
        """Running statistics reset, weight ones and bias zeros (as built)."""
        self.reset_running_stats()
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1)
            if self.bias is not None:
                self.bias.zero_()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def _momentum(self) -> float:
        """torch's factor: momentum, or the cumulative average 1/batches when it is None."""
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                return 1.0 / float(self.num_batches_tracked.item())
        return 0.0 if self.momentum is None else self.momentum

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_Norm):
    ranks: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias)

    def forward(self, input):
        if input.ndim not in self.ranks:
            raise ValueError(f"expected {' or '.join(f'{r}D' for r in self.ranks)} input (got "
                             f"{input.ndim}D input)")
        momentum = self._momentum()
        use_batch = self.training or self.running_mean is None
        tracked = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if tracked else None,
                            self.running_var if tracked else None, self.weight, self.bias,
                            use_batch, momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel.

    >>> gradkit.nn.BatchNorm1d(3)(gradkit.randn(4, 3)).shape
    gradkit.Size([4, 3])
    """

    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs, per channel."""

    ranks = (4,)


class InstanceNorm2d(_Norm):
    """Each (sample, channel) plane of (N, C, H, W) or (C, H, W) normalized on its own."""

    dims = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias)

    def forward(self, input):
        batched = self.dims + 2
        if input.ndim not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got {input.ndim}D "
                             "input)")
        feature_dim = input.ndim - self.dims - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is not "
                          "used because affine=False", stacklevel=2)
        if input.ndim == batched - 1:  # batched once, not checked (and warned about) again
            return self._instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._instance_norm(input)

    def _instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)


class GroupNorm(Module):
    """Channels split into ``num_groups`` groups, each normalized with the spatial dims."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        scale_and_shift(self, num_channels, affine, bias, device, dtype)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x², trailing dims) + eps), times a learned weight."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) \
            else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(creation.ones(shape, device=device, dtype=dtype)) \
            if elementwise_affine else None

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


def _single(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class MaxPool1d(_MaxPoolNd):
    """Max over windows of (N, C, L) inputs (stride defaults to kernel_size)."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool2d(Module):
    """Means over windows of (N, C, H, W) inputs."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(AvgPool2d):
    """Means over windows of (N, C, L) inputs (its arguments kept as 1-tuples, as torch)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__(_single(kernel_size),
                         _single(stride if stride is not None else kernel_size),
                         _single(padding), ceil_mode, count_include_pad)
        del self.divisor_override  # torch's AvgPool1d has none

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AdaptivePool(FunctionLayer):
    """``function(input, output_size)``: pooling over torch's adaptive windows."""

    function = staticmethod(F.adaptive_avg_pool2d)
    settings = ("output_size",)

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size


class AdaptiveAvgPool2d(_AdaptivePool):
    """Means over torch's adaptive windows, to a fixed (H, W) output."""


class _MaxUnpool(Module):
    """Puts max-pooled values back at their indices (stride defaults to kernel_size)."""

    dims = 2

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        as_tuple = (lambda v: (v,) * self.dims if isinstance(v, int) else tuple(v))
        self.kernel_size = as_tuple(kernel_size)
        self.stride = as_tuple(stride if stride is not None else kernel_size)
        self.padding = as_tuple(padding)

    def forward(self, input, indices, output_size=None):
        unpool = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[self.dims]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """F.max_unpool1d as a layer: ``layer(pooled, indices, output_size=None)``."""

    dims = 1


class MaxUnpool2d(_MaxUnpool):
    """F.max_unpool2d as a layer: ``layer(pooled, indices, output_size=None)``."""
