"""The 1-D / 3-D variants torch has of gradkit's layers: Conv3d, ConvTranspose1d/3d,
BatchNorm3d, InstanceNorm1d/3d, AdaptiveMaxPool3d, LPPool3d and MaxUnpool3d (same arguments,
parameters, buffers and repr)."""
from __future__ import annotations

from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.layers import _ConvNd
from gradkit.nn.layers_more import ConvTranspose2d, InstanceNorm2d, _BatchNorm, _MaxUnpool
from gradkit.nn.layers_small import AdaptiveMaxPool1d, LPPool1d


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) inputs; weight (out, in/groups, kD, kH, kW).

    >>> gradkit.nn.Conv3d(1, 2, 3, padding=1)(gradkit.ones(1, 1, 4, 4, 4)).shape
    gradkit.Size([1, 2, 4, 4, 4])
    """

    dims = 3

    def forward(self, x):
        return F.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class ConvTranspose1d(ConvTranspose2d):
    """The adjoint of Conv1d as a layer; weight (in, out/groups, k).

    >>> gradkit.nn.ConvTranspose1d(2, 3, 2, stride=2)(gradkit.ones(1, 2, 4)).shape
    gradkit.Size([1, 3, 8])
    """

    dims = 1

    def forward(self, x, output_size=None):
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups,
                                  self.dilation)


class ConvTranspose3d(ConvTranspose2d):
    """The adjoint of Conv3d as a layer; weight (in, out/groups, kD, kH, kW).

    >>> gradkit.nn.ConvTranspose3d(2, 3, 2, stride=2)(gradkit.ones(1, 2, 2, 2, 2)).shape
    gradkit.Size([1, 3, 4, 4, 4])
    """

    dims = 3

    def forward(self, x, output_size=None):
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups,
                                  self.dilation)


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
