"""Parameter-free layers: activations and Flatten (thin wrappers over functions)."""
from __future__ import annotations

from gradkit import ops
from gradkit.nn import functional
from gradkit.nn.module import Module


class ReLU(Module):
    """max(x, 0) elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return input.relu_() if self.inplace else ops.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x) elementwise."""
    def forward(self, input):
        return ops.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""
    def forward(self, input):
        return ops.sigmoid(input)


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate  # checked when called, as torch's

    def forward(self, input):
        return ops.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Flatten(Module):
    """Flatten dims start_dim..end_dim (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return ops.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class _SoftmaxFamily(Module):
    """Softmax-like layers: the function of ``nn.functional`` along ``dim``."""

    function_name = ""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return getattr(functional, self.function_name)(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxFamily):
    """exp(x) / sum(exp(x)) along ``dim``."""
    function_name = "softmax"


class LogSoftmax(_SoftmaxFamily):
    """log(softmax(x)) along ``dim``."""
    function_name = "log_softmax"


class Softmin(_SoftmaxFamily):
    """softmax(-x) along ``dim``."""
    function_name = "softmin"
