"""Views a write made unusable for autograd: torch's views that refuse in-place writes (split
outputs, views made under no_grad) regenerate their history lazily, and that raises."""
from __future__ import annotations

from gradkit._tensor import Tensor


class StaleView(Tensor):
    """A view whose ``grad_fn`` (read by any recorded op, or backward) raises torch's error."""
    __slots__ = ()

    @property
    def grad_fn(self):
        raise RuntimeError(self._view.refusal(indirect=True))

    @grad_fn.setter
    def grad_fn(self, value):
        raise RuntimeError(self._view.refusal(indirect=True))


def make_stale(view: Tensor, info) -> None:
    """``view`` (of ViewInfo ``info``), which refuses in-place writes, was written elsewhere or
    by a write autograd did not record (no_grad, ``logical_and_``): torch regenerates, and so
    refuses, a view with a history or a base that requires grad only (a leaf view that
    requires grad of its own keeps grad_fn None)."""
    if type(view) is not StaleView and (view.grad_fn is not None or info.base._requires_grad):
        view.__class__ = StaleView
        view._requires_grad = True  # as torch's view of a base that requires grad
