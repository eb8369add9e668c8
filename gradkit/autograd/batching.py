"""Vectorized ``is_grads_batched``: one backward pass whose gradients lead with a batch dim.

A batched ``grad`` asks for many vjps of one graph at once (the rows of the seed).
When every node that runs is an op declared ``batchable`` (its vjp rules broadcast
over a leading batch dimension), one backward pass on the stacked seeds gives all
rows together; autograd.grad (api._batched_grad) falls back to one pass per row
otherwise. While such a pass runs, ``state.size`` is the batch size on this thread:
``sum_to_shape`` keeps that leading dim, and rules that reshape a gradient prefix
:func:`batch_shape` to the shape they ask for.
"""
from __future__ import annotations

import threading

from gradkit.autograd.graph import AccumulateGrad


class _State(threading.local):
    size = 0  # the batch size while a vectorized batched backward runs on this thread, else 0


state = _State()


def batch_shape() -> tuple:
    """``(batch,)`` inside a vectorized batched backward, ``()`` otherwise.

    >>> reshape(g, batch_shape() + x_shape)   # a vjp rule, batched or not
    """
    return (state.size,) if state.size else ()


def batch_dim(dim: int) -> int:
    """The axis ``dim`` of an unbatched gradient, in a gradient that may lead with a batch dim.

    >>> squeeze(g, batch_dim(dim))   # a vjp rule, batched or not
    """
    return dim + 1 if state.size and dim >= 0 else dim


def vectorizable(running_nodes) -> bool:
    """Whether every node of a backward pass can run on batched gradients.

    Custom Functions, ops not declared ``batchable`` and nodes or leaves with hooks
    (which would see batched gradients) need one pass per row.
    """
    for node in running_nodes:
        if type(node) is AccumulateGrad:
            if getattr(node.variable, "_hooks", None):
                return False
            continue
        if not getattr(node.op, "batchable", False) or _has_hooks(node):
            return False
    return True


def _has_hooks(node) -> bool:
    extras = node._extras
    return extras is not None and bool(extras.tensor_pre_hooks or extras.retain_grad_hooks
                                       or extras.pre_hooks or extras.post_hooks)


class batched:  # noqa: N801 - used like a function
    """Run the enclosed backward pass with gradients of leading batch dim ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __enter__(self) -> None:
        self.previous = state.size
        state.size = self.size

    def __exit__(self, *exc) -> None:
        state.size = self.previous
