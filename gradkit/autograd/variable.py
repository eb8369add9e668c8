"""``Variable``: torch's legacy name for a tensor that records history.

Since torch 0.4 every Tensor is a Variable: ``Variable(t, requires_grad=True)``
returns a Tensor (a new leaf sharing ``t``'s memory and version counter), and
``isinstance(t, Variable)`` holds for every Tensor.
"""
from __future__ import annotations

import warnings

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: a detached leaf Tensor over ``data``'s memory.

    >>> v = gradkit.autograd.Variable(gradkit.ones(2), requires_grad=True)
    >>> type(v).__name__, v.is_leaf
    ('Tensor', True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Tensor:
        if data is None:
            return Tensor._make(np.zeros(0, backend.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "gradkit.no_grad():` instead.", UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        return data.detach()._set_requires_grad(requires_grad)
