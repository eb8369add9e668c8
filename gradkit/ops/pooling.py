"""2-D max pooling: the windows of conv's ``unfold``, their argmax, and a scatter back."""
from __future__ import annotations

from gradkit.ops._op import op
from gradkit.ops.conv import _pair, unfold
from gradkit.ops.indexing import gather, scatter_into_zeros
from gradkit.ops.shape import reshape, squeeze, unsqueeze


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,),
    node_name="MaxPool2DWithIndicesBackward0")
def max_pool2d_with_indices(xp, x, padding=(0, 0, 0, 0), geometry=None):
    """Window maxima of (N, C, H, W) and their flat indices into each H*W plane (as torch)."""
    top, bottom, left, right = padding
    lowest = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
    padded = xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=lowest)
    kernel, out_hw, stride, dilation = geometry[1:]
    cols = unfold(padded, geometry=geometry)
    cols = cols.reshape(cols.shape[:2] + (kernel[0] * kernel[1],) + tuple(out_hw))
    best = xp.argmax(cols, axis=2)
    values = xp.take_along_axis(cols, best[:, :, None], axis=2)[:, :, 0]
    rows = (xp.arange(out_hw[0])[:, None] * stride[0] - top
            + (best // kernel[1]) * dilation[0])
    columns = (xp.arange(out_hw[1])[None, :] * stride[1] - left
               + (best % kernel[1]) * dilation[1])
    return values, (rows * x.shape[3] + columns).astype(xp.int64)


def _max_pool_vjp(g, x_shape, indices, padding, geometry):
    n, c = x_shape[:2]
    flat = scatter_into_zeros(reshape(g, (n, c, -1)), reshape(indices, (n, c, -1)),
                              shape=(n, c, x_shape[2] * x_shape[3]), dim=2)
    return (reshape(flat, tuple(x_shape)),)


def _max_pool_jvp(tangents, x_shape, indices, padding, geometry):
    n, c = x_shape[:2]
    flat = gather(reshape(tangents[0], (n, c, -1)), 2, reshape(indices, (n, c, -1)))
    return reshape(flat, tuple(indices.shape)), None


max_pool2d_with_indices.defvjp_all(_max_pool_vjp)
max_pool2d_with_indices.defjvp_all(_max_pool_jvp)


def _out_size(size, pad, span, stride, ceil_mode):
    out = (size + 2 * pad - span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1  # the last window must start inside the input or its left padding
    return out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """torch.nn.functional.max_pool2d on (N, C, H, W) or (C, H, W).

    >>> max_pool2d(gradkit.randn(1, 1, 4, 4), 2).shape
    gradkit.Size([1, 1, 2, 2])
    """
    if input.ndim not in (3, 4) or input.numel() == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if input.ndim == 3:
        out = max_pool2d(unsqueeze(input, 0), kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices)
        return tuple(squeeze(o, 0) for o in out) if return_indices else squeeze(out, 0)
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or stride == [] else _pair(stride, "stride")
    pads, dilation = _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} "
                           f"dW: {stride[1]}")
    spans = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel, strict=True))
    for p, k in zip(pads, kernel, strict=True):
        if p < 0 or p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={dilation[0]}")
    h, w = input.shape[2:]
    out_hw = tuple(_out_size(s, p, sp, st, ceil_mode)
                   for s, p, sp, st in zip((h, w), pads, spans, stride, strict=True))
    if min(out_hw) < 1:
        raise RuntimeError(f"Given input size: ({input.shape[1]}x{h}x{w}). Calculated output "
                           f"size: ({input.shape[1]}x{out_hw[0]}x{out_hw[1]}). Output size is "
                           "too small")
    # right/bottom padding: whatever the last window needs beyond the symmetric padding
    extra = tuple(max((o - 1) * st + sp - s - p, p)
                  for o, st, sp, s, p in zip(out_hw, stride, spans, (h, w), pads, strict=True))
    padded = (h + pads[0] + extra[0], w + pads[1] + extra[1])
    geometry = (padded, kernel, out_hw, stride, dilation)
    values, indices = max_pool2d_with_indices(
        input, padding=(pads[0], extra[0], pads[1], extra[1]), geometry=geometry)
    return (values, indices) if return_indices else values
