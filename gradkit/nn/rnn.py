"""Recurrent layers: RNN (tanh/relu), LSTM (with proj_size), GRU and their single-step cells.

Each step is composed from linear, sigmoid, tanh and elementwise ops, so gradients come from
the graph. Parameter names, shapes, order and initialisation (U(±1/√hidden_size)) are torch's,
so a torch state_dict loads as is.
"""
from __future__ import annotations

import math
import numbers
import warnings

from gradkit import creation, ops
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn import init
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter
from gradkit.nn.utils.rnn import PackedSequence

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _rnn_step(activation):
    def step(x_part, h, c, w_hh, b_hh, w_hr):
        return activation(ops.add(x_part, F.linear(h, w_hh, b_hh))), None
    return step


def _lstm_step(x_part, h, c, w_hh, b_hh, w_hr):
    """One LSTM step from the input's share of the gates (x W_ihᵀ + b_ih)."""
    gates = ops.add(x_part, F.linear(h, w_hh, b_hh))
    i, f, g, o = ops.chunk(gates, 4, -1)
    c_next = ops.add(ops.mul(ops.sigmoid(f), c), ops.mul(ops.sigmoid(i), ops.tanh(g)))
    h_next = ops.mul(ops.sigmoid(o), ops.tanh(c_next))
    return (h_next if w_hr is None else F.linear(h_next, w_hr)), c_next


def _gru_step(x_part, h, c, w_hh, b_hh, w_hr):
    """One GRU step: the reset gate scales the hidden share of the new gate, as torch."""
    x_r, x_z, x_n = ops.chunk(x_part, 3, -1)
    h_r, h_z, h_n = ops.chunk(F.linear(h, w_hh, b_hh), 3, -1)
    reset = ops.sigmoid(ops.add(x_r, h_r))
    update = ops.sigmoid(ops.add(x_z, h_z))
    new = ops.tanh(ops.add(x_n, ops.mul(reset, h_n)))
    return ops.add(new, ops.mul(update, ops.sub(h, new))), None  # (1-z)·n + z·h


_STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN_TANH": _rnn_step(ops.tanh),
          "RNN_RELU": _rnn_step(ops.relu)}


def uniform_by_hidden_size(module: Module) -> None:
    """torch's recurrent initialisation: every parameter from U(±1/√hidden_size)."""
    bound = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


def _check_dropout(dropout, num_layers: int) -> None:
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
            or not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)


def _packed_direction(step, x_parts, h0, c0, w_hh, b_hh, w_hr, reverse: bool) -> tuple:
    """One direction of one layer over a PackedSequence's steps: (per-step outputs in time
    order, h_n, c_n). Packed steps shrink in batch: going forward, the sequences that ended
    keep their last state (``done``); going backward, they join with their initial state when
    they start."""
    rows = x_parts[-1].shape[0] if reverse else h0.shape[0]
    h, c = h0[:rows], None if c0 is None else c0[:rows]
    hs, done = [], []
    for x_t in (reversed(x_parts) if reverse else x_parts):
        size = x_t.shape[0]
        if size < h.shape[0]:
            done.append((h[size:], None if c is None else c[size:]))
            h, c = h[:size], None if c is None else c[:size]
        elif size > h.shape[0]:
            h = ops.cat([h, h0[h.shape[0]:size]], 0)
            c = None if c is None else ops.cat([c, c0[c.shape[0]:size]], 0)
        h, c = step(x_t, h, c, w_hh, b_hh, w_hr)
        hs.append(h)
    if done:
        h = ops.cat([h] + [tail for tail, _ in reversed(done)], 0)
        c = None if c is None else ops.cat([c] + [tail for _, tail in reversed(done)], 0)
    return (hs[::-1] if reverse else hs), h, c


def run_layers(mode: str, x, h0, c0, weights: list, bidirectional: bool, dropout: float,
               train: bool, batch_sizes=None) -> tuple:
    """The stacked, maybe bidirectional recurrence over time-major ``x`` (T, B, F), or over a
    PackedSequence's ``data`` (N, F) with its ``batch_sizes``: (output, h_n, c_n or None).
    ``weights`` holds per layer and direction (w_ih, w_hh, b_ih, b_hh, w_hr), any bias or
    projection None; dropout (when ``train``) follows every layer but the last."""
    if x.shape[0] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    step = _STEPS[mode]
    directions = 1 + bidirectional
    num_layers = len(weights) // directions
    h_last, c_last = [], []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[index]
            x_in = F.linear(x, w_ih, b_ih)  # all steps' input share
            h, c = h0[index], None if c0 is None else c0[index]
            if batch_sizes is not None:
                hs, h, c = _packed_direction(step, ops.split(x_in, batch_sizes, 0), h, c,
                                             w_hh, b_hh, w_hr, bool(direction))
                outputs.append(ops.cat(hs, 0))
                h_last.append(h)
                c_last.append(c)
                continue
            x_parts, hs = ops.unbind(x_in, 0), []
            for t in (reversed(range(len(x_parts))) if direction else range(len(x_parts))):
                h, c = step(x_parts[t], h, c, w_hh, b_hh, w_hr)
                hs.append(h)
            if direction:
                hs.reverse()
            outputs.append(ops.stack(hs, 0))
            h_last.append(h)
            c_last.append(c)
        x = outputs[0] if directions == 1 else ops.cat(outputs, -1)
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, ops.stack(h_last, 0), None if c0 is None else ops.stack(c_last, 0)


class RNNBase(Module):
    """What RNN, LSTM and GRU share: per layer and direction ``weight_ih_l{k}``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` (and LSTM's ``weight_hr_l{k}``),
    ``_reverse`` for the backward direction; the sequence loop and torch's checks."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        _check_dropout(dropout, num_layers)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        self._flat_weights_names: list[str] = []
        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, out_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    setattr(self, name + suffix,
                            Parameter(creation.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/√hidden_size, 1/√hidden_size), as torch."""
        uniform_by_hidden_size(self)

    def __setstate__(self, state: dict) -> None:
        """A state saved before ``proj_size`` existed (torch 1.7's LSTM) loads with none."""
        super().__setstate__(state)
        if "proj_size" not in state:
            self.proj_size = 0

    def flatten_parameters(self) -> None:
        """A no-op, as torch's on the CPU (it packs the weights for cuDNN)."""

    @property
    def all_weights(self) -> list:
        """The parameters per layer and direction, in torch's order."""
        per = len(self._flat_weights_names) // (self.num_layers * (1 + self.bidirectional))
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    @property
    def _flat_weights(self) -> list:
        """torch's list of the weights in order, read from the attributes (so a pruned one is
        its current, masked tensor, as torch's ``__setattr__`` keeps it)."""
        return [getattr(self, n) for n in self._flat_weights_names]

    def _weights(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        found = [getattr(self, name + suffix, None)
                 for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")]
        return tuple(found)

    def _check_input(self, x) -> None:
        weight_dtype = getattr(self, self._flat_weights_names[0]).dtype
        if x.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({x.dtype})")
        if self.input_size != x.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")

    def _expected_hidden(self, batch: int, size: int) -> tuple:
        return (self.num_layers * (1 + self.bidirectional), batch, size)

    def _zeros(self, x, batch: int, size: int):
        return creation.zeros(self._expected_hidden(batch, size), dtype=x.dtype,
                              device=x.device)

    @staticmethod
    def _check_hidden(hx, expected: tuple, which: str = "") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected hidden{which} size {expected}, got {list(hx.shape)}")

    def _run(self, x, h0, c0, batch_sizes=None):
        directions = 1 + self.bidirectional
        weights = [self._weights(layer, direction) for layer in range(self.num_layers)
                   for direction in range(directions)]
        return run_layers(self.mode, x, h0, c0, weights, self.bidirectional,
                          self.dropout, self.training, batch_sizes)

    def _forward(self, x, hx, is_lstm: bool):
        states = () if hx is None else (tuple(hx) if is_lstm else (hx,))
        if isinstance(x, PackedSequence):
            return self._forward_packed(x, states, is_lstm)
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if x.ndim not in (2, 3):
            kind = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {x.ndim}D{kind} "
                             "instead")
        batched = x.ndim == 3
        want = 3 if batched else 2
        if any(s.ndim != want for s in states):
            got = ", ".join(f"{s.ndim}-D" for s in states)
            what, tail = (("hx and cx", f"({got}) tensors") if is_lstm
                          else ("hx", f"{got} tensor"))
            raise RuntimeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, "
                               f"{what} should also be {want}-D but got {tail}")
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            x = x.unsqueeze(batch_dim)
            states = tuple(s.unsqueeze(1) for s in states)
        if self.batch_first:
            x = x.transpose(0, 1)  # the loop runs time-major
        out, h_n, c_n = self._checked_run(x, states, x.shape[1], is_lstm)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out, h_n = out.squeeze(batch_dim), h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        return out, ((h_n, c_n) if is_lstm else h_n)

    def _forward_packed(self, packed: PackedSequence, states: tuple, is_lstm: bool):
        """A PackedSequence in, one out; the given states are in the original batch order,
        so they are sorted as the sequences on the way in and back on the way out."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        if data.ndim != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.ndim}")
        sizes = [int(n) for n in batch_sizes.tolist()]
        if sorted_indices is not None:
            states = tuple(ops.index_select(s, 1, sorted_indices) for s in states)
        out, h_n, c_n = self._checked_run(data, states, sizes[0], is_lstm, sizes)
        if unsorted_indices is not None:
            h_n = ops.index_select(h_n, 1, unsorted_indices)
            c_n = None if c_n is None else ops.index_select(c_n, 1, unsorted_indices)
        output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        return output, ((h_n, c_n) if is_lstm else h_n)

    def _checked_run(self, x, states: tuple, batch: int, is_lstm: bool, batch_sizes=None):
        """Check the input and the states (zeros when not given), then run."""
        self._check_input(x)
        h_size = self.proj_size or self.hidden_size
        if not states:
            states = (self._zeros(x, batch, h_size),) + (
                (self._zeros(x, batch, self.hidden_size),) if is_lstm else ())
        self._check_hidden(states[0], self._expected_hidden(batch, h_size),
                           "[0]" if is_lstm else "")
        if is_lstm:
            self._check_hidden(states[1], self._expected_hidden(batch, self.hidden_size), "[1]")
        return self._run(x, states[0], states[1] if is_lstm else None, batch_sizes)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        for name, default in (("num_layers", 1), ("bias", True), ("batch_first", False),
                              ("dropout", 0), ("bidirectional", False)):
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text


def _refuse_projections(proj_size: int | None) -> None:
    """torch's RNN and GRU take ``proj_size`` only to refuse it (any value)."""
    if proj_size is not None:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh) (or relu).

    >>> out, h = gradkit.nn.RNN(3, 4, num_layers=2)(gradkit.randn(5, 2, 3))
    >>> out.shape, h.shape
    (gradkit.Size([5, 2, 4]), gradkit.Size([2, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None, *, proj_size: int | None = None) -> None:
        _refuse_projections(proj_size)
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """(output, h_n) for input (T, B, F) / (B, T, F) with batch_first / (T, F)."""
        return self._forward(input, hx, False)


class LSTM(RNNBase):
    """Long short-term memory; ``proj_size > 0`` projects h_t by ``weight_hr_l{k}``.

    >>> out, (h, c) = gradkit.nn.LSTM(3, 4)(gradkit.randn(5, 2, 3))
    >>> out.shape, c.shape
    (gradkit.Size([5, 2, 4]), gradkit.Size([1, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def forward(self, input, hx=None):
        """(output, (h_n, c_n)); ``hx`` is (h_0, c_0) or None for zeros."""
        return self._forward(input, hx, True)


class GRU(RNNBase):
    """Gated recurrent unit (torch's gate order r, z, n).

    >>> out, h = gradkit.nn.GRU(3, 4, batch_first=True)(gradkit.randn(2, 5, 3))
    >>> out.shape
    gradkit.Size([2, 5, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None, *,
                 proj_size: int | None = None) -> None:
        _refuse_projections(proj_size)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)

    def forward(self, input, hx=None):
        """(output, h_n)."""
        return self._forward(input, hx, False)
