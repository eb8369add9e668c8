"""scaled_dot_product_attention, pixel_shuffle / pixel_unshuffle and F.unfold / F.fold.

All composed of existing ops (matmul, softmax, reshape, permute, conv.py's window ops), so
their gradients are torch's and differentiable again.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import float16, float32, get_array_module
from gradkit.int_arguments import int_parameters
from gradkit.memory_format import suggested_order
from gradkit.ops._op import op
from gradkit.ops.arithmetic import add, mul
from gradkit.ops.conversion import astype, in_suggested_format
from gradkit.ops.conv import fold as fold_windows, unfold as unfold_windows
from gradkit.ops.elementwise import exp
from gradkit.ops.half_scalar import HALF
from gradkit.ops.layers import dropout
from gradkit.ops.linalg import matmul
from gradkit.ops.one_node import one_node
from gradkit.ops.padding import pad
from gradkit.ops.patterns import repeat_interleave
from gradkit.ops.piecewise import where
from gradkit.ops.reduction import _softmax_kernel, _sum_along, sum as sum_along
from gradkit.ops.shape import permute, reshape, squeeze, transpose, unsqueeze
from gradkit.ops.unary_helpers import kernel_error, require_real_floating


def _constant(like, array) -> Tensor:
    """A constant on ``like``'s device."""
    return Tensor._make(get_array_module(like._data).asarray(array))


def _host(tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy()


def _bias(attn_mask, is_causal, length, source, dtype):
    """Host additive bias of the causal and bool masks: 0 where allowed, -inf elsewhere."""
    bias = np.zeros((length, source), dtype=dtype)
    if is_causal:
        bias[~np.tril(np.ones((length, source), dtype=bool))] = -np.inf
    if attn_mask is not None and attn_mask._data.dtype == np.bool_:
        bias = np.where(_host(attn_mask), bias, -np.inf).astype(dtype)
    return bias


@op(save="result", batchable=True, node_name="SafeSoftmaxBackward0")
def _safe_softmax(xp, x, *, dim):
    """torch's _safe_softmax: softmax along ``dim``, 0 in a row whose entries are all -inf;
    its backward is softmax's, ``out * (g - sum(g * out))``, so 0 there but NaN where g is
    not finite (an infinite value row: breadth seed 99024)."""
    out = _softmax_kernel(xp, x, dim, None, "softmax")
    empty = (x == -math.inf).all(axis=dim, keepdims=True)
    return xp.where(empty, out.dtype.type(0), out)


_safe_softmax.defvjp(lambda g, out, dim: out * (g - _sum_along(g * out, out, dim)))
_safe_softmax.defjvp(lambda t, out, dim: out * (t - sum_along(t * out, dim, True)))


def _unmatched_rows(scores: np.ndarray) -> np.ndarray:
    """The rows of scores torch's CPU flash kernel finds no maximum in, -inf or NaN each
    (its running max from -inf passes over NaN), that hold a NaN."""
    with np.errstate(invalid="ignore"):
        skipped = ((scores == -math.inf) | np.isnan(scores)).all(axis=-1, keepdims=True)
    return skipped & np.isnan(scores).any(axis=-1, keepdims=True)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False):
    """softmax(q kᵀ * scale + mask) v, as torch's math backend (a row that may attend to
    nothing gives 0, with 0 gradients, as torch's safe softmax).

    >>> q = gradkit.randn(2, 3, 4)
    >>> scaled_dot_product_attention(q, q, q, is_causal=True).shape
    gradkit.Size([2, 3, 4])
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    require_real_floating("softmax_lastdim_kernel_impl", query._data)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if query._data.dtype == HALF:  # torch's kernels attend in float32 and round the result
        wide = [astype(t, float32) if t is not None and t._data.dtype == HALF else t
                for t in (query, key, value, attn_mask)]
        return astype(scaled_dot_product_attention(
            *wide, dropout_p=dropout_p, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa),
            float16)
    if enable_gqa:
        key, value = _grouped(query, key, value)
    flash = query.ndim == 4 and dropout_p == 0.0
    if flash:  # torch's CPU flash kernel: it saves the query itself
        scores = mul(matmul(query, transpose(key, -2, -1)), scale)
    else:  # torch's math backend scales q and k by sqrt(|scale|) first, and saves those
        root = math.sqrt(abs(scale))
        scores = matmul(mul(query, -root if scale < 0 else root),
                        mul(transpose(key, -2, -1), root))
    if attn_mask is not None and attn_mask._data.dtype != np.bool_:
        scores = add(scores, attn_mask)
    bias = _bias(attn_mask, is_causal, query.shape[-2], key.shape[-2], query._data.dtype)
    scores = add(scores, _constant(query, bias))
    hidden = _constant(query, bias == -math.inf) if flash and is_causal else None
    if hidden is not None:
        scores = _causal_fill(scores, hidden, value=-math.inf)
    # (with a mask, the kernel's running max takes a NaN score: the row is softmax's NaN)
    unmatched = _unmatched_rows(_host(scores)) if flash and attn_mask is None else None
    unmatched = None if unmatched is None or not unmatched.any() else _constant(query, unmatched)
    weights = _weights(scores, unmatched, hidden)
    if dropout_p > 0.0:  # torch's math backend: dropout of the weights (one mask, kept for
        weights = dropout(weights, dropout_p, True)  # the backward by the graph)
    out = matmul(weights, value)
    if unmatched is not None:
        out = where(unmatched, _unmatched_rows_out(scores, value, unmatched), out)
    return out


@op(save=("scores", "value", "rows", "result"),
    node_name="ScaledDotProductFlashAttentionForCpuBackward0")
def _unmatched_rows_out(xp, scores, value, rows):
    """The output rows torch's flash kernel gives rows of NaN scores (a NaN query): it weighs
    every key 0, so 0 @ v, 0 but NaN where a value is not finite (breadth seed 1358513)."""
    with np.errstate(invalid="ignore"):
        nothing = (value * 0).sum(axis=-2, keepdims=True)
    return xp.broadcast_to(nothing, scores.shape[:-1] + value.shape[-1:]).copy()


def _recomputed_weights(scores, rows):
    """The weights torch's flash backward recomputes for such rows: exp(score - logsumexp)
    with logsumexp 0 (NaN, and 0 where the causal fill hid a key); none elsewhere."""
    return where(rows, exp(scores), 0.0)


def _unmatched_scores_grad(g, scores, value, rows, out):
    """torch's dS = P * (dP - D), D = rowsum(dO * O): NaN where P is, and at the hidden keys
    0 * (dP - D), NaN where a value (so D) is not finite."""
    p = _recomputed_weights(scores, rows)
    d = sum_along(g * out, -1, True)
    return where(rows, p * (matmul(g, transpose(value, -2, -1)) - d), 0.0)


_unmatched_rows_out.defvjp(
    _unmatched_scores_grad,
    lambda g, scores, value, rows, out: matmul(
        transpose(_recomputed_weights(scores, rows), -2, -1), g),
    None)
# (torch has no forward AD for its flash kernel) the rows are linear in the values alone
_unmatched_rows_out.defjvp(
    None, lambda t, scores, value, rows, out: _unmatched_rows_out(scores, t, rows), None)


@op(batchable=True, node_name="MaskedFillBackward0")
def _causal_fill(xp, x, hidden, *, value):
    """torch's flash kernel writes ``value`` where the causal mask hides a key: -inf over the
    scores (a NaN or inf score there plus the -inf bias was NaN), 0 over the weights its
    backward recomputes (a NaN row's too); it still computes their gradients, 0 * (dP - D),
    NaN where dP or D is not finite: they pass through."""
    return xp.where(hidden, x.dtype.type(value), x)


_causal_fill.defvjp(lambda g, value: g, None)
_causal_fill.defjvp(lambda t, value: t, None)


def _weights(scores, unmatched, hidden):
    """The attention weights: safe softmax of the scores (a row of -inf scores, masked or
    -inf values, weighs 0: breadth seed 19417); with ``hidden`` (causal) 0 where the mask
    hides a key, as torch's flash backward recomputes them. Rows of NaN scores
    (``unmatched``) are _unmatched_rows_out's: here a softmax of zeros, not taken (the
    softmax of NaN would send NaN back from its saved NaN)."""
    weights = _safe_softmax(scores if unmatched is None else where(unmatched, 0.0, scores),
                            dim=-1)
    return weights if hidden is None else _causal_fill(weights, hidden, value=0.0)


def _grouped(query, key, value):
    """torch's grouped-query attention: key and value heads (dim -3) repeated to the query's,
    each by its own factor."""
    heads = [t.shape[-3] for t in (query, key, value)]
    if heads[0] == heads[1] == heads[2]:
        return key, value
    if heads[0] % heads[1] or heads[0] % heads[2]:  # torch's message, cut short as it is
        raise RuntimeError("Number of heads in key and value must divide the number of heads "
                           "in ")
    return (repeat_interleave(key, heads[0] // heads[1], -3),
            repeat_interleave(value, heads[0] // heads[2], -3))


def _pixel_dims(input, name: str, factor: int, factor_name: str):
    """(C, H, W) of a pixel (un)shuffle's input, with torch's errors below 3 dims and for a
    factor that is not positive."""
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {factor_name}, but got {factor}")
    return tuple(input.shape[-3:])


def _rearranged(input, node: str, split: tuple, order: tuple, merged: tuple,
                constants: dict):
    """One node: the last three dims of ``input`` reshaped to ``split``, these permuted by
    ``order`` and reshaped to ``merged``; a new tensor, even where it moves nothing (factor
    1), as torch's pixel (un)shuffle, channels last where a 4-d input is. ``constants``: the
    factor torch's node keeps."""
    lead = tuple(input.shape[:-3])
    k = len(lead)
    if input.ndim == 5 and suggested_order(input._data) is not None:  # no channels_last_3d
        raise RuntimeError("Unsupported memory format. Supports only ChannelsLast, Contiguous")

    def rearrange(x):
        x = permute(reshape(x, lead + split), tuple(range(k)) + tuple(k + i for i in order))
        out = in_suggested_format(reshape(x, lead + merged), input)
        return out.clone() if out._is_view() else out
    return one_node(node, rearrange, (input,), constants=constants)


@int_parameters("pixel_shuffle", upscale_factor=(2, "int"))
def pixel_shuffle(input, upscale_factor: int):
    """(*, C r², H, W) -> (*, C, H r, W r)."""
    c, h, w = _pixel_dims(input, "pixel_shuffle", upscale_factor, "upscale_factor")
    r = upscale_factor
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {r * r}")
    return _rearranged(input, "PixelShuffleBackward0", (c // (r * r), r, r, h, w),
                       (0, 3, 1, 4, 2), (c // (r * r), h * r, w * r), {"upscale_factor": r})


@int_parameters("pixel_unshuffle", downscale_factor=(2, "int"))
def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H r, W r) -> (*, C r², H, W): pixel_shuffle's inverse."""
    c, h, w = _pixel_dims(input, "pixel_unshuffle", downscale_factor, "downscale_factor")
    r = downscale_factor
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not "
                               f"divisible by {r}")
    return _rearranged(input, "PixelUnshuffleBackward0", (c, h // r, r, w // r, r),
                       (0, 2, 4, 1, 3), (c * r * r, h // r, w // r), {"downscale_factor": r})


def _pairs(kernel_size, dilation, padding, stride):
    return tuple((v, v) if isinstance(v, int) else tuple(v)
                 for v in (kernel_size, dilation, padding, stride))


def _window_names(kernel_size, dilation, padding, stride) -> dict:
    """torch's Im2Col/Col2Im node keeps these as pairs (``node._saved_kernel_size``...)."""
    return dict(zip(("kernel_size", "dilation", "padding", "stride"),
                    _pairs(kernel_size, dilation, padding, stride), strict=True))


def _blocks(sizes, kernel, dilation, padding, stride) -> tuple:
    """(padded sizes, number of sliding blocks per dim) of im2col / col2im."""
    padded = tuple(s + 2 * p for s, p in zip(sizes, padding, strict=True))
    return padded, tuple((p - d * (k - 1) - 1) // s + 1
                         for p, d, k, s in zip(padded, dilation, kernel, stride, strict=True))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold (im2col): (N, C, H, W) -> (N, C kh kw, L) sliding blocks."""
    return one_node("Im2ColBackward0",
                    lambda x: _unfold(x, kernel_size, dilation, padding, stride), (input,),
                    constants={**_window_names(kernel_size, dilation, padding, stride),
                               "self_sym_argsize_minus_2": input.shape[-2],
                               "self_sym_argsize_minus_1": input.shape[-1]})


def _unfold(input, kernel_size, dilation, padding, stride):
    if input.ndim not in (3, 4) or 0 in tuple(input.shape)[1:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    if input._data.dtype.kind in "iu":  # torch's kernel takes bool, not other integers
        raise kernel_error("im2col_out_cpu")(input._data)
    if input.ndim == 3:
        return squeeze(_unfold(unsqueeze(input, 0), kernel_size, dilation, padding, stride), 0)
    kernel, dilation, padding, stride = _pairs(kernel_size, dilation, padding, stride)
    padded, blocks = _blocks(input.shape[2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({', '.join(map(str, input.shape[2:]))}"
                           f"), kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"calculated shape of the array of sliding blocks as {blocks}, but "
                           "its components must be at least one.")
    x = pad(input, (padding[1], padding[1], padding[0], padding[0]))
    cols = unfold_windows(x, geometry=(padded, kernel, blocks, stride, dilation))
    n, c = input.shape[:2]
    return reshape(cols, (n, c * kernel[0] * kernel[1], blocks[0] * blocks[1]))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold (col2im): sliding blocks (N, C kh kw, L) summed into
    (N, C, *output_size)."""
    return one_node("Col2ImBackward0",
                    lambda x: _fold(x, output_size, kernel_size, dilation, padding, stride),
                    (input,), constants=_window_names(kernel_size, dilation, padding, stride))


def _fold(input, output_size, kernel_size, dilation, padding, stride):
    if input.ndim not in (2, 3):
        raise RuntimeError("Expected 2D or 3D (batch mode) input tensor with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    if input.ndim == 2:
        return squeeze(_fold(unsqueeze(input, 0), output_size, kernel_size, dilation, padding,
                             stride), 0)
    if input._data.dtype.kind in "iu":
        raise kernel_error("col2im_out_cpu")(input._data)
    out_hw = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    kernel, dilation, padding, stride = _pairs(kernel_size, dilation, padding, stride)
    n, ckk, length = input.shape
    if ckk % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ckk} and "
                           f"kernel_size={kernel}.")
    padded, blocks = _blocks(out_hw, kernel, dilation, padding, stride)
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size={out_hw}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, expected "
                           "size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, "
                           f"but got input.size(2)={length}.")
    if min(blocks) < 1:  # checked after the count, as torch: (-4) * (-3) blocks pass that one
        raise RuntimeError(f"Given output_size={out_hw}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, "
                           f"calculated shape of the array of sliding blocks as {blocks}, "
                           "which is too small (non-positive)")
    c = ckk // (kernel[0] * kernel[1])
    cols = reshape(input, (n, c) + kernel + blocks)
    out = fold_windows(cols, geometry=(padded, kernel, blocks, stride, dilation))
    return pad(out, (-padding[1], -padding[1], -padding[0], -padding[0]))
