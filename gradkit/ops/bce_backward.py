"""torch's binary_cross_entropy_backward as an op of its own, so that its derivatives are
torch's formulas (FunctionsManual's binary_cross_entropy_double_backward*), not the derivatives
of its clamped quotient: those differ where x (1 - x) is below the clamp (x at or near 0 or 1,
where torch's second derivative is t / eps² and a differentiated clamp's is 1 / eps)."""
from __future__ import annotations

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.clamp import clamp

# the kernel's floor on (1 - x) x: torch's EPSILON is a float, 1e-12 rounded to float32
KERNEL_EPSILON = float(np.float32(1e-12))
_EPS = 1e-12  # the double backward formulas' (a double)


@op(save=("g", "x", "target"), broadcast=True, batchable=True,
    node_name="BinaryCrossEntropyBackwardBackward0")
def bce_input_grad(xp, g, x, target):
    """torch's kernel, element by element: g (x - t) / max((1 - x) x, EPSILON)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return g * (x - target) / xp.maximum((1 - x) * x, x.dtype.type(KERNEL_EPSILON))


def _by_grad_output(x, target):
    return (x - target) / ((x + _EPS) * (1 - x + _EPS))


def _by_input(x, target):
    return (x * x - 2 * x * target + target) / ((x + _EPS) ** 2 * (1 - x + _EPS) ** 2)


def _by_target(x):
    spread = (1 - x) * x  # (NumPy's product of 0-d arrays is a scalar, which clamp refuses)
    return -1 / clamp(np.asarray(spread) if isinstance(spread, np.generic) else spread, min=_EPS)


bce_input_grad.defvjp(lambda gg, g, x, target: _by_grad_output(x, target) * gg,
                      lambda gg, g, x, target: _by_input(x, target) * (gg * g),
                      lambda gg, g, x, target: (gg * g) * _by_target(x))


def _jvp(tangents, g, x, target):
    """torch's formula for the backward's forward derivative: the three rules above."""
    t_g, t_x, t_target = tangents
    parts = [] if t_g is None else [_by_grad_output(x, target) * t_g]
    if t_x is not None:
        parts.append(_by_input(x, target) * (t_x * g))
    if t_target is not None:
        parts.append((t_target * g) * _by_target(x))
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


bce_input_grad.defjvp_all(_jvp)
