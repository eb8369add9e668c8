"""float() / int() / complex() of a one-element tensor, with torch's errors and warning.

A layer above the Tensor core (``_tensor.py``), imported by ``gradkit/__init__.py``.
"""
from __future__ import annotations

import warnings

from gradkit._tensor import extend

_REQUIRES_GRAD_WARNING = ("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.")
_warned = [False]  # torch warns once per process (TORCH_WARN_ONCE)


class _PythonNumbers:
    def _python_number(self, c_type: str):
        """The one element, for float()/int()/complex(), with torch's errors (never the real
        part of a complex number silently)."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if isinstance(value, complex) and c_type != "complex":
            if value.imag != 0:
                raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
            value = value.real
        return value

    def _warn_once_if_requires_grad(self) -> None:
        if self._requires_grad and not _warned[0]:  # float(), complex(): int(), item() are silent
            _warned[0] = True
            warnings.warn(_REQUIRES_GRAD_WARNING, UserWarning, stacklevel=3)

    def __float__(self) -> float:
        self._warn_once_if_requires_grad()
        return float(self._python_number("double"))

    def __int__(self) -> int:
        return int(self._python_number("int64_t"))

    def __complex__(self) -> complex:
        self._warn_once_if_requires_grad()
        return complex(self._python_number("complex"))


extend(_PythonNumbers)
