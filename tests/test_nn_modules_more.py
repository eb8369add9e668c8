"""The smaller torch.nn modules against torch: containers (ModuleDict, ParameterList,
ParameterDict), shape/resampling/padding layers, Conv3d, ConvTranspose1d, BatchNorm3d,
InstanceNorm1d/3d, LocalResponseNorm, 3-D and adaptive pooling, LPPool, Bilinear and
EmbeddingBag (+ F.bilinear / F.embedding_bag): state_dict keys, repr, outputs and every
gradient (float64), gradcheck of the new functions, and torch's errors."""
import doctest
import importlib

import numpy as np
import pytest

import gradkit
from nn_twins import compare, errors

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _x(*shape):
    return rng.standard_normal(shape)


MODULES = {
    "Identity": (lambda lib: lib.nn.Identity(3, unused=True), (_x(2, 3),), {}),
    "Unflatten": (lambda lib: lib.nn.Unflatten(1, (2, 3)), (_x(4, 6, 2),), {}),
    "Upsample_scale": (lambda lib: lib.nn.Upsample(scale_factor=2), (_x(1, 2, 3, 3),), {}),
    "Upsample_bilinear": (lambda lib: lib.nn.Upsample(size=(5, 4), mode="bilinear",
                                                      align_corners=False),
                          (_x(1, 2, 3, 3),), {}),
    "UpsamplingNearest2d": (lambda lib: lib.nn.UpsamplingNearest2d(scale_factor=3),
                            (_x(1, 1, 2, 2),), {}),
    "UpsamplingBilinear2d": (lambda lib: lib.nn.UpsamplingBilinear2d(size=5),
                             (_x(1, 1, 2, 3),), {}),
    "PixelShuffle": (lambda lib: lib.nn.PixelShuffle(2), (_x(1, 8, 2, 3),), {}),
    "PixelUnshuffle": (lambda lib: lib.nn.PixelUnshuffle(2), (_x(1, 2, 4, 6),), {}),
    "ChannelShuffle": (lambda lib: lib.nn.ChannelShuffle(2), (_x(2, 6, 2, 1),), {}),
    "Unfold": (lambda lib: lib.nn.Unfold((2, 3), padding=1, stride=(2, 1)), (_x(1, 2, 3, 4),),
               {}),
    "Fold": (lambda lib: lib.nn.Fold((3, 4), 2), (_x(1, 8, 6),), {}),
    "Softmax2d": (lambda lib: lib.nn.Softmax2d(), (_x(2, 3, 2, 2),), {}),
    "Softmax2d_unbatched": (lambda lib: lib.nn.Softmax2d(), (_x(3, 2, 2),), {}),
    "ZeroPad1d": (lambda lib: lib.nn.ZeroPad1d((1, 2)), (_x(2, 3, 4),), {}),
    "ZeroPad2d": (lambda lib: lib.nn.ZeroPad2d(1), (_x(2, 3, 4),), {}),
    "ZeroPad3d": (lambda lib: lib.nn.ZeroPad3d((1, 0, 0, 2, 1, 1)), (_x(1, 2, 2, 3),), {}),
    "ConstantPad1d": (lambda lib: lib.nn.ConstantPad1d(2, 3.5), (_x(2, 4),), {}),
    "ConstantPad2d": (lambda lib: lib.nn.ConstantPad2d((1, 0, -1, 2), -1.0), (_x(2, 3, 4),), {}),
    "ConstantPad3d": (lambda lib: lib.nn.ConstantPad3d(1, 0.5), (_x(1, 2, 2, 3),), {}),
    "ReflectionPad1d": (lambda lib: lib.nn.ReflectionPad1d((2, 1)), (_x(2, 3, 4),), {}),
    "ReflectionPad2d": (lambda lib: lib.nn.ReflectionPad2d(1), (_x(1, 2, 3, 4),), {}),
    "ReflectionPad3d": (lambda lib: lib.nn.ReflectionPad3d(1), (_x(1, 2, 2, 3, 3),), {}),
    "ReplicationPad1d": (lambda lib: lib.nn.ReplicationPad1d(2), (_x(2, 3, 4),), {}),
    "ReplicationPad2d": (lambda lib: lib.nn.ReplicationPad2d((1, 2, 0, 1)),
                         (_x(1, 2, 3, 4),), {}),
    "ReplicationPad3d": (lambda lib: lib.nn.ReplicationPad3d(1), (_x(1, 2, 2, 3, 3),), {}),
    "CircularPad1d": (lambda lib: lib.nn.CircularPad1d(2), (_x(2, 3, 4),), {}),
    "CircularPad2d": (lambda lib: lib.nn.CircularPad2d((1, 2, 0, 1)), (_x(1, 2, 3, 4),), {}),
    "CircularPad3d": (lambda lib: lib.nn.CircularPad3d(1), (_x(1, 2, 2, 3, 3),), {}),
    "LocalResponseNorm": (lambda lib: lib.nn.LocalResponseNorm(3, 0.5, 0.6, 2.0),
                          (_x(2, 5, 3),), {}),
    "MaxPool3d": (lambda lib: lib.nn.MaxPool3d(2, 1, 1, ceil_mode=True),
                  (_x(1, 2, 3, 3, 3),), {}),
    "MaxPool3d_indices": (lambda lib: lib.nn.MaxPool3d((1, 2, 2), return_indices=True),
                          (_x(1, 2, 2, 4, 4),), {}),
    "AvgPool3d": (lambda lib: lib.nn.AvgPool3d(2, 1, 1, count_include_pad=False),
                  (_x(1, 2, 3, 3, 3),), {}),
    "AdaptiveAvgPool1d": (lambda lib: lib.nn.AdaptiveAvgPool1d(3), (_x(2, 3, 7),), {}),
    "AdaptiveAvgPool3d": (lambda lib: lib.nn.AdaptiveAvgPool3d((2, None, 1)),
                          (_x(1, 2, 3, 4, 5),), {}),
    "AdaptiveMaxPool1d": (lambda lib: lib.nn.AdaptiveMaxPool1d(3, return_indices=True),
                          (_x(2, 3, 7),), {}),
    "AdaptiveMaxPool2d": (lambda lib: lib.nn.AdaptiveMaxPool2d((2, 3)), (_x(1, 2, 5, 7),), {}),
    "LPPool1d": (lambda lib: lib.nn.LPPool1d(2, 3, 2), (_x(2, 3, 7),), {}),
    "LPPool2d": (lambda lib: lib.nn.LPPool2d(1.5, (2, 3), ceil_mode=True),
                 (np.abs(_x(1, 2, 5, 7)) + 0.1,), {}),
    "Conv3d": (lambda lib: lib.nn.Conv3d(4, 2, (2, 3, 2), stride=(1, 2, 1), padding=1,
                                         groups=2), (_x(1, 4, 3, 5, 4),), {}),
    "Conv3d_no_bias": (lambda lib: lib.nn.Conv3d(1, 2, 2, bias=False), (_x(1, 1, 3, 3, 3),), {}),
    "ConvTranspose1d": (lambda lib: lib.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1,
                                                           output_padding=1, groups=2),
                        (_x(2, 4, 5),), {}),
    "ConvTranspose1d_output_size": (lambda lib: lib.nn.ConvTranspose1d(2, 3, 3, stride=3),
                                    (_x(2, 2, 4),), {"output_size": [13]}),
    "BatchNorm3d": (lambda lib: lib.nn.BatchNorm3d(2), (_x(3, 2, 2, 3, 2),), {}),
    "InstanceNorm1d": (lambda lib: lib.nn.InstanceNorm1d(3, affine=True), (_x(2, 3, 5),), {}),
    "InstanceNorm1d_unbatched": (lambda lib: lib.nn.InstanceNorm1d(3), (_x(3, 5),), {}),
    "InstanceNorm3d": (lambda lib: lib.nn.InstanceNorm3d(2, track_running_stats=True),
                       (_x(2, 2, 2, 3, 2),), {}),
    "Bilinear": (lambda lib: lib.nn.Bilinear(3, 4, 5), (_x(2, 6, 3), _x(2, 6, 4)), {}),
    "Bilinear_no_bias": (lambda lib: lib.nn.Bilinear(3, 2, 4, bias=False), (_x(3), _x(2)), {}),
}

EMBEDDING_BAGS = {
    "mean_2d": (lambda lib: lib.nn.EmbeddingBag(10, 3), ([[1, 2, 4], [4, 3, 9]],), {}),
    "sum_offsets_empty_bag": (lambda lib: lib.nn.EmbeddingBag(10, 3, mode="sum"),
                              ([1, 2, 4, 5, 4, 3], [0, 2, 2, 5]), {}),
    "max_offsets": (lambda lib: lib.nn.EmbeddingBag(10, 3, mode="max"),
                    ([1, 2, 4, 5, 4, 3], [0, 2, 3]), {}),
    "max_repeated_index": (lambda lib: lib.nn.EmbeddingBag(10, 3, mode="max"),
                           ([4, 4, 1], [0]), {}),
    "include_last_offset": (lambda lib: lib.nn.EmbeddingBag(10, 3, include_last_offset=True),
                            ([1, 2, 4, 5, 4, 3], [0, 2, 6]), {}),
    "padding_idx_mean": (lambda lib: lib.nn.EmbeddingBag(10, 3, padding_idx=2),
                         ([[1, 2, 4], [2, 2, 2]],), {}),
    "padding_idx_negative_max": (lambda lib: lib.nn.EmbeddingBag(10, 3, mode="max",
                                                                 padding_idx=-1),
                                 ([9, 1, 9, 3], [0, 1]), {}),
    "per_sample_weights": (lambda lib: lib.nn.EmbeddingBag(10, 3, mode="sum"),
                           ([1, 2, 4, 5], [0, 1]), {"per_sample_weights": [0.5, 2, -1, 3]}),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_torch(name):
    make, inputs, kwargs = MODULES[name]
    compare(torch, make, inputs, kwargs, training=True)
    compare(torch, make, inputs, kwargs, training=False)


@pytest.mark.parametrize("name", sorted(EMBEDDING_BAGS))
def test_embedding_bag_matches_torch(name):
    make, (indices, *offsets), kwargs = EMBEDDING_BAGS[name]
    inputs = (np.array(indices), *(np.array(o) for o in offsets))
    kwargs = {k: np.array(v, dtype=np.float64) for k, v in kwargs.items()}
    compare(torch, make, inputs, kwargs)


def test_per_sample_weights_get_torch_gradient():
    weights = np.array([0.5, 2.0, -1.0, 3.0])
    grads = []
    for lib in (torch, gradkit):
        torch.manual_seed(0)
        table = torch.randn(10, 3, dtype=torch.float64)
        w = lib.tensor(weights, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor([1, 2, 4, 5]),
                                              lib.tensor(table.numpy()), lib.tensor([0, 1]),
                                              mode="sum", per_sample_weights=w)
        out.sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_bilinear_and_embedding_bag_gradcheck():
    x1 = gradkit.randn(2, 3, dtype=gradkit.float64, requires_grad=True)
    x2 = gradkit.randn(2, 4, dtype=gradkit.float64, requires_grad=True)
    w = gradkit.randn(5, 3, 4, dtype=gradkit.float64, requires_grad=True)
    b = gradkit.randn(5, dtype=gradkit.float64, requires_grad=True)
    bilinear = gradkit.nn.functional.bilinear
    assert gradkit.autograd.gradcheck(bilinear, (x1, x2, w, b))
    assert gradkit.autograd.gradgradcheck(bilinear, (x1, x2, w, b))
    table = gradkit.randn(6, 3, dtype=gradkit.float64, requires_grad=True)
    psw = gradkit.randn(5, dtype=gradkit.float64, requires_grad=True)
    indices, offsets = gradkit.tensor([0, 2, 5, 1, 3]), gradkit.tensor([0, 2])

    def bags(table, psw):
        return gradkit.nn.functional.embedding_bag(indices, table, offsets, mode="sum",
                                                   per_sample_weights=psw)
    assert gradkit.autograd.gradcheck(bags, (table, psw))
    assert gradkit.autograd.gradgradcheck(bags, (table, psw))
    for mode in ("mean", "max"):
        assert gradkit.autograd.gradcheck(
            lambda t, m=mode: gradkit.nn.functional.embedding_bag(indices, t, offsets, mode=m),
            (table,))


def test_initialisation_as_torch():
    bilinear = gradkit.nn.Bilinear(16, 3, 4)
    for p in bilinear.parameters():
        values = p.detach().numpy()
        assert abs(values).max() <= 0.25 and values.std() > 0.25 / 3
    bag = gradkit.nn.EmbeddingBag(50, 4, padding_idx=3)
    assert not bag.weight.detach().numpy()[3].any()
    assert 0.5 < bag.weight.detach().numpy().std() < 1.5


def test_module_dict_matches_torch():
    built = []
    for lib in (torch, gradkit):
        layers = lib.nn.ModuleDict({"b": lib.nn.Linear(2, 3), "a": lib.nn.ReLU()})
        layers.update([("c", lib.nn.Tanh())])
        layers["b"] = lib.nn.Linear(2, 4)
        popped = layers.pop("a")
        built.append((repr(layers), list(layers), list(layers.keys()), "c" in layers,
                      len(layers), [n for n, _ in layers.named_parameters()],
                      type(popped).__name__, [type(m).__name__ for m in layers.values()]))
        layers.clear()
        built.append(len(layers))
    assert built[2:] == built[:2]


def test_parameter_list_and_dict_match_torch():
    built = []
    for lib in (torch, gradkit):
        plist = lib.nn.ParameterList([lib.zeros(2, 3), lib.nn.Parameter(lib.ones(4))])
        plist.append(lib.zeros(1))
        plist.extend([lib.ones(2)])
        plist[0] = lib.ones(5)
        pdict = lib.nn.ParameterDict({"w": lib.zeros(2)})
        pdict["v"] = lib.ones(3, 3)
        pdict.update([("u", lib.zeros(1))])
        pdict.pop("w")
        built.append([repr(plist).replace("torch.", "gradkit."), len(plist),
                      [type(p).__name__ for p in plist], [tuple(p.shape) for p in plist[1:3]],
                      [n for n, _ in plist.named_parameters()],
                      repr(pdict).replace("torch.", "gradkit."), list(pdict), "v" in pdict,
                      [n for n, _ in pdict.named_parameters()], pdict.get("zz", 7),
                      list(plist.state_dict()), list(pdict.state_dict())])
    assert built[1] == built[0]


ERRORS = {
    "channel_shuffle_rank": (lambda lib: lib.nn.ChannelShuffle(2), lambda lib: (lib.zeros(2, 4),)),
    "channel_shuffle_groups": (lambda lib: lib.nn.ChannelShuffle(0),
                               lambda lib: (lib.zeros(1, 4, 2),)),
    "channel_shuffle_divisible": (lambda lib: lib.nn.ChannelShuffle(3),
                                  lambda lib: (lib.zeros(1, 4, 2),)),
    "softmax2d_rank": (lambda lib: lib.nn.Softmax2d(), lambda lib: (lib.zeros(2, 3),)),
    "instance_norm1d_rank": (lambda lib: lib.nn.InstanceNorm1d(3),
                             lambda lib: (lib.zeros(2, 3, 4, 5),)),
    "instance_norm3d_affine_channels": (lambda lib: lib.nn.InstanceNorm3d(3, affine=True),
                                        lambda lib: (lib.zeros(1, 2, 2, 2, 2),)),
    "batch_norm3d_rank": (lambda lib: lib.nn.BatchNorm3d(3), lambda lib: (lib.zeros(2, 3, 4),)),
    "conv_transpose1d_output_size": (lambda lib: lib.nn.ConvTranspose1d(2, 3, 3, stride=2),
                                     lambda lib: (lib.zeros(1, 2, 4), [1, 2])),
    "conv_transpose1d_output_size_range": (lambda lib: lib.nn.ConvTranspose1d(2, 3, 3, stride=2),
                                           lambda lib: (lib.zeros(1, 2, 4), [20])),
    "bilinear_ranks": (lambda lib: lib.nn.Bilinear(3, 4, 5),
                       lambda lib: (lib.zeros(2, 3), lib.zeros(4))),
    "bilinear_batch": (lambda lib: lib.nn.Bilinear(3, 4, 5),
                       lambda lib: (lib.zeros(2, 3), lib.zeros(3, 4))),
    "bilinear_input1": (lambda lib: lib.nn.Bilinear(3, 4, 5),
                        lambda lib: (lib.zeros(2, 2), lib.zeros(2, 4))),
    "bilinear_input2": (lambda lib: lib.nn.Bilinear(3, 4, 5),
                        lambda lib: (lib.zeros(2, 3), lib.zeros(2, 3))),
    "bag_2d_with_offsets": (lambda lib: lib.nn.EmbeddingBag(5, 2),
                            lambda lib: (lib.tensor([[1, 2]]), lib.tensor([0]))),
    "bag_no_offsets": (lambda lib: lib.nn.EmbeddingBag(5, 2), lambda lib: (lib.tensor([1, 2]),)),
    "bag_2d_offsets": (lambda lib: lib.nn.EmbeddingBag(5, 2),
                       lambda lib: (lib.tensor([1, 2]), lib.tensor([[0]]))),
    "bag_3d_input": (lambda lib: lib.nn.EmbeddingBag(5, 2),
                     lambda lib: (lib.zeros(1, 1, 1, dtype=lib.int64),)),
    "bag_first_offset": (lambda lib: lib.nn.EmbeddingBag(5, 2),
                         lambda lib: (lib.tensor([1, 2]), lib.tensor([1]))),
    "bag_last_offset": (lambda lib: lib.nn.EmbeddingBag(5, 2),
                        lambda lib: (lib.tensor([1, 2]), lib.tensor([0, 3]))),
    "bag_mode": (lambda lib: lib.nn.EmbeddingBag(5, 2, mode="min"),
                 lambda lib: (lib.tensor([[1, 2]]),)),
    "bag_weights_mode": (lambda lib: lib.nn.EmbeddingBag(5, 2),
                         lambda lib: (lib.tensor([[1, 2]]), None, lib.ones(1, 2))),
    "bag_weights_shape": (lambda lib: lib.nn.EmbeddingBag(5, 2, mode="sum"),
                          lambda lib: (lib.tensor([[1, 2]]), None, lib.ones(2))),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_forward_errors_match_torch(name):
    make, args = ERRORS[name]
    (t_type, t_text), (g_type, g_text) = errors(torch, make, lambda m, lib: m(*args(lib)))
    assert g_type is t_type
    if name == "bag_2d_with_offsets":  # the message names the offsets' Python type
        t_text, g_text = t_text.split("type")[0], g_text.split("type")[0]
    if name == "bag_first_offset":  # torch's check prints the offset tensor on a second line
        t_text = t_text.split("\n")[0]
    assert g_text == t_text


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.EmbeddingBag(5, 2, padding_idx=5),
    lambda lib: lib.nn.EmbeddingBag(5, 2, _weight=lib.zeros(2, 5)),
])
def test_constructor_errors_match_torch(build):
    (t_type, t_text), (g_type, g_text) = errors(torch, build, lambda module, lib: None)
    assert g_type is t_type and g_text == t_text


def test_reassigned_parameter_keeps_its_place_as_torch():
    orders = []
    for lib in (torch, gradkit):
        layer = lib.nn.Linear(2, 3)
        layer.weight = lib.nn.Parameter(lib.zeros(3, 2))
        orders.append(list(layer.state_dict()))
    assert orders[1] == orders[0] == ["weight", "bias"]


@pytest.mark.parametrize("module", [
    "gradkit.nn.rnn", "gradkit.nn.rnn_cells", "gradkit.nn.attention", "gradkit.nn.transformer",
    "gradkit.nn.layers_small", "gradkit.nn.layers_nd", "gradkit.nn.layers_bags",
    "gradkit.nn.container_more"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), extraglobs={"gradkit": gradkit})
    assert result.attempted > 0 and result.failed == 0


# -- channel-wise and alpha dropout: draws differ from torch's, so the checks are exact
# where no draw matters (p = 0, p = 1, eval mode) and structural otherwise

DROPOUTS = {"Dropout1d": (3,), "Dropout2d": (4,), "Dropout3d": (5, 4), "AlphaDropout": (2, 3),
            "FeatureAlphaDropout": (3, 4)}


@pytest.mark.parametrize("name", sorted(DROPOUTS))
@pytest.mark.parametrize("p,training", [(0.0, True), (1.0, True), (0.5, False)])
def test_dropout_layers_match_torch_where_no_draw_matters(name, p, training):
    for rank in DROPOUTS[name]:
        x = _x(*(2, 3, 2, 2, 2)[:rank])
        compare(torch, lambda lib: getattr(lib.nn, name)(p), (x,), training=training)


@pytest.mark.parametrize("function,rank,lead", [
    ("dropout1d", 3, 2), ("dropout1d", 2, 1), ("dropout2d", 4, 2), ("dropout3d", 5, 2),
    ("dropout3d", 4, 1)])
def test_channel_dropout_draws_whole_channels(function, rank, lead):
    gradkit.manual_seed(1)
    x = gradkit.tensor(np.abs(_x(*(8, 6, 3, 2, 2)[:rank])) + 1, requires_grad=True)
    out = getattr(gradkit.nn.functional, function)(x, 0.5, True)
    ratio = (out / x).detach().numpy().reshape(*x.shape[:lead], -1)
    assert np.allclose(ratio, ratio[..., :1])  # one factor per (sample,) channel
    assert len(np.unique(np.round(ratio, 12))) == 2  # kept and dropped
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy().reshape(ratio.shape), ratio)


@pytest.mark.parametrize("function,shape", [("alpha_dropout", (400,)),
                                            ("feature_alpha_dropout", (6, 40, 3))])
def test_alpha_dropout_takes_torch_affine_values(function, shape):
    p, alpha = 0.3, 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    gradkit.manual_seed(2)
    x = gradkit.tensor(_x(*shape))
    out = getattr(gradkit.nn.functional, function)(x, p, True).numpy()
    kept = np.isclose(out, a * x.numpy() + alpha * a * p)
    dropped = np.isclose(out, alpha * a * (p - 1))
    assert (kept | dropped).all() and kept.any() and dropped.any()
    if len(shape) == 3:  # one draw per (sample, channel)
        assert (kept.all(-1) | dropped.all(-1)).all()


def test_dropout_in_place_writes_the_input():
    gradkit.manual_seed(3)
    x = gradkit.ones(4, 5, 3)
    out = gradkit.nn.functional.dropout1d(x, 0.5, True, inplace=True)
    assert out is x and set(np.unique(x.numpy())) <= {0.0, 2.0}


@pytest.mark.parametrize("function,shape", [("dropout2d", (2, 3)), ("dropout2d", (2, 3, 4)),
                                            ("dropout3d", (2, 3, 4))])
def test_dropout_rank_warnings_match_torch(function, shape):
    messages = []
    for lib in (torch, gradkit):
        with pytest.warns(UserWarning) as caught:
            getattr(lib.nn.functional, function)(lib.ones(*shape), 0.5, False)
        messages.append([str(w.message) for w in caught])
    assert messages[1] == messages[0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 2, 2, 2)),
    lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 2, 2, 2), 1.5),
    lambda lib: lib.nn.functional.alpha_dropout(lib.ones(2), -0.1),
    lambda lib: lib.nn.Dropout3d(2.0),
])
def test_dropout_errors_match_torch(call):
    (t_type, t_text), (g_type, g_text) = errors(torch, call, lambda value, lib: None)
    assert g_type is t_type and g_text == t_text
