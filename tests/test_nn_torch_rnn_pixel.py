"""torch's recurrent-layer, pixel-shuffle and in-place activation tests of test/test_nn.py
(h-nnB: test_rnn_args_check, test_projections_lstm_args_check, test_rnn_initial_hidden_state,
test_projections_errors_on_gru_and_rnn, _test_RNN_cpu_vs_cudnn's CPU half, test_RNN_dropout,
test_error_RNN_seq_len_zero, test_RNN_input_size_zero, test_RNN_change_dropout,
test_pixel_shuffle_unshuffle, test_pixel_shuffle_nhwc_cpu, test_*_inplace_*), rerun on gradkit
and compared with torch 2.13 on the same program.
"""
import itertools
import warnings

import numpy as np
import pytest

import gradkit
from tensor_twins import data, same_as_torch


def _float(m, *shape: int, seed: int = 0):
    return m.tensor(data(*shape, seed=seed), dtype=m.float32)


@pytest.mark.parametrize("mode", ["RNN", "GRU"])
@pytest.mark.parametrize("proj_size", [0, 10])
def test_projections_are_refused_by_rnn_and_gru(mode, proj_size):
    """Any proj_size (0 too) is a ValueError (gradkit's signature had no such keyword)."""
    same_as_torch(lambda m: getattr(m.nn, mode)(30, 20, 2, proj_size=proj_size))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not "
                       "RNN or GRU"):
        getattr(gradkit.nn, mode)(30, 20, 2, proj_size=proj_size)


def _hidden_shapes_program(mode: str, input_shape: tuple, hidden_shapes: tuple, proj: int):
    def program(m):
        kwargs = {"proj_size": proj} if proj else {}
        model = getattr(m.nn, mode)(3, 5, 2, **kwargs)
        hidden = tuple(_float(m, *s, seed=i) for i, s in enumerate(hidden_shapes))
        return model(_float(m, *input_shape), hidden if mode == "LSTM" else hidden[0])
    return program


def _bad(shape: tuple, dim: int, size: int = 7) -> tuple:
    return shape[:dim] + (size,) + shape[dim + 1:]


_X, _H = (6, 4, 3), (2, 4, 5)
_ARGUMENT_CASES = [(_bad(_X, 1), _H), (_X, _bad(_H, 1)), (_bad(_X, 2), _H), (_X, _bad(_H, 2)),
                   (_X, _bad(_H, 0))]


@pytest.mark.parametrize("mode", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("input_shape,hidden_shape", _ARGUMENT_CASES)
@pytest.mark.parametrize("bad_first", [True, False])
def test_rnn_argument_shapes_are_checked(mode, input_shape, hidden_shape, bad_first):
    """test_rnn_args_check: the same RuntimeError (an LSTM's wrong h or wrong c)."""
    if mode != "LSTM" and not bad_first:
        pytest.skip("one hidden state")
    shapes = (hidden_shape, _H) if bad_first else (_H, hidden_shape)
    same_as_torch(_hidden_shapes_program(mode, input_shape, shapes, 0))


@pytest.mark.parametrize("input_shape,h_shape,c_shape", [
    (_bad(_X, 1), (2, 4, 2), _H), (_X, (2, 7, 2), _bad(_H, 1)), (_bad(_X, 2), (2, 4, 2), _H),
    (_X, (2, 4, 7), _bad(_H, 2)), (_X, (7, 4, 2), _bad(_H, 0)), (_X, (5, 4, 2), _H),
    (_X, (7, 4, 2), _H), (_X, (2, 4, 2), _bad(_H, 0)),
])
def test_projected_lstm_argument_shapes_are_checked(input_shape, h_shape, c_shape):
    same_as_torch(_hidden_shapes_program("LSTM", input_shape, (h_shape, c_shape), 2),
                  count_warnings=False)  # (torch's oneDNN note on projections)


@pytest.mark.parametrize("mode,bidirectional,proj", [
    ("RNN", False, 0), ("GRU", False, 0), ("LSTM", False, 0), ("LSTM", False, 4),
    ("LSTM", True, 4)])
def test_zero_initial_hidden_state_is_the_default(mode, bidirectional, proj):
    def program(m):
        kwargs = {"proj_size": proj} if proj else {}
        rnn = getattr(m.nn, mode)(6, 5, 2, bidirectional=bidirectional, **kwargs)
        x = _float(m, 4, 3, 6)
        d = 2 if bidirectional else 1
        h = m.zeros(2 * d, 3, proj or 5)
        hidden = (h, m.zeros(2 * d, 3, 5)) if mode == "LSTM" else h
        (out, h_n), (default_out, default_h_n) = rnn(x, hidden), rnn(x)
        pairs = zip(h_n, default_h_n) if mode == "LSTM" else [(h_n, default_h_n)]
        return [m.equal(out, default_out)] + [m.equal(a, b) for a, b in pairs]
    # (torch's CPU build warns that oneDNN has no projections: an implementation note)
    assert all(same_as_torch(program, count_warnings=not proj))


def _rnn_forward_backward(m, mode, weights, values, bias, bidirectional, batch_first, contig,
                          lengths, proj):
    """_test_RNN_cpu_vs_cudnn's forward_backward on the CPU: the same weights, inputs and
    output gradients (non-contiguous ones too, packed sequences too) in both libraries."""
    kwargs = {"proj_size": proj} if proj else {}
    rnn = getattr(m.nn, mode)(10, 6, 2, bias=bias, bidirectional=bidirectional,
                              batch_first=batch_first, **kwargs).double()
    for layer, arrays in zip(rnn.all_weights, weights):
        for w, array in zip(layer, arrays):
            w.data.copy_(m.tensor(array))
    inp, grad_out, hx, grad_hy, cx, grad_cy = [m.tensor(v) for v in values]
    if not contig:  # torch's make_noncontig
        inp, grad_out, hx, grad_hy = [m.stack([t.clone().zero_(), t], t.dim()).select(t.dim(), 1)
                                      for t in (inp, grad_out, hx, grad_hy)]
    if lengths is not None:
        rnn_utils = m.nn.utils.rnn
        packed = rnn_utils.pack_padded_sequence(inp, lengths, batch_first=batch_first)
        grad_out = rnn_utils.pack_padded_sequence(grad_out, lengths, batch_first=batch_first).data
        leaf = packed.data.clone().requires_grad_()
        inp = rnn_utils.PackedSequence(leaf, packed.batch_sizes)
    else:
        inp = leaf = inp.clone().requires_grad_()
    hidden = [hx.clone().requires_grad_()] + ([cx.add(1).requires_grad_()] if mode == "LSTM"
                                               else [])
    out, hy = rnn(inp, tuple(hidden) if mode == "LSTM" else hidden[0])
    out = out.data if lengths is not None else out
    hys = list(hy) if mode == "LSTM" else [hy]
    m.autograd.backward([out] + hys, [grad_out, grad_hy, grad_cy + 1][:1 + len(hys)])
    return [out, *hys, leaf.grad, *(h.grad for h in hidden),
            *(w.grad for layer in rnn.all_weights for w in layer)]


@pytest.mark.parametrize("mode,proj", [("RNN", 0), ("LSTM", 0), ("GRU", 0), ("LSTM", 3)])
@pytest.mark.parametrize("bias,bidirectional,batch_first,contig,variable_len,lens_as_tensor",
                         [c for c in itertools.product((True, False), repeat=6)
                          if sum(c) % 3 == 0])
def test_rnn_outputs_and_gradients_match_torch(mode, proj, bias, bidirectional, batch_first,
                                               contig, variable_len, lens_as_tensor):
    """Values and every gradient, within float64 rounding (a third of torch's 64 cases)."""
    torch = pytest.importorskip("torch")
    d, out_size = 2 if bidirectional else 1, proj or 6
    rng = np.random.default_rng(7)
    seq_first = (7, 6) if not batch_first else (6, 7)
    values = [rng.standard_normal(s) for s in (seq_first + (10,), seq_first + (out_size * d,),
                                               (2 * d, 6, out_size), (2 * d, 6, out_size),
                                               (2 * d, 6, 6), (2 * d, 6, 6))]
    kwargs = {"proj_size": proj} if proj else {}
    reference = getattr(torch.nn, mode)(10, 6, 2, bias=bias, bidirectional=bidirectional,
                                        **kwargs).double()
    weights = [[w.detach().numpy() for w in layer] for layer in reference.all_weights]
    results = []
    for m in (gradkit, torch):
        lengths = None
        if variable_len:
            lengths = m.tensor([7, 5, 5, 2, 1, 1]) if lens_as_tensor else [7, 5, 5, 2, 1, 1]
        results.append(_rnn_forward_backward(m, mode, weights, values, bias, bidirectional,
                                             batch_first, contig, lengths, proj))
    for got, expected in zip(*results):
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("p", [0, 0.276, 0.731, 1])
@pytest.mark.parametrize("train", [True, False])
def test_dropout_sits_between_layers(p, train):
    """test_RNN_dropout on the CPU: all-ones weights, relu, one step; a closed form."""
    gradkit.manual_seed(0)
    rnn = gradkit.nn.RNN(10, 1000, 2, bias=False, dropout=p, nonlinearity="relu").double()
    rnn.train(train)
    for name in ("weight_ih_l0", "weight_hh_l0", "weight_ih_l1", "weight_hh_l1"):
        getattr(rnn, name).data.fill_(1)
    output, hy = rnn(gradkit.ones(1, 1, 10, dtype=gradkit.double),
                     gradkit.zeros(2, 1, 1000, dtype=gradkit.double))
    value = output[0, 0, 0].item()
    assert output.min().item() == output.max().item() and hy[0, 0, 0].item() == 10
    assert hy[1, 0, 0].item() == value
    if p == 0 or not train:
        assert value == 10000
    elif p == 1:
        assert value == 0
    else:
        assert 8000 < value < 12000
        assert min((value * (1 - p)) % 10, 10 - (value * (1 - p)) % 10) < 1e-2


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [True, False])
def test_empty_sequences_and_empty_batches(mode, bidirectional):
    """test_error_RNN_seq_len_zero and test_RNN_input_size_zero."""
    same_as_torch(lambda m: getattr(m.nn, mode)(5, 6, bidirectional=bidirectional)(
        m.ones(0, 10, 5)))

    def program(m):
        out = getattr(m.nn, mode)(input_size=3, hidden_size=4)(m.zeros(5, 0, 3))
        out[0].sum().backward()
        return out[0].shape
    same_as_torch(program)


@pytest.mark.parametrize("train", [True, False])
def test_changing_dropout_between_calls(train):
    """test_RNN_change_dropout: which calls agree as ``rnn.dropout`` changes."""
    def program(m):
        m.manual_seed(0)
        rnn = m.nn.RNN(20, 20, 2, dropout=0, nonlinearity="relu").double().train(train)
        x, previous, agree = m.tensor(data(3, 2, 20)), None, []
        for p in (0, 0.5, 0, 0.7, 0.2, 1, 0.2, 0):
            rnn.dropout = p
            (out1, hy1), (out2, hy2) = rnn(x), rnn(x)
            agree.append([m.equal(out1, out2), m.equal(hy1, hy2)] +
                         ([] if previous is None else [m.equal(out1, previous)]))
            previous = out1.detach()
        return agree
    same_as_torch(program)


_SHUFFLE_SHAPES = {1: (36,), 2: (6, 7), 3: (36, 6, 7), 4: (2, 36, 6, 7), 5: (2, 2, 36, 6, 7)}


@pytest.mark.parametrize("dims", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("factor,channels", [(3, 36), (3, 37), (0, 4), (-2, 8)])
def test_pixel_shuffle_errors_and_results(dims, factor, channels):
    """A factor below 1 is torch's RuntimeError (gradkit divided by zero or reshaped to a
    negative size); fewer than 3 dims and indivisible channels are checked first."""
    shape = tuple(channels if s == 36 else s for s in _SHUFFLE_SHAPES[dims])

    def program(m):
        x = m.tensor(data(*shape), requires_grad=True)
        out = m.nn.PixelShuffle(factor)(x)
        out.backward(out.detach())
        return out, x.grad, m.nn.PixelUnshuffle(downscale_factor=factor)(out)
    same_as_torch(program)


@pytest.mark.parametrize("dims", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("height,width,factor", [(9, 9, 3), (10, 9, 3), (9, 10, 3), (6, 6, 0),
                                                 (6, 6, -2)])
def test_pixel_unshuffle_errors(dims, height, width, factor):
    shape = {1: (3,), 2: (height, width)}.get(dims, (2,) * (dims - 3) + (3, height, width))
    same_as_torch(lambda m: m.nn.PixelUnshuffle(factor)(m.tensor(data(*shape))))
    if factor <= 0 and dims >= 3:
        with pytest.raises(RuntimeError, match="pixel_unshuffle expects a positive "
                           f"downscale_factor, but got {factor}"):
            gradkit.nn.PixelUnshuffle(factor)(gradkit.tensor(data(*shape)))


def test_pixel_shuffle_keeps_channels_last():
    """test_pixel_shuffle_nhwc_cpu: a channels-last 4-d input gives channels-last results
    (gradkit gave C order); torch's kernels refuse a channels_last_3d 5-d input."""
    def program(m):
        x = m.tensor(data(3, 18, 4, 4)).contiguous(memory_format=m.channels_last)
        x.requires_grad_()
        shuffled = m.nn.PixelShuffle(3)(x)
        out = m.nn.PixelUnshuffle(3)(shuffled)
        out.backward(m.tensor(data(3, 18, 4, 4, seed=1)))
        return (shuffled.stride(), out.stride(), x.grad.stride(), out, x.grad,
                m.nn.functional.pixel_unshuffle(x.detach(), 2).stride(),
                m.nn.functional.pixel_shuffle(x.detach()[:1], 1).stride())
    same_as_torch(program)
    five = gradkit.randn(2, 3, 18, 4, 4).contiguous(memory_format=gradkit.channels_last_3d)
    for f, factor in ((gradkit.nn.functional.pixel_shuffle, 3),
                      (gradkit.nn.functional.pixel_unshuffle, 2)):
        with pytest.raises(RuntimeError, match="Unsupported memory format. Supports only "
                           "ChannelsLast, Contiguous"):
            f(five, factor)
    same_as_torch(lambda m: m.nn.functional.pixel_shuffle(
        m.tensor(data(2, 3, 18, 4, 4)).contiguous(memory_format=m.channels_last_3d), 3))


@pytest.mark.parametrize("name", ["elu", "relu", "selu", "celu", "leaky_relu", "relu6", "silu",
                                  "hardswish", "mish", "hardtanh"])
def test_inplace_activations_on_a_view_pass_gradgradcheck(name):
    """test_elu_inplace_on_view, test_relu_inplace_on_view, test_*_inplace_gradgrad: the
    in-place result is the view, and its first and second derivatives are right."""
    fn = getattr(gradkit.nn.functional, name)
    v = gradkit.tensor([0.5, -1.5, 2.0, -0.25], dtype=gradkit.double, requires_grad=True)

    def on_view(root):
        x = root.clone()
        view = x.narrow(0, 1, 2)
        assert fn(view, inplace=True) is view
        return x
    assert gradkit.autograd.gradcheck(on_view, [v])
    assert gradkit.autograd.gradgradcheck(on_view, [v])
    w = gradkit.tensor(data(8), dtype=gradkit.double, requires_grad=True)
    assert gradkit.autograd.gradgradcheck(lambda r: fn(r.clone(), inplace=True), [w])


@pytest.mark.parametrize("module", ["ReLU", "ELU", "SELU", "CELU", "RReLU"])
def test_inplace_modules_leave_the_output_gradient_alone(module):
    """test_inplace_thnn: backward does not write into the gradient it is given."""
    def program(m):
        m.manual_seed(0)
        out = getattr(m.nn, module)(inplace=True)(_float(m, 5, 5).requires_grad_() + 0)
        grad = _float(m, 5, 5, seed=1)
        kept = grad.clone()
        out.backward(grad)
        return m.equal(grad, kept)
    assert same_as_torch(program) is True


@pytest.mark.parametrize("kwargs", [{"batch_first": False}, {}, {"norm_first": True},
                                    {"bias": False}, {"nhead": 3, "d_model": 15},
                                    {"activation": "gelu"}])
def test_transformer_warns_why_it_uses_no_nested_tensors(kwargs):
    """test_transformer_args_check's constructor: torch's TransformerEncoder warns when
    enable_nested_tensor cannot be used, with its first reason (gradkit gave no warning)."""
    def program(m):
        options = {"d_model": 16, "nhead": 4, "num_encoder_layers": 1,
                   "num_decoder_layers": 1, "dim_feedforward": 32, "batch_first": True,
                   **kwargs}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = m.nn.Transformer(**options)
        return [str(w.message) for w in caught], model.encoder.use_nested_tensor
    same_as_torch(program)


def test_transformer_encoder_with_another_layer_or_activation_warns():
    def program(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = m.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True,
                                                 activation=m.tanh)
            m.nn.TransformerEncoder(layer, 1)
            m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(16, 4, 32), 1,
                                    enable_nested_tensor=False)
        return [str(w.message) for w in caught]
    assert len(same_as_torch(program)) == 1
