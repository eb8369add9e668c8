"""The 3-d layers torch has beside gradkit's 1-d/2-d ones (ConvTranspose3d, AdaptiveMaxPool3d,
LPPool3d, MaxUnpool3d) and LazyLinear against torch: state_dict keys, repr, outputs, every
gradient in float64, and torch's errors. Their functions are op_db rows (gradcheck,
gradgradcheck, jvp)."""
import numpy as np
import pytest

import gradkit
from nn_twins import compare, errors

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)


def _x(*shape):
    return rng.standard_normal(shape)


def _distinct(*shape):
    return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.25 - 1.0


MODULES = {
    "ConvTranspose3d": (lambda lib: lib.nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=(2, 1, 2),
                                                           padding=1, output_padding=(1, 0, 0),
                                                           groups=2, dilation=(1, 1, 2)),
                        (_x(2, 4, 3, 2, 3),), {}),
    "ConvTranspose3d_no_bias": (lambda lib: lib.nn.ConvTranspose3d(2, 3, 2, bias=False),
                                (_x(2, 2, 2, 3),), {}),
    "ConvTranspose3d_output_size": (lambda lib: lib.nn.ConvTranspose3d(2, 3, 3, stride=3),
                                    (_x(1, 2, 2, 1, 2),), {"output_size": [7, 4, 8]}),
    "AdaptiveMaxPool3d": (lambda lib: lib.nn.AdaptiveMaxPool3d((2, None, 3)),
                          (_distinct(1, 2, 3, 4, 5),), {}),
    "AdaptiveMaxPool3d_indices": (lambda lib: lib.nn.AdaptiveMaxPool3d(2, return_indices=True),
                                  (_distinct(2, 3, 4, 5),), {}),
    "LPPool3d": (lambda lib: lib.nn.LPPool3d(2, 2), (_x(1, 2, 2, 4, 4),), {}),
    "LPPool3d_ceil": (lambda lib: lib.nn.LPPool3d(1.5, (2, 1, 3), (1, 2, 2), ceil_mode=True),
                      (np.abs(_x(2, 3, 3, 5)) + 0.1,), {}),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_torch(name):
    make, inputs, kwargs = MODULES[name]
    compare(torch, make, inputs, kwargs, training=True)


def test_max_unpool3d_inverts_max_pool3d_as_torch():
    data = _distinct(1, 2, 4, 4, 5)
    results = []
    for lib in (torch, gradkit):
        x = lib.tensor(data, requires_grad=True)
        pooled, indices = lib.nn.functional.max_pool3d(x, 2, stride=(2, 2, 1),
                                                       return_indices=True)
        layer = lib.nn.MaxUnpool3d(2, stride=(2, 2, 1))
        out = layer(pooled, indices, output_size=x.shape)
        (grad,) = lib.autograd.grad((out * lib.tensor(data)).sum(), x)
        results.append((repr(layer), out.detach().numpy(), grad.numpy(), out.grad_fn.name()))
    assert results[0][0] == results[1][0] and results[0][3] == results[1][3]
    np.testing.assert_allclose(results[1][1], results[0][1])
    np.testing.assert_allclose(results[1][2], results[0][2])


ERRORS = {
    "conv_transpose3d_output_size": (lambda lib: lib.nn.ConvTranspose3d(2, 3, 3, stride=2),
                                     lambda lib: (lib.zeros(1, 2, 4, 4, 4), [1, 2])),
    "conv_transpose3d_output_size_range": (lambda lib: lib.nn.ConvTranspose3d(2, 3, 3, stride=2),
                                           lambda lib: (lib.zeros(1, 2, 4, 4, 4), [9, 9, 20])),
    "conv_transpose3d_rank": (lambda lib: lib.nn.ConvTranspose3d(2, 3, 3),
                              lambda lib: (lib.zeros(2, 4, 4),)),
    "conv_transpose3d_too_small": (lambda lib: lib.nn.ConvTranspose3d(2, 3, 2, padding=2),
                                   lambda lib: (lib.zeros(1, 2, 1, 1, 1),)),
    "adaptive_max_pool3d_rank": (lambda lib: lib.nn.AdaptiveMaxPool3d(2),
                                 lambda lib: (lib.zeros(2, 3, 4),)),
    "adaptive_max_pool3d_integer": (lambda lib: lib.nn.AdaptiveMaxPool3d(2),
                                    lambda lib: (lib.zeros(1, 2, 3, 3, 3, dtype=lib.int32),)),
    "lp_pool3d_rank": (lambda lib: lib.nn.LPPool3d(2, 2), lambda lib: (lib.zeros(2, 3, 4),)),
    "max_unpool3d_int32_indices": (lambda lib: lib.nn.MaxUnpool3d(2),
                                   lambda lib: (lib.zeros(1, 1, 1, 1, 1),
                                                lib.zeros(1, 1, 1, 1, 1, dtype=lib.int32))),
    "max_unpool3d_rank": (lambda lib: lib.nn.MaxUnpool3d(2),
                          lambda lib: (lib.zeros(1, 1, 1), lib.zeros(1, 1, 1, dtype=lib.int64))),
    "max_unpool3d_index_shape": (lambda lib: lib.nn.MaxUnpool3d(2),
                                 lambda lib: (lib.zeros(1, 2, 1, 1, 1),
                                              lib.zeros(1, 1, 1, 1, 1, dtype=lib.int64))),
    "max_unpool3d_index_range": (lambda lib: lib.nn.MaxUnpool3d(2),
                                 lambda lib: (lib.zeros(1, 1, 1, 1, 1),
                                              lib.full((1, 1, 1, 1, 1), 8, dtype=lib.int64))),
    "max_unpool3d_output_size_length": (lambda lib: lib.nn.MaxUnpool3d(2),
                                        lambda lib: (lib.zeros(1, 1, 1, 1, 1),
                                                     lib.zeros(1, 1, 1, 1, 1, dtype=lib.int64),
                                                     (2, 2))),
    "max_unpool3d_output_size_range": (lambda lib: lib.nn.MaxUnpool3d(2),
                                       lambda lib: (lib.zeros(1, 1, 1, 1, 1),
                                                    lib.zeros(1, 1, 1, 1, 1, dtype=lib.int64),
                                                    (2, 2, 5))),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    make, args = ERRORS[name]
    (t_type, t_text), (g_type, g_text) = errors(torch, make, lambda m, lib: m(*args(lib)))
    assert (g_type, g_text) == (t_type, t_text)


def test_conv_transpose3d_output_padding_error_names_three_dims():
    found = []
    for lib in (torch, gradkit):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.conv_transpose3d(lib.zeros(1, 2, 2, 2, 2), lib.zeros(2, 2, 1, 1, 1),
                                               stride=(2, 2, 1), output_padding=(0, 0, 1))
        found.append(str(info.value))
    assert found[1] == found[0]


def test_lazy_linear_sizes_itself_on_the_first_call_as_torch():
    seen = []
    for lib in (torch, gradkit):
        layer = lib.nn.LazyLinear(3).double()
        before = (repr(layer), list(layer.state_dict()), layer.in_features)
        weight, bias = layer.weight, layer.bias
        optimizer = lib.optim.SGD(layer.parameters(), lr=0.5)
        x = lib.tensor(_x(2, 5))
        out = layer(x)
        expected = lib.nn.functional.linear(x, layer.weight, layer.bias)
        out.sum().backward()
        optimizer.step()
        seen.append((before, repr(layer), type(layer).__name__, tuple(layer.weight.shape),
                     layer.weight is weight and layer.bias is bias, str(out.dtype)[-7:],
                     bool((out == expected).all()), tuple(layer.weight.grad.shape),
                     tuple(layer(lib.tensor(_x(5))).shape)))
    assert seen[1] == seen[0]


def test_lazy_linear_without_bias_as_torch():
    layers = [lib.nn.LazyLinear(4, bias=False) for lib in (torch, gradkit)]
    assert repr(layers[1]) == repr(layers[0]) and layers[1].bias is None
    outs = [layer(lib.ones(2, 3)) for layer, lib in zip(layers, (torch, gradkit), strict=True)]
    assert [tuple(o.shape) for o in outs] == [(2, 4), (2, 4)]
    assert repr(layers[1]) == repr(layers[0])


def test_lazy_linear_draws_nothing_before_it_is_sized():
    gradkit.manual_seed(4)
    expected = gradkit.rand(3)
    gradkit.manual_seed(4)
    gradkit.nn.LazyLinear(5)
    np.testing.assert_array_equal(gradkit.rand(3).numpy(), expected.numpy())


@pytest.mark.parametrize("name, shape, output_size", [
    ("adaptive_max_pool2d", (1, 2, 4, 4), (2,)), ("adaptive_max_pool3d", (1, 2, 4, 4, 4), (2,)),
    ("adaptive_max_pool3d", (1, 2, 4, 4, 4), (2, 2, 2, 2)),
    ("adaptive_max_pool3d", (2, 4, 4), (2, 2)), ("adaptive_max_pool2d", (4, 4), (2, 2)),
    ("adaptive_avg_pool2d", (1, 2, 4, 4), [2]), ("adaptive_avg_pool3d", (1, 2, 4, 4, 4), [2]),
    ("adaptive_avg_pool3d", (2, 4, 4), (2, 2)), ("adaptive_avg_pool2d", (1, 2, 4, 4), (2, 2, 2)),
])
def test_adaptive_pooling_output_size_errors_match_torch(name, shape, output_size):
    found = []
    for lib in (torch, gradkit):
        with pytest.raises(Exception) as info:
            getattr(lib.nn.functional, name)(lib.zeros(*shape), output_size)
        found.append((type(info.value), str(info.value)))
    assert found[1] == found[0]
