"""nn.MultiheadAttention: torch's parameters (packed ``in_proj_weight`` or separate
``q/k/v_proj_weight`` when kdim/vdim differ, ``in_proj_bias``, ``bias_k``/``bias_v``,
``out_proj``), initialisation and forward, over ``multi_head_attention_forward``."""
from __future__ import annotations

from gradkit import creation
from gradkit.nn import init
from gradkit.nn.functional_attention import canonical_mask, multi_head_attention_forward
from gradkit.nn.layers import Linear
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """torch's name for MultiheadAttention's output projection (a plain Linear)."""


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads of embed_dim // num_heads features each.

    >>> mha = gradkit.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = gradkit.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (gradkit.Size([3, 5, 8]), gradkit.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def parameter(*shape):
            return Parameter(creation.empty(shape, device=device, dtype=dtype))
        if self._qkv_same_embed_dim:
            self.in_proj_weight = parameter(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = parameter(embed_dim, embed_dim)
            self.k_proj_weight = parameter(embed_dim, self.kdim)
            self.v_proj_weight = parameter(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        self.register_parameter("in_proj_bias", parameter(3 * embed_dim) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias, device,
                                                        dtype)
        self.bias_k = parameter(1, 1, embed_dim) if add_bias_kv else None
        self.bias_v = parameter(1, 1, embed_dim) if add_bias_kv else None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's: xavier-uniform projections, zero biases, xavier-normal bias_k/bias_v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for extra in (self.bias_k, self.bias_v):
            if extra is not None:
                init.xavier_normal_(extra)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        """(output, attention weights or None); (N, L, E) inputs when ``batch_first``."""
        batched = query.ndim == 3
        key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", query.dtype,
                                          None if attn_mask is None else attn_mask.dtype,
                                          "attn_mask")
        attn_mask = canonical_mask(attn_mask, "attn_mask", query.dtype)
        if self.batch_first and batched:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        return (out.transpose(1, 0) if self.batch_first and batched else out), weights
