"""Parameter: a leaf Tensor that a Module registers as one of its weights."""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.creation import empty


class Parameter(Tensor):
    """A Tensor that is a module's learnable weight (requires grad by default).

    Assigning a Parameter to a Module attribute registers it in ``parameters()``::

        >>> w = gradkit.nn.Parameter(gradkit.zeros(3))
        >>> w.requires_grad, w.is_leaf
        (True, True)
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        # shares memory and version counter with ``data``, like torch's Parameter
        super().__init__(data)
        self._vc = data._vc
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self._requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)
