"""torch.lstm / torch.gru / torch.rnn_tanh / torch.rnn_relu (ATen's functional recurrent layers,
weights as one flat list) against torch: outputs, final states, every gradient in float64,
gradcheck and gradgradcheck, and torch's errors."""
import doctest

import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck
from gradkit.nn import rnn_functional

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)
LAYERS = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn_tanh": torch.nn.RNN,
          "rnn_relu": torch.nn.RNN}


def _weights(name, input_size=3, hidden=4, **options):
    """A torch layer's flat weights as NumPy arrays (torch's order and shapes)."""
    if name == "rnn_relu":
        options["nonlinearity"] = "relu"
    layer = LAYERS[name](input_size, hidden, **options).double()
    return [w.detach().numpy() for w in layer._flat_weights]


def _call(lib, name, x, states, weights, *flags):
    hx = tuple(states) if name == "lstm" else states[0]
    return getattr(lib, name)(x, hx, weights, *flags)


def _run_both(name, x, states, weights, flags):
    """(outputs, gradients of every input) from torch then gradkit."""
    found = []
    for lib in (torch, gradkit):
        xs = lib.tensor(x, requires_grad=True)
        hs = [lib.tensor(s, requires_grad=True) for s in states]
        ws = [lib.tensor(w, requires_grad=True) for w in weights]
        outs = _call(lib, name, xs, hs, ws, *flags)
        total = sum((o * lib.tensor(np.cos(np.arange(o.numel())).reshape(o.shape))).sum()
                    for o in outs)
        grads = lib.autograd.grad(total, [xs, *hs, *ws])
        found.append(([o.detach().numpy() for o in outs], [g.numpy() for g in grads]))
    return found


# (name, layer options, batch_first)
CASES = [("lstm", {}, False), ("gru", {}, False), ("rnn_tanh", {}, False),
         ("rnn_relu", {}, False), ("lstm", {"num_layers": 2, "bidirectional": True}, False),
         ("gru", {"num_layers": 2, "bias": False}, True),
         ("rnn_tanh", {"bidirectional": True}, True), ("lstm", {"proj_size": 2}, False),
         ("lstm", {"proj_size": 3, "num_layers": 2, "bidirectional": True, "bias": False}, True)]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_outputs_and_gradients_match_torch(case):
    name, options, batch_first = case
    weights = _weights(name, **options)
    layers, directions = options.get("num_layers", 1), 1 + options.get("bidirectional", False)
    hidden = options.get("proj_size") or 4
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    states = [rng.standard_normal((layers * directions, 2, hidden))]
    if name == "lstm":
        states.append(rng.standard_normal((layers * directions, 2, 4)))
    flags = (options.get("bias", True), layers, 0.0, False, directions == 2, batch_first)
    (want, want_grads), (got, got_grads) = _run_both(name, x, states, weights, flags)
    assert len(got) == len(want)
    for g, w in zip(got + got_grads, want + want_grads, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(LAYERS))
def test_gradcheck_and_gradgradcheck(name):
    weights = [gradkit.tensor(w, requires_grad=True) for w in _weights(name, 2, 2)]
    x = gradkit.tensor(rng.standard_normal((3, 1, 2)), requires_grad=True)
    states = [gradkit.tensor(rng.standard_normal((1, 1, 2)), requires_grad=True)
              for _ in range(2 if name == "lstm" else 1)]

    def run(x, *rest):
        hs, ws = rest[:len(states)], list(rest[len(states):])
        return _call(gradkit, name, x, hs, ws, True, 1, 0.0, False, False, False)
    assert gradcheck(run, (x, *states, *weights))
    assert gradgradcheck(run, (x, *states, *weights))


def test_float32_dtypes_and_train_dropout_match_torch():
    """Dropout 1 between layers in training zeroes the second layer's input, so the result is
    deterministic: only the biases and the recurrence feed the top layer."""
    weights = _weights("gru", num_layers=2)
    x, h = rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 2, 4))
    found = []
    for lib in (torch, gradkit):
        ws = [lib.tensor(w, dtype=lib.float32) for w in weights]
        out, h_n = lib.gru(lib.tensor(x, dtype=lib.float32), lib.tensor(h, dtype=lib.float32),
                           ws, True, 2, 1.0, True, False, False)
        assert out.dtype == h_n.dtype == lib.float32
        found.append((out.numpy(), h_n.numpy()))
    for g, w in zip(found[1], found[0], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_matches_the_layer():
    layer = gradkit.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    x = gradkit.randn(5, 2, 3)
    h, c = gradkit.zeros(4, 2, 4), gradkit.zeros(4, 2, 4)
    out, (h_n, c_n) = layer(x, (h, c))
    flat = [getattr(layer, n) for n in layer._flat_weights_names]
    outs = gradkit.lstm(x, (h, c), flat, True, 2, 0.0, False, True, False)
    for g, w in zip(outs, (out, h_n, c_n), strict=True):
        assert gradkit.equal(g, w)


def _error_args(lib, case):
    x = lib.zeros(5, 2, 3, dtype=lib.float64)
    one, two = _weights("gru"), _weights("gru", num_layers=2)
    bidirectional = _weights("gru", bidirectional=True)
    h1, h2, h3 = (lib.zeros(n, 2, 4, dtype=lib.float64) for n in (1, 2, 3))
    w = {"one": one, "two": two, "bi": bidirectional}
    return {
        "param_count": (x, h1, w["one"][:3], True, 1),
        "more_weights": (x, h2, w["one"], True, 2),
        "fewer_layers": (x, h1, w["two"], True, 1),
        "more_hiddens": (x, h3, w["two"], True, 2),
        "no_layers": (x, h1, w["one"], True, 0),
        "odd_hiddens": (x, h3, w["bi"], True, 1, True),
        "odd_params": (x, h2, w["one"], True, 1, True),
        "empty_sequence": (x[:0], h1, w["one"], True, 1),
        "dtype": (x.float(), h1.float(), w["one"], True, 1),
    }[case]


@pytest.mark.parametrize("case, error, message", [
    ("param_count", RuntimeError, "got an incorrect number of RNN parameters"),
    ("more_weights", RuntimeError, "Expected more weights in stacked_rnn"),
    ("fewer_layers", RuntimeError, "Expected more weights in stacked_rnn"),
    ("more_hiddens", RuntimeError, "Expected more hidden states in stacked_rnn"),
    ("no_layers", RuntimeError, "Expected more hidden states in stacked_rnn"),
    ("odd_hiddens", RuntimeError, "Odd number of params or hiddens given to a bidirectional RNN"),
    ("odd_params", RuntimeError, "Odd number of params or hiddens given to a bidirectional RNN"),
    ("empty_sequence", RuntimeError, "Expected sequence length to be larger than 0 in RNN"),
    ("dtype", RuntimeError, "mat1 and mat2 must have the same dtype, but got Float and Double"),
])
def test_errors_match_torch(case, error, message):
    for lib in (torch, gradkit):
        x, h, ws, has_biases, layers, *bidirectional = _error_args(lib, case)
        ws = [lib.tensor(w) for w in ws]
        with pytest.raises(error, match=message):
            lib.gru(x, h, ws, has_biases, layers, 0.0, False, bool(bidirectional), False)


@pytest.mark.parametrize("hx, error, message", [
    ("one", RuntimeError, "lstm expects two hidden states"),
    ("three", RuntimeError, "lstm expects two hidden states"),
    ("tensor", TypeError, r"lstm\(\) received an invalid combination of arguments"),
])
def test_lstm_hidden_state_errors_match_torch(hx, error, message):
    weights = _weights("lstm")
    for lib in (torch, gradkit):
        h = lib.zeros(1, 2, 4, dtype=lib.float64)
        states = {"one": (h,), "three": (h, h, h), "tensor": h}[hx]
        with pytest.raises(error, match=message):
            lib.lstm(lib.zeros(5, 2, 3, dtype=lib.float64), states,
                     [lib.tensor(w) for w in weights], True, 1, 0.0, False, False, False)


def test_docstring_example():
    result = doctest.testmod(rnn_functional, extraglobs={"gradkit": gradkit})
    assert result.attempted > 0 and result.failed == 0
