"""Small parameter-free layers: Identity, Unflatten, Upsample, PixelShuffle/PixelUnshuffle,
ChannelShuffle, Fold/Unfold, Softmax2d, channel and alpha dropout, the padding layers
(ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad in 1-3 dims),
LocalResponseNorm and the remaining pooling layers, each a thin Module over
``gradkit.nn.functional`` with torch's arguments and repr."""
from __future__ import annotations

from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.function_layer import FunctionLayer
from gradkit.nn.layers import Dropout, _MaxPoolNd, _ntuple
from gradkit.nn.layers_more import AvgPool2d, _AdaptivePool
from gradkit.nn.module import Module


class Identity(Module):
    """Returns its input; takes (and ignores) any arguments, as torch."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


def _require_tuple_int(size) -> None:
    """torch's check of Unflatten's size: a tuple or list of ints."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"unflattened_size must be a tuple of ints, but found type {type(size).__name__}")
    for idx, elem in enumerate(size):
        if not isinstance(elem, int):
            raise TypeError("unflattened_size must be tuple of ints, but found element of "
                            f"type {type(elem).__name__} at pos {idx}")


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``.

    >>> gradkit.nn.Unflatten(1, (2, 3))(gradkit.ones(4, 6)).shape
    gradkit.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        _require_tuple_int(unflattened_size)
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Upsample(Module):
    """F.interpolate as a layer (``size`` or ``scale_factor``, torch's modes)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None \
            else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample with mode 'nearest'."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode 'bilinear' and align_corners=True."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(FunctionLayer):
    """(*, C·r², H, W) -> (*, C, H·r, W·r)."""

    function = staticmethod(F.pixel_shuffle)
    settings = ("upscale_factor",)

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor


class PixelUnshuffle(FunctionLayer):
    """(*, C, H·r, W·r) -> (*, C·r², H, W)."""

    function = staticmethod(F.pixel_unshuffle)
    settings = ("downscale_factor",)

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor


class ChannelShuffle(FunctionLayer):
    """Shuffles the channels of (N, C, *) inputs across ``groups`` groups."""

    function = staticmethod(F.channel_shuffle)
    settings = ("groups",)

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups


class Unfold(Module):
    """Sliding ``kernel_size`` blocks of (N, C, H, W) as columns (F.unfold)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Unfold):
    """Columns of blocks summed back into an ``output_size`` image (F.fold)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


class _PadNd(Module):
    """Pads the last ``dims`` dims by ``padding`` (an int pads every side alike)."""

    dims = 1
    mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self.dims)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _pad_layer(base, dims: int, doc: str, mode: str | None = None):
    attributes = {"dims": dims, "__doc__": doc, "__module__": __name__}
    if mode is not None:
        attributes["mode"] = mode
    return type(base.__name__.strip("_").replace("Nd", f"{dims}d"), (base,), attributes)


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class _CircularPadNd(_PadNd):
    mode = "circular"


ConstantPad1d, ConstantPad2d, ConstantPad3d = (
    _pad_layer(_ConstantPadNd, d, f"Pads the last {d} dim(s) with ``value``.") for d in (1, 2, 3))
ZeroPad1d, ZeroPad2d, ZeroPad3d = (
    _pad_layer(_ZeroPadNd, d, f"Pads the last {d} dim(s) with zeros.") for d in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    _pad_layer(_ReflectionPadNd, d, f"Pads the last {d} dim(s) by reflection.")
    for d in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _pad_layer(_ReplicationPadNd, d, f"Pads the last {d} dim(s) by repeating the edge.")
    for d in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (
    _pad_layer(_CircularPadNd, d, f"Pads the last {d} dim(s) circularly.") for d in (1, 2, 3))


class LocalResponseNorm(Module):
    """Each channel divided by (k + alpha/size · sum of squares over ``size`` neighbours)^beta."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class MaxPool3d(_MaxPoolNd):
    """Max over windows of (N, C, D, H, W) inputs (stride defaults to kernel_size)."""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool3d(AvgPool2d):
    """Means over windows of (N, C, D, H, W) inputs."""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool1d(_AdaptivePool):
    """Means over torch's adaptive windows, to a fixed length."""

    function = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Means over torch's adaptive windows, to a fixed (D, H, W)."""

    function = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptivePool):
    """Maxima over torch's adaptive windows, to a fixed length (``return_indices=``)."""

    function = staticmethod(F.adaptive_max_pool1d)

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return self.function(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(AdaptiveMaxPool1d):
    """Maxima over torch's adaptive windows, to a fixed (H, W) (``return_indices=``)."""

    function = staticmethod(F.adaptive_max_pool2d)


class LPPool1d(Module):
    """(sum of x^p over each window)^(1/p) of (N, C, L) inputs."""

    function = staticmethod(F.lp_pool1d)

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return self.function(input, float(self.norm_type), self.kernel_size, self.stride,
                             self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool2d(LPPool1d):
    """(sum of x^p over each window)^(1/p) of (N, C, H, W) inputs."""

    function = staticmethod(F.lp_pool2d)


class _ChannelDropout(Dropout):
    """Dropout whose draw ``function`` is torch's channel-wise or alpha variant."""

    function = staticmethod(F.dropout1d)

    def forward(self, input):
        return self.function(input, self.p, self.training, self.inplace)


class Dropout1d(_ChannelDropout):
    """Zeroes whole channels of (N, C, L) / (C, L) inputs while training."""


class Dropout2d(_ChannelDropout):
    """Zeroes whole channels of (N, C, H, W) inputs while training."""

    function = staticmethod(F.dropout2d)


class Dropout3d(_ChannelDropout):
    """Zeroes whole channels of (N, C, D, H, W) / (C, D, H, W) inputs while training."""

    function = staticmethod(F.dropout3d)


class AlphaDropout(_ChannelDropout):
    """Alpha dropout (for SELU networks) while training."""

    function = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_ChannelDropout):
    """Alpha dropout of whole channels while training."""

    function = staticmethod(F.feature_alpha_dropout)
