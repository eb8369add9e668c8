"""torch.nn.functional.multi_head_attention_forward, composed from ops.

It follows torch's steps (projections, bias_k/bias_v, zero attention, masks merged into one
additive mask, per-head attention, output projection) so values, gradients, shapes and the
error messages are torch's. Without ``need_weights`` (and without dropout) it runs
scaled_dot_product_attention, as torch does, so rows that may attend to nothing read 0.
"""
from __future__ import annotations

import math
import warnings

from gradkit import creation, ops
from gradkit.backend import bool_
from gradkit.ops.attention import scaled_dot_product_attention
from gradkit.ops.layers import dropout, linear


def canonical_mask(mask, name: str, dtype, other_dtype=None, other_name: str = ""):
    """A bool mask as an additive float mask (-inf where True); a float mask as is."""
    if mask is None:
        return None
    if mask.dtype != bool_ and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other_dtype is not None and mask.dtype != other_dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      "type for both instead.", stacklevel=3)
    if mask.is_floating_point():
        return mask
    return ops.masked_fill(creation.zeros(tuple(mask.shape), dtype=dtype, device=mask.device),
                           mask, float("-inf"))


def _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """torch's _mha_shape_check: whether the call is batched (3-D query)."""
    if query.ndim not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                             "respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                             "instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return batched


def _project(query, key, value, in_proj_weight, in_proj_bias, separate: tuple | None):
    """q, k, v: the packed (3E, E) projection split in three, or the separate weights."""
    biases = (None,) * 3 if in_proj_bias is None else ops.chunk(in_proj_bias, 3)
    if separate is None:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        weights = ops.chunk(in_proj_weight, 3)
    else:
        if any(w is None for w in separate):
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        weights = separate
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases,
                                                     strict=True))


def _shaped_attn_mask(attn_mask, heads: int, tgt_len: int, src_len: int):
    if attn_mask is None:
        return None
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.ndim == 3:
        if tuple(attn_mask.shape) != (heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")


def _heads(projected, static, name: str, heads: int, head_dim: int):
    """The projected keys (values) split per head, or the given ``static`` ones instead (as
    torch, the projection still ran: it is what the attention mask was checked against)."""
    if static is None:
        return projected.reshape(projected.shape[0], heads, head_dim).transpose(0, 1)
    for dim, size in ((0, heads), (2, head_dim)):
        if static.shape[dim] != size:
            raise AssertionError(f"expecting {name}.size({dim}) of {size}, but got "
                                 f"{static.shape[dim]}")
    return static


def _pad_masks(masks: tuple) -> tuple:
    """Masks with one more key column (0: it may be attended), for an added key."""
    return tuple(None if m is None else ops.pad(m, (0, 1), "constant", 0.0) for m in masks)


def multi_head_attention_forward(
        query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
        in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float, out_proj_weight,
        out_proj_bias, training: bool = True, key_padding_mask=None, need_weights: bool = True,
        attn_mask=None, use_separate_proj_weight: bool = False, q_proj_weight=None,
        k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
        average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention of (L, N, E) / (L, E) query over (S, N, E) key and value:
    (output, weights averaged over heads or per head, or None without ``need_weights``)."""
    batched = _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", query.dtype,
                                      None if attn_mask is None else attn_mask.dtype,
                                      "attn_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the mask is the causal one: attention applies it itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", query.dtype)
        is_causal = is_causal and key_padding_mask is None
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight and key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                             f"value's {value.shape[:2]}")
    if not use_separate_proj_weight and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight \
        else None
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, separate)
    heads = bsz * num_heads
    attn_mask = _shaped_attn_mask(attn_mask, heads, tgt_len, key.shape[0])
    if bias_k is not None and bias_v is not None:
        for name, static in (("key", static_k), ("value", static_v)):
            if static is not None:
                raise AssertionError(f"bias cannot be added to static {name}.")
        k = ops.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ops.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_masks((attn_mask, key_padding_mask))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    # (batch·heads, length, head_dim): each head attends on its own
    q = q.reshape(tgt_len, heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", heads, head_dim)
    v = _heads(v, static_v, "static_v", heads, head_dim)
    if add_zero_attn:
        zeros = creation.zeros((heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = ops.cat([k, zeros], 1), ops.cat([v, zeros], 1)
        attn_mask, key_padding_mask = _pad_masks((attn_mask, key_padding_mask))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        for dim, size in enumerate((bsz, src_len)):
            if key_padding_mask.shape[dim] != size:
                raise AssertionError(f"Expected key_padded_mask.shape[{dim}] to be {size}, but "
                                     f"got {key_padding_mask.shape[dim]}")
        per_head = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            bsz, num_heads, 1, src_len).reshape(heads, 1, src_len)
        attn_mask = per_head if attn_mask is None else ops.add(attn_mask, per_head)
    if not training:
        dropout_p = 0.0
    if need_weights or dropout_p > 0.0:
        scores = ops.matmul(ops.mul(q, math.sqrt(1.0 / float(head_dim))), k.transpose(-2, -1))
        if is_causal and attn_mask is None:
            attn_mask = canonical_mask(ops.triu(creation.ones(
                (tgt_len, src_len), dtype=bool_, device=q.device), 1), "",
                q.dtype)
        weights = ops.softmax(scores if attn_mask is None else ops.add(attn_mask, scores), -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p, True)
        out = ops.matmul(weights, v)
    else:
        mask = attn_mask
        if mask is not None:
            mask = mask.unsqueeze(0) if mask.shape[0] == 1 \
                else mask.reshape(bsz, num_heads, -1, src_len)
        out = scaled_dot_product_attention(
            q.reshape(bsz, num_heads, tgt_len, head_dim),
            k.reshape(bsz, num_heads, src_len, head_dim),
            v.reshape(bsz, num_heads, src_len, head_dim), mask, 0.0, is_causal)
        out = out.reshape(heads, tgt_len, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[1])  # (not -1: ambiguous for an empty batch)
    if not need_weights:
        return (out if batched else out.squeeze(1)), None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        out, weights = out.squeeze(1), weights.squeeze(0)
    return out, weights
