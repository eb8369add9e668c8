"""Binary arithmetic (broadcasting like NumPy) and comparisons."""
from __future__ import annotations

import cmath
import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.ops._op import op
from gradkit.ops.complex import conj, imag, real
from gradkit.ops.conversion import astype
from gradkit.ops.elementwise import log, where, zeros_like
from gradkit.ops.methods import tensor_method
from gradkit.ops.promotion import as_dtype, promote
from gradkit.ops.unary_helpers import kernel_error, reject_complex, scalar_type_name


@op(broadcast=True, linear=True, batchable=True, method=True)
def add(xp, x, y, alpha=1):
    """x + alpha * y (broadcasting)."""
    x, y = promote(xp, x, y)
    return x + y if _is_one(alpha, x, y) else x + _alpha_times(xp, alpha, x, y)


add.defvjp(lambda g, alpha: g,
           lambda g, alpha: g if alpha == 1 else g * conj(alpha))
add.defjvp(lambda t, alpha: t,
           lambda t, alpha: t if alpha == 1 else t * alpha)


@op(broadcast=True, linear=True, batchable=True, method=True)
def sub(xp, x, y, alpha=1):
    """x - alpha * y (broadcasting); torch refuses bool operands."""
    _check_not_bool(x, y)
    x, y = promote(xp, x, y)
    return x - y if _is_one(alpha, x, y) else x - _alpha_times(xp, alpha, x, y)


def _is_one(alpha, x, y) -> bool:
    """Whether alpha * y is y. Not for complex y: torch multiplies by alpha = 1 + 0j there,
    which turns a real NaN or inf into NaN + NaN j (and we give torch's numbers)."""
    return type(alpha) is int and alpha == 1 and _result_kind(x, y) != "c"


def _alpha_times(xp, alpha, x, y):
    """alpha * y in the result's dtype, after torch's checks of alpha."""
    dtype = _array_of(x, y).dtype
    y = as_dtype(xp, y, dtype)
    if isinstance(alpha, bool) and dtype.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.kind in "biu" and not isinstance(alpha, (int, np.integer)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number.")
    if dtype.kind != "c" and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number.")
    return y * as_dtype(xp, alpha, dtype)  # a bool result takes alpha as a bool, like torch


def _check_not_bool(x, y):
    if _is_bool(x) and _is_bool(y):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(x) or _is_bool(y):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_)) or getattr(getattr(v, "dtype", None), "kind", "") == "b"


sub.defvjp(lambda g, alpha: g,
           lambda g, alpha: -g if alpha == 1 else g * -conj(alpha))
sub.defjvp(lambda t, alpha: t,
           lambda t, alpha: -t if alpha == 1 else t * -alpha)


@op(save=("x", "y"), broadcast=True, batchable=True, method=True, inplace=True)
def mul(xp, x, y):
    """x * y (broadcasting)."""
    x, y = promote(xp, x, y)
    return x * y


mul.defvjp(lambda g, x, y: g * conj(y),
           lambda g, x, y: g * conj(x))
mul.defjvp(lambda t, x, y: t * y,
           lambda t, x, y: x * t)


# saves its inputs, not its result, as torch does: the result may then be modified in place
@op(save=("x", "y"), broadcast=True, batchable=True, method=True, inplace=True)
def div(xp, x, y):
    """x / y (broadcasting; true division, so integers give floats)."""
    x, y = promote(xp, x, y, true_division=True)
    return x / y


div.defvjp(lambda g, x, y: g / conj(y),
           lambda g, x, y: -g * conj(x / y / y))
div.defjvp(lambda t, x, y: t / y,
           lambda t, x, y: -t * (x / y) / y)


@op(save=("x", "y", "result"), broadcast=True, batchable=True, method=True, inplace=True)
def pow(xp, x, y):  # noqa: A001 - torch's name
    """x ** y (broadcasting; either may be a number)."""
    number_exponent = type(y) in _NUMBERS
    x, y = promote(xp, x, y)
    kind = _result_kind(x, y)
    if kind in "biu":
        return _integer_pow(xp, x, y, number_exponent)
    out = x ** y
    if kind == "c" and not number_exponent:
        # torch's complex pow with a tensor exponent is exp(y log x): 0 ** 0 is nan there
        zero = x == 0  # x may be a number (0 ** t)
        if xp.any(zero):
            with np.errstate(all="ignore"):
                out = xp.where(zero, xp.exp(y * xp.log(as_dtype(xp, x, out.dtype))), out)
    return out


_NUMBERS = frozenset({int, float, complex, bool})


def _array_of(x, y):
    """The array among promoted operands (promote leaves at most one Python number)."""
    return y if type(x) in _NUMBERS else x


def _result_kind(x, y) -> str:
    """The dtype kind of a binary op's result, from its promoted operands."""
    return _array_of(x, y).dtype.kind


def _integer_pow(xp, x, y, number_exponent):
    """Integer powers as torch computes them: a negative tensor exponent gives 1 ** -k = 1,
    (-1) ** -k = +-1 and 0 otherwise; a negative number exponent is an error."""
    if x.dtype.kind == "b":
        x = x.astype(np.int64)  # torch: bool ** bool is integer arithmetic... in int64
        y = y.astype(np.int64)
    negative = y < 0
    if not negative.any():
        return x ** y
    if number_exponent:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    odd = (y % 2) != 0
    inverse = xp.where(x == 1, 1, xp.where(x == -1, xp.where(odd, -1, 1), 0)).astype(x.dtype)
    return xp.where(negative, inverse, x ** xp.where(negative, 0, y))


def _pow_grad_base(x, y):
    # y * x**(y-1), written so that y == 0 gives 0 even where x == 0 (torch's convention)
    return where(y == 0, 0.0, y * x ** (y - 1))


def _pow_grad_exponent(x, y, out):
    # out * log(x), taken as 0 where x == 0 and y >= 0, like torch; a real base of a complex
    # power is differentiated as the complex number it was promoted to (log(-2) is finite)
    complex_out = _array_dtype(out).kind == "c"
    if type(x) in _NUMBERS:  # a number base (2 ** t): its log is a number too
        if x == 0:  # torch: 0 where y is real and >= 0, else out * log(0)
            if _array_dtype(y).kind == "c":
                return where((imag(y) == 0) & (real(y) >= 0), 0.0, out * complex(-math.inf, 0))
            return where(y >= 0, 0.0, out * -math.inf)
        if complex_out or isinstance(x, complex):
            return out * cmath.log(x)
        return out * (math.log(x) if x > 0 else math.nan)
    if complex_out and _array_dtype(x).kind != "c":
        x = astype(x, dtype=_array_dtype(out))
    return where((x == 0) & (y >= 0), 0.0, out * log(x))


def _array_dtype(v):
    return getattr(v, "_data", v).dtype


def _pow_vjp_base(g, x, y, out):
    if type(y) in _NUMBERS and y == 0:  # torch: zeros whatever g holds, and no graph
        return zeros_like(x)
    return g * conj(_pow_grad_base(x, y))


pow.defvjp(_pow_vjp_base,
           lambda g, x, y, out: g * conj(_pow_grad_exponent(x, y, out)))
pow.defjvp(lambda t, x, y, out: conj(_pow_vjp_base(conj(t), x, y, out)),
           lambda t, x, y, out: t * _pow_grad_exponent(x, y, out))


@op(linear=True, batchable=True, method=True, inplace=True)
def neg(xp, x):
    """-x elementwise (not for bools, as torch)."""
    if x.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return -x


neg.defvjp(lambda g: -g)
neg.defjvp(lambda t: -t)


@op(method=True, inplace=True)
def floor_divide(xp, x, y):
    """floor(x / y) (broadcasting; backward refuses it, as torch's)."""
    x, y = promote(xp, x, y)
    reject_complex(_array_of(x, y), kernel_error("div_floor_cpu"))
    _check_integer_divisor(y)
    return xp.floor_divide(x, y)


def _floor_divide_has_no_vjp(g, *_):
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


def _floor_divide_has_no_jvp(t, *_):
    raise NotImplementedError("Trying to use forward AD with aten::floor_divide that does not "
                              "support it.")


# as torch: the result of floating inputs requires grad, but its node (named NotImplemented)
# refuses backward; a zero gradient would hide that floor's derivative is no gradient at all
floor_divide.defvjp(_floor_divide_has_no_vjp, _floor_divide_has_no_vjp)
floor_divide.defjvp(_floor_divide_has_no_jvp, _floor_divide_has_no_jvp)
floor_divide.node_name = "NotImplemented"


def _check_integer_divisor(y) -> None:
    """torch's error for an integer division by zero (NumPy answers 0 with a warning)."""
    if getattr(getattr(y, "dtype", None), "kind", "f") in "biu" and not y.all():
        raise RuntimeError("ZeroDivisionError")


@op(save=("x", "y"), broadcast=True, batchable=True, method=True, inplace=True)
def remainder(xp, x, y):
    """x mod y with the sign of y, as Python's % (broadcasting); a zero result keeps x's sign,
    as torch's fmod-based kernel gives it."""
    x, y = promote(xp, x, y)
    reject_complex(_array_of(x, y), kernel_error("remainder_cpu"))
    _check_integer_divisor(y)
    if _result_kind(x, y) in "biu":
        return xp.remainder(x, y)
    with np.errstate(invalid="ignore"):
        out = xp.fmod(x, y)
    return xp.where((out != 0) & ((out < 0) != (y < 0)), out + y, out)


def _remainder_grad_divisor(g, x, y):
    if type(x) in _NUMBERS:  # torch's remainder(Scalar, Tensor) has no derivative
        raise RuntimeError("derivative for aten::remainder is not implemented")
    return -g * _floor_quotient(x, y)


def _floor_quotient(x, y):
    """floor(x / y) as a constant: torch's rule uses div(rounding_mode="floor"), whose
    derivative is zero (floor_divide's node would refuse a second derivative)."""
    return floor_divide(*(a.detach() if hasattr(a, "detach") else a for a in (x, y)))


remainder.defvjp(lambda g, x, y: g, _remainder_grad_divisor)
remainder.defjvp(lambda t, x, y: t,
                 lambda t, x, y: -t * _floor_quotient(x, y))


# Comparisons and logic: boolean results, never differentiable.
@op(method=True)
def eq(xp, x, y):
    """x == y elementwise (bool, no gradient)."""
    return xp.asarray(x == y)


@op(method=True)
def ne(xp, x, y):
    """x != y elementwise (bool, no gradient)."""
    return xp.asarray(x != y)


@op(method=True)
def lt(xp, x, y):
    """x < y elementwise (bool, no gradient)."""
    return xp.asarray(x < y)


@op(method=True)
def le(xp, x, y):
    """x <= y elementwise (bool, no gradient)."""
    return xp.asarray(x <= y)


@op(method=True)
def gt(xp, x, y):
    """x > y elementwise (bool, no gradient)."""
    return xp.asarray(x > y)


@op(method=True)
def ge(xp, x, y):
    """x >= y elementwise (bool, no gradient)."""
    return xp.asarray(x >= y)


@op(method=True)
def logical_and(xp, x, y):
    """x and y elementwise, as booleans (no gradient)."""
    return xp.logical_and(x, y)


@op(method=True)
def logical_or(xp, x, y):
    """x or y elementwise, as booleans (no gradient)."""
    return xp.logical_or(x, y)


@op()
def logical_xor(xp, x, y):
    """x xor y elementwise, as booleans (no gradient)."""
    return xp.logical_xor(x, y)


@op(method=True)
def logical_not(xp, x):
    """not x elementwise, as booleans (no gradient)."""
    return xp.logical_not(x)


@op()
def bitwise_not(xp, x):
    """~x elementwise for integer and bool tensors (no gradient)."""
    if x.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return xp.invert(x)


def _bitwise(name: str, ufunc: str):
    """A bitwise op on integer and bool tensors (``&``, ``|``, ``^``), promoting like torch."""
    def forward(xp, x, y):
        x, y = promote(xp, x, y)
        if _result_kind(x, y) not in "biu":
            raise kernel_error(f"{name}_cpu")(_array_of(x, y))
        return getattr(xp, ufunc)(x, y)
    forward.__name__ = name
    forward.__doc__ = f"x {ufunc.split('_')[1]} y bit by bit, for integer and bool tensors."
    return op(broadcast=True, method=True, inplace=True)(forward)


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")


@op(method=True)
def isnan(xp, x):
    """True where x is NaN (no gradient)."""
    return xp.isnan(x)


@op(method=True)
def isinf(xp, x):
    """True where x is +-inf (no gradient)."""
    return xp.isinf(x)


@op(method=True)
def isfinite(xp, x):
    """True where x is neither NaN nor +-inf (no gradient)."""
    return xp.isfinite(x)


@op(broadcast=True, method=True)  # broadcast: NumPy's broadcast error in torch's words
def isclose(xp, x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|x - y| <= atol + rtol * |y| elementwise (bool, no gradient); same dtypes, as torch."""
    x_dtype, y_dtype = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if x_dtype is not None and y_dtype is not None and x_dtype != y_dtype:
        raise RuntimeError(f"{scalar_type_name(x)} did not match {scalar_type_name(y)}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value:g}")
    return xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


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
