"""nn.MultiheadAttention and F.multi_head_attention_forward against torch: state_dict keys,
repr, outputs, attention weights and the gradients of inputs and every parameter (float64),
gradcheck/gradgradcheck, initialisation, masks and torch's errors."""
import numpy as np
import pytest

import gradkit
from nn_twins import compare, errors, flat

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
Q, K, V = (rng.standard_normal((4, 2, 8)), rng.standard_normal((5, 2, 8)),
           rng.standard_normal((5, 2, 8)))
CAUSAL = np.triu(np.ones((4, 4), dtype=bool), 1)
PADDING = np.array([[False] * 4 + [True], [False] * 5])
FLOAT_MASK = rng.standard_normal((4, 5))

CASES = {
    "plain": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, K, V), {}),
    "self_attention_one_head": (lambda lib: lib.nn.MultiheadAttention(8, 1), (Q, Q, Q), {}),
    "per_head_weights": (lambda lib: lib.nn.MultiheadAttention(8, 4), (Q, K, V),
                         {"average_attn_weights": False}),
    "no_weights": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, K, V),
                   {"need_weights": False}),
    "no_bias": (lambda lib: lib.nn.MultiheadAttention(8, 2, bias=False), (Q, K, V), {}),
    "bias_kv_zero_attn": (lambda lib: lib.nn.MultiheadAttention(
        8, 2, add_bias_kv=True, add_zero_attn=True), (Q, K, V),
        {"key_padding_mask": PADDING, "attn_mask": FLOAT_MASK}),
    "kdim_vdim": (lambda lib: lib.nn.MultiheadAttention(8, 2, kdim=3, vdim=6),
                  (Q, rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 2, 6))), {}),
    "kdim_vdim_no_weights": (lambda lib: lib.nn.MultiheadAttention(8, 2, kdim=3, vdim=6),
                             (Q, rng.standard_normal((5, 2, 3)),
                              rng.standard_normal((5, 2, 6))), {"need_weights": False}),
    "batch_first": (lambda lib: lib.nn.MultiheadAttention(8, 2, batch_first=True),
                    (Q.transpose(1, 0, 2), K.transpose(1, 0, 2), V.transpose(1, 0, 2)), {}),
    "bool_key_padding_mask": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, K, V),
                              {"key_padding_mask": PADDING}),
    "bool_key_padding_mask_no_weights": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                                         (Q, K, V), {"key_padding_mask": PADDING,
                                                     "need_weights": False}),
    "float_attn_mask": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, K, V),
                        {"attn_mask": FLOAT_MASK}),
    "3d_attn_mask_no_weights": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, K, V),
                                {"attn_mask": rng.standard_normal((4, 4, 5)),
                                 "need_weights": False}),
    "causal_bool_mask": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, Q, Q),
                         {"attn_mask": CAUSAL, "is_causal": True}),
    "causal_hint_no_weights": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, Q, Q),
                               {"attn_mask": CAUSAL, "is_causal": True,
                                "need_weights": False}),
    "unbatched": (lambda lib: lib.nn.MultiheadAttention(8, 2), (Q[:, 0], K[:, 0], V[:, 0]),
                  {"key_padding_mask": PADDING[0], "attn_mask": FLOAT_MASK}),
    "unbatched_3d_mask_batch_first": (
        lambda lib: lib.nn.MultiheadAttention(8, 2, batch_first=True),
        (Q[:, 0], K[:, 0], V[:, 0]), {"attn_mask": rng.standard_normal((2, 4, 5))}),
    "dropout_in_eval": (lambda lib: lib.nn.MultiheadAttention(8, 2, dropout=0.5), (Q, K, V),
                        {}),
}


@pytest.mark.filterwarnings("ignore:Support for mismatched")  # bool padding, float mask
@pytest.mark.parametrize("name", sorted(CASES))
def test_multihead_attention_matches_torch(name):
    make, inputs, kwargs = CASES[name]
    compare(torch, make, inputs, kwargs)


def test_functional_matches_module_and_torch():
    ours, theirs = compare(torch, lambda lib: lib.nn.MultiheadAttention(8, 2), (Q, K, V))
    args = [(x, x) for x in (Q, K, V)]
    results = []
    for lib, module, (q, k, v) in ((gradkit, ours, [a[0] for a in args]),
                                   (torch, theirs, [a[1] for a in args])):
        results.append(lib.nn.functional.multi_head_attention_forward(
            lib.tensor(q), lib.tensor(k), lib.tensor(v), 8, 2, module.in_proj_weight,
            module.in_proj_bias, None, None, False, 0.0, module.out_proj.weight,
            module.out_proj.bias, training=False))
    for g, t in zip(flat(results[0]), flat(results[1]), strict=True):
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


def test_dropout_while_training_draws_from_gradkit_generator():
    mha = gradkit.nn.MultiheadAttention(8, 2, dropout=0.5).double()
    q = gradkit.tensor(Q)
    gradkit.manual_seed(5)
    out, weights = mha(q, q, q)
    gradkit.manual_seed(5)
    again, _ = mha(q, q, q)
    np.testing.assert_array_equal(out.detach().numpy(), again.detach().numpy())
    assert ((weights.detach().numpy() == 0).any())  # some weights dropped (then averaged)


@pytest.mark.parametrize("kwargs", [{}, {"add_bias_kv": True, "add_zero_attn": True},
                                    {"kdim": 3, "vdim": 5}])
def test_gradcheck_and_gradgradcheck(kwargs):
    gradkit.manual_seed(0)
    mha = gradkit.nn.MultiheadAttention(4, 2, **kwargs).double()
    names = [n for n, _ in mha.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in mha.parameters()]
    q = gradkit.randn(3, 2, 4, dtype=gradkit.float64, requires_grad=True)
    k = gradkit.randn(2, 2, kwargs.get("kdim", 4), dtype=gradkit.float64, requires_grad=True)
    v = gradkit.randn(2, 2, kwargs.get("vdim", 4), dtype=gradkit.float64, requires_grad=True)

    def run(q, k, v, *weights):
        for name, w in zip(names, weights, strict=True):
            owner = mha.out_proj if name.startswith("out_proj.") else mha
            owner._parameters[name.split(".")[-1]] = w
        return mha(q, k, v)[0]
    assert gradkit.autograd.gradcheck(run, (q, k, v, *params))
    assert gradkit.autograd.gradgradcheck(run, (q, k, v, *params))


def test_initialisation_as_torch():
    mha = gradkit.nn.MultiheadAttention(6, 2, add_bias_kv=True)
    bound = (6 / (18 + 6)) ** 0.5  # xavier_uniform of (3E, E)
    weight = mha.in_proj_weight.detach().numpy()
    assert weight.shape == (18, 6) and abs(weight).max() <= bound and weight.std() > bound / 3
    assert not mha.in_proj_bias.detach().numpy().any()
    assert not mha.out_proj.bias.detach().numpy().any()
    assert mha.bias_k.shape == (1, 1, 6) and mha.bias_k.detach().numpy().std() > 0
    assert type(mha.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def _tensor(shape, dtype="float64"):
    return lambda lib: lib.zeros(*shape, dtype=getattr(lib, dtype))


ERRORS = {
    "4d_query": ((1, 4, 2, 8), (5, 2, 8), (5, 2, 8), {}),
    "key_rank": ((4, 2, 8), (5, 8), (5, 2, 8), {}),
    "unbatched_key_rank": ((4, 8), (5, 2, 8), (5, 2, 8), {}),
    "padding_rank": ((4, 2, 8), (5, 2, 8), (5, 2, 8), {"key_padding_mask": (5,)}),
    "unbatched_padding_rank": ((4, 8), (5, 8), (5, 8), {"key_padding_mask": (2, 5)}),
    "mask_rank": ((4, 2, 8), (5, 2, 8), (5, 2, 8), {"attn_mask": (1, 1, 4, 5)}),
    "unbatched_3d_mask_shape": ((4, 8), (5, 8), (5, 8), {"attn_mask": (3, 4, 5)}),
    "2d_mask_shape": ((4, 2, 8), (5, 2, 8), (5, 2, 8), {"attn_mask": (4, 4)}),
    "3d_mask_shape": ((4, 2, 8), (5, 2, 8), (5, 2, 8), {"attn_mask": (2, 4, 5)}),
    "padding_shape": ((4, 2, 8), (5, 2, 8), (5, 2, 8), {"key_padding_mask": (2, 4)}),
    "embed_dim": ((4, 2, 6), (5, 2, 6), (5, 2, 6), {}),
    "key_value_shapes": ((4, 2, 8), (5, 2, 8), (6, 2, 8), {}),
    "int_mask": ((4, 2, 8), (5, 2, 8), (5, 2, 8), {"attn_mask": ((4, 5), "int64")}),
    "causal_without_mask": ((4, 2, 8), (4, 2, 8), (4, 2, 8), {"is_causal": True}),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_forward_errors_match_torch(name):
    q, k, v, masks = ERRORS[name]

    def call(module, lib):
        kwargs = {}
        for key, spec in masks.items():
            if isinstance(spec, bool):
                kwargs[key] = spec
                continue
            shape, dtype = spec if isinstance(spec[0], tuple) else (spec, "bool")
            kwargs[key] = _tensor(shape, dtype)(lib)
        module(*(_tensor(s)(lib) for s in (q, k, v)), **kwargs)
    (t_type, t_text), (g_type, g_text) = errors(
        torch, lambda lib: lib.nn.MultiheadAttention(8, 2).double(), call)
    assert g_type is t_type and g_text == t_text


@pytest.mark.parametrize("args", [(6, 4), (0, 2), (8, -1)])
def test_constructor_errors_match_torch(args):
    (t_type, t_text), (g_type, g_text) = errors(
        torch, lambda lib: lib.nn.MultiheadAttention(*args), lambda module, lib: None)
    assert g_type is t_type and g_text == t_text


def test_mismatched_mask_types_warn_as_torch():
    messages = []
    for lib in (torch, gradkit):
        mha = lib.nn.MultiheadAttention(8, 2).double()
        x = lib.zeros(4, 2, 8, dtype=lib.float64)
        with pytest.warns(UserWarning) as caught:
            mha(x, x, x, key_padding_mask=lib.zeros(2, 4, dtype=lib.bool),
                attn_mask=lib.zeros(4, 4, dtype=lib.float64))
        messages.append([str(w.message) for w in caught])
    assert messages[1] == messages[0]


# -- transformer layers ------------------------------------------------------------------

SRC, TGT = rng.standard_normal((5, 2, 8)), rng.standard_normal((4, 2, 8))
SRC_PADDING = np.array([[False] * 4 + [True], [False] * 5])


def _causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


TRANSFORMERS = {
    "encoder_layer": (lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                      (SRC,), {}),
    "encoder_layer_gelu_norm_first_masks": (
        lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0, "gelu", norm_first=True),
        (SRC,), {"src_mask": _causal(5), "src_key_padding_mask": SRC_PADDING}),
    "encoder_layer_batch_first_no_bias": (
        lambda lib: lib.nn.TransformerEncoderLayer(8, 4, 12, 0.0, batch_first=True,
                                                   bias=False, layer_norm_eps=1e-3),
        (SRC.transpose(1, 0, 2),), {}),
    "encoder_layer_module_activation": (
        lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0, lib.nn.GELU()), (SRC,), {}),
    "encoder_causal": (lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0), 2, lib.nn.LayerNorm(8)),
        (SRC,), {"mask": _causal(5)}),
    "encoder_unbatched_is_causal": (lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0, norm_first=True), 2),
        (SRC[:, 0],), {"mask": _causal(5), "is_causal": True}),
    "decoder_layer": (lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
                      (TGT, SRC), {"tgt_mask": _causal(4),
                                   "memory_key_padding_mask": SRC_PADDING}),
    "decoder_layer_norm_first_gelu": (
        lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, 0.0, "gelu", norm_first=True),
        (TGT, SRC), {"tgt_mask": _causal(4), "tgt_is_causal": True}),
    "decoder": (lambda lib: lib.nn.TransformerDecoder(
        lib.nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True), 2),
        (TGT.transpose(1, 0, 2), SRC.transpose(1, 0, 2)), {"tgt_mask": _causal(4)}),
    "transformer": (lambda lib: lib.nn.Transformer(8, 2, 2, 1, 16, dropout=0.0),
                    (SRC, TGT), {"tgt_mask": _causal(4), "src_key_padding_mask": SRC_PADDING}),
}


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")  # torch's fast-path note
@pytest.mark.filterwarnings("ignore:Support for mismatched")  # bool padding, float mask
@pytest.mark.parametrize("name", sorted(TRANSFORMERS))
def test_transformer_layers_match_torch(name):
    make, inputs, kwargs = TRANSFORMERS[name]
    compare(torch, make, inputs, kwargs)


def test_square_subsequent_mask_and_transformer_init_as_torch():
    ours = gradkit.nn.Transformer.generate_square_subsequent_mask(4, dtype=gradkit.float64)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    model = gradkit.nn.Transformer(8, 2, 1, 1, 16)
    bound = (6 / (16 + 8)) ** 0.5
    assert abs(model.encoder.layers[0].linear1.weight.detach().numpy()).max() <= bound
    assert model.encoder.layers[0].activation_relu_or_gelu == 1


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("make,args", [
    (lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"), None),
    (lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16), lambda lib: (lib.zeros(5, 2, 8),
                                                               lib.zeros(4, 3, 8))),
    (lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16), lambda lib: (lib.zeros(5, 2, 8),
                                                               lib.zeros(4, 2, 6))),
])
def test_transformer_errors_match_torch(make, args):
    (t_type, t_text), (g_type, g_text) = errors(
        torch, make, lambda module, lib: args and module(*args(lib)))
    assert g_type is t_type and g_text == t_text


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0), 1),
])
def test_encoder_mismatched_mask_types_warn_as_torch(make):
    messages = []
    for lib in (torch, gradkit):
        layer = make(lib).double()
        with pytest.warns(UserWarning) as caught:
            layer(lib.zeros(5, 2, 8, dtype=lib.float64),
                  lib.zeros(5, 5, dtype=lib.float64),
                  src_key_padding_mask=lib.zeros(2, 5, dtype=lib.bool))
        messages.append([str(w.message) for w in caught
                         if "enable_nested_tensor" not in str(w.message)])
    assert messages[1] == messages[0]
