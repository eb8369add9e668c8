"""torch's ``div(x, y, rounding_mode=None | "trunc" | "floor")`` (div.Tensor_mode): the
quotient true, rounded toward zero or rounded down. Its node is ``DivBackward2`` (saving
``self``, ``other`` and ``rounding_mode``), whatever the mode; the rounded quotients have zero
gradients, as torch's (a step function's derivative), and integer operands stay integers."""
from __future__ import annotations

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.arithmetic import _argument_kinds, _check_divisor, _floor_divide, div
from gradkit.ops.half_scalar import half_with_scalar, in_float32
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.promotion import promote, result_kind

_MODES = (None, "trunc", "floor")


def _trunc_divide(xp, x, y):
    """x / y rounded toward zero: C's integer division for integers, trunc(x / y) for floats
    (torch's div_trunc kernels; float16 by a scalar: in float32, as ops/half_scalar.py)."""
    if half_with_scalar(x, y):
        return in_float32(lambda a, b: np.trunc(a / b), x, y)
    x, y = promote(xp, x, y)
    _check_divisor(x, y, "div_trunc_cpu")
    if result_kind(x, y) not in "biu":
        with np.errstate(all="ignore"):
            return xp.trunc(x / y)
    quotient = xp.floor_divide(x, y)  # rounded down: one more toward zero where inexact
    inexact = (quotient * y != x) & ((x < 0) != (y < 0))
    return xp.where(inexact, quotient + 1, quotient).astype(quotient.dtype, copy=False)


def _divide_with_mode(x, y, *, rounding_mode, **kwargs):
    """``div(x, y, rounding_mode=...)``: torch's checks of the mode, then the op."""
    if rounding_mode is not None and not isinstance(rounding_mode, str):
        raise TypeError(f"div() received an invalid combination of arguments - got "
                        f"({', '.join(_argument_kinds((x, y)))}, rounding_mode="
                        f"{type(rounding_mode).__name__})")
    if rounding_mode not in _MODES:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    return div_rounding(x, y, rounding_mode=rounding_mode, **kwargs)


@op(name="div", save=("x", "y"), broadcast=True, node_name="DivBackward2")
def div_rounding(xp, x, y, *, rounding_mode):
    """x / y with ``rounding_mode`` None (true division), "trunc" or "floor"."""
    if rounding_mode is None:
        return div.forward(xp, x, y)
    if rounding_mode == "trunc":
        return _trunc_divide(xp, x, y)
    with np.errstate(all="ignore"):  # floats: x / 0 is +-inf or NaN, as torch's
        return _floor_divide(xp, x, y)


def _rounded(rule):
    """A derivative rule of div: the true quotient's, zeros for a rounded one."""
    def mode_rule(g, x, y, rounding_mode):
        return rule(g, x, y) if rounding_mode is None else zeros_like(g)
    return mode_rule


div_rounding.defvjp(*map(_rounded, div.vjps))
# torch's div.Tensor_mode tangent is two quotients, t_x / y - t_y (x / y) / y, not div's one
div_rounding.defjvp(*map(_rounded, (lambda t, x, y: t / y, lambda t, x, y: -t * (x / y) / y)))
# the rules read what div's read (torch's formula is the same for every mode): self is saved
# only for other's gradient, other only for self's
div_rounding.saves_read = div.saves_read
div_rounding.vjp_order = div.vjp_order
div_rounding.number_edges = True  # a Python number operand is a wrapped tensor, as div's
div.with_rounding_mode = _divide_with_mode
