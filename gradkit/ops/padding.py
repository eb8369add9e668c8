"""Padding (torch.nn.functional.pad): constant, reflect, replicate and circular modes, with
negative pads cropping."""
from __future__ import annotations

from gradkit.ops._op import op
from gradkit.ops.conversion import fitted

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


def _pad_widths(xp, x, pad):
    """NumPy pad widths plus the crop that negative pads ask for."""
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the number "
                           f"of dimensions of the input, got {len(pad)} for {x.ndim}-D input")
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
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")  # torch's words
    widths, crop = _pad_widths(xp, x, pad)
    if mode != "constant":
        _check_copy_dims(x.ndim, len(pad))
    if mode == "replicate":
        _check_copied_from(x.shape, pad, mode)
        return _replicated(xp, x, pad)
    if mode == "constant":
        _check_narrowed(x.shape, pad)
        if any(int(p) > 0 for p in pad):  # torch fills the new elements: the value must fit
            value = fitted(value, x.dtype)
    x = x[crop]
    if mode == "constant" and not any(w for pair in widths for w in pair):
        return xp.array(x)  # nothing to fill (NumPy refuses a 0-d tensor's empty widths)
    if mode == "constant":
        return xp.pad(x, widths, mode="constant", constant_values=value)
    if mode == "reflect":
        _check_copied_from(x.shape, pad, mode)
    return xp.pad(x, widths, mode=_PAD_MODES[mode])


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
    """torch's checks of the modes that copy input values: a batch dim may be empty, the
    others not; reflection mirrors inside the input, so each pad must be below its size."""
    padded = len(pad) // 2
    if len(shape) in (padded + 1, padded + 2) and 0 in shape[-padded - 1:]:
        raise RuntimeError(f"Expected {padded + 1}D or {padded + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, but "
                           f"got: {list(shape)}")
    if mode == "reflect":
        _check_reflection(shape, pad)


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
    source = source[crop]
    if not widths:  # a 0-d tensor: nothing padded (NumPy refuses empty widths)
        pass
    elif mode == "replicate":
        source = _replicated(xp, xp.arange(n).reshape(x_shape), pad)
    elif mode == "constant":
        source = xp.pad(source, widths, mode="constant", constant_values=-1)
    else:
        source = xp.pad(source, widths, mode=_PAD_MODES[mode])
    keep = source >= 0
    out = xp.zeros(n, dtype=g.dtype)
    xp.add.at(out, source[keep], g[keep])
    return out.reshape(x_shape)


pad_op = pad  # the rules below take a parameter named `pad`
_pad_backward.defvjp(lambda g, x_shape, pad, mode: pad_op(g, pad, mode))
pad.defvjp(lambda g, x_shape, pad, mode, value: _pad_backward(g, x_shape, pad, mode))
pad.defjvp(lambda t, x_shape, pad, mode, value: pad_op(t, pad, mode))
