"""The 1-D / 3-D variants torch has of gradkit's layers: Conv3d, ConvTranspose1d/3d,
BatchNorm3d, InstanceNorm1d/3d, AdaptiveMaxPool3d, LPPool3d and MaxUnpool3d (same arguments,
parameters, buffers and repr); FractionalMaxPool2d/3d."""
from __future__ import annotations

from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.layers import _ConvNd
from gradkit.nn.layers_more import ConvTranspose2d, InstanceNorm2d, _BatchNorm, _MaxUnpool
from gradkit.nn.layers_small import AdaptiveMaxPool1d, LPPool1d
from gradkit.nn.module import Module


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) inputs; weight (out, in/groups, kD, kH, kW).

    >>> gradkit.nn.Conv3d(1, 2, 3, padding=1)(gradkit.ones(1, 1, 4, 4, 4)).shape
    gradkit.Size([1, 2, 4, 4, 4])
    """

    dims = 3

    function = staticmethod(F.conv3d)


class ConvTranspose1d(ConvTranspose2d):
    """The adjoint of Conv1d as a layer; weight (in, out/groups, k).

    >>> gradkit.nn.ConvTranspose1d(2, 3, 2, stride=2)(gradkit.ones(1, 2, 4)).shape
    gradkit.Size([1, 3, 8])
    """

    dims = 1
    function = staticmethod(F.conv_transpose1d)


class ConvTranspose3d(ConvTranspose2d):
    """The adjoint of Conv3d as a layer; weight (in, out/groups, kD, kH, kW).

    >>> gradkit.nn.ConvTranspose3d(2, 3, 2, stride=2)(gradkit.ones(1, 2, 2, 2, 2)).shape
    gradkit.Size([1, 3, 4, 4, 4])
    """

    dims = 3
    function = staticmethod(F.conv_transpose3d)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs, per channel."""

    ranks = (5,)


class InstanceNorm1d(InstanceNorm2d):
    """Each (sample, channel) row of (N, C, L) or (C, L) normalized on its own."""

    dims = 1


class InstanceNorm3d(InstanceNorm2d):
    """Each (sample, channel) volume of (N, C, D, H, W) or (C, D, H, W) normalized on its own."""

    dims = 3


class AdaptiveMaxPool3d(AdaptiveMaxPool1d):
    """Maxima over torch's adaptive windows, to a fixed (D, H, W) (``return_indices=``)."""

    function = staticmethod(F.adaptive_max_pool3d)


class LPPool3d(LPPool1d):
    """(sum of x^p over each window)^(1/p) of (N, C, D, H, W) inputs."""

    function = staticmethod(F.lp_pool3d)


class MaxUnpool3d(_MaxUnpool):
    """F.max_unpool3d as a layer: ``layer(pooled, indices, output_size=None)``."""

    dims = 3


class FractionalMaxPool2d(Module):
    """F.fractional_max_pool2d as a layer; ``_random_samples`` (a buffer, as torch's) fixes the
    windows, None draws them per call.

    >>> gradkit.nn.FractionalMaxPool2d(2, output_ratio=0.5)(gradkit.ones(1, 8, 6)).shape
    gradkit.Size([1, 4, 3])
    """

    dims = 2
    function = staticmethod(F.fractional_max_pool2d)

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        d = self.dims

        def ntuple(value):
            return tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
        self.kernel_size = ntuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else ntuple(output_size)
        self.output_ratio = None if output_ratio is None else ntuple(output_ratio)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output "
                             "size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return self.function(input, self.kernel_size, self.output_size, self.output_ratio,
                             self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool3d(FractionalMaxPool2d):
    """F.fractional_max_pool3d as a layer (``_random_samples`` (N, C, 3))."""

    dims = 3
    function = staticmethod(F.fractional_max_pool3d)
