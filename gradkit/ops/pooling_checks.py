"""torch's argument checks of fixed-window pooling (max and average, 1-3 dims), in its order.

torch computes each output size first (``pooling_output_shape``: a zero stride, a negative
pad, a pad over half the dilated kernel), then checks the shape (``pool2d_shape_check`` /
``pool3d_shape_check``: kernel, stride and dilation positive, the input non-empty, the pad
at most half the plain kernel, the output not empty). The messages are torch's.
"""
from __future__ import annotations

import numpy as np

from gradkit.ops.shape import unsqueeze

_WORDS = {2: "two", 3: "three"}
_LETTERS = {1: "W", 2: "HW", 3: "THW"}


def ntuple(value, d: int, name: str, what: str = "kernel_size") -> tuple:
    """An int or a list of 1 or ``d`` ints as a ``d``-tuple (torch's pooling arguments)."""
    if isinstance(value, (int, np.integer)):  # a NumPy integer too, as torch's parser reads it
        return (int(value),) * d
    value = tuple(value)
    if d == 1 and len(value) != 1:  # torch's check1d of the 1-d poolings
        raise RuntimeError(f"{name}() argument '{what}' should contain one int (got "
                           f"{len(value)})")
    if len(value) not in (1, d):
        raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of "
                           f"{_WORDS.get(d, d)} ints")
    return value * d if len(value) == 1 else value


def no_stride(stride) -> bool:
    """Whether ``stride`` is torch's "no stride" (None or an empty list: the kernel's); a
    NumPy integer compared with ``[]`` would give an empty array."""
    return stride is None or isinstance(stride, (list, tuple)) and not stride


def out_size(size, pad, span, stride, ceil_mode):
    """torch's pooling output size (a ceil_mode window must start inside input or left pad)."""
    out = (size + 2 * pad - span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _x(sizes) -> str:
    return "x".join(map(str, sizes))


def _half(n: int) -> int:
    """n / 2 as C++ divides (toward zero: a negative kernel's half is 0, not -1)."""
    return int(n / 2)


def _named(prefix: str, values) -> str:
    """torch's "kH: 2 kW: 3" spelling of per-dim values."""
    letters = _LETTERS[len(values)]
    return " ".join(f"{prefix}{letter}: {v}" for letter, v in zip(letters, values, strict=True))


def pool_input(input, d: int, prefix: str = ""):
    """(input with a batch dim, whether one was added), refused as torch refuses its rank."""
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{prefix}non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected "
                           "for input")
    return (unsqueeze(input, 0), True) if input.ndim == d + 1 else (input, False)


def check_nonempty(shape, d: int, fn: str = "") -> None:
    """torch's refusal of an empty non-batch dim or another rank (``fn`` names the 3-d
    kernel, whose text differs; torch prints the empty dim's length where its index is meant:
    always 0)."""
    if len(shape) in (d + 1, d + 2) and 0 not in tuple(shape)[len(shape) - d - 1:]:
        return
    if d == 3:
        raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length,"
                           f" but input has a shape of {list(shape)} and non-batch dimension 0 "
                           "has length zero!")
    raise RuntimeError(f"Expected {d + 1}D or {d + 2}D (batch mode) tensor with optional 0 dim "
                       f"batch size for input, but got:{list(shape)}")


def _check_shape(shape, kernel, stride, dilation, pads, d: int, fn: str) -> None:
    """torch's pool{2,3}d_shape_check before its output-size check."""
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"{_named('k', kernel)}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {_named('d', stride)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{_named('dilation', dilation)}")
    check_nonempty(shape, d, fn)
    if all(k // 2 >= p for k, p in zip(kernel, pads, strict=True)):
        return
    if d == 3:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: {pads[0]} "
                           f"padW: {pads[2]} padH: {pads[1]}")
    raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                       f"padW = {pads[-1]}, padH = {pads[0]}, kW = {kernel[-1]}, kH = {kernel[0]}")


def pool_geometry(input, shape, kernel_size, stride, padding, dilation, ceil_mode, d: int,
                  name: str, fn: str = "", min_input=False):
    """(kernel, stride, pads, dilation, out sizes) of the batched ``input`` (``shape``: the
    input as given), checked as torch checks them; ``min_input``: avg_pool3d's check of an
    input smaller than the kernel."""
    kernel = ntuple(kernel_size, d, name)
    stride = kernel if no_stride(stride) else ntuple(stride, d, name, "stride")
    pads, dilation = ntuple(padding, d, name, "padding"), ntuple(dilation, d, name, "dilation")
    sizes, outs = tuple(input.shape[-d:]), []
    for size, k, s, p, dl in zip(sizes, kernel, stride, pads, dilation, strict=True):
        if s == 0:  # torch's pooling_output_shape, dim by dim
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > _half((k - 1) * dl + 1):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={dl}")
        outs.append(out_size(size, p, dl * (k - 1) + 1, s, ceil_mode))
    _check_shape(shape, kernel, stride, dilation, pads, d, fn)
    if min_input and any(s < k for s, k in zip(sizes, kernel, strict=True)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller "
                           f"than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({_x(input.shape[1:])}). Calculated output "
                           f"size: ({_x((input.shape[1],) + tuple(outs))}). Output size is too "
                           "small")
    return kernel, stride, pads, dilation, tuple(outs)


def max_pool1d_arguments(input, kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices) -> tuple:
    """(kernel, stride, pad, dilation) of max_pool1d after torch's checks: with indices, its
    rank (the rest is max_pool2d's); without, its own checks of each argument."""
    def one(value, what):
        value = (int(value),) if isinstance(value, (int, np.integer)) else tuple(value)
        if len(value) != 1:
            raise RuntimeError(f"max_pool1d() {what} must be an int, list of ints or tuple of "
                               f"ints of size 1 but got size {len(value)}")
        return value[0]
    shape = tuple(input.shape)
    if return_indices:
        if len(shape) not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {len(shape)}-dimensional "
                               "tensor for argument #1 'self' (while checking arguments for "
                               "max_pool1d)")
    elif not (len(shape) == 2 and 0 not in shape or len(shape) == 3 and 0 not in shape[1:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(shape)}")
    kernel = one(kernel_size, "kernel_size")
    step = kernel if no_stride(stride) else one(stride, "stride")
    pad, spread = one(padding, "padding"), one(dilation, "dilation")
    if return_indices:
        return kernel, step, pad, spread
    checks = ((kernel > 0, f"kernel_size must be greater than zero, but got {kernel}"),
              (step > 0, f"stride must be greater than zero, but got {step}"),
              (pad >= 0, f"padding must be non-negative, but got {pad}"),
              (pad <= kernel // 2, f"padding should be at most half of kernel size, but got "
                                   f"padding={pad} and kernel_size={kernel}"),
              (spread > 0, f"dilation must be greater than zero, but got {spread}"))
    for ok, message in checks:
        if not ok:
            raise RuntimeError(f"max_pool1d() {message}")
    size = out_size(shape[-1], pad, spread * (kernel - 1) + 1, step, ceil_mode)
    if size < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    return kernel, step, pad, spread
