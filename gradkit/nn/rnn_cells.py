"""Single-step recurrent cells: RNNCell, LSTMCell, GRUCell (torch's parameters and checks).

They reuse the step functions of :mod:`gradkit.nn.rnn`, so a cell and a one-layer recurrent
layer compute the same thing.
"""
from __future__ import annotations

from gradkit import creation
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter
from gradkit.nn.rnn import _STEPS, uniform_by_hidden_size


class RNNCellBase(Module):
    """``weight_ih`` (gates·hidden, input), ``weight_hh`` (gates·hidden, hidden), optional
    ``bias_ih``/``bias_hh``, all U(±1/√hidden_size); gates = ``num_chunks``, as torch's."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        size = num_chunks * hidden_size

        def parameter(*shape):
            return Parameter(creation.empty(shape, device=device, dtype=dtype))
        self.weight_ih = parameter(size, input_size)
        self.weight_hh = parameter(size, hidden_size)
        self.bias_ih = parameter(size) if bias else None
        self.bias_hh = parameter(size) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/√hidden_size, 1/√hidden_size), as torch."""
        uniform_by_hidden_size(self)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return text if nonlinearity == "tanh" else text + f", nonlinearity={nonlinearity}"

    def _check_rank(self, tensor, what: str) -> None:
        if tensor.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected {what} to be 1D or 2D, got "
                             f"{tensor.ndim}D instead")

    def _check_sizes(self, x, states) -> None:
        """torch's checks of the batched input against the weights and the states."""
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected "
                               f"{self.input_size}")
        for i, state in enumerate(states):
            which = str(i)
            if state.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{which} "
                                   f"batch size {state.shape[0]}")
            if state.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{which} has inconsistent hidden_size: got "
                                   f"{state.shape[1]}, expected {self.hidden_size}")

    def _step(self, mode: str, x, states: tuple):
        """(new h, new c or None) for a batched x and states."""
        self._check_sizes(x, states)
        x_part = F.linear(x, self.weight_ih, self.bias_ih)
        c = states[1] if len(states) > 1 else None
        return _STEPS[mode](x_part, states[0], c, self.weight_hh, self.bias_hh, None)

    def _forward(self, mode: str, x, hx, count: int):
        self._check_rank(x, "input")
        states = () if hx is None else (tuple(hx) if count == 2 else (hx,))
        for i, state in enumerate(states):
            self._check_rank(state, f"hx[{i}]" if count == 2 else "hidden")
        batched = x.ndim == 2
        if not batched:
            x = x.unsqueeze(0)
            states = tuple(s.unsqueeze(0) for s in states)
        if not states:
            zeros = creation.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            states = (zeros,) * count
        h, c = self._step(mode, x, states)
        if not batched:
            h = h.squeeze(0)
            c = None if c is None else c.squeeze(0)
        return (h, c) if count == 2 else h


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu), one step.

    >>> gradkit.nn.RNNCell(3, 4)(gradkit.randn(2, 3)).shape
    gradkit.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """The next hidden state (zeros when ``hx`` is None)."""
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if self.nonlinearity not in modes:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._forward(modes[self.nonlinearity], input, hx, 1)


class _GatedCell(RNNCellBase):
    """A cell with a fixed number of gates (``gates``) and torch's constructor for it."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, self.gates, device, dtype)


class LSTMCell(_GatedCell):
    """One LSTM step: (h', c') from input and (h, c).

    >>> h, c = gradkit.nn.LSTMCell(3, 4)(gradkit.randn(2, 3))
    >>> c.shape
    gradkit.Size([2, 4])
    """

    gates = 4

    def forward(self, input, hx=None):
        """(h', c'); ``hx`` is (h, c) or None for zeros."""
        return self._forward("LSTM", input, hx, 2)


class GRUCell(_GatedCell):
    """One GRU step (gate order r, z, n, as torch).

    >>> gradkit.nn.GRUCell(3, 4)(gradkit.randn(3)).shape
    gradkit.Size([4])
    """

    gates = 3

    def forward(self, input, hx=None):
        """The next hidden state (zeros when ``hx`` is None)."""
        return self._forward("GRU", input, hx, 1)
