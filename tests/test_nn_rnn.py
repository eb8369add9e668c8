"""Recurrent layers and cells against torch: state_dict keys and shapes, reprs, outputs, final
states and the gradient of the input, the states and every parameter (float64), gradcheck and
gradgradcheck through small layers, the initialisation bounds and torch's errors."""
import math

import numpy as np
import pytest

import gradkit
from nn_twins import compare, errors, flat

torch = pytest.importorskip("torch")


def _compare(make, inputs, training=False):
    compare(torch, make, inputs, training=training)


def _errors(make, call):
    return errors(torch, make, call)


rng = np.random.default_rng(0)
X3 = rng.standard_normal((4, 2, 3))
X2 = rng.standard_normal((4, 3))

LAYERS = {
    "rnn_tanh": (lambda lib: lib.nn.RNN(3, 4), (X3,)),
    "rnn_relu_2_layers_no_bias": (lambda lib: lib.nn.RNN(3, 4, 2, "relu", bias=False), (X3,)),
    "rnn_bidirectional_h0": (lambda lib: lib.nn.RNN(3, 4, 2, bidirectional=True),
                             (X3, rng.standard_normal((4, 2, 4)))),
    "rnn_unbatched_h0": (lambda lib: lib.nn.RNN(3, 4), (X2, rng.standard_normal((1, 4)))),
    "lstm": (lambda lib: lib.nn.LSTM(3, 5), (X3,)),
    "lstm_batch_first_h0_c0": (lambda lib: lib.nn.LSTM(3, 5, 2, batch_first=True),
                               (X3, (rng.standard_normal((2, 4, 5)),
                                     rng.standard_normal((2, 4, 5))))),
    "lstm_proj_bidirectional": (lambda lib: lib.nn.LSTM(3, 5, 2, bidirectional=True,
                                                         proj_size=2), (X3,)),
    "lstm_proj_h0_c0": (lambda lib: lib.nn.LSTM(3, 5, proj_size=3),
                        (X3, (rng.standard_normal((1, 2, 3)),
                              rng.standard_normal((1, 2, 5))))),
    "lstm_unbatched": (lambda lib: lib.nn.LSTM(3, 5, bias=False, bidirectional=True), (X2,)),
    "lstm_unbatched_batch_first_h0_c0": (
        lambda lib: lib.nn.LSTM(3, 5, batch_first=True),
        (X2, (rng.standard_normal((1, 5)), rng.standard_normal((1, 5))))),
    "gru": (lambda lib: lib.nn.GRU(3, 4), (X3,)),
    "gru_3_layers_bidirectional_batch_first": (
        lambda lib: lib.nn.GRU(3, 4, 3, batch_first=True, bidirectional=True),
        (X3, rng.standard_normal((6, 4, 4)))),
    "gru_unbatched": (lambda lib: lib.nn.GRU(3, 4, bias=False), (X2,)),
    "rnn_cell": (lambda lib: lib.nn.RNNCell(3, 4), (X2,)),
    "rnn_cell_relu_h": (lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"),
                        (X2, rng.standard_normal((4, 4)))),
    "rnn_cell_unbatched_no_bias": (lambda lib: lib.nn.RNNCell(3, 4, bias=False),
                                   (X2[0], rng.standard_normal(4))),
    "lstm_cell": (lambda lib: lib.nn.LSTMCell(3, 5), (X2,)),
    "lstm_cell_h_c": (lambda lib: lib.nn.LSTMCell(3, 5),
                      (X2, (rng.standard_normal((4, 5)), rng.standard_normal((4, 5))))),
    "lstm_cell_unbatched": (lambda lib: lib.nn.LSTMCell(3, 5, bias=False), (X2[0],)),
    "gru_cell": (lambda lib: lib.nn.GRUCell(3, 4), (X2, rng.standard_normal((4, 4)))),
    "gru_cell_unbatched": (lambda lib: lib.nn.GRUCell(3, 4), (X2[1],)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch_values_states_and_every_gradient(name):
    make, inputs = LAYERS[name]
    _compare(make, inputs)


def test_dropout_between_layers_only_while_training():
    # dropout=1 zeroes every layer's input but the first's, a draw that needs no generator
    make = (lambda lib: lib.nn.GRU(3, 4, 3, dropout=1.0, bidirectional=True))
    _compare(make, (X3,), training=True)
    _compare(make, (X3,), training=False)


def test_dropout_draws_from_gradkit_generator_while_training():
    layer = gradkit.nn.LSTM(3, 4, 2, dropout=0.5).double()
    x = gradkit.tensor(X3)
    gradkit.manual_seed(3)
    first = layer(x)[0]
    gradkit.manual_seed(3)
    np.testing.assert_array_equal(first.detach().numpy(), layer(x)[0].detach().numpy())
    layer.eval()
    a, b = layer(x)[0], layer(x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("make", [
    lambda: gradkit.nn.LSTM(2, 3, 2, bidirectional=True, proj_size=1),
    lambda: gradkit.nn.GRU(2, 3, batch_first=True),
    lambda: gradkit.nn.RNN(2, 3, nonlinearity="relu"),
    lambda: gradkit.nn.LSTMCell(2, 3),
    lambda: gradkit.nn.GRUCell(2, 3),
])
def test_gradcheck_and_gradgradcheck_through_input_and_parameters(make):
    gradkit.manual_seed(0)
    layer = make().double()
    names = [n for n, _ in layer.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in layer.parameters()]
    cell = "Cell" in type(layer).__name__
    x = gradkit.randn(*((2, 2) if cell else (3, 2, 2)), dtype=gradkit.float64,
                      requires_grad=True)

    def run(x, *weights):
        for name, w in zip(names, weights, strict=True):
            layer._parameters[name] = w
        return tuple(flat(layer(x)))
    assert gradkit.autograd.gradcheck(run, (x, *params))
    assert gradkit.autograd.gradgradcheck(run, (x, *params))


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.LSTM(3, 16, 2, bidirectional=True, proj_size=4),
    lambda lib: lib.nn.GRU(5, 9),
    lambda lib: lib.nn.RNNCell(3, 25, bias=False),
])
def test_initialisation_is_uniform_within_torch_bound(make):
    ours, theirs = make(gradkit), make(torch)
    for (name, g), (t_name, t) in zip(ours.named_parameters(), theirs.named_parameters(),
                                      strict=True):
        assert name == t_name and g.dtype == gradkit.float32 and g.shape == t.shape
        bound = 1 / math.sqrt(ours.hidden_size)
        values = g.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound
        assert values.std() > bound / 3  # spread over the interval, not a constant


def test_module_attributes_and_all_weights_match_torch():
    make = (lambda lib: lib.nn.LSTM(3, 5, 2, bidirectional=True, proj_size=2, dropout=0.25))
    ours, theirs = make(gradkit), make(torch)
    for name in ("mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                 "dropout", "bidirectional", "proj_size", "_flat_weights_names"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    assert gradkit.nn.RNN(2, 3, nonlinearity="relu").nonlinearity == "relu"
    assert ours.flatten_parameters() is None and theirs.flatten_parameters() is None
    assert repr(gradkit.nn.RNNCell(2, 3, False, "relu")) == \
        repr(torch.nn.RNNCell(2, 3, False, "relu"))


def _x(*shape, dtype="float64"):
    return lambda lib: lib.zeros(*shape, dtype=getattr(lib, dtype))


ERRORS = {
    "rnn_4d_input": (lambda lib: lib.nn.RNN(3, 4).double(), (_x(1, 2, 3, 3),)),
    "lstm_1d_input": (lambda lib: lib.nn.LSTM(3, 4).double(), (_x(3),)),
    "gru_4d_input": (lambda lib: lib.nn.GRU(3, 4).double(), (_x(1, 1, 2, 3),)),
    "empty_sequence": (lambda lib: lib.nn.GRU(3, 4).double(), (_x(0, 2, 3),)),
    "input_size": (lambda lib: lib.nn.GRU(3, 4).double(), (_x(5, 2, 2),)),
    "input_dtype": (lambda lib: lib.nn.GRU(3, 4).double(), (_x(5, 2, 3, dtype="float32"),)),
    "h0_shape": (lambda lib: lib.nn.RNN(3, 4, 2).double(), (_x(5, 2, 3), _x(1, 2, 4))),
    "h0_rank_batched": (lambda lib: lib.nn.RNN(3, 4).double(), (_x(5, 2, 3), _x(2, 4))),
    "h0_rank_unbatched": (lambda lib: lib.nn.GRU(3, 4).double(), (_x(5, 3), _x(1, 1, 4))),
    "lstm_c0_shape": (lambda lib: lib.nn.LSTM(3, 4, proj_size=2).double(),
                      (_x(5, 2, 3), lambda lib: (lib.zeros(1, 2, 2, dtype=lib.float64),
                                                 lib.zeros(1, 2, 2, dtype=lib.float64)))),
    "lstm_h0_shape": (lambda lib: lib.nn.LSTM(3, 4, proj_size=2).double(),
                      (_x(5, 2, 3), lambda lib: (lib.zeros(1, 2, 4, dtype=lib.float64),
                                                 lib.zeros(1, 2, 4, dtype=lib.float64)))),
    "lstm_state_rank_batched": (lambda lib: lib.nn.LSTM(3, 4).double(),
                                (_x(5, 2, 3), lambda lib: (lib.zeros(1, 2, 4), lib.zeros(2, 4)))),
    "lstm_state_rank_unbatched": (lambda lib: lib.nn.LSTM(3, 4).double(),
                                  (_x(5, 3), lambda lib: (lib.zeros(1, 2, 4), lib.zeros(2, 4)))),
    "cell_3d_input": (lambda lib: lib.nn.GRUCell(3, 4).double(), (_x(1, 2, 3),)),
    "cell_3d_hidden": (lambda lib: lib.nn.RNNCell(3, 4).double(), (_x(2, 3), _x(1, 2, 4))),
    "lstm_cell_3d_c": (lambda lib: lib.nn.LSTMCell(3, 4).double(),
                       (_x(2, 3), lambda lib: (lib.zeros(2, 4), lib.zeros(1, 2, 4)))),
    "cell_input_size": (lambda lib: lib.nn.RNNCell(3, 4).double(), (_x(2, 5),)),
    "cell_hidden_batch": (lambda lib: lib.nn.GRUCell(3, 4).double(), (_x(2, 3), _x(3, 4))),
    "cell_hidden_size": (lambda lib: lib.nn.RNNCell(3, 4).double(), (_x(2, 3), _x(2, 5))),
    "lstm_cell_c_size": (lambda lib: lib.nn.LSTMCell(3, 4).double(),
                         (_x(2, 3), lambda lib: (lib.zeros(2, 4, dtype=lib.float64),
                                                 lib.zeros(2, 3, dtype=lib.float64)))),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_forward_errors_match_torch(name):
    make, args = ERRORS[name]
    (t_type, t_text), (g_type, g_text) = _errors(
        make, lambda module, lib: module(*(a(lib) for a in args)))
    assert g_type is t_type and g_text == t_text


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.LSTM(3, 4, dropout=1.5),
    lambda lib: lib.nn.LSTM(3, 4, dropout=True),
    lambda lib: lib.nn.GRU(3, 4.0),
    lambda lib: lib.nn.GRU(3, 0),
    lambda lib: lib.nn.GRU(3, 4, 0),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda lib: lib.nn.RNNBase("CELL", 3, 4),
])
def test_constructor_errors_match_torch(build):
    (t_type, t_text), (g_type, g_text) = _errors(build, lambda module, lib: None)
    assert g_type is t_type and g_text == t_text


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning) as theirs:
        torch.nn.GRU(3, 4, dropout=0.5)
    with pytest.warns(UserWarning) as ours:
        gradkit.nn.GRU(3, 4, dropout=0.5)
    assert str(ours[0].message) == str(theirs[0].message)


def test_cell_unknown_nonlinearity_fails_when_called_as_torch():
    def call(cell, lib):
        cell.nonlinearity = "sigmoid"
        cell(lib.zeros(2, 3))
    (t_type, t_text), (g_type, g_text) = _errors(lambda lib: lib.nn.RNNCell(3, 4), call)
    assert g_type is t_type and g_text == t_text


@pytest.mark.filterwarnings("ignore:LSTM with projections")  # torch's oneDNN note
@pytest.mark.parametrize("make,features", [
    (lambda lib: lib.nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2), 3),
    (lambda lib: lib.nn.GRU(3, 4, batch_first=True), 3),
    (lambda lib: lib.nn.MultiheadAttention(4, 2), 4),
])
def test_float32_modules_keep_float32_and_torch_values(make, features):
    torch.manual_seed(0)
    theirs, ours = make(torch), make(gradkit)
    ours.load_state_dict({k: gradkit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((5, 2, features)).astype(np.float32)
    args = (x, x, x) if isinstance(ours, gradkit.nn.MultiheadAttention) else (x,)
    g_out = flat(ours(*(gradkit.tensor(a) for a in args)))
    t_out = flat(theirs(*(torch.tensor(a) for a in args)))
    for g, t in zip(g_out, t_out, strict=True):
        assert g.dtype == gradkit.float32
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
