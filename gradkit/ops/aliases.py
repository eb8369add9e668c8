"""torch's other names for ops gradkit has (``swapdims`` for transpose, ``Tensor.greater`` for
gt, ...), and ``adjoint`` (the conjugate transpose of the last two dims, a view)."""
from __future__ import annotations

import warnings

from gradkit._tensor import Tensor
from gradkit.int_arguments import invalid_combination
from gradkit.ops.arithmetic import div, mul, neg, sub
from gradkit.ops.comparison import bitwise_not, ge, gt, le, logical_xor, lt, ne
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import acos, asin, atan
from gradkit.ops.joining import split
from gradkit.ops.linalg import outer, vdot
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.piecewise import abs, trunc
from gradkit.ops.shape import transpose


@tensor_method()
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims of x (a view); a 0-d x conjugated, with
    torch's deprecation warning."""
    if input.ndim == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return conj(input)
    if input.ndim == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got 1-D tensor.")
    return conj(transpose(input, -2, -1))


@tensor_method()
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose(x, dim0, dim1)`` under numpy's other name (a view)."""
    return transpose(input, dim0, dim1)


@tensor_method()
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose(x, axis0, axis1)`` under numpy's name and argument names (a view)."""
    return transpose(input, axis0, axis1)


@tensor_method()
def split_with_sizes(input: Tensor, split_sizes, dim: int = 0):
    """``split(x, split_sizes, dim)`` for a sequence of sizes only (torch's TypeError for an
    int)."""
    if not isinstance(input, Tensor):
        raise TypeError("split_with_sizes(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                        f"of ints, not {type(split_sizes).__name__}")
    return split(input, split_sizes, dim)


def true_divide(x, other, **keywords):
    """``div(x, other)`` under torch's older name, which has no ``rounding_mode`` (torch's
    TypeError for it, or any other keyword)."""
    if keywords:
        raise TypeError("true_divide() got an unexpected keyword argument "
                        f"'{next(iter(keywords))}'")
    return div(x, other)


def _true_divide_method(name: str):
    """``x.true_divide(other)`` (``name`` ``true_divide_``: its in-place form) refusing any
    keyword but ``other`` (or NumPy's ``x2``) with torch's listing of the arguments."""
    def method(x, *args, **keywords):
        if set(keywords) - {"other", "x2"} or len(args) + len(keywords) != 1:
            raise invalid_combination(name, args, keywords)
        return div(x, *args, *keywords.values())
    method.__name__ = name
    method.broadcast = div.broadcast  # in place, torch's output checks come first, as div_'s
    return method


register(_true_divide_method("true_divide"), "true_divide", True)
register(_true_divide_method("true_divide_"), "true_divide", False, inplace=True)


def subtract(input, other, *args, **kwargs) -> Tensor:  # noqa: A002 - torch's names
    """torch.subtract: ``sub`` without its deprecated (Number alpha, Tensor other) form; with
    a number ``other`` its alpha may come positionally (torch's Scalar signature)."""
    if len(args) == 1 and not isinstance(other, Tensor) and "alpha" not in kwargs:
        return sub(input, other, alpha=args[0], **kwargs)
    if args:
        raise invalid_combination("subtract", (input, other, *args), kwargs)
    return sub(input, other, **kwargs)


# Tensor methods torch has under a second name, with the same op behind them (and the
# in-place form where gradkit has the original's)
_METHOD_ALIASES = {
    "absolute": (abs, True), "arccos": (acos, False), "arcsin": (asin, False),
    "arctan": (atan, False), "divide": (div, True),
    "multiply": (mul, True), "subtract": (sub, True), "negative": (neg, True),
    "fix": (trunc, True), "greater": (gt, False),
    "greater_equal": (ge, False), "less": (lt, False), "less_equal": (le, False),
    "not_equal": (ne, False), "logical_xor": (logical_xor, False),
    "bitwise_not": (bitwise_not, False), "vdot": (vdot, False), "ger": (outer, False),
}
for _name, (_op, _inplace) in _METHOD_ALIASES.items():
    register(_op, _name, True, _inplace)
