"""N-d convolution: im2col by slicing once per kernel position, then one einsum.

``unfold`` gathers every kernel window of a padded (N, C, *sizes) array into
(N, C, *kernel, *out); ``fold`` is its adjoint (windows added back in place).
The two are each other's vjp, so the convolution's gradients (written with
them, ``pad`` and ``einsum``) are differentiable again.
"""
from __future__ import annotations

import itertools

import numpy as np

from gradkit.ops._op import op
from gradkit.backend import float16, float32
from gradkit.memory_format import lay_out, suggested_order
from gradkit.ops.arithmetic import add
from gradkit.ops.complex import conj
from gradkit.ops.conversion import astype
from gradkit.ops.einsum import _einsum
from gradkit.ops.half_scalar import HALF
from gradkit.ops.inplace import inplace
from gradkit.ops.padding import pad
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.reduction import sum as _sum
from gradkit.ops.shape import reshape, squeeze, unsqueeze
from gradkit.ops.slicing import select
from gradkit.ops.unary_helpers import (
    c_type_name, kernel_error, scalar_type_name, tensor_type_name)
from gradkit.tensor_arguments import tensor_parameters


def _windows(offsets, geometry):
    """Slices of the padded input that kernel position ``offsets`` reads for all outputs."""
    return tuple(slice(i * d, i * d + s * (o - 1) + 1, s)
                 for i, o, s, d in zip(offsets, *geometry[2:], strict=True))


def _kernel_positions(kernel):
    return itertools.product(*(range(k) for k in kernel))


# geometry = (padded sizes, kernel, output sizes, stride, dilation): one entry per spatial dim

@op(linear=True)
def unfold(xp, x, geometry=None):
    """(N, C, *sizes) -> (N, C, *kernel, *out): the input under every kernel window."""
    kernel, out_sizes = geometry[1], geometry[2]
    cols = xp.empty(x.shape[:2] + tuple(kernel) + tuple(out_sizes), dtype=x.dtype)
    for offsets in _kernel_positions(kernel):
        cols[(slice(None), slice(None)) + offsets] = \
            x[(slice(None), slice(None)) + _windows(offsets, geometry)]
    return cols


@op(linear=True)
def fold(xp, cols, geometry=None):
    """Adjoint of unfold: add every window back into a (N, C, *sizes) array of zeros."""
    sizes, kernel = geometry[0], geometry[1]
    out = xp.zeros(cols.shape[:2] + tuple(sizes), dtype=cols.dtype)
    for offsets in _kernel_positions(kernel):
        out[(slice(None), slice(None)) + _windows(offsets, geometry)] += \
            cols[(slice(None), slice(None)) + offsets]
    return out


unfold.defvjp(lambda g, geometry: fold(g, geometry=geometry))
unfold.defjvp(lambda t, geometry: unfold(t, geometry=geometry))
fold.defvjp(lambda g, geometry: unfold(g, geometry=geometry))
fold.defjvp(lambda t, geometry: fold(t, geometry=geometry))


def _letters(geometry):
    """einsum letters of the kernel dims and of the output's spatial dims."""
    d = len(geometry[1])
    return "ijk"[:d], "xyz"[:d]


def _group_shapes(x_shape, w_shape, groups):
    n, c = x_shape[:2]
    o, cg = w_shape[:2]
    return (n, groups, cg) + tuple(w_shape[2:]), (groups, o // groups, cg) + tuple(w_shape[2:])


def _pad_pairs(padding):
    """(before, after) per spatial dim from the flat (before0, after0, before1, ...) tuple."""
    return tuple(zip(padding[::2], padding[1::2], strict=True))


@op(save=("x", "w"), node_name="ConvolutionBackward0")
def convolution(xp, x, w, b, padding=(0, 0, 0, 0), geometry=None, groups=1):
    """Grouped N-d cross-correlation of (N, C, *sizes) with (O, C/groups, *kernel), plus bias.

    ``padding`` lists (before, after) per spatial dim, flat: (top, bottom, left, right) in 2-D.
    """
    half = x.dtype == HALF  # torch's CPU kernels sum float16 in float32 and round once
    if half:
        x, w = x.astype(xp.float32), w.astype(xp.float32)
    padded = xp.pad(x, ((0, 0), (0, 0)) + _pad_pairs(padding))
    cols = unfold(padded, geometry=geometry)
    cols_shape, w_groups = _group_shapes(x.shape, w.shape, groups)
    cols = cols.reshape(cols_shape + tuple(geometry[2]))
    k, s = _letters(geometry)
    with np.errstate(invalid="ignore", over="ignore"):  # silent (inf * 0), as torch's
        out = xp.einsum(f"ngc{k}{s},goc{k}->ngo{s}", cols, w.reshape(w_groups), optimize=True)
    out = out.reshape((x.shape[0], w.shape[0]) + tuple(geometry[2]))
    if b is not None:
        out += b.reshape((1, -1) + (1,) * len(k))
    return _laid_out_as_torchs(xp, out.astype(HALF) if half else out, x, w)


def _laid_out_as_torchs(xp, out, x, w):
    """torch's convolution output layout: channels last where the input's or the weight's
    strides suggest it (2-d; 3-d only off float64, where oneDNN runs), else C order (einsum
    leaves the batch dim inside the channels: `conv2d(x, w).view(n, -1)` must work)."""
    cl = out.ndim == 4 or out.ndim == 5 and out.dtype.kind in "fc" and out.real.dtype != np.float64
    order = (suggested_order(x) or suggested_order(w)) if cl else None
    if order is None:
        return out if out.flags.c_contiguous else lay_out(xp, out, None)
    return lay_out(xp, out, order)


def _torch_pad(padding):
    """The flat (before, after) pairs in the last-dim-first order ``pad`` takes."""
    return tuple(p for pair in reversed(_pad_pairs(padding)) for p in pair)


def _grad_input(g, x, w, padding, geometry, groups):
    if g.dtype == float16:  # a transposed convolution: float32 sums, rounded once, as torch's
        return astype(_grad_input(astype(g, float32), x, astype(w, float32), padding, geometry,
                                  groups), float16)
    n = x.shape[0]
    cols_shape, w_groups = _group_shapes(tuple(x.shape), tuple(w.shape), groups)
    g_groups = reshape(g, (n, groups, w.shape[0] // groups) + tuple(geometry[2]))
    k, s = _letters(geometry)
    cols = _einsum(g_groups, conj(reshape(w, w_groups)), equation=f"ngo{s},goc{k}->ngc{k}{s}")
    cols = reshape(cols, (n, x.shape[1]) + tuple(w.shape[2:]) + tuple(geometry[2]))
    padded = fold(cols, geometry=geometry)
    return pad(padded, tuple(-p for p in _torch_pad(padding)))


def _grad_weight(g, x, w, padding, geometry, groups):
    n = x.shape[0]
    cols_shape, w_groups = _group_shapes(tuple(x.shape), tuple(w.shape), groups)
    cols = unfold(pad(x, _torch_pad(padding)), geometry=geometry)
    cols = reshape(cols, cols_shape + tuple(geometry[2]))
    g_groups = reshape(g, (n, groups, w.shape[0] // groups) + tuple(geometry[2]))
    k, s = _letters(geometry)
    grad = _einsum(g_groups, conj(cols), equation=f"ngo{s},ngc{k}{s}->goc{k}")
    return reshape(grad, tuple(w.shape))


def _grad_bias(g, x, w, padding, geometry, groups):
    return _sum(g, (0,) + tuple(range(2, g.ndim)))


def _convolution_jvp(tangents, x, w, b, padding, geometry, groups):
    """torch's convolution_jvp, ``conv(x_t, w) + conv(x, w_t, b_t)``: a missing tangent of x,
    w or a given bias is zeros there, so an inf or NaN of one operand makes the other's term
    NaN (as torch's mm)."""
    tx, tw, tb = (zeros_like(a) if t is None and a is not None else t
                  for a, t in zip((x, w, b), tangents, strict=True))
    return add(convolution(tx, w, None, padding=padding, geometry=geometry, groups=groups),
               convolution(x, tw, tb, padding=padding, geometry=geometry, groups=groups))


convolution.defvjp(_grad_input, _grad_weight, _grad_bias)
convolution.defjvp_all(_convolution_jvp)
convolution.jvp_save_spec = tuple(map(convolution._parse_save, ("x", "w", "b")))
convolution.every_edge = True  # torch's node has an edge per input: (None, 0) for no bias


def _ntuple(value, name: str, d: int) -> tuple:
    """An int or a list of ``d`` ints (or of one) as a ``d``-tuple, as torch's conv reads it."""
    return _expanded(value, name, d, d)


def _padding(padding, kernel, stride, dilation):
    """Flat (before, after) pairs per spatial dim from an int, a list, 'valid' or 'same'."""
    d = len(kernel)
    if padding == "valid":
        return (0,) * (2 * d)
    if padding == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [dl * (k - 1) for dl, k in zip(dilation, kernel, strict=True)]
        return tuple(p for t in total for p in (t // 2, t - t // 2))
    if isinstance(padding, str):
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    pads = _ntuple(padding, "padding", d)
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    return tuple(p for pad_ in pads for p in (pad_, pad_))


def _expanded(value, name: str, d: int, k: int) -> tuple:
    """torch's reading of a conv argument: an int as ``d`` of it (its binding's), then one
    value for all ``k`` weight dims, or ``k`` values."""
    value = (value,) * d if isinstance(value, (int, np.integer)) else tuple(value)
    if len(value) == 1:
        return value * k
    if len(value) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values "
                           f"to match the convolution dimensions, but got {name}={list(value)}")
    return value


def _check_same_padding(input, weight, stride, dilation, d: int) -> None:
    """torch's checks of padding='same' (its own path): the rank, the arguments' lengths,
    no stride."""
    k = weight.ndim - 2
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight{list(weight.shape)}, but got {input.ndim}-"
                           f"dimensional input of size {list(input.shape)} instead")
    for name, value in (("stride", stride), ("dilation", dilation)):
        value = (value,) * d if isinstance(value, (int, np.integer)) else tuple(value)
        if len(value) not in (1, k):
            raise RuntimeError(f"{name} cannot broadcast to {k} dimensions")
    if any(s != 1 for s in ((stride,) if isinstance(stride, (int, np.integer)) else stride)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")


def check_conv_arguments(input, weight, bias, stride, dilation, groups, d, transposed=False,
                         padding=0):
    """torch's checks of a convolution's arguments; (stride, dilation) as ``d``-tuples."""
    if not transposed and bias is not None and bias._data.dtype != input._data.dtype:
        # torch's conv{1,2,3}d check this first; conv_transpose adds the bias in place
        raise RuntimeError(f"Input type ({c_type_name(input._data)}) and bias type "
                           f"({c_type_name(bias._data)}) should be the same")
    if input._data.dtype.kind == "c":  # torch's complex_convolution, empty or not
        for what, other in (("weight", weight), ("bias", bias)):
            if other is not None and other._data.dtype != input._data.dtype:
                raise RuntimeError(f"Input type ({_type_string(input._data)}) and {what} type "
                                   f"({_type_string(other._data)}) should be the same")
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    k = weight.ndim - 2  # torch expands the arguments to the weight's dims
    if padding == "same":
        _check_same_padding(input, weight, stride, dilation, d)
    stride = _expanded(stride, "stride", d, k)
    pads = (0,) if isinstance(padding, str) else _expanded(padding, "padding", d, k)
    dilation = _expanded(dilation, "dilation", d, k)
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 0:  # a zero one only reaches the kernels: refuse_zero_dilation
        raise RuntimeError("dilation should be greater than zero")
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.ndim}-"
                           f"dimensional input of size {list(input.shape)} instead")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    given = "transposed=1, weight of size" if transposed else f"groups={groups}, weight of size"
    if input.shape[1] != channels:
        raise RuntimeError(f"Given {given} {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {channels} channels, but got "
                           f"{input.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given {given if transposed else 'weight of size'} "
                           f"{list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    return stride, dilation


def _type_string(array) -> str:
    """Tensor::toString as torch's complex convolution prints it."""
    if array.dtype.kind == "c":
        return f"CPU{scalar_type_name(array)}Type"
    return tensor_type_name(array)


def empty_backend(input, d: int) -> bool:  # noqa: A002 - torch's name
    """Whether torch runs its empty backend (an empty batch or no channel); any other empty
    input is refused, shown as the 4-D input torch runs a 1-D convolution as."""
    if input.shape[0] == 0 or input.shape[1] == 0:
        return True
    if input.numel() == 0:
        shape = list(input.shape[:2]) + [1] * (d == 1) + list(input.shape[2:])
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input "
                           f"shape: {shape}")
    return False


def check_kernel_dtypes(input, weight) -> None:  # noqa: A002 - torch's name
    """The CPU kernels' dtype check (the empty backend multiplies and runs none)."""
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input._data)} but found "
                           f"{scalar_type_name(weight._data)}")


def batched(input, d: int, name: str):
    """(input with a batch dim, whether one was added): torch's unbatched form of ``name``."""
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {name}, "
                           f"but got input of size: {list(input.shape)}")
    return (unsqueeze(input, 0), True) if input.ndim == d + 1 else (input, False)


def _x(sizes) -> str:
    return " x ".join(map(str, sizes))


def refuse_zero_dilation(input, dilation: tuple, transposed: bool) -> None:  # noqa: A002
    """The kernels' check of a zero dilation (torch's empty backend runs none), in the 2-D
    form torch runs a 1-D convolution as."""
    if 0 not in dilation or input.shape[0] == 0 or input.shape[1] == 0:
        return
    shown = (1,) * (len(dilation) == 1) + tuple(dilation)
    if transposed:
        names = ("depth", "height", "width")[-len(shown):]
        got = ", ".join(f"dilation_{n}: {v}" for n, v in zip(names, shown, strict=True))
    else:
        got = str(list(shown))
    raise RuntimeError(f"dilation should be greater than zero, but got {got}")


def refuse_bool(input, weight, kernel: str) -> None:  # noqa: A002 - torch's name
    """torch's CPU convolution kernels have no bool instance (empty operands run none)."""
    if input._data.dtype.kind == "b" and input.numel() and weight.numel():
        raise kernel_error(kernel)(input._data)


def empty_convolution(input, weight, bias, out_channels: int, out_sizes):  # noqa: A002
    """torch's ConvBackend::Empty: ``input * weight.flatten()[0]`` (no input channel:
    ``input.flatten() * weight.flatten()``, and no output channel either), plus ``bias[0]``
    in place, shaped as the output: dtypes promote as those ops do, and the weight still gets
    a (zero) gradient."""
    flat = reshape(weight, (-1,))
    if input.shape[1] == 0:
        out, out_channels = reshape(input, (-1,)) * flat, 0
    else:
        out = input * select(flat, 0, 0)
    if bias is not None:
        out = inplace(out, add, select(bias, 0, 0))
    # a complex weight of a real input: torch runs no complex_convolution and the convolution
    # op has no complex derivative (a complex input runs complex_convolution, differentiable)
    if out.is_complex() and out.requires_grad and not input.is_complex():
        raise RuntimeError("convolution does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return reshape(out, (input.shape[0], out_channels) + out_sizes)


def conv_nd(input, weight, bias, stride, padding, dilation, groups: int, d: int, name: str):
    """torch's conv{d}d: (N, C, *sizes) or (C, *sizes) input, (O, C/groups, *kernel) weight."""
    input, added = batched(input, d, name)
    stride, dilation = check_conv_arguments(input, weight, bias, stride, dilation, groups, d,
                                            padding=padding)
    kernel = tuple(weight.shape[2:])
    pads = _padding(padding, kernel, stride, dilation)
    padded = tuple(s + pads[2 * i] + pads[2 * i + 1] for i, s in enumerate(input.shape[2:]))
    span = tuple(dl * (k - 1) + 1 for dl, k in zip(dilation, kernel, strict=True))
    if any(p < s for p, s in zip(padded, span, strict=True)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_x(padded)}). "
                           f"Kernel size: ({_x(span)}). Kernel size "
                           "can't be greater than actual input size")
    out_sizes = tuple((p - s) // st + 1 for p, s, st in zip(padded, span, stride, strict=True))
    refuse_zero_dilation(input, dilation, False)
    refuse_bool(input, weight, "slow_conv_dilated<>" if max(dilation) > 1 else
                f"slow_conv{3 if d == 3 else 2}d_cpu")
    if empty_backend(input, d):
        out = empty_convolution(input, weight, bias, weight.shape[0], out_sizes)
    else:
        check_kernel_dtypes(input, weight)
        geometry = (padded, kernel, out_sizes, stride, dilation)
        out = convolution(input, weight, bias, padding=pads, geometry=geometry, groups=groups)
    return squeeze(out, 0) if added else out


@tensor_parameters("input", "weight", "bias", overloaded=True)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """torch.nn.functional.conv2d: (N, C, H, W) or (C, H, W) input, (O, C/groups, kh, kw) weight.

    >>> conv2d(gradkit.randn(1, 3, 8, 8), gradkit.randn(4, 3, 3, 3), padding=1).shape
    gradkit.Size([1, 4, 8, 8])
    """
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")
