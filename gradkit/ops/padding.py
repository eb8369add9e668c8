"""Padding (torch.nn.functional.pad): constant, reflect, replicate and circular modes, with
negative pads cropping.

Reflect and replicate read each output element from torch's source index of the input (so a
negative pad crops before the mirror, and replicate may repeat an edge past the cropped part, as
torch's kernels); constant and circular crop, then pad.
"""
from __future__ import annotations

import numpy as np

from gradkit.memory_format import lay_out, suggested_order
from gradkit.ops._op import op
from gradkit.ops.conversion import fitted

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


def _pad_widths(xp, x, pad):
    """NumPy pad widths plus the crop that negative pads ask for."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > x.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{x.ndim}")
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        dim = x.ndim - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        widths[dim] = (max(left, 0), max(right, 0))
        crop[dim] = slice(max(-left, 0), x.shape[dim] - max(-right, 0))
    return widths, tuple(crop)


@op(save="x.shape", linear=True)
def pad(xp, x, pad=(), mode="constant", value=0.0):
    """torch.nn.functional.pad: ``pad`` lists (left, right) pairs from the last dim back."""
    value = 0.0 if value is None else value
    if not isinstance(mode, str):  # torch's parser (position 3, even given by keyword)
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not "
                        f"{type(mode).__name__}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")  # torch's words
    widths, crop = _pad_widths(xp, x, pad)
    if mode == "circular":
        _check_wrapped(x.shape, pad)
    if mode == "constant":
        _check_narrowed(x.shape, pad)
        if any(int(p) > 0 for p in pad):  # torch fills the new elements: the value must fit
            value = fitted(value, x.dtype)
    if mode == "constant":
        if not any(w for pair in widths for w in pair):
            return xp.array(x[crop])  # nothing to fill (NumPy refuses a 0-d tensor's widths)
        return _in_layout_of(xp, x, xp.pad(x[crop], widths, mode="constant",
                                           constant_values=value))
    _check_rank(x.shape, pad)
    if mode == "circular":
        _check_circular(x.shape, pad)
        out_shape = _padded_shape(x.shape, pad)
        if 0 in out_shape:  # nothing to wrap (NumPy refuses to wrap an empty dim)
            return xp.zeros(out_shape, dtype=x.dtype)
        return xp.pad(x[crop], widths, mode="wrap")
    _check_copied_from(x.shape, pad, mode)
    return _in_layout_of(xp, x, _copied(xp, x, pad, mode))


def _in_layout_of(xp, x, out):
    """``out`` channels last when ``x``'s strides suggest it: torch's constant, reflect and
    replicate kernels allocate their result in the input's suggested memory format."""
    order = suggested_order(x)
    return out if order is None else lay_out(xp, out, order)


def _padded_shape(shape: tuple, pad) -> tuple:
    """The output shape: each padded dim grown (or shrunk) by its two pads."""
    out = list(shape)
    for i in range(len(pad) // 2):
        out[len(shape) - 1 - i] += int(pad[2 * i]) + int(pad[2 * i + 1])
    return tuple(out)


def check_pad_value(mode: str, value) -> None:
    """torch's pad takes a value only in constant mode (0 is accepted in every mode)."""
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')


def _source_indices(size: int, left: int, right: int, mode: str):
    """torch's reflection / replication kernels: the input index each output element along
    one dim reads, from ``k = out - left`` (negative pads included)."""
    k = np.arange(size + left + right) - left
    if mode == "replicate":
        return np.clip(k, 0, size - 1)
    return np.where(k < 0, -k, np.where(k < size, k, 2 * (size - 1) - k))


def _copied(xp, x, pad, mode: str):
    """x padded by reading, dim by dim, the source indices of reflect or replicate."""
    for i in range(len(pad) // 2):
        dim = x.ndim - 1 - i
        index = _source_indices(x.shape[dim], int(pad[2 * i]), int(pad[2 * i + 1]), mode)
        x = xp.take(x, xp.asarray(index), axis=dim)
    return x


def _check_rank(shape: tuple, pad) -> None:
    """torch pads 1, 2 or 3 dims in the other modes, of an input with one or two more."""
    padded = len(pad) // 2
    if not 1 <= padded <= 3 or len(shape) not in (padded + 1, padded + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {len(shape)}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _check_circular(shape: tuple, pad) -> None:
    """torch's _pad_circular: each pad at most the size; the output not negative. torch then
    copies the borders from the cropped part, wrapping at most once: a pad longer than that
    part gives uninitialized values there (or an error), which gradkit refuses."""
    padded = len(pad) // 2
    pairs = [(int(pad[2 * i]), int(pad[2 * i + 1]), shape[len(shape) - 1 - i])
             for i in reversed(range(padded))]
    for left, right, size in pairs:
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + left + right < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    if 0 in _padded_shape(shape, pad):
        return  # nothing to copy
    for left, right, size in pairs:
        kept = size + min(left, 0) + min(right, 0)
        if 0 < kept < max(left, right):  # torch's copy from a partly overlapping slice
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")
        if left > kept or right > kept:  # torch 2.13 reads uninitialized memory there
            raise RuntimeError(f"circular padding {tuple(pad)} wraps past the {kept} elements "
                               f"the negative pads keep of a dim of size {size}")


def _check_wrapped(shape: tuple, pad) -> None:
    """torch's circular pads (checked against the uncropped sizes) copy each input element
    at most once more per side."""
    for i in range(len(pad) // 2):
        size = shape[len(shape) - 1 - i]
        if pad[2 * i] > size or pad[2 * i + 1] > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + pad[2 * i] + pad[2 * i + 1] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")


def _replicated(xp, x, pad):
    """torch's replicate padding: output j of a padded dim copies input clamp(j - left, 0,
    size - 1), so a negative pad crops, and one cropping past the other side's edge still
    copies that edge (NumPy's crop-then-pad would have nothing left to copy)."""
    sizes = list(x.shape)
    for i in range(len(pad) // 2):
        sizes[x.ndim - 1 - i] += int(pad[2 * i]) + int(pad[2 * i + 1])
    negative = [s for s in sizes if s < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: "
                           f"{sizes}")
    for i in range(len(pad) // 2):
        dim = x.ndim - 1 - i
        index = xp.clip(xp.arange(sizes[dim]) - int(pad[2 * i]), 0, x.shape[dim] - 1)
        x = xp.take(x, index, axis=dim)
    return x


def _check_copy_dims(ndim: int, length: int) -> None:
    """torch's modes that copy input values pad the last 1, 2 or 3 dims of an input with at
    most one batch and one channel dim more."""
    if not length // 2 + 1 <= ndim <= length // 2 + 2:
        raise NotImplementedError(
            f"Padding size {length} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _check_narrowed(shape: tuple, pad) -> None:
    """torch narrows the input by the negative pads first, left then right: neither narrow
    may ask for a negative length."""
    for i in range(len(pad) // 2):
        size = shape[len(shape) - 1 - i] + min(int(pad[2 * i]), 0)
        if size < 0 or size + min(int(pad[2 * i + 1]), 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")


def _check_copied_from(shape: tuple, pad, mode: str) -> None:
    """torch's checks of reflect and replicate, in its order: a batch dim may be empty, the
    others not; reflection mirrors inside the input, so each pad must be below its size; an
    output dim at least 1 (one of them, beyond 1-D: torch's check); none negative."""
    padded = len(pad) // 2
    if 0 in shape[-padded - 1:]:
        raise RuntimeError(f"Expected {padded + 1}D or {padded + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, but "
                           f"got: {list(shape)}")
    if mode == "reflect":
        _check_reflection(shape, pad)
    sizes = shape[-padded:]
    outs = [size + int(pad[2 * (padded - 1 - j)]) + int(pad[2 * (padded - 1 - j) + 1])
            for j, size in enumerate(sizes)]
    if max(outs) < 1:
        names = "DHW"[3 - padded:]
        gap = " " if padded == 2 and mode == "replicate" else ""  # torch's spacing
        shown = [" ".join(f"{n}: {v}" for n, v in zip(names, values, strict=True))
                 for values in (sizes, outs)]
        raise RuntimeError(f"input ({shown[0].replace(' W', ', W')}{gap}) is too small. "
                           f"Calculated output {shown[1]}")
    if min(outs) < 0:
        if mode == "reflect" and padded == 2:
            raise RuntimeError("numel: integer multiplication overflow")
        full = list(shape[:-padded]) + outs
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: "
                           f"{full}")


def _check_reflection(shape: tuple, pad) -> None:
    """torch's reflection pads mirror inside the input: each pad must be below its size."""
    for i in range(len(pad) // 2):
        dim = len(shape) - 1 - i
        if not (pad[2 * i] < shape[dim] and pad[2 * i + 1] < shape[dim]):
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({pad[2 * i]}, {pad[2 * i + 1]}) at dimension "
                f"{dim} of input {list(shape)}")


@op(linear=True)
def _pad_backward(xp, g, x_shape=None, pad=None, mode="constant"):
    """Adjoint of pad: every padded element sends its gradient to the input it copies."""
    n = 1
    for s in x_shape:
        n *= s
    source = xp.arange(n).reshape(x_shape)
    widths, crop = _pad_widths(xp, source, pad)
    if mode in ("reflect", "replicate"):
        source = _copied(xp, source, pad, mode)
    elif 0 in _padded_shape(x_shape, pad):
        return xp.zeros(x_shape, dtype=g.dtype)  # nothing padded reads the input
    elif not widths:  # a 0-d tensor: nothing padded (NumPy refuses empty widths)
        source = source[crop]
    elif mode == "constant":
        source = xp.pad(source[crop], widths, mode="constant", constant_values=-1)
    else:
        source = xp.pad(source[crop], widths, mode=_PAD_MODES[mode])
    keep = source >= 0
    out = xp.zeros(n, dtype=g.dtype)
    xp.add.at(out, source[keep], g[keep])
    return out.reshape(x_shape)


pad_op = pad  # the rules below take a parameter named `pad`
_pad_backward.defvjp(lambda g, x_shape, pad, mode: pad_op(g, pad, mode))
pad.defvjp(lambda g, x_shape, pad, mode, value: _pad_backward(g, x_shape, pad, mode))
pad.defjvp(lambda t, x_shape, pad, mode, value: pad_op(t, pad, mode))
