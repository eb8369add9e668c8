"""conv1d / conv3d (conv.py's N-d convolution op), transposed convolutions and conv_tbc.

A transposed convolution is the adjoint of a convolution with respect to its input: one
einsum spreads each input element over its kernel window, conv.py's ``fold`` adds the windows
up, and ``pad`` crops ``padding`` and appends ``output_padding``. Composed of those ops, its
gradients are torch's and differentiable again.
"""
from __future__ import annotations

import math

from gradkit.backend import float16, float32
from gradkit.int_arguments import int_parameters
from gradkit.memory_format import contiguous_format as _contiguous_format
from gradkit.ops.arithmetic import add
from gradkit.ops.conv import (
    _ntuple, batched, check_conv_arguments, check_kernel_dtypes, conv_nd, empty_backend,
    empty_convolution, fold, refuse_bool, refuse_zero_dilation)
from gradkit.ops.conversion import astype
from gradkit.ops.einsum import _einsum
from gradkit.ops.inplace import inplace
from gradkit.ops.linalg import matmul
from gradkit.ops.one_node import one_node
from gradkit.ops import _dispatch
from gradkit.ops.padding import pad
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.padding import pad as pad_op
from gradkit.ops.reduction import sum as _sum
from gradkit.ops.shape import expand, reshape, squeeze
from gradkit.ops.unary_helpers import scalar_type_name
from gradkit.signature_errors import missing_arguments
from gradkit.torch_helpers import get_num_threads
from gradkit.tensor_arguments import tensor_parameters

_LETTERS = ("ijk", "xyz")  # kernel dims, spatial dims


@tensor_parameters("input", "weight", "bias", overloaded=True)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """torch.nn.functional.conv1d: (N, C, L) or (C, L) input, (O, C/groups, k) weight.

    >>> conv1d(gradkit.randn(1, 3, 8), gradkit.randn(4, 3, 3), padding=1).shape
    gradkit.Size([1, 4, 8])
    """
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@tensor_parameters("input", "weight", "bias", overloaded=True)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """torch.nn.functional.conv3d: (N, C, D, H, W) or (C, D, H, W) input."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _output_padding(output_padding, stride, dilation, d):
    """torch's check of output_padding, with its message."""
    pads = _ntuple(output_padding, "output_padding", d)
    if any(p >= s and p >= dl for p, s, dl in zip(pads, stride, dilation, strict=True)):
        values = {"output_padding": pads, "stride": tuple(stride), "dilation": tuple(dilation)}
        if d == 1:  # torch runs conv_transpose1d as a 2-D one over a unit height
            values = {what: ((0,) if what == "output_padding" else (1,)) + v
                      for what, v in values.items()}
        dims = ("depth", "height", "width")[-max(d, 2):]
        shown = " ".join(f"{what}_{dim}: {v}" for what, vs in values.items()
                         for dim, v in zip(dims, vs, strict=True))
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           f"got {shown}")
    return pads


def conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                      d: int, name: str):
    """torch's conv_transpose{d}d: input (N, C_in, *L), weight (C_in, C_out/groups, *kernel)."""
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x, added = batched(input, d, name)
    stride, dilation = check_conv_arguments(x, weight, bias, stride, dilation, groups, d,
                                            transposed=True, padding=padding)
    pads = _ntuple(padding, "padding", d)
    # torch's empty backend answers before the output_padding check (breadth seed 1572465)
    empty = empty_backend(x, d)
    extra = _ntuple(output_padding, "output_padding", d) if empty else \
        _output_padding(output_padding, stride, dilation, d)
    sizes, kernel = tuple(x.shape[2:]), tuple(weight.shape[2:])
    full = tuple((n - 1) * s + dl * (k - 1) + 1
                 for n, s, dl, k in zip(sizes, stride, dilation, kernel, strict=True))
    outs = tuple(f + e - 2 * p for f, e, p in zip(full, extra, pads, strict=True))
    c_out = weight.shape[1] * groups
    if empty:
        out = empty_convolution(x, weight, bias, c_out, outs)
        return squeeze(out, 0) if added else out
    refuse_zero_dilation(x, dilation, True)
    check_kernel_dtypes(x, weight)
    if bias is not None and d == 3:  # the 3-D kernel checks it; the 2-D one adds it in place
        check_kernel_dtypes(x, bias)
    if min(outs) < 1 and _runs_onednn(x, weight, stride, dilation, groups, extra):
        if min(outs) < 0:  # oneDNN computes an empty output of a size 0, describes no negative
            raise RuntimeError("could not construct a memory descriptor using a format tag")
    elif min(outs) < 1:
        shown = ((1,) if d == 1 else ()) + sizes, ((1,) if d == 1 else ()) + outs
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, shown[0]))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, shown[1]))}). Output size is too small")
    refuse_bool(x, weight, f"slow_conv_transpose{3 if d == 3 else 2}d_out_cpu")
    n, c_in = x.shape[:2]
    k, s = _LETTERS[0][:d], _LETTERS[1][:d]

    def transposed_convolution(x, weight, bias):
        if x.dtype == float16:  # torch's CPU kernel sums in float32 and rounds once
            wide = in_own_dtype(astype(x, float32), astype(weight, float32), None)
            if bias is not None:
                wide = add(wide, reshape(bias, (1, c_out) + (1,) * d))
            return astype(wide, float16)
        return in_own_dtype(x, weight, bias)

    # not calling itself: a nested function that does is a cycle the cyclic GC must free
    def in_own_dtype(x, weight, bias):
        if not math.prod(outs):  # oneDNN's empty output: torch computes nothing, so no
            # 0 * inf of a cropped-away region reaches the gradients (wide seed 43285)
            return _nothing_of((n, c_out) + outs, x, weight, bias)
        cols = _einsum(reshape(x, (n, groups, c_in // groups) + sizes),
                       reshape(weight, (groups, c_in // groups, c_out // groups) + kernel),
                       equation=f"ngc{s},gco{k}->ngo{k}{s}")
        cols = reshape(cols, (n, c_out) + kernel + sizes)
        out = fold(cols, geometry=(full, kernel, sizes, stride, dilation))
        out = pad(out, tuple(v for p, e in reversed(list(zip(pads, extra, strict=True)))
                             for v in (-p, e - p)))
        # torch adds the bias in place (no dtype check of it in 1-d and 2-d)
        return out if bias is None else inplace(out, add, reshape(bias, (1, c_out) + (1,) * d))
    # torch's complex convolution is itself a composite of real ones (its last node an add)
    x, weight, bias = _zero_filled(x, weight, bias)
    out = transposed_convolution(x, weight, bias) if x._data.dtype.kind == "c" else \
        one_node("ConvolutionBackward0", transposed_convolution, (x, weight, bias),
                 {"input": 0, "weight": 1}, {  # the arguments torch's node keeps
                     "stride": tuple(stride), "padding": pads, "dilation": tuple(dilation),
                     "transposed": True, "output_padding": extra, "groups": groups,
                     "bias_sym_sizes_opt": (0,) if bias is None else tuple(bias.shape)})
    return squeeze(out, 0) if added else out


def _zero_filled(*operands) -> tuple:
    """Under forward AD, each operand without a tangent made a dual of zeros when another has
    one: torch's convolution_jvp materializes a missing tangent, so an inf or NaN of one
    operand makes the other's term NaN (as the convolution op's rule, conv.py)."""
    ad = _dispatch._forward_ad
    if ad is None or not ad.has_tangents(operands):
        return operands
    return tuple(a if a is None or ad.has_tangents((a,)) else ad.make_dual(a, zeros_like(a))
                 for a in operands)


def _nothing_of(shape: tuple, x, weight, bias):
    """An empty result of ``shape`` in the graph of its operands, whose gradients are zeros:
    the product of x's and weight's sums of no element (so each one's gradient reads the
    other, a graph for a second derivative, as torch's), plus bias's."""
    def nothing(t):
        return reshape(t, (-1,))[:0].sum()
    total = nothing(x) * nothing(weight)
    if bias is not None:
        total = add(total, nothing(bias))
    return expand(reshape(total, (1,) * len(shape)), shape)


def _runs_onednn(x, weight, stride, dilation, groups, extra) -> bool:
    """Whether torch's CPU convolution picks oneDNN for this transposed one (its ConvParams::
    use_mkldnn on the real dtype: a complex convolution is made of real ones), as a 2-D one
    for d = 1: half precision always, float32 where strided or dilated (...) and grouped or
    batched or large; never with an output_padding of a stride or more."""
    if any(e >= s for e, s in zip(extra, stride, strict=True)):
        return False
    kind = x._data.real.dtype if x._data.dtype.kind == "c" else x._data.dtype
    if kind.name in ("float16", "bfloat16"):
        return True
    if kind != float32:
        return False
    shape = x.shape if x.ndim > 3 else x.shape[:2] + (1,) + x.shape[2:]
    kernel = (1,) * (x.ndim == 3) + tuple(weight.shape[2:])
    n = shape[0]
    fast_enough = any(v != 1 for v in (*stride, *dilation)) or n >= 16 or \
        kernel[-1] != 1 or kernel[-2] != 1 or get_num_threads() > 1
    return fast_enough and (groups > 1 or (kernel[-1] > 3 and kernel[-2] > 3) or n > 1
                            or math.prod(shape[:4]) > 20480)


@tensor_parameters("input", "weight", "bias")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """torch.nn.functional.conv_transpose1d: the input-gradient of conv1d, as a layer."""
    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 1, "conv_transpose1d")


@tensor_parameters("input", "weight", "bias")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """torch.nn.functional.conv_transpose2d: (N, C_in, H, W), weight (C_in, C_out/groups, kh, kw).

    >>> conv_transpose2d(gradkit.randn(1, 2, 3, 3), gradkit.randn(2, 4, 2, 2), stride=2).shape
    gradkit.Size([1, 4, 6, 6])
    """
    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 2, "conv_transpose2d")


@tensor_parameters("input", "weight", "bias")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """torch.nn.functional.conv_transpose3d: (N, C_in, D, H, W) or (C_in, D, H, W) input,
    weight (C_in, C_out/groups, kD, kH, kW)."""
    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 3, "conv_transpose3d")


def _check_tbc(input, weight, bias) -> None:  # noqa: A002 - torch's name
    """torch's conv_tbc checks, in its order and words."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")


_REQUIRED = object()  # conv_tbc's bias: required, but torch's parser words its absence


@int_parameters("conv_tbc", pad=(4, "int"))
@tensor_parameters("input", "weight", "bias")
def conv_tbc(input, weight, bias=_REQUIRED, pad: int = 0):  # noqa: A002 - torch's name
    """torch.conv_tbc: a 1-d convolution of a (time, batch, in_channels) input with a
    (kernel_width, in_channels, out_channels) weight, ``pad`` zeros (or, negative, a crop) at
    both ends of time; (time + 2 pad - kernel_width + 1, batch, out_channels) out.

    As torch's kernel: the bias cast to the input's dtype, plus one matrix product per kernel
    position; one ConvTbcBackward0 node.

    >>> conv_tbc(gradkit.ones(5, 2, 3), gradkit.ones(2, 3, 4), gradkit.zeros(4), 1).shape
    gradkit.Size([6, 2, 4])
    """
    if bias is _REQUIRED:
        raise missing_arguments("conv_tbc", ("bias",))
    _check_tbc(input, weight, bias)
    steps = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if steps < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {steps}: "
                           f"[{steps}, {input.shape[1]}, {weight.shape[2]}]")
    if steps and input.dtype != weight.dtype:  # torch's addmm_(output, input, weight)
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{scalar_type_name(input._data)} and {scalar_type_name(weight._data)}")

    def tbc(input, weight, bias):  # noqa: A002 - torch's name
        out = expand(reshape(bias.to(input.dtype), (1, 1, -1)), (steps,) + tuple(
            input.shape[1:2]) + tuple(weight.shape[2:]))
        # as torch's kernel, per kernel position k the input rows that meet weight[k] only
        # (from row start, output row first): no padding zero times a NaN or inf weight
        # (wide seed 5436), and a position meeting none is skipped, no gradient through it
        # (wide seed 68097). The other rows add -0.0, which keeps the bias's -0.0 (seed 9948)
        spans = [(k, max(0, k - pad), min(max(0, pad - k), steps)) for k in range(len(weight))]
        spans = [(k, start, first, rows) for k, start, first in spans
                 if (rows := min(input.shape[0] + pad - k, steps) - first) > 0]
        if not spans:  # torch's gradients of input and weight are then zeros, not None:
            # both stay in the graph by an empty sum (- 0.0 keeps a -0.0), out a fresh tensor
            # (a bool one has no subtraction and no gradient: a copy)
            if input.dtype.np.kind == "b":
                return out.clone(memory_format=_contiguous_format)
            return out - (_sum(input[:0]) + _sum(weight[:0]))
        for k, start, first, rows in spans:
            product = matmul(input[start:start + rows], weight[k])
            out = out + pad_op(product, (0, 0, 0, 0, first, steps - first - rows), value=-0.0)
        return out
    return one_node("ConvTbcBackward0", tbc, (input, weight, bias),
                    {"self": 0, "weight": 1, "bias": 2})
