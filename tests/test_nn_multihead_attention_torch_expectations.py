"""torch's test/nn/test_multihead_attention.py on gradkit and on torch 2.13.

torch's NumPy reference of multi-head attention (projections, bias_k/bias_v, zero attention,
static keys and values, masks, per-head or averaged weights) is held against both libraries;
the module-level tests run as programs of ``lib`` on both, and with weights copied from torch
the outputs are compared (float64, dropout 0). gradkit has no fast path: the tests that
expect torch's BetterTransformer path get gradkit's one path, with the same values.
Left out: nested (jagged) tensors, the fast-path mock, CUDA dtypes, torch.compile.
"""
import random

import numpy as np
import pytest

import gradkit
from torch_expectations.twin import both_libraries as both, raises_like_torch

try:
    import torch
except ImportError:
    torch = None



def _softmax(x):
    shifted = np.exp(x - np.max(x, axis=-1, keepdims=True))
    with np.errstate(invalid="ignore"):
        return shifted / shifted.sum(axis=-1, keepdims=True)


def _split_heads(x, batch, length, heads, d_head):
    return x.reshape(batch, length, heads, d_head).transpose(0, 2, 1, 3)


def _reference(mha, q_in, k_in, attn_mask, padding, static_k, static_v, average):
    """torch's NumPy reference of one step of decoder attention (query length 1)."""
    weights = {n: p.detach().double().numpy() for n, p in mha.named_parameters()}
    e, heads = mha.embed_dim, mha.num_heads
    d_head = e // heads
    batch, seq = k_in.shape[:2]
    if mha._qkv_same_embed_dim:
        w_q, w_k, w_v = np.split(weights["in_proj_weight"], 3)
    else:
        w_q, w_k, w_v = (weights[f"{n}_proj_weight"] for n in "qkv")
    b_q, b_k, b_v = np.split(weights["in_proj_bias"], 3)
    q = q_in @ w_q.T + b_q
    k, v = k_in @ w_k.T + b_k, k_in @ w_v.T + b_v
    if mha.bias_k is not None:
        k = np.concatenate([k, np.repeat(weights["bias_k"], batch, axis=0)], axis=1)
        v = np.concatenate([v, np.repeat(weights["bias_v"], batch, axis=0)], axis=1)
        attn_mask = np.concatenate([attn_mask, np.ones((1, 1))], axis=1)
        padding = None if padding is None else np.pad(padding, ((0, 0), (0, 1)))
        seq += 1
    q = _split_heads(q, batch, 1, heads, d_head)
    k = static_k.reshape(batch, heads, seq, d_head) if static_k is not None \
        else _split_heads(k, batch, seq, heads, d_head)
    v = static_v.reshape(batch, heads, seq, d_head) if static_v is not None \
        else _split_heads(v, batch, seq, heads, d_head)
    if mha.add_zero_attn:
        k, v = (np.concatenate([x, np.zeros(x.shape[:2] + (1, d_head))], axis=2) for x in (k, v))
        attn_mask = np.concatenate([attn_mask, np.ones((1, 1))], axis=1)
        padding = None if padding is None else np.pad(padding, ((0, 0), (0, 1)))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)
    scores = np.where(attn_mask[None, None] == 0, -np.inf, scores)
    if padding is not None:
        scores = np.where(padding[:, None, None, :], -np.inf, scores)
    probabilities = _softmax(scores)
    out = (probabilities @ v).transpose(0, 2, 1, 3).reshape(batch, 1, e)
    out = out @ weights["out_proj.weight"].T + weights["out_proj.bias"]
    return out[:, 0], probabilities.mean(axis=1) if average else probabilities


@both
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("options", [
    {}, {"add_bias_kv": True}, {"add_zero_attn": True}, {"padding": True}, {"saved_kv": True},
    {"padding": True, "add_bias_kv": True, "add_zero_attn": True},
    {"padding": True, "add_zero_attn": True, "saved_kv": True},
    {"padding": True, "add_zero_attn": True, "saved_kv": True, "same_embed_dim": True}])
def test_multihead_attention_against_the_numpy_reference(lib, average, options):
    """torch's _multihead_attn_test_helper (10 random draws each, torch's 100 is for CI)."""
    rng = np.random.default_rng(len(options) + 10 * average)
    lib.set_default_dtype(lib.float64)
    try:
        for _ in range(10):
            batch, seq = (random.randint(2, 10) for _ in range(2))
            d_head, heads = random.randint(3, 10), random.randint(2, 5) * 2
            d_model = d_head * heads
            kv_dim = d_model if options.get("same_embed_dim") else random.randint(5, 20)
            static_k = static_v = None
            if options.get("saved_kv"):
                static_k, static_v = (rng.random((batch * heads, seq, d_head)) for _ in "kv")
            padding = None
            if options.get("padding"):
                padding = np.repeat(rng.integers(0, 2, (1, seq)), batch, axis=0) == 1
            decoder_state, k_in = rng.random((batch, d_model)), rng.random((batch, seq, kv_dim))
            attn_mask = rng.integers(0, 2, size=(1, seq))
            attn_mask_tensor = lib.tensor(np.where(attn_mask == 0, -np.inf, 0.0))
            mha = lib.nn.MultiheadAttention(
                d_model, heads, add_bias_kv=options.get("add_bias_kv", False),
                add_zero_attn=options.get("add_zero_attn", False), kdim=kv_dim, vdim=kv_dim)
            separate = not mha._qkv_same_embed_dim
            source = lib.tensor(k_in).transpose(0, 1)
            result, weights = lib.nn.functional.multi_head_attention_forward(
                lib.tensor(decoder_state).unsqueeze(0), source, source, d_model, heads,
                mha.in_proj_weight, mha.in_proj_bias, mha.bias_k, mha.bias_v,
                mha.add_zero_attn, mha.dropout, mha.out_proj.weight, mha.out_proj.bias,
                mha.training, None if padding is None else lib.tensor(padding), True,
                attn_mask_tensor, separate, mha.q_proj_weight, mha.k_proj_weight,
                mha.v_proj_weight,
                static_k=None if static_k is None else lib.tensor(static_k),
                static_v=None if static_v is None else lib.tensor(static_v),
                average_attn_weights=average, is_causal=False)
            expected, expected_weights = _reference(
                mha, decoder_state[:, None], k_in, attn_mask, padding, static_k, static_v,
                average)
            assert tuple(result.squeeze(0).shape) == (batch, d_model)
            np.testing.assert_allclose(result.squeeze(0).detach().numpy(), expected, atol=1e-5)
            assert tuple(weights.shape) == expected_weights.shape
            np.testing.assert_allclose(weights.detach().numpy(), expected_weights, atol=1e-5)
    finally:
        lib.set_default_dtype(lib.float32)


def _functional_args(lib, mha, x):
    return (x, x, x, mha.embed_dim, mha.num_heads, mha.in_proj_weight, mha.in_proj_bias,
            mha.bias_k, mha.bias_v, mha.add_zero_attn, 0.0, mha.out_proj.weight,
            mha.out_proj.bias)


def test_static_key_and_value_refusals_like_torch():
    def call(lib, **kwargs):
        torch_like = lib.nn.MultiheadAttention(4, 2, add_bias_kv=kwargs.pop("bias_kv", False))
        args = list(_functional_args(lib, torch_like, lib.randn(3, 2, 4)))
        if "bias_k" in kwargs:
            args[7], args[8] = kwargs.pop("bias_k"), kwargs.pop("bias_v")
        lib.nn.functional.multi_head_attention_forward(*args, **kwargs)

    raises_like_torch(lambda lib: call(lib, bias_kv=True, static_k=lib.randn(4, 3, 2)),
                      AssertionError, "^bias cannot be added to static key.$")
    raises_like_torch(lambda lib: call(lib, bias_kv=True, static_v=lib.randn(4, 3, 2)),
                      AssertionError, "^bias cannot be added to static value.$")
    raises_like_torch(lambda lib: call(lib, bias_k=lib.zeros(1, 1, 4), bias_v=None),
                      AssertionError, "^bias_k is set but bias_v is None$")
    raises_like_torch(lambda lib: call(lib, bias_k=None, bias_v=lib.zeros(1, 1, 4)),
                      AssertionError, "^bias_v is set but bias_k is None$")
    raises_like_torch(lambda lib: call(lib, static_k=lib.randn(3, 3, 2)), AssertionError,
                      r"^expecting static_k.size\(0\) of 4, but got 3$")
    raises_like_torch(lambda lib: call(lib, static_v=lib.randn(4, 3, 3)), AssertionError,
                      r"^expecting static_v.size\(2\) of 2, but got 3$")
    raises_like_torch(lambda lib: call(lib, static_k=lib.randn(4, 6, 2),
                                       static_v=lib.randn(4, 6, 2),
                                       key_padding_mask=lib.zeros(2, 3, dtype=lib.bool)),
                      AssertionError, r"^Expected key_padded_mask.shape\[1\] to be 6, but got 3$")


def _twins(make):
    """``make(lib)`` in float64 on both libraries, gradkit's holding torch's parameters."""
    torch.manual_seed(0)
    theirs = make(torch).double()
    ours = make(gradkit).double()
    ours.load_state_dict({k: gradkit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _same(ours, theirs):
    assert (ours is None) == (theirs is None)
    if ours is not None:
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9,
                                   atol=1e-12, equal_nan=True)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("need_weights", [True, False])
def test_static_key_and_value_outputs_like_torch(need_weights):
    rng = np.random.default_rng(5)
    x, keys, values = (rng.standard_normal(s) for s in ((3, 2, 4), (4, 6, 2), (4, 6, 2)))
    ours, theirs = _twins(lambda lib: lib.nn.MultiheadAttention(4, 2, add_zero_attn=True))
    results = []
    for lib, mha in ((gradkit, ours), (torch, theirs)):
        query = lib.tensor(x, requires_grad=True)
        static_k, static_v = lib.tensor(keys, requires_grad=True), lib.tensor(values)
        out, weights = lib.nn.functional.multi_head_attention_forward(
            *_functional_args(lib, mha, query), static_k=static_k, static_v=static_v,
            need_weights=need_weights, training=False)
        out.sum().backward()
        results.append([out, weights, query.grad, static_k.grad, mha.in_proj_weight.grad])
    for g, t in zip(*results, strict=True):
        _same(g, t)


@both
def test_multihead_attn_3d_attn_mask(lib):
    """A 3-D mask (one per batch entry and head) gives each entry's 2-D-mask result."""
    embed_dim, num_heads, batch, src_len, tgt_len = 8, 4, 8, 3, 2
    query, key = lib.rand(batch, tgt_len, embed_dim), lib.rand(batch, src_len, embed_dim)
    mask = lib.randint(0, 2, (batch, tgt_len, src_len)).float()
    mask = mask.masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, 0.0)
    mha = lib.nn.MultiheadAttention(embed_dim, num_heads)
    out_3d = mha(query.transpose(0, 1), key.transpose(0, 1), key.transpose(0, 1),
                 attn_mask=lib.repeat_interleave(mask, num_heads, dim=0))[0].transpose(0, 1)
    for i in range(batch):
        out_2d = mha(query[i].unsqueeze(0).transpose(0, 1), key[i].unsqueeze(0).transpose(0, 1),
                     key[i].unsqueeze(0).transpose(0, 1), attn_mask=mask[i])[0]
        assert lib.allclose(out_3d[i].unsqueeze(0).transpose(0, 1), out_2d, atol=1e-6,
                            equal_nan=True)


@both
def test_multihead_attn_no_bias_and_none_projections(lib):
    mha = lib.nn.MultiheadAttention(8, 4, bias=False)
    assert mha.in_proj_bias is None and mha.out_proj.bias is None
    with lib.no_grad():
        mha = lib.nn.MultiheadAttention(2, 2, bias=False, dtype=lib.float64)
        query = lib.rand(2, 2, 2, dtype=lib.float64)
        assert mha(query, query, query)[0].shape == (2, 2, 2)
        mha = lib.nn.MultiheadAttention(4, 4, vdim=2, kdim=2, dtype=lib.float64)
        assert mha.in_proj_weight is None and mha.q_proj_weight.shape == (4, 4)
        key = lib.rand(4, 4, 2, dtype=lib.float64)
        out, weights = mha(lib.rand(4, 4, 4, dtype=lib.float64), key, key)
        assert out.shape == (4, 4, 4) and out.dtype == lib.float64 and weights.shape == (4, 4, 4)


def _invalid_shapes(lib, mha, key_2d=(4, 4), batched_mask=(False, False, True, True), **extra):
    """torch's _test_multihead_attn_invalid_shape_impl: (call, message) pairs (its fast-path
    twin uses a 3x3 key, 3-long masks and need_weights=False for the batched cases)."""
    q3, q2 = lib.randn(4, 4, 4), lib.randn(4, 4)
    mask1, batched_mask = lib.tensor([False, False, True, True]), lib.tensor(batched_mask)
    return [
        (lambda: mha(q3, lib.randn(*key_2d), q3, **extra),
         "expected `key` and `value` to be 3-D but found 2-D and 3-D tensors respectively"),
        (lambda: mha(q3, q3, lib.randn(*key_2d), **extra),
         "expected `key` and `value` to be 3-D but found 3-D and 2-D tensors respectively"),
        (lambda: mha(q3, q3, q3, key_padding_mask=batched_mask, **extra),
         "expected `key_padding_mask` to be `None` or 2-D but found 1-D tensor instead"),
        (lambda: mha(q3, q3, q3, attn_mask=batched_mask, **extra),
         "expected `attn_mask` to be `None`, 2-D or 3-D but found 1-D tensor instead"),
        (lambda: mha(q2, q3, q2), "expected `key` and `value` to be 2-D but found 3-D and 2-D "
                                  "tensors respectively"),
        (lambda: mha(q2, q2, q3), "expected `key` and `value` to be 2-D but found 2-D and 3-D "
                                  "tensors respectively"),
        (lambda: mha(q2, q2, q2, key_padding_mask=lib.tensor([[False, False, True, True] * 2])),
         "expected `key_padding_mask` to be `None` or 1-D but found 2-D tensor instead"),
        (lambda: mha(q2, q2, q2, attn_mask=mask1),
         "expected `attn_mask` to be `None`, 2-D or 3-D but found 1-D tensor instead"),
        (lambda: mha(q2, q2, q2, attn_mask=lib.randn(5, 4, 4).bernoulli_().to(lib.bool)),
         r"Expected `attn_mask` shape to be \(4, 4, 4\)"),
    ]


@both
def test_multihead_attn_invalid_shape(lib):
    mha = lib.nn.MultiheadAttention(4, 4)
    for call, message in _invalid_shapes(lib, mha):
        with pytest.raises(AssertionError, match=message):
            call()
    mha.eval()
    with lib.no_grad():  # where torch may take its fast path
        for call, message in _invalid_shapes(lib, mha):
            with pytest.raises(AssertionError, match=message):
                call()
        batch_first = lib.nn.MultiheadAttention(4, 4, batch_first=True).eval()
        calls = _invalid_shapes(lib, batch_first, (3, 3), (False, True, True),
                                need_weights=False)
        for index, (call, message) in enumerate(calls):
            if index in (2, 3) and lib is not gradkit:
                # torch 2.13's fast path meets the 1-D masks first (a RuntimeError of
                # _native_multi_head_attention): gradkit, without a fast path, asserts as
                # torch's test expects
                with pytest.raises(RuntimeError):
                    call()
                continue
            with pytest.raises(AssertionError, match=message):
                call()


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_self_attention_with_two_masks_like_torch(need_weights, training):
    """torch's two-masks test: a bool attn_mask and key_padding_mask together, batch_first,
    in eval and no_grad (torch's fast path) or training; rows masked everywhere included."""
    rng = np.random.default_rng(2)
    batch, src_len, embed_dim, heads = 8, 5, 14, 7
    x = rng.random((batch, src_len, embed_dim))
    attn_mask = rng.integers(0, 2, (src_len, src_len)).astype(bool)
    padding = rng.integers(0, 2, (batch, src_len)).astype(bool)
    ours, theirs = _twins(lambda lib: lib.nn.MultiheadAttention(embed_dim, heads,
                                                                batch_first=True))
    results = []
    for lib, mha in ((gradkit, ours), (torch, theirs)):
        mha.train(training)
        query = lib.tensor(x)
        with lib.no_grad():
            results.append(mha(query, query, query, attn_mask=lib.tensor(attn_mask),
                               key_padding_mask=lib.tensor(padding), need_weights=need_weights))
            reference = lib.nn.functional.multi_head_attention_forward(
                *_functional_args(lib, mha, query.transpose(0, 1)), training=False,
                key_padding_mask=lib.tensor(padding), need_weights=False,
                attn_mask=lib.tensor(attn_mask))[0].transpose(0, 1)
        # the module is the functional form (torch's assert), rows masked everywhere aside
        merged = np.logical_or(attn_mask[None], padding[:, None, :]).all(-1)[..., None]
        _same(results[-1][0].masked_fill(lib.tensor(merged), 0),
              reference.masked_fill(lib.tensor(merged), 0))
    for g, t in zip(*results, strict=True):
        _same(g, t)


@both
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multihead_attention_dtype(lib, dtype):
    dtype = getattr(lib, dtype)
    for batch_first, training in ((False, True), (True, True), (True, False)):
        model = lib.nn.MultiheadAttention(16, 8, batch_first=batch_first).to(dtype)
        model.train(training)
        q, k, v = (lib.randn(10, 8, 16, dtype=dtype) for _ in range(3))
        with lib.no_grad():
            out = model(q, k, v, need_weights=False)
        assert out[0].size() == q.size() and out[0].dtype == dtype and out[1] is None


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_query_and_bias_of_different_dtypes_like_torch():
    """A float16 in_proj_bias on a float64 module: torch's test only asks for no error; the
    values agree too."""
    x = np.random.default_rng(4).standard_normal((4, 4, 4))
    ours, theirs = _twins(lambda lib: lib.nn.MultiheadAttention(4, 4, batch_first=True))
    results = []
    for lib, mha in ((gradkit, ours), (torch, theirs)):
        mha.eval()
        mha.in_proj_bias = lib.nn.Parameter(mha.in_proj_bias.to(lib.half))
        with lib.no_grad():
            results.append(mha(*(lib.tensor(x),) * 3))
    for g, t in zip(*results, strict=True):
        _same(g, t)


def test_static_key_and_value_gradcheck_and_gradgradcheck():
    gradkit.manual_seed(0)
    mha = gradkit.nn.MultiheadAttention(4, 2).double()

    def run(query, static_k, static_v):
        return gradkit.nn.functional.multi_head_attention_forward(
            *_functional_args(gradkit, mha, query), static_k=static_k, static_v=static_v,
            training=False)[0]
    inputs = tuple(gradkit.randn(*shape, dtype=gradkit.float64, requires_grad=True)
                   for shape in ((3, 2, 4), (4, 5, 2), (4, 5, 2)))
    assert gradkit.autograd.gradcheck(run, inputs)
    assert gradkit.autograd.gradgradcheck(run, inputs)
