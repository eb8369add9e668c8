"""torch's functional recurrent layers (``torch.lstm``, ``torch.gru``, ``torch.rnn_tanh``,
``torch.rnn_relu``) with ATen's signature: the weights come as one flat list, per layer and
direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``, as ``nn.LSTM._flat_weights`` holds them.

Thin adapters over :func:`gradkit.nn.rnn.run_layers`, so they compute what the layers do; the
packed-sequence overloads (``data, batch_sizes, ...``) are not provided.

>>> w_ih, w_hh = gradkit.ones(4, 3), gradkit.zeros(4, 4)
>>> out, h = gradkit.rnn_relu(gradkit.ones(2, 1, 3), gradkit.zeros(1, 1, 4), [w_ih, w_hh],
...                           False, 1, 0.0, False, False, False)
>>> out.tolist()
[[[3.0, 3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0, 3.0]]]
"""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.nn.rnn import run_layers
from gradkit.ops.unary_helpers import scalar_type_name

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu"]


def _cells(params, has_biases: bool, has_projections: bool) -> list:
    """ATen's gather_params: the flat list as (w_ih, w_hh, b_ih, b_hh, w_hr) per cell."""
    per = 2 + 2 * bool(has_biases) + bool(has_projections)
    params = list(params)
    if len(params) % per:
        raise RuntimeError("got an incorrect number of RNN parameters")
    cells = []
    for start in range(0, len(params), per):
        w_ih, w_hh, *rest = params[start:start + per]
        biases = rest[:2] if has_biases else [None, None]
        cells.append((w_ih, w_hh, *biases, rest[-1] if has_projections else None))
    return cells


def _run(mode: str, input: Tensor, states: tuple, params, has_biases: bool, num_layers: int,
         dropout: float, train: bool, bidirectional: bool, batch_first: bool,
         has_projections: bool = False) -> tuple:
    """(output, h_n, c_n or None), with ATen's checks in its order: hidden states, then
    weights, against ``num_layers`` (pairs of them when bidirectional)."""
    cells = _cells(params, has_biases, has_projections)
    directions = 1 + bool(bidirectional)
    hiddens = states[0].shape[0]
    if directions == 2 and (hiddens % 2 or len(cells) % 2):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    if hiddens // directions != num_layers:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(cells) // directions != num_layers:
        raise RuntimeError("Expected more weights in stacked_rnn")
    if num_layers and input.dtype != cells[0][0].dtype:  # torch's matmul of input and w_ih
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{scalar_type_name(input._data)} and "
                           f"{scalar_type_name(cells[0][0]._data)}")
    if batch_first:
        input = input.transpose(0, 1)  # the recurrence runs time-major
    out, h_n, c_n = run_layers(mode, input, states[0], states[1] if len(states) > 1 else None,
                               cells, bool(bidirectional), dropout, train)
    return (out.transpose(0, 1) if batch_first else out), h_n, c_n


def lstm(input: Tensor, hx, params, has_biases: bool, num_layers: int, dropout: float,
         train: bool, bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """torch.lstm: (output, h_n, c_n) from ``hx`` = (h_0, c_0); h_0 narrower than c_0 means
    projections (a ``w_hr`` closes each cell's weights)."""
    if not isinstance(hx, (tuple, list)):
        raise TypeError(f"lstm() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(hx).__name__}, ...), but expected "
                        "a tuple of Tensors hx")
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    projections = hx[0].shape[2] != hx[1].shape[2]
    return _run("LSTM", input, tuple(hx), params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first, projections)


def gru(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int, dropout: float,
        train: bool, bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor]:
    """torch.gru: (output, h_n), gates in torch's order r, z, n."""
    return _run("GRU", input, (hx,), params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)[:2]


def rnn_tanh(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int,
             dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """torch.rnn_tanh: (output, h_n) of the Elman recurrence with tanh."""
    return _run("RNN_TANH", input, (hx,), params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)[:2]


def rnn_relu(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int,
             dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """torch.rnn_relu: (output, h_n) of the Elman recurrence with relu."""
    return _run("RNN_RELU", input, (hx,), params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)[:2]
