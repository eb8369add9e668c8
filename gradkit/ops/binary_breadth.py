"""More elementwise ops of two operands: copysign, fmax/fmin, heaviside, nextafter, ldexp,
float_power, rsub, gcd and lcm (torch's dtype rules, errors and derivative formulas)."""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import get_default_dtype
from gradkit.number_arguments import numbers_reader, python_number
from gradkit.ops._op import Op, op
from gradkit.ops.arithmetic import pow, sub, without_derivative  # noqa: A004 - torch's name
from gradkit.ops.binary_math import _require_tensors
from gradkit.ops.comparison import isnan
from gradkit.ops.complex import _is_complex, conj
from gradkit.ops.conversion import astype
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.piecewise import blend_tangents, where, zeros_like
from gradkit.ops.promotion import (PY_SCALARS, WIDE_UNSIGNED, as_dtype, int_scalar_dtype, promote,
                                   result_type)
from gradkit.ops.unary_helpers import invalid_combination, kernel_error, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters

_LN2 = math.log(2.0)
_FLOAT64, _COMPLEX128 = np.dtype(np.float64), np.dtype(np.complex128)


def _in_float(xp, x, y, kernel: str, complex_ok: bool = False):
    """x and y in their result dtype, integers and bools in the default float dtype."""
    dtype = result_type(x, y)
    if dtype.kind in "biu":
        dtype = get_default_dtype().np
    elif dtype.kind == "c" and not complex_ok:
        raise kernel_error(kernel)(np.empty(0, dtype))
    return as_dtype(xp, x, dtype), as_dtype(xp, y, dtype)


@op(save=("x", "result"), broadcast=True, batchable=True, method=True, inplace=True,
    elementwise=True)
def copysign(xp, x, y):
    """|x| with the sign of y (of -0.0 too); y may be a number."""
    if type(x) in PY_SCALARS:
        raise invalid_combination("copysign", x, y)
    x, y = _in_float(xp, x, y, "copysign_cpu")
    return xp.copysign(x, y)


def _copysign_ratio(x, result):
    # torch's copysign_tensor_self_backward: result / x, 0 where x is 0
    return where(x == 0, 0.0, result / x)


def _sign_source_grad(g, x, result):
    """y's gradient: zero in g's shape (a batched g has its batch dim). It reads ``result``
    so the node keeps it, as torch's CopysignBackward0 does for either input: a write into
    the result then refuses backward when only y needs a gradient."""
    _ = result
    return zeros_like(g)


copysign.defvjp(lambda g, x, result: g * _copysign_ratio(x, result), _sign_source_grad)
# torch's forward formula reads only x's tangent: a dual y alone gives no tangent (not zeros)
copysign.defjvp(lambda t, x, result: t * _copysign_ratio(x, result), None)
copysign.node_name_rule = lambda params, inputs: (
    f"CopysignBackward{1 if type(inputs[1]) in PY_SCALARS else 0}")


def _nan_ignoring(name: str, pick, wins, wins_tangent):
    """fmax/fmin: the NaN-ignoring pick of x and y; x wins at ties (0.0 and -0.0 too) and
    where y is NaN, and takes the whole gradient there (torch's masks). The tangent is torch's
    t_y + mask (t_x - t_y), a missing one 0 (an inf tangent gives NaN; fmax's mask is x > y)."""
    def forward(xp, x, y):
        _require_tensors(name, x, y)
        if x.dtype.kind == "c" or y.dtype.kind == "c":  # before promotion (uint16 and complex)
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        dtype = result_type(x, y)
        x, y = as_dtype(xp, x, dtype), as_dtype(xp, y, dtype)
        out = getattr(xp, name)(x, y)
        return xp.where(x == y, x, out) if dtype.kind == "f" else out
    forward.__name__ = name
    forward.__doc__ = f"Elementwise {pick} of x and y, ignoring a NaN operand (NaN if both are)."
    declared = op(save=("x", "y"), broadcast=True, batchable=True, method=True,
                  elementwise=True)(forward)
    declared.defvjp(lambda g, x, y: where(wins(x, y) | isnan(y), g, 0.0),
                    lambda g, x, y: where(wins(x, y) | isnan(y), 0.0, g))

    declared.defjvp_all(lambda tangents, x, y:
                        blend_tangents(*tangents, wins_tangent(x, y) | isnan(y)))
    return declared


fmax = _nan_ignoring("fmax", "maximum", lambda x, y: x >= y, lambda x, y: x > y)
fmin = _nan_ignoring("fmin", "minimum", lambda x, y: x <= y, lambda x, y: x <= y)


def _heaviside(xp, x, values):
    """The step function: 0 for x < 0 (and NaN), ``values`` at 0, 1 for x > 0; x and values
    share one dtype. As torch, it has no derivative: backward through it raises."""
    _require_tensors("heaviside", x, values, names=("input", "values"))
    if x.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if x.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return xp.where(x == 0, values, (x > 0).astype(x.dtype))


heaviside = without_derivative(_heaviside)


@op(save=("x", "y"), broadcast=True, elementwise=True, batchable=True, method=True, inplace=True)
def nextafter(xp, x, y):
    """The next floating-point value after x towards y."""
    _require_tensors("nextafter", x, y)
    dtype = result_type(x, y)
    if dtype.kind != "f":
        raise kernel_error("nextafter_cpu")(np.empty(0, dtype))
    x, y = as_dtype(xp, x, dtype), as_dtype(xp, y, dtype)
    return xp.where(x == y, y, xp.nextafter(x, y))  # C's nextafter: y itself at a tie (-0.0)


# torch: the step is a constant: x's gradient passes except where x == y, y's is zero
nextafter.defvjp(lambda g, x, y: where(x != y, g, 0.0), lambda g, x, y: zeros_like(g))
nextafter.defjvp(lambda t, x, y: where(x != y, t, 0.0), None)  # torch's reads x's tangent only


@op(save=("x.dtype", "other", "result", "other.dtype"), broadcast=True, batchable=True,
    method=True, inplace=True, elementwise=True)
def ldexp(xp, x, other):
    """x * 2 ** other (integers and bools in the default float dtype). A floating x with an
    integer other is C's ldexp, as torch's kernel (exact where 2 ** other alone would overflow;
    the exponent read as a C int)."""
    _require_tensors("ldexp", x, other)
    if x.dtype.kind == "f" and other.dtype.kind in "biu":
        if other.dtype.kind == "b" or other.dtype in WIDE_UNSIGNED:  # no kernel for those
            raise kernel_error("ldexp_cpu_exp")(other)
        dtype = result_type(x, other)
        with np.errstate(over="ignore", under="ignore"):
            return xp.ldexp(as_dtype(xp, x, dtype), other.astype(np.int32))
    # torch's x * _pow2(x, other): pow(2.0, other) for an integer or float32 x, else a 0-d
    # tensor 2 of x's dtype to the power other, each in its own promoted dtype (a float16
    # other rounds the power to float16); then the product, promoted again
    two = 2.0 if x.dtype.kind in "biu" or x.dtype == np.float32 else xp.asarray(2.0, x.dtype)
    dtype = result_type(two, other)
    with np.errstate(over="ignore", invalid="ignore"):
        power = xp.power(as_dtype(xp, two, dtype), as_dtype(xp, other, dtype))
        x, power = promote(xp, x, power)
        return x * power


def _two_to(other):
    # torch's pow(2, other): for an integer other an integer power, 0 at negative ones
    return pow(2, other)


_MIXED_COMPLEX_GRAD = (
    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be "
    "true, but got false.  (Could this error message be improved?  If so, please report an "
    "enhancement request to PyTorch.)")


def _real_input_grad(grad, input_dtype):
    """torch's ldexp formulas give a real input of a complex result a complex gradient, which
    its engine's check refuses: so do we (gradkit would keep the real part)."""
    if _is_complex(grad) and input_dtype.kind != "c":
        raise RuntimeError(_MIXED_COMPLEX_GRAD)
    return grad


# torch saves the result for other's gradient: result * ln 2
# torch saves the result and, only when x needs a gradient, other (its wrap_opt_if): not x,
# so a write into x after ldexp is allowed, and into other when only other needs one
def _ldexp_self_grad(g, x_dtype, other, result, other_dtype):
    # torch saves the result unguarded and unpacks it for either gradient: naming it here
    # keeps it saved when only x needs a gradient, so a write into the result is refused
    _ = result
    return _real_input_grad(g * conj(_two_to(other)), x_dtype)


ldexp.defvjp(_ldexp_self_grad,  # torch's grad * result.conj() * M_LN2, in that order
             lambda g, x_dtype, other, result, other_dtype: _real_input_grad(
                 g * conj(result) * _LN2, other_dtype))
ldexp.defjvp(lambda t, x_dtype, other, result, other_dtype: t * _two_to(other),
             lambda t, x_dtype, other, result, other_dtype: t * result * _LN2)


def _check_ldexp_in_place(target, *args) -> None:
    # torch's ldexp_out refuses an integer or bool output before it computes anything
    _require_tensors("ldexp", target, *args)
    if target.dtype.kind in "biu":
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{scalar_type_name(target)}")


ldexp.check_in_place = _check_ldexp_in_place


@tensor_method()
@tensor_parameters("exponent", overloaded=True, numbers=True)
def float_power(input: Tensor | complex, exponent: Tensor | complex) -> Tensor:  # noqa: A002
    """``input ** exponent`` computed in float64 (complex128 if either is complex); either
    may be a number. Differentiable as the cast and ``pow`` it is made of."""
    input, exponent = python_number(input), python_number(exponent)  # noqa: A001
    if type(input) in PY_SCALARS and type(exponent) in PY_SCALARS:
        raise invalid_combination("float_power", input, exponent)
    for number in (input, exponent):
        if type(number) is int:  # torch's parse of a Scalar (past uint64: Python's error)
            int_scalar_dtype(number)
    is_complex = any(isinstance(v, complex) if type(v) in PY_SCALARS else v.is_complex()
                     for v in (input, exponent))
    dtype = _COMPLEX128 if is_complex else _FLOAT64
    base, power = (_as_wide(v, dtype) for v in (input, exponent))
    return pow(base, power)


def _float_power_in_place(input: Tensor, exponent: Tensor | complex) -> Tensor:  # noqa: A002
    """x.float_power_(exponent): torch refuses a base not already in the result's dtype."""
    result = float_power(input, exponent)
    if result.dtype != input.dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_type_name(input._data)} but the operation's result "
                           f"requires dtype {scalar_type_name(result._data)}")
    return result


register(_float_power_in_place, "float_power", False, inplace=True)


def _as_wide(value, dtype):
    if type(value) in PY_SCALARS:
        # torch's complex Scalar with a zero imaginary part takes pow's real paths (0.5: sqrt)
        return complex(value) if isinstance(value, complex) and value.imag else float(
            value.real)
    return value if value._data.dtype == dtype else astype(value, dtype=dtype)


@op(broadcast=True, linear=True, batchable=True)
def rsub(xp, x, other, alpha=1):
    """other - alpha * x: ``sub`` with its operands swapped (x must be a Tensor)."""
    if type(x) in PY_SCALARS:
        raise invalid_combination("rsub", x, other)
    return sub.forward(xp, other, x, alpha)


rsub.defvjp(lambda g, alpha: -g if alpha == 1 else g * -conj(alpha), lambda g, alpha: g)
rsub.defjvp(lambda t, alpha: -t if alpha == 1 else t * -alpha, lambda t, alpha: t)
rsub.numbers = numbers_reader("rsub", True, alpha=None)
# torch: rsub.Tensor is RsubBackward0, rsub.Scalar RsubBackward1
rsub.node_name_rule = lambda params, inputs: (
    f"RsubBackward{1 if type(inputs[1]) in PY_SCALARS else 0}")
# ``2 - x`` (Tensor.__rsub__, always a number): rsub.Scalar's node named up front, so that it
# takes dispatch's fast path (a node name rule does not)
rsub_number = Op(rsub.forward, name="rsub", broadcast=True, linear=True, batchable=True,
                 node_name="RsubBackward1")
rsub_number.defvjp(*rsub.vjps)
rsub_number.defjvp(*rsub.jvps)


def _integer_pair(name: str, ufunc: str):
    def forward(xp, x, y):
        _require_tensors(name, x, y)
        dtype = result_type(x, y)
        if dtype.kind not in "iu":
            raise kernel_error(f"{name}_cpu")(np.empty(0, dtype))
        x, y = as_dtype(xp, x, dtype), as_dtype(xp, y, dtype)
        if ufunc == "gcd":
            return _gcd(xp, x, y)
        # torch's abs(x / gcd * y) in C's arithmetic: narrower integers in int, wrapping
        wide = np.dtype(np.int32) if dtype.itemsize < 4 else dtype
        x, y = x.astype(wide), y.astype(wide)
        with np.errstate(over="ignore"):
            quotient = xp.where(x == 0, 0, x // xp.where(x == 0, 1, xp.gcd(x, y)))
            return xp.abs(quotient * y).astype(dtype)
    forward.__name__ = name
    return forward


def _gcd(xp, x, y):
    """NumPy's gcd but where an operand is the dtype's minimum, whose abs is itself in C:
    torch's Euclid then runs on it and may end on a negative remainder (gcd(6, -2^63) = -2;
    wide seed 171234)."""
    out = xp.gcd(x, y)
    if x.dtype.kind != "i" or xp is not np:
        return out
    low = np.iinfo(x.dtype).min
    odd = (x == low) | (y == low)
    if odd.any():
        out, (xs, ys) = np.array(out), np.broadcast_arrays(x, y)  # (0-d: a NumPy scalar)
        for index in map(tuple, np.argwhere(odd)):
            out[index] = _c_gcd(int(xs[index]), int(ys[index]), low)
    return out


def _c_gcd(a: int, b: int, low: int) -> int:
    """torch's calc_gcd in C's integers: abs (of the minimum: itself), then Euclid with C's
    remainder, whose sign is the dividend's."""
    a, b = (v if v == low else abs(v) for v in (a, b))
    while a:
        remainder = abs(b) % abs(a)
        a, b = (-remainder if b < 0 else remainder), a
    return b


gcd = op(broadcast=True, method=True, inplace=True, elementwise=True)(_integer_pair("gcd", "gcd"))
gcd.__doc__ = "The greatest common divisor of integers x and y (non-negative)."
lcm = op(broadcast=True, method=True, inplace=True, elementwise=True)(_integer_pair("lcm", "lcm"))
lcm.__doc__ = "The least common multiple of integers x and y (non-negative)."
