"""torch's Scalar overloads of mul and div, as its C++ derivative formulas and composites call
them (``grad * alpha`` is mul.Scalar: a ``MulBackward1`` node with no edge for the number,
its ``_saved_other`` the number, readable after backward); a Python ``x * 0.5`` stays torch's
mul.Tensor of a wrapped number (MulBackward0)."""
from __future__ import annotations

import copy

from gradkit.ops._op import Op
from gradkit.ops.arithmetic import div, mul


def scalar_overload(declared: Op, node_name: str) -> Op:
    """``declared`` (its forward and rules) recording ``node_name`` nodes, without the edge
    and the wrapped tensor torch's Tensor overload makes of a number."""
    twin = copy.copy(declared)
    twin.node_name = node_name
    twin.number_edges = False
    return twin


mul_scalar = scalar_overload(mul, "MulBackward1")
div_scalar = scalar_overload(div, "DivBackward1")
