"""The node of a custom Function. torch's ctx *is* its node, so ``y.grad_fn`` reads and
writes the ctx's fields: ``y.grad_fn.scale = 2`` before backward is seen there as
``ctx.scale``. gradkit keeps the ctx apart (``node.params``) and forwards to it."""
from __future__ import annotations

import sys

from gradkit.autograd.graph import Node, not_writable

# the node's own fields (the engine writes them) and torch's attributes that refuse a write
_SLOTS = frozenset(Node.__slots__)
_NOT_WRITABLE = frozenset(("next_functions", "metadata", "saved_tensors", "saved_variables",
                           "_raw_saved_tensors", "requires_grad", "_input_metadata"))


class FunctionNode(Node):
    """The node of a custom Function: shows (and takes) its ctx's fields, as torch's do."""

    __slots__ = ()

    def name(self) -> str:
        """The Function's class name + ``Backward``, as torch."""
        return self.op.node_name

    def __getattr__(self, name: str):
        """``grad_fn.saved_tensors`` and other ctx fields (only names that are not slots)."""
        if name.startswith("__") or name == "op":
            raise AttributeError(name)
        try:
            return self.op.node_attribute(self, name)
        except AttributeError:  # named as the node, as torch's (the ctx is its node)
            raise _no_attribute(self, name) from None

    def __setattr__(self, name: str, value) -> None:
        if name in _NOT_WRITABLE:
            raise not_writable(self, name)
        if name in _SLOTS or hasattr(type(self), name):  # (a method: Python's read-only error)
            object.__setattr__(self, name, value)
        else:
            setattr(self.params, name, value)

    def __delattr__(self, name: str) -> None:
        if name in _NOT_WRITABLE:
            raise not_writable(self, name)
        if name in _SLOTS or hasattr(type(self), name):
            object.__delattr__(self, name)
        elif name in vars(self.params):
            delattr(self.params, name)
        else:
            raise _no_attribute(self, name)


def _no_attribute(node: FunctionNode, name: str) -> AttributeError:
    return AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")


def keep_if_stashed(node: FunctionNode) -> None:
    """A node dying while its ctx lives on elsewhere (stashed by the user) stays alive through
    that ctx, as torch's ctx is its node: ``ctx.saved_tensors`` keeps working."""
    ctx = node.params
    # references: node.params, this local and getrefcount's argument
    if hasattr(ctx, "_kept_node") and node.saved is not None and sys.getrefcount(ctx) > 3:
        ctx._kept_node = node
