"""Binary arithmetic (broadcasting like NumPy) and comparisons."""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import number_argument, numbers_reader
from gradkit.ops._op import Op, op
from gradkit.ops.fused import c99_multiply, complex_quotient, multiply_add
from gradkit.ops.grad_edges import no_forward_ad
from gradkit.ops.complex import conj
from gradkit.ops.conversion import fitted
from gradkit.ops.half_scalar import HALF, half_with_scalar, in_float32
from gradkit.ops.keywords import tensor_keywords
from gradkit.ops.methods import register
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.promotion import (PY_SCALARS, array_of, as_dtype, check_fits, int_scalar_dtype,
                                    promote, result_kind)
from gradkit.ops.unary_helpers import kernel_error


_NDARRAY = np.ndarray

@op(broadcast=True, elementwise=True, linear=True, batchable=True, method=True)
def add(xp, x, y, alpha=1):
    """x + alpha * y (broadcasting)."""
    if type(alpha) is not int:  # the default 1 needs no look
        alpha = number_argument(alpha, "add", "alpha")
    if alpha == 1 and type(x) is _NDARRAY and x.dtype.kind in "fV" and type(alpha) is int and \
            (type(y) is float or type(y) is _NDARRAY and y.dtype is x.dtype):
        return x + y  # promote's and _is_one's common case, inline (every add and + runs it)
    x, y = promote(xp, x, y)
    return x + y if _is_one(alpha, x, y) else _plus_alpha_times(xp, x, y, alpha, alpha)


add.defvjp(lambda g, alpha: g,
           lambda g, alpha: g if alpha == 1 else g * conj(alpha))
add.defjvp(lambda t, alpha: t,
           lambda t, alpha: t if alpha == 1 else t * alpha)
# alpha given as a 0-d tensor is torch's Scalar: its number (a float32 one would make the
# derivative's product float32 on a 0-d gradient: breadth seed 1009139)
add.numbers = numbers_reader("add", alpha=None)


@op(broadcast=True, elementwise=True, linear=True, batchable=True, method=True)
def sub(xp, x, y, alpha=1):
    """x - alpha * y (broadcasting); torch refuses bool operands."""
    if type(alpha) is not int:
        alpha = number_argument(alpha, "sub", "alpha")
    _check_not_bool(x, y)
    x, y = promote(xp, x, y)  # torch's sub is add with -alpha (signed zeros follow from it)
    return x - y if _is_one(alpha, x, y) else _plus_alpha_times(xp, x, y, alpha, -alpha)


def _is_one(alpha, x, y) -> bool:
    """Whether alpha * y is y. Not for complex y: torch multiplies by alpha = 1 + 0j there,
    which turns a real NaN or inf into NaN + NaN j (and we give torch's numbers)."""
    if type(alpha) is not int or alpha != 1:
        return False
    if type(x) is np.ndarray:  # promoted: y is a number or an array of x's dtype
        return x.dtype.kind != "c"
    return result_kind(x, y) != "c"


def _plus_alpha_times(xp, x, y, alpha, factor):
    """x + factor * y as torch's add kernel rounds it (``multiply_add``), after torch's checks
    of ``alpha`` (``factor`` is alpha, or -alpha for sub)."""
    dtype = array_of(x, y).dtype
    y = as_dtype(xp, y, dtype)
    if isinstance(alpha, bool) and dtype.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.kind in "biu" and not isinstance(alpha, (int, np.integer)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number.")
    if dtype.kind != "c" and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number.")
    fitted(alpha, dtype)  # torch's kernel converts alpha, checked, to the result's type
    # a bool result takes alpha as a bool, like torch
    return multiply_add(xp, y, as_dtype(xp, factor, dtype), x)


def _check_not_bool(x, y):
    for v in (x, y):
        if type(v) is int:
            int_scalar_dtype(v)  # torch's parser refuses an int past uint64 first
    if _is_bool(x) and _is_bool(y):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(x) or _is_bool(y):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_)) or getattr(getattr(v, "dtype", None), "kind", "") == "b"


# torch's -grad * conj(alpha): the negation first, then a complex product (zero signs)
sub.defvjp(lambda g, alpha: g,
           lambda g, alpha: -g if alpha == 1 else -g * conj(alpha))
sub.defjvp(lambda t, alpha: t,
           lambda t, alpha: -t if alpha == 1 else t * -alpha)
sub.numbers = numbers_reader("sub", alpha=None)


@op(save=("x", "y"), broadcast=True, elementwise=True, batchable=True, method=True, inplace=True)
def mul(xp, x, y):
    """x * y (broadcasting)."""
    if type(x) is _NDARRAY and x.dtype is HALF and half_with_scalar(x, y):  # (inline: hot)
        return in_float32(np.multiply, x, y)
    if type(x) is _NDARRAY and x.dtype.kind in "fcV" and \
            (type(y) is float or type(y) is _NDARRAY and y.dtype is x.dtype):
        return x * y  # promote's common cases, inline: nothing to promote
    x, y = promote(xp, x, y)
    return x * y


mul.defvjp(lambda g, x, y: g * conj(y),
           lambda g, x, y: g * conj(x))


def _mul_jvp(tangents, x, y):
    """torch's t_y x + t_x y, in that order: its complex add multiplies the second term by
    alpha = 1 + 0j, which makes NaN parts of an inf one (the engine's sum would put it first)."""
    t_x, t_y = tangents
    if t_x is None or t_y is None:
        return t_x * y if t_y is None else x * t_y
    return t_y * x + t_x * y


mul.defjvp_all(_mul_jvp)


class _Division(Op):
    """div, torch's div.Tensor and div.Scalar; given ``rounding_mode`` (None too) it is torch's
    div.Tensor_mode, another op (``ops/rounding_division.py`` sets ``with_rounding_mode``)."""

    with_rounding_mode = None

    def __call__(self, *args, **kwargs):
        if len(args) > 2:  # torch takes no third positional (Op would read it as a parameter)
            raise TypeError(f"div() received an invalid combination of arguments - got "
                            f"({', '.join(_argument_kinds(args))})")
        if kwargs and "rounding_mode" in kwargs:  # (its tensors by keyword too: input=, x2=)
            args, kwargs = tensor_keywords(args, 2, (), kwargs)
            return self.with_rounding_mode(*args, **kwargs)
        return Op.__call__(self, *args, **kwargs)


def _argument_kinds(args) -> list:
    """torch's names of positional arguments' types in its invalid-combination errors."""
    return ["Tensor" if hasattr(a, "_data") else type(a).__name__ for a in args]


def _true_quotient(xp, x, y):
    """x / y (broadcasting; true division, so integers give floats)."""
    if type(x) is _NDARRAY and x.dtype is HALF and half_with_scalar(x, y):
        return in_float32(np.true_divide, x, y)
    x, y = promote(xp, x, y, true_division=True)
    if result_kind(x, y) == "c":  # a real number divisor too: torch divides it as x + 0j
        dtype = array_of(x, y).dtype
        return complex_quotient(xp, as_dtype(xp, x, dtype), as_dtype(xp, y, dtype))
    return x / y


# saves its inputs, not its result, as torch does: the result may then be modified in place
div = _Division(_true_quotient, name="div", save=("x", "y"), broadcast=True, batchable=True,
                method=True, inplace=True, elementwise=True)


# (the op, not NumPy's `/`: a plain backward's arrays would divide a float32 gradient by a
# 0-d float64 divisor in float64; torch's type promotion keeps float32)
div.defvjp(lambda g, x, y: div(g, conj(y)),
           lambda g, x, y: -g * conj(div(div(x, y), y)))
div.vjp_order = (1, 0)  # torch's DivBackward0 and 2 compute other's first (breadth 1574260)


def _div_jvp(tangents, x, y):
    """torch's (t_x - t_y x / y) / y, one division of the difference: at x = inf, y = 0 it is
    (1 - inf) / 0 = -inf where two quotients would give inf - inf = NaN."""
    t_x, t_y = tangents
    if t_y is None:
        return t_x / y
    product = t_y * (x / y)
    return (-product if t_x is None else t_x - product) / y


div.defjvp_all(_div_jvp)


@op(save=("x", "y", "result"), broadcast=True, batchable=True, method=True, inplace=True,
    elementwise=True)
def pow(xp, x, y):  # noqa: A001 - torch's name
    """x ** y (broadcasting; either may be a number)."""
    number_exponent, exponent = type(y) in PY_SCALARS, y
    # torch fills 1 ** t with ones (even at NaN); a bool True is no 1 there (Scalar::equal)
    base_one = type(x) in (int, float, complex) and x == 1
    negative_int = type(y) is int and y < 0  # checked before uint8 ** -2 wraps it to 254
    x, y = promote(xp, x, y)
    kind = result_kind(x, y)
    if kind == "b":  # torch: bool ** True is bool; a bool tensor exponent has no kernel
        if not number_exponent:
            raise kernel_error("pow")(y)
        return x | ~y  # x ** 1 is x, x ** 0 is True
    if kind in "iu":
        if negative_int:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        check_fits(exponent, x.dtype)  # uint8 ** 300 raises; 300 ** uint8 wraps the base
        return _integer_pow(xp, x, y)
    if number_exponent and x.dtype == np.float16:  # its exponent read as c10::Half, checked
        check_fits(exponent, x.dtype, half=True)
    if number_exponent and exponent == 1:  # torch copies x (1, 1.0, True, 1 + 0j alike)
        return x.copy()  # NumPy's complex x ** 1 multiplies: -0.0 + 0j becomes 0j
    # float16 (torch's reduced types) has no sqrt/rsqrt kernel for a number exponent: pow
    as_c_pow = kind == "f" and (not number_exponent or x.dtype == np.float16)
    if number_exponent and exponent in _PRODUCT_POWERS[kind] and not as_c_pow:
        with np.errstate(all="ignore"):
            return _PRODUCT_POWERS[kind][exponent](xp, x)
    if base_one:
        return xp.ones(y.shape, y.dtype)
    out = x ** y
    if as_c_pow:
        out = _pow_at_half_as_c(xp, x, y, out)
    if kind == "c" and (not number_exponent or exponent not in _MULTIPLIED_POWERS):
        # torch's complex pow is C's cpow, exp(y log x) with C99's product, but for the powers
        # it multiplies out. NumPy multiplies integer exponents out too, which rounds otherwise
        # ((-1) ** -1 is -1 - 0j, cpow's -1 - 1.2e-16j) and differs at the edges: 0 ** 0 and
        # nan ** 0 are NaN in cpow, 0 ** (inf + nanj) is 0, inf ** -3 is 0 (NumPy: NaN) and
        # complex64 81 ** 81 is inf + 0j
        with np.errstate(all="ignore"):
            log_x = xp.log(as_dtype(xp, x, out.dtype))
            exponent = as_dtype(xp, y, out.dtype)  # a number: no wider than the result
            out = xp.exp(c99_multiply(xp, exponent, log_x))
    return out


def _pow_at_half_as_c(xp, x, y, out):
    """C's pow, as torch's for a tensor exponent (and float16's): NumPy takes sqrt for an
    exponent of 0.5 it sees as one number (a broadcast one: stride 0 in its loop), which
    differs at -inf (NaN, pow's inf) and -0.0 (pow's +0.0)."""
    half = y == 0.5
    if not xp.any(half):
        return out
    x = xp.asarray(x)
    edge = half & ((x == -math.inf) | ((x == 0) & xp.signbit(x)))
    return xp.where(edge, xp.where(x == 0, out.dtype.type(0), out.dtype.type(math.inf)), out) \
        if xp.any(edge) else out


# complex powers by a number that torch computes without cpow: 0 and 1 fill and copy, 2 and 3
# multiply, 0.5 is sqrt (0.5 + 0j too: _PRODUCT_POWERS, as -0.5, -1 and -2)
_MULTIPLIED_POWERS = frozenset({0, 1, 2, 3, 0.5})

# torch computes these powers by a number as rsqrt/reciprocal kernels or products, not pow:
# x ** -0.5 is -inf at -0.0 and NaN at -inf (pow: inf, 0), complex 0 ** -1 is inf + nanj
# (pow: nan + nanj), real x ** 3 and x ** -2 are x * x * x and 1 / (x * x), an ulp from pow
_PRODUCT_POWERS = {
    "f": {-0.5: lambda xp, x: 1 / xp.sqrt(x), 3: lambda xp, x: x * x * x,
          -2: lambda xp, x: 1 / (x * x)},
    "c": {0.5: lambda xp, x: xp.sqrt(x), -0.5: lambda xp, x: 1 / xp.sqrt(x),
          -1: lambda xp, x: _inverse(xp, x), -2: lambda xp, x: _inverse(xp, x * x),
          2: lambda xp, x: x * x, 3: lambda xp, x: x * x * x},  # (NumPy's power: (-0 + 0j)²
    # is 0 + 0j, torch's product 0 - 0j)
}


def _inverse(xp, z):
    """1 / z as torch's complex division computes it."""
    return complex_quotient(xp, xp.ones_like(z), z)


def _integer_pow(xp, x, y):
    """Integer powers as torch computes them: a negative tensor exponent gives 1 ** -k = 1,
    (-1) ** -k = +-1 and 0 otherwise."""
    negative = y < 0
    if not negative.any():
        return x ** y
    odd = (y % 2) != 0
    inverse = xp.where(x == 1, 1, xp.where(x == -1, xp.where(odd, -1, 1), 0)).astype(x.dtype)
    return xp.where(negative, inverse, x ** xp.where(negative, 0, y))


@op(linear=True, batchable=True, method=("neg", "negative"), inplace=True)
def neg(xp, x):
    """-x elementwise (not for bools, as torch)."""
    if x.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return -x


neg.defvjp(lambda g: -g)
neg.defjvp(lambda t: -t)
register(neg, "negative", False, inplace=True)  # x.negative_()


def _floor_divide(xp, x, y):
    """floor(x / y) (broadcasting); its result requires grad, but backward raises, as torch."""
    if half_with_scalar(x, y):  # torch's reduced-float kernel: in float32, the scalar as is
        return in_float32(np.floor_divide, x, y)
    x, y = promote(xp, x, y)
    _check_divisor(x, y, "div_floor_cpu")
    return xp.floor_divide(x, y)


def not_implemented(name: str):
    """torch's errors for an op without derivative, ``aten::<name>``: (vjp rule, jvp rule)
    that raise them when reached."""
    def vjp(g, *saved):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    def jvp(t, *saved):
        raise NotImplementedError(f"Trying to use forward AD with aten::{name} that does not "
                                  "support it.")
    return vjp, jvp


def without_derivative(forward) -> Op:
    """A broadcasting op torch has no derivative for: its result requires grad, but its node
    (``NotImplemented``) raises torch's error in backward, as forward AD does. ``x.<name>_``
    is a twin op whose errors name torch's in-place overload, ``aten::<name>_``."""
    declared, in_place = (Op(forward, broadcast=True, method=method, node_name="NotImplemented",
                             elementwise=True)
                          for method in (True, False))
    for declared_op, name in ((declared, declared.name), (in_place, declared.name + "_")):
        vjp, jvp = not_implemented(name)
        declared_op.defvjp(*[vjp] * declared_op.n_inputs)
        declared_op.defjvp(*[jvp] * declared_op.n_inputs)
    register(in_place, declared.name, False, inplace=True)
    return declared


floor_divide = without_derivative(_floor_divide)
# the quotient inside remainder's derivative: torch's div(rounding_mode=floor), which is
# differentiable with zero gradients (a second derivative through it is 0, or NaN beside one)
_floor_quotient = op(name="floor_divide", broadcast=True, elementwise=True)(_floor_divide)
_floor_quotient.defvjp(lambda g: zeros_like(g), lambda g: zeros_like(g))
_floor_quotient.defjvp(lambda t: zeros_like(t), lambda t: zeros_like(t))


def _check_divisor(x, y, kernel: str) -> None:
    """torch's errors for operands of ``//`` and ``%``: no bool or complex kernel, and an
    integer division by zero raises (NumPy answers 0 with a warning)."""
    kind = result_kind(x, y)
    if kind in "bc":
        raise kernel_error(kernel)(array_of(x, y))
    if kind in "iu" and getattr(x, "size", 1) and not y.all():  # empty: divides nothing
        raise RuntimeError("ZeroDivisionError")


@op(save=("x", "y"), broadcast=True, elementwise=True, batchable=True, method=True, inplace=True)
def remainder(xp, x, y):
    """x mod y with the sign of y, as Python's % (broadcasting); a zero result keeps x's sign,
    as torch's fmod-based kernel gives it."""
    x, y = promote(xp, x, y)
    _check_divisor(x, y, "remainder_cpu")
    if result_kind(x, y) in "biu":
        return xp.remainder(x, y)
    with np.errstate(invalid="ignore"):
        out = xp.fmod(x, y)
    return xp.where((out != 0) & ((out < 0) != (y < 0)), out + y, out)


def _remainder_grad_divisor(g, x, y):
    if type(x) in PY_SCALARS:  # torch's remainder(Scalar, Tensor) has no derivative
        raise RuntimeError("derivative for aten::remainder is not implemented")
    return -g * _floor_quotient(x, y)


remainder.defvjp(lambda g, x, y: g, _remainder_grad_divisor)
_SCALAR_REMAINDER_JVP = no_forward_ad("aten::remainder", brief=True)
remainder.defjvp(lambda t, x, y: t,  # remainder(Scalar, Tensor): torch has no formula either
                 lambda t, x, y: _SCALAR_REMAINDER_JVP(t) if type(x) in PY_SCALARS
                 else -t * _floor_quotient(x, y))
