"""Layers with parameters (Linear, Conv2d, LayerNorm) and Dropout/MaxPool2d (Embedding: in
layers_bags.py).

Each is a thin Module over ``gradkit.nn.functional``, with torch's names, defaults
and initialisation.
"""
from __future__ import annotations

import math

from gradkit import creation
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn import init
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter


def scale_and_shift(module: Module, shape, affine: bool, bias: bool, device, dtype) -> None:
    """A norm layer's ``weight`` (ones) and ``bias`` (zeros) of ``shape``; None where absent
    (registered as None parameters, as torch: pruning and ``_parameters`` see the names)."""
    module.register_parameter("weight", None)
    module.register_parameter("bias", None)
    if affine:
        module.weight = Parameter(creation.ones(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(creation.zeros(shape, device=device, dtype=dtype))


class _WeightAndBias(Module):
    """What Linear and Conv2d share: a weight with one row per output feature, an optional
    bias per output feature, and torch's initialisation of both."""

    def _create_parameters(self, weight_shape: tuple, bias: bool, device, dtype,
                           bias_size: int | None = None) -> None:
        self.weight = Parameter(creation.empty(*weight_shape, device=device, dtype=dtype))
        size = weight_shape[0] if bias_size is None else bias_size
        self.register_parameter(  # a None parameter when absent, as torch
            "bias", Parameter(creation.empty(size, device=device, dtype=dtype)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's default for Linear/Conv: kaiming_uniform_(a=√5), bias U(±1/√fan_in)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)


class Linear(_WeightAndBias):
    """y = x Wᵀ + b, with W of shape (out_features, in_features).

    >>> gradkit.nn.Linear(3, 2)(gradkit.ones(5, 3)).shape
    gradkit.Size([5, 2])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self._create_parameters((out_features, in_features), bias, device, dtype)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def _ntuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _check_conv_layer(in_channels: int, out_channels: int, padding, stride: tuple, groups: int,
                      padding_mode) -> None:
    """torch's _ConvNd checks of its arguments, in its order and words (the sets printed as
    torch prints its own)."""
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")
    valid_padding_strings = {"same", "valid"}
    if isinstance(padding, str):
        if padding not in valid_padding_strings:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             f"{valid_padding_strings}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
    if padding_mode not in valid_padding_modes:
        raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                         f"padding_mode='{padding_mode}'")


def _reversed_padding(padding, kernel: tuple, dilation: tuple) -> list | tuple:
    """F.pad's (last dim first) form of the layer's padding; 'same' splits each dim's
    ``dilation * (kernel - 1)`` with the extra one after (a list for a padding string, a tuple
    for numbers, as torch's)."""
    if padding == "valid":
        return [0, 0] * len(kernel)
    if padding == "same":
        totals = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
        return [p for t in reversed(totals) for p in (t // 2, t - t // 2)]
    return tuple(p for p in reversed(padding) for _ in range(2))


class _ConvNd(_WeightAndBias):
    """What the convolution layers share: torch's arguments as ``dims``-tuples, the weight
    (out, in/groups, *kernel) or, transposed, (in, out/groups, *kernel), and torch's repr."""

    dims = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__()
        if self.transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self.dims
        _check_conv_layer(in_channels, out_channels, padding, _ntuple(stride, n), groups,
                          padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.output_padding = (0,) * n  # a transposed layer sets its own
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(
            self.padding, self.kernel_size, self.dilation)
        shape = (in_channels, out_channels // groups) if self.transposed \
            else (out_channels, in_channels // groups)
        self._create_parameters(shape + self.kernel_size, bias, device, dtype, out_channels)

    def _conv_forward(self, input, weight, bias):  # noqa: A002 - torch's name
        """``function`` (F.conv{d}d) of ``input``; a padding_mode other than "zeros" pads the
        input with ``F.pad`` first and convolves it unpadded, as torch's layers do."""
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self.function(padded, weight, bias, self.stride, (0,) * self.dims,
                                 self.dilation, self.groups)
        return self.function(input, weight, bias, self.stride, self.padding, self.dilation,
                             self.groups)

    def forward(self, input):  # noqa: A002 - torch's name
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        n = self.dims
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) inputs; weight (out, in/groups, kH, kW).

    >>> gradkit.nn.Conv2d(1, 4, 3, padding=1)(gradkit.ones(2, 1, 8, 8)).shape
    gradkit.Size([2, 4, 8, 8])
    """

    function = staticmethod(F.conv2d)


class LayerNorm(Module):
    """Normalise over the last dims to mean 0, variance 1, then scale and shift.

    >>> gradkit.nn.LayerNorm(4)(gradkit.randn(2, 4)).shape
    gradkit.Size([2, 4])
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) \
            else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        scale_and_shift(self, shape, elementwise_affine, bias, device, dtype)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class Dropout(Module):
    """Zero each element with probability p while training (scaling the rest by 1/(1-p))."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:  # (torch's comparisons, so a str p fails as torch's)
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class _MaxPoolNd(Module):
    """The settings of MaxPool1d/2d/3d, in torch's order (return_indices before ceil_mode)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """Max over kernel_size windows of (N, C, H, W) inputs (stride defaults to kernel_size);
    with ``return_indices=True``, (maxima, their flat indices in each H*W plane)."""

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)
