"""Transformer layers: TransformerEncoderLayer / TransformerEncoder, TransformerDecoderLayer /
TransformerDecoder and Transformer, with torch's submodules (so state_dict keys match),
post-norm or ``norm_first`` pre-norm blocks, relu/gelu activations and torch's mask handling.
torch's nested-tensor fast path (an inference speed-up) is not there."""
from __future__ import annotations

import copy
import warnings

from gradkit import creation, ops
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn import init
from gradkit.nn.activation import GELU, ReLU
from gradkit.nn.attention import MultiheadAttention
from gradkit.nn.container import ModuleList
from gradkit.nn.functional_attention import canonical_mask
from gradkit.nn.layers import Dropout, LayerNorm, Linear
from gradkit.nn.module import Module


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """The (sz, sz) causal mask: 0 on and below the diagonal, -inf above."""
    return ops.triu(creation.full((sz, sz), float("-inf"), dtype=dtype, device=device), 1)


def _is_causal(mask, is_causal, size: int) -> bool:
    """torch's _detect_is_causal_mask: a given mask equal to the causal one counts as causal."""
    if is_causal is None and mask is not None:
        causal = generate_square_subsequent_mask(size, mask.device, mask.dtype)
        return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return is_causal is True


class _Block(Module):
    """What the encoder and decoder layers share: attention (``attentions`` names the
    MultiheadAttention submodules), the feed-forward block and the norms and dropouts around
    them, registered in torch's order."""

    attentions: tuple = ()

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        options = {"device": device, "dtype": dtype}
        attentions = self.attentions
        for name in attentions:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                   batch_first=batch_first, **options))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **options)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **options)
        self.norm_first = norm_first
        count = len(attentions) + 1
        for i in range(1, count + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                **options))
        for i in range(1, count + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)

    def _attend(self, attention, dropout, x, memory, mask, padding, is_causal):
        out = attention(x, memory, memory, attn_mask=mask, key_padding_mask=padding,
                        need_weights=False, is_causal=is_causal)[0]
        return dropout(out)

    def _feed_forward(self, x, dropout):
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def _residual(self, x, norm, block):
        """Pre-norm x + block(norm(x)) or post-norm norm(x + block(x))."""
        return ops.add(x, block(norm(x))) if self.norm_first else norm(ops.add(x, block(x)))


class TransformerEncoderLayer(_Block):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm.

    >>> layer = gradkit.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    >>> layer(gradkit.randn(5, 3, 8)).shape
    gradkit.Size([5, 3, 8])
    """

    attentions = ("self_attn",)

    @property
    def activation_relu_or_gelu(self) -> int:
        """torch's fast-path flag: 1 for relu, 2 for gelu, 0 for another activation (from
        ``activation``, so __init__ keeps _Block's signature, torch's)."""
        active = self.activation
        return 1 if active is F.relu or isinstance(active, ReLU) else \
            2 if active is F.gelu or isinstance(active, GELU) else 0

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        src_key_padding_mask = canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src.dtype,
            None if src_mask is None else src_mask.dtype, "src_mask")
        src_mask = canonical_mask(src_mask, "src_mask", src.dtype)

        def attend(x):
            return self._attend(self.self_attn, self.dropout1, x, x, src_mask,
                                src_key_padding_mask, is_causal)
        x = self._residual(src, self.norm1, attend)
        return self._residual(x, self.norm2, lambda y: self._feed_forward(y, self.dropout2))


class TransformerDecoderLayer(_Block):
    """Self-attention, attention over the encoder's memory, then a feed-forward block.

    >>> layer = gradkit.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    >>> layer(gradkit.randn(4, 3, 8), gradkit.randn(6, 3, 8)).shape
    gradkit.Size([4, 3, 8])
    """

    attentions = ("self_attn", "multihead_attn")

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):
        x = self._residual(tgt, self.norm1, lambda y: self._attend(
            self.self_attn, self.dropout1, y, y, tgt_mask, tgt_key_padding_mask,
            tgt_is_causal))
        x = self._residual(x, self.norm2, lambda y: self._attend(
            self.multihead_attn, self.dropout2, y, memory, memory_mask,
            memory_key_padding_mask, memory_is_causal))
        return self._residual(x, self.norm3, lambda y: self._feed_forward(y, self.dropout3))


class _Stack(Module):
    def __init__(self, layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def _finish(self, output):
        return output if self.norm is None else self.norm(output)

    def _causal(self, x, mask, is_causal):
        batch_first = self.layers[0].self_attn.batch_first if len(self.layers) else False
        size = x.shape[1 if batch_first and x.ndim == 3 else 0]
        mask = canonical_mask(mask, "mask", x.dtype)
        return mask, _is_causal(mask, is_causal, size)


def _why_not_sparsity_fast_path(layer) -> str:
    """torch's reason (its words) an encoder layer cannot take the nested-tensor path, or ""."""
    name = "encoder_layer"
    attn = getattr(layer, "self_attn", None)
    reasons = (
        (lambda: not isinstance(layer, TransformerEncoderLayer),
         f"{name} was not TransformerEncoderLayer"),
        (lambda: layer.norm_first, f"{name}.norm_first was True"),
        (lambda: not attn.batch_first, f"{name}.self_attn.batch_first was not True(use "
                                       "batch_first for better inference performance)"),
        (lambda: not attn._qkv_same_embed_dim,
         f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (lambda: attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (lambda: not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (lambda: layer.norm1.eps != layer.norm2.eps,
         f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (lambda: attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"))
    for failed, reason in reasons:  # in torch's order, each read only when the ones before pass
        if failed():
            return reason
    return ""


class TransformerEncoder(_Stack):
    """``num_layers`` copies of an encoder layer, then ``norm`` if given."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__(encoder_layer, num_layers, norm)
        self.enable_nested_tensor = enable_nested_tensor
        reason = _why_not_sparsity_fast_path(encoder_layer)  # (gradkit has no nested tensors)
        self.use_nested_tensor = enable_nested_tensor and not reason
        if enable_nested_tensor and reason:  # torch's warning, though gradkit has no fast path
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {reason}", stacklevel=2)
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool | None = None):
        src_key_padding_mask = canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src.dtype,
            None if mask is None else mask.dtype, "mask")
        mask, is_causal = self._causal(src, mask, is_causal)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        return self._finish(output)


class TransformerDecoder(_Stack):
    """``num_layers`` copies of a decoder layer, then ``norm`` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__(decoder_layer, num_layers, norm)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False):
        tgt_mask, tgt_is_causal = self._causal(tgt, tgt_mask, tgt_is_causal)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return self._finish(output)


class Transformer(Module):
    """An encoder-decoder Transformer (xavier-uniform weight matrices, as torch)."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias, device, dtype)

        def norm():
            return LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(*args), num_encoder_layers, norm())
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(*args), num_decoder_layers, norm())
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False):
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
