"""mse_loss's backward as an op of its own, as torch's ``mse_loss_backward`` (its node
``MseLossBackwardBackward0``): its value is torch's kernel, ``norm * (x - y) * g``, and its own
formulas give the second derivatives torch's double backward gives, ``2 * (gg * g) / numel``
(the composite's would be ``(gg * g) * (2 / numel)``, an ulp apart at times)."""
from __future__ import annotations

import math

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.promotion import promote_types


@op(save=("g", "x", "y"), broadcast=True, batchable=True, node_name="MseLossBackwardBackward0")
def mse_backward(xp, g, x, y, reduction="mean"):
    """torch's mse_loss_backward(g, x, y): 2 (x - y) g, over the count for a mean, in the
    operands' promoted dtype (a bool one too: the kernel computes in it)."""
    dtype = promote_types(x.dtype, y.dtype)
    diff = x.astype(dtype, copy=False) - y.astype(dtype, copy=False)
    return diff * _norm(diff.size, reduction) * g


def _norm(count: int, reduction: str) -> float:
    return 2.0 / max(count, 1) if reduction == "mean" else 2.0


def _double_backward(gg, g, x, y, reduction):
    """torch's mse_loss_double_backward(gg * g, x): 2 (gg g), divided by the count for a mean
    (an in-place division of torch's): of the broadcast operands, as torch's functional
    expands them first (breadth seed 1761764: a target of one element divided by 1)."""
    grad = 2 * (gg * g)
    if reduction != "mean":
        return grad
    return grad / max(math.prod(np.broadcast_shapes(tuple(x.shape), tuple(y.shape))), 1)


def _mse_backward_vjp(gg, g, x, y, reduction, needs):
    # torch's formulas by name: grad_output, self, target
    return (mse_backward(gg, x, y, reduction=reduction) if needs[0] else None,
            _double_backward(gg, g, x, y, reduction) if needs[1] else None,
            -_double_backward(gg, g, x, y, reduction) if needs[2] else None)


mse_backward.defvjp_all(_mse_backward_vjp, needs=True)
mse_backward.defjvp(lambda t, g, x, y, reduction: mse_backward(t, x, y, reduction=reduction),
                    lambda t, g, x, y, reduction: _double_backward(t, g, x, y, reduction),
                    lambda t, g, x, y, reduction: -_double_backward(t, g, x, y, reduction))


def mse_tangent(tangents, x, y):
    """torch's forward formula of mse_loss before its reduction, mse_loss_backward(t_x, x, y)
    + mse_loss_backward(t_y, y, x), a missing tangent as zeros: an infinite x - y gives 0 *
    inf = NaN from the operand without one (torch's wart, kept), and that zero's sign counts."""
    tx, ty = (zeros_like(a) if t is None else t for t, a in zip(tangents, (x, y)))
    return mse_backward(tx, x, y, reduction="none") + mse_backward(ty, y, x, reduction="none")
