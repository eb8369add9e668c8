"""Comparisons, logic, bitwise ops and float tests: boolean or integer results, never
differentiable (eq, lt, logical_and, bitwise_xor, isnan, isclose, allclose, ...)."""
from __future__ import annotations

import operator

import numpy as np

from gradkit.number_arguments import numbers_reader
from gradkit._tensor import Tensor
from gradkit.ops._op import op
from gradkit.ops.methods import tensor_method
from gradkit.ops.promotion import PY_SCALARS, array_of, promote, result_kind, result_type
from gradkit.ops.unary_helpers import (
    cpp_number, invalid_combination, kernel_error, require_tensors, scalar_type_name)


def _comparison(name: str, symbol: str, compare, ordered: bool):
    """A comparison in the operands' promoted dtype (uint8 < -2 compares with 254, as torch);
    ``ordered`` ones have no complex kernel in torch."""
    def forward(xp, x, y):
        if type(x) in PY_SCALARS:  # torch.eq(2, t); 2 == t is t == 2
            raise invalid_combination(name, x, y)
        if y is None or type(y) in _NOT_OPERANDS:  # NumPy would compare (dispatch words it)
            raise TypeError(f"{name}(): other is neither a tensor nor a number")
        if _promotable(x) and _promotable(y):  # not e.g. None, or another library's tensor
            x, y = promote(xp, x, y)
            if ordered and result_kind(x, y) == "c":
                raise kernel_error(f"{name}_cpu")(array_of(x, y))
        return xp.asarray(compare(x, y))
    forward.__name__ = name
    forward.__doc__ = f"x {symbol} y elementwise (bool, no gradient)."
    return op(broadcast=True, method=True, elementwise=True)(forward)  # broadcast: torch's
    # shape error


_NOT_OPERANDS = frozenset((tuple, list, str))


def _promotable(v) -> bool:
    return type(v) in PY_SCALARS or isinstance(getattr(v, "dtype", None), np.dtype)


eq = _comparison("eq", "==", operator.eq, ordered=False)
ne = _comparison("ne", "!=", operator.ne, ordered=False)
lt = _comparison("lt", "<", operator.lt, ordered=True)
le = _comparison("le", "<=", operator.le, ordered=True)
gt = _comparison("gt", ">", operator.gt, ordered=True)
ge = _comparison("ge", ">=", operator.ge, ordered=True)


def _tensors_that_promote(name: str, x, y) -> None:
    """torch's logical ops take two tensors, whose dtypes must promote together (uint16 with
    bool does not), though the result is bool whatever they are."""
    require_tensors(name, x, y)
    result_type(x, y)


@op(broadcast=True, elementwise=True, method=True)
def logical_and(xp, x, y):
    """x and y elementwise, as booleans (no gradient)."""
    _tensors_that_promote("logical_and", x, y)
    return xp.logical_and(x, y)


@op(broadcast=True, elementwise=True, method=True)
def logical_or(xp, x, y):
    """x or y elementwise, as booleans (no gradient)."""
    _tensors_that_promote("logical_or", x, y)
    return xp.logical_or(x, y)


@op(broadcast=True, elementwise=True)
def logical_xor(xp, x, y):
    """x xor y elementwise, as booleans (no gradient)."""
    _tensors_that_promote("logical_xor", x, y)
    return xp.logical_xor(x, y)


@op(method=True)
def logical_not(xp, x):
    """not x elementwise, as booleans (no gradient)."""
    return xp.logical_not(x)


@op()
def bitwise_not(xp, x):
    """~x elementwise for integer and bool tensors (no gradient)."""
    if x.dtype.kind not in "biu":  # ``~x`` raises its TypeError before it gets here
        raise kernel_error("bitwise_not_cpu")(x)
    return xp.invert(x)


def _bitwise(name: str, ufunc: str):
    """A bitwise op on integer and bool tensors (``&``, ``|``, ``^``), promoting like torch."""
    def forward(xp, x, y):
        x, y = promote(xp, x, y)
        if result_kind(x, y) not in "biu":
            raise kernel_error(f"{name}_cpu")(array_of(x, y))
        return getattr(xp, ufunc)(x, y)
    forward.__name__ = name
    forward.__doc__ = f"x {ufunc.split('_')[1]} y bit by bit, for integer and bool tensors."
    return op(broadcast=True, method=True, inplace=True, elementwise=True)(forward)


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")


def _shift(name: str, kernel: str, left: bool):
    """``<<`` or ``>>`` on integer tensors, as torch's kernels: a shift by a negative count or
    by the width or more gives 0 (left) or the sign fill (right), not C's undefined result."""
    def forward(xp, x, y):
        x, y = promote(xp, x, y)
        if result_kind(x, y) not in "iu":
            raise kernel_error(kernel)(array_of(x, y))
        x, y = xp.asarray(x), xp.asarray(y)
        bits = x.dtype.itemsize * 8
        outside = (y < 0) | (y >= bits)
        count = xp.where(outside, 0, y).astype(x.dtype)
        fill = 0 if left else xp.where(x < 0, -1, 0)  # right: the sign fill
        shifted = x << count if left else x >> count
        return xp.where(outside, fill, shifted).astype(x.dtype)
    forward.__name__ = name
    forward.__doc__ = f"x {'<<' if left else '>>'} y for integer tensors (as torch)."
    return op(broadcast=True, method=True, inplace=True, elementwise=True)(forward)


bitwise_left_shift = _shift("bitwise_left_shift", "lshift_cpu", left=True)
bitwise_right_shift = _shift("bitwise_right_shift", "rshift_cpu", left=False)


@op(method=True)
def isnan(xp, x):
    """True where x is NaN (no gradient)."""
    require_tensors("isnan", x)  # not NumPy's answer for a Python number
    return xp.isnan(x)


@op(method=True)
def isinf(xp, x):
    """True where x is +-inf (no gradient)."""
    require_tensors("isinf", x)  # not NumPy's answer for a Python number
    return xp.isinf(x)


@op(method=True)
def isfinite(xp, x):
    """True where x is neither NaN nor +-inf (no gradient)."""
    require_tensors("isfinite", x)  # not NumPy's answer for a Python number
    return xp.isfinite(x)


@op(broadcast=True, method=True, elementwise=True)  # broadcast: NumPy's error in torch's words
def isclose(xp, x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|x - y| <= atol + rtol * |y| elementwise (bool, no gradient); same dtypes, as torch."""
    for name, value, position in (("input", x, 1), ("other", y, 2)):
        if type(value) in PY_SCALARS or value is None or type(value) in (tuple, list):
            # (torch has no Scalar overload)
            raise TypeError(f"isclose(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    x_dtype, y_dtype = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if x_dtype is not None and y_dtype is not None and x_dtype != y_dtype:
        raise RuntimeError(f"{scalar_type_name(x)} did not match {scalar_type_name(y)}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not value >= 0:  # NaN too, as torch
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got "
                               f"{cpp_number(float(value))}")
    return xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


isclose.numbers = numbers_reader("isclose", rtol=(3, "float"), atol=(4, "float"))


@tensor_method()
def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """True when ``isclose(input, other)`` holds everywhere (NaNs equal only with equal_nan).

    >>> gradkit.allclose(gradkit.tensor([1.0]), gradkit.tensor([1.0 + 1e-7]))
    True
    """
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"allclose(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    return bool(isclose(input, other, rtol, atol, equal_nan).all())
