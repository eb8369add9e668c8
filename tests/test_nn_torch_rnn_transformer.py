"""torch's test/test_nn.py (TestNN, first quarter): CTC with zero lengths, RNN/GRU/LSTM cells,
RNN argument errors, and the deterministic TransformerDecoder(Layer) programs.

torch's transformer tests hold fixed reference numbers; here the same programs (weights set
to cos(arange)) run on gradkit and on torch 2.13 and are compared with each other.
"""
import itertools

import pytest

from torch_expectations.twin import both_libraries as both, data, like_torch

DECODER_INPUTS = [
    ([[[20., 30., 40., 50.]]], [[[60., 70., 80., 90.]]]),
    ([[[9., 10., 11., 12.]], [[11., 12., 13., 14.]]], [[[1., 2., 3., 4.]]]),
    ([[[1., 2., 3., 4.]], [[5., 6., 7., 8.]]], [[[9., 10., 11., 12.]], [[11., 12., 13., 14.]]]),
]


@both
def test_ctc_loss_zero_lengths(lib):
    target = lib.randint(low=1, high=200, size=(3, 2), dtype=lib.int)
    lengths = lib.full(size=(3,), fill_value=0, dtype=lib.int)
    for target_length, value in ((0, 0.0), (1, float("inf"))):
        x = lib.randn(1, 3, 200).log_softmax(2).requires_grad_()
        res = lib.nn.functional.ctc_loss(x, target, lengths, lib.full((3,), target_length,
                                                                      dtype=lib.int),
                                         reduction="none")
        assert (res == value).all().item()
        res.sum().backward()
        assert (x.grad == 0).all().item()


@both
def test_rnn_cell_no_broadcasting(lib):
    nn = lib.nn
    x, good_hx = lib.randn(3, 10), lib.randn(3, 20)
    for bad_hx, inp, hx in ((lib.randn(1, 20), x, None), (lib.randn(3, 1), x, None),
                            (good_hx, lib.randn(3, 1), good_hx)):
        hx = bad_hx if hx is None else hx
        for cell, state in ((nn.RNNCell(10, 20), hx), (nn.GRUCell(10, 20), hx),
                            (nn.LSTMCell(10, 20), (hx, good_hx)),
                            (nn.LSTMCell(10, 20), (good_hx, hx))):
            with pytest.raises(RuntimeError):
                cell(inp, state)


def test_lstm_cell():
    def program(lib):
        results = []
        for bias in (True, False):
            lstm = lib.nn.LSTMCell(10, 20, bias=bias).double()
            with lib.no_grad():
                for i, p in enumerate(lstm.parameters()):
                    p.copy_(lib.tensor(data(*p.shape, seed=i)) * 0.2)
            x, hx, cx = (lib.tensor(data(3, n, seed=s)) for n, s in ((10, 7), (20, 8), (20, 9)))
            for _ in range(6):
                hx, cx = lstm(x, (hx, cx))
            (hx + cx).sum().backward()
            results.append([hx, cx, [p.grad for p in lstm.parameters()]])
        return results

    like_torch(program, rtol=1e-10, atol=1e-12)


@both
def test_lstm_cell_forward_sizes(lib):
    lstm = lib.nn.LSTMCell(10, 20)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 11 expected 10"):
        lstm(lib.randn(3, 11), (lib.randn(3, 20), lib.randn(3, 20)))
    x, hx, cx = lib.randn(3, 10), lib.randn(3, 21), lib.randn(3, 20)
    for state in ((hx, cx), (cx, hx)):
        with pytest.raises(RuntimeError, match="hidden[01] has inconsistent hidden_size: got 21, "
                                               "expected 20"):
            lstm(x, state)


@both
def test_transformer_smoke(lib):
    bsz, seq, tgt_len, d_model = 2, 7, 5, 16
    for batch_first in (True, False):
        transformer = lib.nn.Transformer(d_model, 4, 2, 2, 32, 0.3, batch_first=batch_first,
                                         dtype=lib.double)
        src = lib.randn((bsz, seq, d_model) if batch_first else (seq, bsz, d_model),
                        dtype=lib.double)
        tgt = lib.randn((bsz, tgt_len, d_model) if batch_first else (tgt_len, bsz, d_model),
                        dtype=lib.double)
        out = transformer(
            src, tgt, src_mask=transformer.generate_square_subsequent_mask(seq).double(),
            tgt_mask=transformer.generate_square_subsequent_mask(tgt_len).double(),
            memory_mask=lib.randn(tgt_len, seq).double(),
            src_key_padding_mask=lib.rand(bsz, seq) >= 0.5,
            tgt_key_padding_mask=lib.rand(bsz, tgt_len) >= 0.5,
            memory_key_padding_mask=lib.rand(bsz, seq) >= 0.5)
        out.sum().backward()
        assert out.shape == tgt.shape


def _cos_weights(lib, module):
    """torch's deterministic weights: each parameter cos(arange(n)) in its shape."""
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.cos(lib.arange(0, p.numel()).float().view(p.shape)))
    return module


def _layer(lib, activation, batch_first):
    layer = lib.nn.TransformerDecoderLayer(4, 2, 16, 0.0, activation, batch_first=batch_first)
    return _cos_weights(lib, layer)


def _activation(lib, name):
    return {"relu": "relu", "F.relu": lib.nn.functional.relu, "gelu": "gelu",
            "F.gelu": lib.nn.functional.gelu, "GELU()": lib.nn.GELU()}[name]


def _decoder_runs(lib, model, batch_first):
    """The test's inputs, then the 3x2 input with each key padding mask of torch's test."""
    def perm(values):
        t = lib.tensor(values, dtype=lib.float32)
        return t.transpose(1, 0) if batch_first else t

    outs = [model(perm(tgt), perm(mem)) for tgt, mem in DECODER_INPUTS]
    tgt = perm(data(3, 2, 4, seed=1) ** 2 % 1)
    mem = perm(data(5, 2, 4, seed=2) ** 2 % 1)
    outs.append(model(tgt, mem))
    for key, size, masked in (("tgt_key_padding_mask", 3, ((0, 2), (1, 1), (1, 2))),
                              ("memory_key_padding_mask", 5, ((0, 4), (1, 3), (1, 4)))):
        mask = lib.zeros(2, size) == 1
        outs.append(model(tgt, mem, **{key: mask}))
        for i, j in masked:
            mask[i, j] = True
        outs.append(model(tgt, mem, **{key: mask}))
    return [o.detach() for o in outs]


@pytest.mark.parametrize("activation, batch_first",
                         itertools.product(["relu", "gelu", "F.gelu", "GELU()"], [False, True]))
def test_transformer_decoder_layer(activation, batch_first):
    def program(lib):
        layer = _layer(lib, _activation(lib, activation), batch_first)
        return _decoder_runs(lib, layer, batch_first)

    outs = like_torch(program, rtol=1e-5, atol=1e-6)
    assert outs[0].shape == (1, 1, 4) and outs[3].shape == ((2, 3, 4) if batch_first
                                                            else (3, 2, 4))


@pytest.mark.parametrize("activation, batch_first",
                         itertools.product(["F.relu", "gelu"], [False, True]))
def test_transformer_decoder(activation, batch_first):
    def program(lib):
        layer = _layer(lib, _activation(lib, activation), batch_first)
        outs = []
        for layers, norm in ((1, None), (2, None), (6, None), (2, lib.nn.LayerNorm(4)),
                             (6, lib.nn.LayerNorm(4))):
            outs += _decoder_runs(lib, lib.nn.TransformerDecoder(layer, layers, norm=norm),
                                  batch_first)
        return outs

    like_torch(program, rtol=1e-5, atol=1e-5)


@both
def test_rnn_forward_exception(lib):
    """torch's test_cudnn_forward_exception: the checks run on the CPU too."""
    nn = lib.nn
    rnns = [(nn.LSTM(10, 20, batch_first=True), (lib.zeros(1, 2, 19), lib.zeros(1, 2, 19))),
            (nn.LSTM(10, 20, batch_first=True, proj_size=10),
             (lib.zeros(1, 2, 19), lib.zeros(1, 2, 19))),
            (nn.GRU(10, 20, batch_first=True), lib.zeros(1, 2, 19)),
            (nn.RNN(10, 20, batch_first=True), lib.zeros(1, 2, 19))]
    for rnn, hidden in rnns:
        with pytest.raises(RuntimeError, match="Expected hidden.*size.*got"):
            rnn(lib.randn(2, 3, 10), hidden)
        with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size"):
            rnn(lib.randn(2, 3, 3))
