"""2-D convolution: im2col by slicing once per kernel position, then one einsum.

``unfold`` gathers every kernel window of a padded (N, C, H, W) array into
(N, C, kh, kw, Ho, Wo); ``fold`` is its adjoint (windows added back in place).
The two are each other's vjp, so the convolution's gradients (written with
them, ``pad`` and ``einsum``) are differentiable again.
"""
from __future__ import annotations

from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.einsum import _einsum
from gradkit.ops.padding import pad
from gradkit.ops.reduction import sum as _sum
from gradkit.ops.shape import expand, reshape, squeeze, unsqueeze
from gradkit.ops.unary_helpers import c_type_name, scalar_type_name


def _windows(i, j, geometry):
    """Slices of the padded input that kernel position (i, j) reads for all outputs."""
    _, _, (ho, wo), (sh, sw), (dh, dw) = geometry
    return (slice(i * dh, i * dh + sh * (ho - 1) + 1, sh),
            slice(j * dw, j * dw + sw * (wo - 1) + 1, sw))


# geometry = (padded (H, W), kernel (kh, kw), output (Ho, Wo), stride, dilation)

@op(linear=True)
def unfold(xp, x, geometry=None):
    """(N, C, H, W) -> (N, C, kh, kw, Ho, Wo): the input under every kernel window."""
    kernel, out_hw = geometry[1], geometry[2]
    cols = xp.empty(x.shape[:2] + tuple(kernel) + tuple(out_hw), dtype=x.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            cols[:, :, i, j] = x[(slice(None), slice(None)) + _windows(i, j, geometry)]
    return cols


@op(linear=True)
def fold(xp, cols, geometry=None):
    """Adjoint of unfold: add every window back into a (N, C, H, W) array of zeros."""
    in_hw, kernel = geometry[0], geometry[1]
    out = xp.zeros(cols.shape[:2] + tuple(in_hw), dtype=cols.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            out[(slice(None), slice(None)) + _windows(i, j, geometry)] += cols[:, :, i, j]
    return out


unfold.defvjp(lambda g, geometry: fold(g, geometry=geometry))
unfold.defjvp(lambda t, geometry: unfold(t, geometry=geometry))
fold.defvjp(lambda g, geometry: unfold(g, geometry=geometry))
fold.defjvp(lambda t, geometry: fold(t, geometry=geometry))


def _group_shapes(x_shape, w_shape, groups):
    n, c = x_shape[:2]
    o, cg, kh, kw = w_shape
    return (n, groups, cg) + (kh, kw), (groups, o // groups, cg, kh, kw)


@op(save=("x", "w"), node_name="ConvolutionBackward0")
def convolution(xp, x, w, b, padding=(0, 0, 0, 0), geometry=None, groups=1):
    """Grouped 2-D cross-correlation of (N, C, H, W) with (O, C/groups, kh, kw), plus bias."""
    top, bottom, left, right = padding
    padded = xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    cols = unfold(padded, geometry=geometry)
    cols_shape, w_groups = _group_shapes(x.shape, w.shape, groups)
    cols = cols.reshape(cols_shape + tuple(geometry[2]))
    out = xp.einsum("ngcklhw,gockl->ngohw", cols, w.reshape(w_groups), optimize=True)
    out = out.reshape((x.shape[0], w.shape[0]) + tuple(geometry[2]))
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def _torch_pad(padding):
    """(top, bottom, left, right) as the (left, right, top, bottom) list ``pad`` takes."""
    top, bottom, left, right = padding
    return (left, right, top, bottom)


def _grad_input(g, x, w, padding, geometry, groups):
    n = x.shape[0]
    cols_shape, w_groups = _group_shapes(tuple(x.shape), tuple(w.shape), groups)
    g_groups = reshape(g, (n, groups, w.shape[0] // groups) + tuple(geometry[2]))
    cols = _einsum(g_groups, conj(reshape(w, w_groups)), equation="ngohw,gockl->ngcklhw")
    cols = reshape(cols, (n, x.shape[1]) + tuple(w.shape[2:]) + tuple(geometry[2]))
    padded = fold(cols, geometry=geometry)
    return pad(padded, tuple(-p for p in _torch_pad(padding)))


def _grad_weight(g, x, w, padding, geometry, groups):
    n = x.shape[0]
    cols_shape, w_groups = _group_shapes(tuple(x.shape), tuple(w.shape), groups)
    cols = unfold(pad(x, _torch_pad(padding)), geometry=geometry)
    cols = reshape(cols, cols_shape + tuple(geometry[2]))
    g_groups = reshape(g, (n, groups, w.shape[0] // groups) + tuple(geometry[2]))
    grad = _einsum(g_groups, conj(cols), equation="ngohw,ngcklhw->gockl")
    return reshape(grad, tuple(w.shape))


def _grad_bias(g, x, w, padding, geometry, groups):
    return _sum(g, (0, 2, 3))


def _tangent_bias(t, x, w, padding, geometry, groups):
    return expand(reshape(t, (1, -1, 1, 1)), (x.shape[0], w.shape[0]) + tuple(geometry[2]))


convolution.defvjp(_grad_input, _grad_weight, _grad_bias)
convolution.defjvp(
    lambda t, x, w, padding, geometry, groups:
        convolution(t, w, None, padding=padding, geometry=geometry, groups=groups),
    lambda t, x, w, padding, geometry, groups:
        convolution(x, t, None, padding=padding, geometry=geometry, groups=groups),
    _tangent_bias)


def _pair(value, name: str) -> tuple[int, int]:
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) == 1:
        return (value[0], value[0])
    if len(value) != 2:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 values "
                           f"to match the convolution dimensions, but got {name}={list(value)}")
    return value


def _padding(padding, kernel, stride, dilation):
    """(top, bottom, left, right) from an int, a pair, 'valid' or 'same'."""
    if padding == "valid":
        return (0, 0, 0, 0)
    if padding == "same":
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
        return (total[0] // 2, total[0] - total[0] // 2, total[1] // 2, total[1] - total[1] // 2)
    if isinstance(padding, str):
        raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
    ph, pw = _pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return (ph, ph, pw, pw)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """torch.nn.functional.conv2d: (N, C, H, W) or (C, H, W) input, (O, C/groups, kh, kw) weight.

    >>> conv2d(gradkit.randn(1, 3, 8, 8), gradkit.randn(4, 3, 3, 3), padding=1).shape
    gradkit.Size([1, 4, 8, 8])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    if input.ndim == 3:
        return squeeze(conv2d(unsqueeze(input, 0), weight, bias, stride, padding, dilation,
                              groups), 0)
    if weight.ndim != 4:
        raise RuntimeError("weight should have at least three dimensions" if weight.ndim < 3
                           else f"Expected 4-dimensional weight for 4-dimensional input "
                           f"{list(input.shape)}, but got {weight.ndim}-dimensional weight of "
                           f"size {list(weight.shape)} instead")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    out_channels, group_channels, kh, kw = weight.shape
    if out_channels % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")
    if input.shape[1] != group_channels * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have {group_channels * groups} "
                           f"channels, but got {input.shape[1]} channels instead")
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input._data)} but found "
                           f"{scalar_type_name(weight._data)}")
    if bias is not None and bias._data.dtype != input._data.dtype:
        raise RuntimeError(f"Input type ({c_type_name(input._data)}) and bias type "
                           f"({c_type_name(bias._data)}) should be the same")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    pads = _padding(padding, (kh, kw), stride, dilation)
    padded = (input.shape[2] + pads[0] + pads[1], input.shape[3] + pads[2] + pads[3])
    span = (dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1)
    if padded[0] < span[0] or padded[1] < span[1]:
        raise RuntimeError(f"Calculated padded input size per channel: ({padded[0]} x "
                           f"{padded[1]}). Kernel size: ({span[0]} x {span[1]}). Kernel size "
                           "can't be greater than actual input size")
    out_hw = tuple((p - s) // st + 1 for p, s, st in zip(padded, span, stride, strict=True))
    geometry = (padded, (kh, kw), out_hw, stride, dilation)
    return convolution(input, weight, bias, padding=pads, geometry=geometry, groups=groups)
