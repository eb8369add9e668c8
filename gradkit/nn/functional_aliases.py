"""torch.nn.functional's other spellings: the ``*_with_indices`` pools (always values and
indices), the deprecated ``upsample*`` (interpolate with torch's warning) and
``native_channel_shuffle`` (channel_shuffle's kernel, which torch cannot differentiate)."""
from __future__ import annotations

import inspect
import warnings

from gradkit.int_arguments import ints_reader
from gradkit.ops._op import op
from gradkit.ops.grad_edges import no_derivative
from gradkit.ops.interpolate import interpolate
from gradkit.ops.pooling import (
    adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, max_pool1d, max_pool2d,
    max_pool3d)
from gradkit.ops.pooling_fractional import fractional_max_pool2d, fractional_max_pool3d


def check_channel_shuffle(shape: tuple, groups: int) -> tuple:
    """torch's checks of a channel shuffle of ``shape`` into ``groups``; returns ``shape``."""
    if len(shape) <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if shape[1] % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {shape[1]} "
                           f"channels and {groups} groups.")
    return shape


@op(node_name="NotImplemented")
def native_channel_shuffle(xp, input, groups: int | None = None):
    """channel_shuffle's values; as torch's, backward (and forward AD) through it raises."""
    if groups is None:  # (torch requires it)
        raise TypeError('native_channel_shuffle() missing 1 required positional arguments: '
                        '"groups"')
    batch, channels, *rest = check_channel_shuffle(input.shape, groups)
    grouped = input.reshape(batch, groups, channels // groups, *rest)
    # a copy always: a swap of size-1 dims is contiguous already, and torch's result is a new
    # tensor (a write into it must not reach the input: wide seed 2058)
    return xp.array(xp.swapaxes(grouped, 1, 2), order="C").reshape(input.shape)


native_channel_shuffle.numbers = ints_reader("native_channel_shuffle", groups=(1, "int"))


def _no_tangent(t, *saved, **params):
    raise NotImplementedError("Trying to use forward AD with aten::native_channel_shuffle that "
                              "does not support it.")


native_channel_shuffle.defvjp(no_derivative("native_channel_shuffle"))
native_channel_shuffle.defjvp(_no_tangent)


def _with_indices(pool):
    """torch's ``<pool>_with_indices``: the pool's arguments, ``return_indices`` ignored (the
    values and the indices, always)."""
    signature = inspect.signature(pool)

    def with_indices(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.arguments["return_indices"] = True
        return pool(*bound.args, **bound.kwargs)
    name = pool.__name__ + "_with_indices"
    with_indices.__name__ = with_indices.__qualname__ = name
    with_indices.__doc__ = f"``{pool.__name__}(..., return_indices=True)``: (values, indices)."
    with_indices.__signature__ = signature
    return with_indices


max_pool1d_with_indices = _with_indices(max_pool1d)
max_pool2d_with_indices = _with_indices(max_pool2d)
max_pool3d_with_indices = _with_indices(max_pool3d)
adaptive_max_pool1d_with_indices = _with_indices(adaptive_max_pool1d)
adaptive_max_pool2d_with_indices = _with_indices(adaptive_max_pool2d)
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d)
fractional_max_pool2d_with_indices = _with_indices(fractional_max_pool2d)
fractional_max_pool3d_with_indices = _with_indices(fractional_max_pool3d)


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """Deprecated in torch for ``interpolate`` (same arguments), with its warning."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated in torch: ``interpolate(..., mode='nearest')``, with its warning."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated in torch: ``interpolate(..., mode='bilinear', align_corners=True)``, with
    its warning."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)

