"""torch's top-level max pools and constant padding with ATen's signatures: ``torch.max_pool2d``
takes no ``return_indices`` (an empty stride is the kernel's), ``torch.constant_pad_nd`` any
number as its value.

>>> gradkit.max_pool1d(gradkit.tensor([[1., 3., 2., 0.]]), 2).tolist()
[[3.0, 2.0]]
"""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.int_arguments import int_list_argument
from gradkit.nn import functional as F  # noqa: N812 - torch's convention
from gradkit.number_arguments import number_argument
from gradkit.ops import padding
from gradkit.ops.pooling_arguments import no_stride

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "adaptive_max_pool1d", "constant_pad_nd"]


def _stride(stride):
    return None if no_stride(stride) else stride


def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """torch.max_pool1d: the window maxima (no indices)."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """torch.max_pool2d: the window maxima (no indices)."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """torch.max_pool3d: the window maxima (no indices)."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """torch.max_pool1d_with_indices: (maxima, their indices)."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple[Tensor, Tensor]:
    """torch.adaptive_max_pool1d: (maxima, indices), always both."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """torch.constant_pad_nd: F.pad(input, pad, "constant", value), with its own messages,
    though ``value`` is any Number (F.pad's is a float): a complex one pads a complex input."""
    pad = int_list_argument(pad, "constant_pad_nd", "pad", 2, symint=True)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.ndim:  # torch's words, spaces missing
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{input.ndim}dimensions.")
    value = number_argument(value, "constant_pad_nd", "value", 3)
    return padding.pad(input, tuple(pad), "constant", value)

