"""Binary arithmetic (broadcasting like NumPy) and comparisons."""
from __future__ import annotations

from gradkit.ops import _op
from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import log, where
from gradkit.ops.unary_helpers import promote, scalar_type_name


@op(broadcast=True, linear=True, batchable=True)
def add(xp, x, y, alpha=1):
    """x + alpha * y (broadcasting)."""
    x, y = promote(xp, x, y)
    return x + y if alpha == 1 else x + alpha * y


add.defvjp(lambda g, alpha: g,
           lambda g, alpha: g if alpha == 1 else g * conj(alpha))
add.defjvp(lambda t, alpha: t,
           lambda t, alpha: t if alpha == 1 else t * alpha)


@op(broadcast=True, linear=True, batchable=True)
def sub(xp, x, y, alpha=1):
    """x - alpha * y (broadcasting)."""
    x, y = promote(xp, x, y)
    return x - y if alpha == 1 else x - alpha * y


sub.defvjp(lambda g, alpha: g,
           lambda g, alpha: -g if alpha == 1 else g * -conj(alpha))
sub.defjvp(lambda t, alpha: t,
           lambda t, alpha: -t if alpha == 1 else t * -alpha)


@op(save=("x", "y"), broadcast=True, batchable=True)
def mul(xp, x, y):
    """x * y (broadcasting)."""
    x, y = promote(xp, x, y)
    return x * y


mul.defvjp(lambda g, x, y: g * conj(y),
           lambda g, x, y: g * conj(x))
mul.defjvp(lambda t, x, y: t * y,
           lambda t, x, y: x * t)


# saves its inputs, not its result, as torch does: the result may then be modified in place
@op(save=("x", "y"), broadcast=True, batchable=True)
def div(xp, x, y):
    """x / y (broadcasting; true division, so integers give floats)."""
    x, y = promote(xp, x, y, true_division=True)
    return x / y


div.defvjp(lambda g, x, y: g / conj(y),
           lambda g, x, y: -g * conj(x / y / y))
div.defjvp(lambda t, x, y: t / y,
           lambda t, x, y: -t * (x / y) / y)


@op(save=("x", "y", "result"), broadcast=True, batchable=True)
def pow(xp, x, y):  # noqa: A001 - torch's name
    """x ** y (broadcasting; either may be a number)."""
    x, y = promote(xp, x, y)
    try:
        return x ** y
    except ValueError as e:  # NumPy: integers to negative integer powers; torch's type
        raise RuntimeError(str(e)) from None


def _pow_grad_base(x, y):
    # y * x**(y-1), written so that y == 0 gives 0 even where x == 0 (torch's convention)
    return where(y == 0, 0.0, y * x ** (y - 1))


def _pow_grad_exponent(x, y, out):
    # out * log(x), taken as 0 where x == 0 and y >= 0, like torch
    return where((x == 0) & (y >= 0), 0.0, out * log(x))


pow.defvjp(lambda g, x, y, out: g * conj(_pow_grad_base(x, y)),
           lambda g, x, y, out: g * conj(_pow_grad_exponent(x, y, out)))
pow.defjvp(lambda t, x, y, out: t * _pow_grad_base(x, y),
           lambda t, x, y, out: t * _pow_grad_exponent(x, y, out))


@op(linear=True, batchable=True)
def neg(xp, x):
    """-x elementwise."""
    return -x


neg.defvjp(lambda g: -g)
neg.defjvp(lambda t: -t)


@op()
def floor_divide(xp, x, y):
    """floor(x / y) (broadcasting; no gradient)."""
    x, y = promote(xp, x, y)
    return xp.floor_divide(x, y)


@op(save=("x", "y"), broadcast=True, batchable=True)
def remainder(xp, x, y):
    """x mod y with the sign of y, as Python's % (broadcasting)."""
    x, y = promote(xp, x, y)
    return xp.remainder(x, y)


remainder.defvjp(lambda g, x, y: g,
                 lambda g, x, y: -g * floor_divide(x, y))
remainder.defjvp(lambda t, x, y: t,
                 lambda t, x, y: -t * floor_divide(x, y))


# Comparisons and logic: boolean results, never differentiable.
@op()
def eq(xp, x, y):
    """x == y elementwise (bool, no gradient)."""
    return xp.asarray(x == y)


@op()
def ne(xp, x, y):
    """x != y elementwise (bool, no gradient)."""
    return xp.asarray(x != y)


@op()
def lt(xp, x, y):
    """x < y elementwise (bool, no gradient)."""
    return xp.asarray(x < y)


@op()
def le(xp, x, y):
    """x <= y elementwise (bool, no gradient)."""
    return xp.asarray(x <= y)


@op()
def gt(xp, x, y):
    """x > y elementwise (bool, no gradient)."""
    return xp.asarray(x > y)


@op()
def ge(xp, x, y):
    """x >= y elementwise (bool, no gradient)."""
    return xp.asarray(x >= y)


@op()
def logical_and(xp, x, y):
    """x and y elementwise, as booleans (no gradient)."""
    return xp.logical_and(x, y)


@op()
def logical_or(xp, x, y):
    """x or y elementwise, as booleans (no gradient)."""
    return xp.logical_or(x, y)


@op()
def logical_xor(xp, x, y):
    """x xor y elementwise, as booleans (no gradient)."""
    return xp.logical_xor(x, y)


@op()
def logical_not(xp, x):
    """not x elementwise, as booleans (no gradient)."""
    return xp.logical_not(x)


@op()
def bitwise_not(xp, x):
    """~x elementwise for integer and bool tensors (no gradient)."""
    return xp.invert(x)


@op()
def isnan(xp, x):
    """True where x is NaN (no gradient)."""
    return xp.isnan(x)


@op()
def isinf(xp, x):
    """True where x is +-inf (no gradient)."""
    return xp.isinf(x)


@op()
def isfinite(xp, x):
    """True where x is neither NaN nor +-inf (no gradient)."""
    return xp.isfinite(x)


@op(broadcast=True)  # broadcast: torch's message for shapes that do not broadcast
def isclose(xp, x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|x - y| <= atol + rtol * |y| elementwise (bool, no gradient); same dtypes, as torch."""
    x_dtype, y_dtype = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if x_dtype is not None and y_dtype is not None and x_dtype != y_dtype:
        raise RuntimeError(f"{scalar_type_name(x)} did not match {scalar_type_name(y)}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value:g}")
    return xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """True when ``isclose(input, other)`` holds everywhere (NaNs equal only with equal_nan).

    >>> gradkit.allclose(gradkit.tensor([1.0]), gradkit.tensor([1.0 + 1e-7]))
    True
    """
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, _op.Tensor):
            raise TypeError(f"allclose(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    return bool(isclose(input, other, rtol, atol, equal_nan).all())
