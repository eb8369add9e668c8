"""More activation layers (``nn.ELU()``, ``nn.PReLU(3)``, ...): each calls its nn.functional
function with the settings it was built with, and prints them as torch's do."""
from __future__ import annotations

import warnings

from gradkit import creation
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn import init as nn_init
from gradkit.nn.function_layer import FunctionLayer
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter


class _InplaceOnly(FunctionLayer):
    """An activation whose only setting is ``inplace``."""

    settings = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class _Alpha(FunctionLayer):
    settings = ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class ELU(_Alpha):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    function = staticmethod(F.elu)


class CELU(_Alpha):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    function = staticmethod(F.celu)


class SELU(_InplaceOnly):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    function = staticmethod(F.selu)


class SiLU(_InplaceOnly):
    """x * sigmoid(x)."""
    function = staticmethod(F.silu)


class Mish(_InplaceOnly):
    """x * tanh(softplus(x))."""
    function = staticmethod(F.mish)


class Hardsigmoid(_InplaceOnly):
    """relu6(x + 3) / 6 (torch prints no settings)."""
    function = staticmethod(F.hardsigmoid)

    def extra_repr(self) -> str:
        return ""


class Hardswish(Hardsigmoid):
    """x * relu6(x + 3) / 6 (torch prints no settings)."""
    function = staticmethod(F.hardswish)


class LogSigmoid(FunctionLayer):
    """log(sigmoid(x))."""
    function = staticmethod(F.logsigmoid)


class Softsign(FunctionLayer):
    """x / (1 + |x|)."""
    function = staticmethod(F.softsign)


class Tanhshrink(FunctionLayer):
    """x - tanh(x)."""
    function = staticmethod(F.tanhshrink)


class Hardtanh(FunctionLayer):
    """x clipped to [min_val, max_val]."""

    function = staticmethod(F.hardtanh)
    settings = ("min_val", "max_val", "inplace")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        for old, new, value in (("min_value", "min_val", min_value),
                                ("max_value", "max_val", max_value)):
            if value is not None:  # torch's deprecated spellings, still accepted
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to `{new}`",
                              FutureWarning, stacklevel=2)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(FunctionLayer):
    """x if x > 0 else negative_slope * x."""

    function = staticmethod(F.leaky_relu)
    settings = ("negative_slope", "inplace")

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace


class Softplus(FunctionLayer):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold``."""

    function = staticmethod(F.softplus)
    settings = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold


class Threshold(FunctionLayer):
    """``value`` where x <= threshold, x elsewhere."""

    function = staticmethod(F.threshold)
    settings = ("threshold", "value", "inplace")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace


class GLU(FunctionLayer):
    """a * sigmoid(b), a and b the halves of x along ``dim``."""

    function = staticmethod(F.glu)
    settings = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim


class _Shrink(FunctionLayer):
    settings = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    """x -/+ lambd outside [-lambd, lambd], 0 inside."""
    function = staticmethod(F.softshrink)


class Hardshrink(_Shrink):
    """x outside [-lambd, lambd], 0 inside."""
    function = staticmethod(F.hardshrink)


class RReLU(FunctionLayer):
    """Leaky relu with a random slope in [lower, upper) per element while training, their
    mean in eval mode (gradkit's generator draws the slopes, not torch's)."""

    settings = ("lower", "upper", "inplace")

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)


class PReLU(Module):
    """max(0, x) + weight * min(0, x) with a learned weight (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight back to ``init``."""
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
