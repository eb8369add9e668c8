"""Lazy layers (torch.nn's): Linear, Conv, ConvTranspose, BatchNorm and InstanceNorm whose
input size (``in_features`` / ``in_channels`` / ``num_features``) is read from the first input.
They hold UninitializedParameter / UninitializedBuffer placeholders until then; the first call
sizes and initializes them (the same objects, so an optimizer made before keeps them) and the
module becomes the plain layer (``cls_to_become``), as in torch."""
from __future__ import annotations

from gradkit.autograd.grad_mode import no_grad
from gradkit.nn.layers import Conv2d, Linear
from gradkit.nn.layers_more import (
    BatchNorm1d, BatchNorm2d, Conv1d, ConvTranspose2d, InstanceNorm2d, _BatchNorm)
from gradkit.nn.layers_nd import (
    BatchNorm3d, Conv3d, ConvTranspose1d, ConvTranspose3d, InstanceNorm1d, InstanceNorm3d)
from gradkit.nn.lazy import LazyModuleMixin
from gradkit.nn.parameter import UninitializedBuffer, UninitializedParameter


class _LazySized(LazyModuleMixin):
    """``reset_parameters`` only once the placeholders are sized (nothing is drawn from the
    generator before, as torch); ``_inferred`` names the size the first input gives."""

    _inferred: str

    def reset_parameters(self) -> None:
        """The layer's initialization, once its parameters have their shapes."""
        if not self.has_uninitialized_params() and getattr(self, self._inferred) != 0:
            super().reset_parameters()


class LazyLinear(_LazySized, Linear):
    """Linear(in_features inferred from the input's last dim, out_features).

    >>> layer = gradkit.nn.LazyLinear(2)
    >>> layer(gradkit.ones(5, 3)).shape, layer
    (gradkit.Size([5, 2]), Linear(in_features=3, out_features=2, bias=True))
    """

    cls_to_become = Linear
    _inferred = "in_features"

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input) -> None:
        """Size the weight from ``input``'s last dim and initialize it and the bias."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # sized by load_state_dict: take in_features from the input
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is "
                                     "not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConv(_LazySized):
    """in_channels from the input's channel dim (dim 1 batched, 0 unbatched)."""

    _inferred = "in_channels"

    def _placeholders(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Size weight and bias from the input's channels and initialize them."""
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        outer = (self.in_channels, self.out_channels // self.groups) if self.transposed \
            else (self.out_channels, self.in_channels // self.groups)
        self.weight.materialize(outer + self.kernel_size)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        unbatched = self.dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConvNd(_LazyConv):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._placeholders(out_channels, bias, device, dtype)


class _LazyConvTransposeNd(_LazyConv):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._placeholders(out_channels, bias, device, dtype)


class _LazyNormBase(_LazySized):
    """num_features from the input's dim 1; weight, bias and running stats are placeholders
    (torch's lazy norms default to affine=True, track_running_stats=True, InstanceNorm too)."""

    _inferred = "num_features"

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        for name in ("weight", "bias"):
            if getattr(self, name) is not None:
                setattr(self, name, UninitializedParameter(device=device, dtype=dtype))
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)

    def initialize_parameters(self, input) -> None:
        """Size weight, bias and running stats from ``input.shape[1]`` and reset them."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            for tensor in (self.weight, self.bias, self.running_mean, self.running_var):
                if tensor is not None:
                    tensor.materialize((self.num_features,))
            self.reset_parameters()


def _lazy(lazy_base: type, plain: type, doc: str = "", parent: type | None = None) -> type:
    """The lazy twin of the layer ``plain``: ``lazy_base``'s placeholders, then ``plain``'s
    class (or ``parent``, whose subclass it then is not, with ``plain``'s accepted ranks)."""
    name = "Lazy" + plain.__name__
    what = "num_features" if issubclass(lazy_base, _LazyNormBase) else "in_channels"
    attrs = {"__module__": __name__, "__qualname__": name, "cls_to_become": plain,
             "__doc__": doc or f"{plain.__name__} whose {what} is read from the first input."}
    if parent is not None:
        attrs["ranks"] = plain.ranks
    return type(name, (lazy_base, parent or plain), attrs)


LazyConv1d = _lazy(_LazyConvNd, Conv1d)
LazyConv2d = _lazy(_LazyConvNd, Conv2d, """Conv2d whose in_channels is read from the first input.

    >>> layer = gradkit.nn.LazyConv2d(4, 3)
    >>> layer(gradkit.ones(1, 2, 5, 5)).shape, layer
    (gradkit.Size([1, 4, 3, 3]), Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1)))
    """)
LazyConv3d = _lazy(_LazyConvNd, Conv3d)
LazyConvTranspose1d = _lazy(_LazyConvTransposeNd, ConvTranspose1d)
LazyConvTranspose2d = _lazy(_LazyConvTransposeNd, ConvTranspose2d)
LazyConvTranspose3d = _lazy(_LazyConvTransposeNd, ConvTranspose3d)
# torch's lazy batch norms derive from _BatchNorm, not from BatchNorm1d/2d/3d
LazyBatchNorm1d = _lazy(_LazyNormBase, BatchNorm1d, parent=_BatchNorm)
LazyBatchNorm2d = _lazy(_LazyNormBase, BatchNorm2d, parent=_BatchNorm)
LazyBatchNorm3d = _lazy(_LazyNormBase, BatchNorm3d, parent=_BatchNorm)
LazyInstanceNorm1d = _lazy(_LazyNormBase, InstanceNorm1d)
LazyInstanceNorm2d = _lazy(_LazyNormBase, InstanceNorm2d)
LazyInstanceNorm3d = _lazy(_LazyNormBase, InstanceNorm3d)
