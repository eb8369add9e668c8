"""torch.nn's legacy classes, kept for old code: Container (a Module holding its keyword
arguments) and NLLLoss2d (NLLLoss), each warning as torch's on creation, and CrossMapLRN2d
(torch's legacy local response norm, with its quirks: functions_lrn.py)."""
from __future__ import annotations

import warnings

from gradkit.nn import functions_lrn
from gradkit.nn.loss import NLLLoss
from gradkit.nn.module import Module


def _deprecated(message: str):
    """Class decorator, as torch's ``@deprecated``: a FutureWarning (at the caller) for each
    instance of the class itself and for each subclass statement."""
    def decorate(cls: type) -> type:
        def new(klass, *args, **kwargs):
            if klass is cls:
                warnings.warn(message, FutureWarning, stacklevel=2)
            return object.__new__(klass)

        def init_subclass(klass, **kwargs) -> None:
            warnings.warn(message, FutureWarning, stacklevel=2)
            super(cls, klass).__init_subclass__(**kwargs)
        cls.__new__ = new
        cls.__init_subclass__ = classmethod(init_subclass)
        return cls
    return decorate


@_deprecated("`nn.Container` is deprecated. All of its functionality is now implemented in "
             "`nn.Module`. Subclass that instead.")
class Container(Module):
    """Deprecated in torch for Module: ``Container(name=module, ...)`` adds each module."""

    def __init__(self, **kwargs) -> None:
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


@_deprecated("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
             "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for "
             "more details.")
class NLLLoss2d(NLLLoss):
    """Deprecated in torch: NLLLoss under its old name."""


class CrossMapLRN2d(Module):
    """``CrossMapLRN2d(size, alpha=1e-4, beta=0.75, k=1)`` over (N, C, H, W): torch's legacy
    cross-channel normalization (its values and its backward formula, see functions_lrn.py)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return functions_lrn.CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
