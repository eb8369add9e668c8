"""Elementwise math of two operands: atan2, hypot, xlogy, logaddexp(2), fmod, and the fused
lerp, addcmul and addcdiv (torch's dtype rules, errors and derivative formulas)."""
from __future__ import annotations

import math

import numpy as np

from gradkit.backend import get_default_dtype
from gradkit.number_arguments import number_argument, numbers_reader, scalar_as
from gradkit.ops._op import op
from gradkit.ops.arithmetic import add, div, mul, neg, sub
from gradkit.ops.fused import fused_multiply_add, multiply_add
from gradkit.ops.grad_edges import sum_of_defined
from gradkit.ops.comparison import isinf
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import exp, reciprocal
from gradkit.ops.methods import register
from gradkit.ops.piecewise import first_term_materialized, where, zeros_like
from gradkit.ops.promotion import PY_SCALARS, as_dtype, promote, result_type
from gradkit.ops.unary_helpers import (
    c_type_name, invalid_combination, kernel_error, require_tensors as _require_tensors,
    scalar_type_name)

_LOG2 = math.log(2.0)


def _floating_pair(xp, x, y, kernel: str, integers_to_float: bool = True,
                   complex_ok: bool = False):
    """x and y in their result dtype: integers and bools computed in the default float dtype
    (or refused, as ``kernel`` has no integer kernel), complex refused unless ``complex_ok``."""
    dtype = result_type(x, y)
    if dtype.kind in "biu" and integers_to_float:
        dtype = get_default_dtype().np
    elif dtype.kind in "biu" or (dtype.kind == "c" and not complex_ok):
        raise kernel_error(kernel)(np.empty(0, dtype))
    return as_dtype(xp, x, dtype), as_dtype(xp, y, dtype)  # numbers too: NumPy would widen


@op(save=("x", "y"), broadcast=True, batchable=True, method=("atan2", "arctan2"), inplace=True,
    elementwise=True)
def atan2(xp, x, y):
    """The angle of the point (y, x) (``x`` is the numerator, as torch's ``input``)."""
    _require_tensors("atan2", x, y)
    x, y = _floating_pair(xp, x, y, "atan2_cpu")
    return xp.arctan2(x, y)


def _atan2_vjp(g, x, y, needs):
    """torch's atan2_backward: one reciprocal of x² + y² for both gradients (the double
    backward adds their contributions before its derivative), its infinity at the origin (or
    an underflow) replaced by 0, so the gradient there is 0, not NaN (and no NumPy warning)."""
    # (the ops, not NumPy's operators, which would promote a 0-d float64 operand of a float32
    # one to float64: torch's promotion keeps float32)
    with np.errstate(divide="ignore", over="ignore"):
        recip = reciprocal(add(mul(x, x), mul(y, y)))
    recip = where(isinf(recip), 0.0, recip)
    # neg: torch's error for a bool x ("Negation, the `-` operator, on a bool tensor ...")
    return mul(mul(g, y), recip) if needs[0] else None, \
        mul(mul(g, neg(x)), recip) if needs[1] else None


atan2.defvjp_all(_atan2_vjp, needs=True)


def _atan2_jvp(tangents, x, y):
    """torch's (-x t_y + y t_x) / (x² + y²): unlike the backward, the origin's 0 / 0 stays NaN."""
    t_x, t_y = tangents
    with np.errstate(divide="ignore", invalid="ignore"):
        return sum_of_defined(None if t_y is None else neg(x) * t_y,
                              None if t_x is None else y * t_x) / (x * x + y * y)


atan2.defjvp_all(_atan2_jvp)
register(atan2, "arctan2", False, inplace=True)  # x.arctan2_(y), torch's alias
arctan2 = atan2


@op(save=("x", "y", "result"), broadcast=True, batchable=True, method=True, inplace=True,
    elementwise=True)
def hypot(xp, x, y):
    """sqrt(x² + y²) without overflow; real floating tensors only."""
    _require_tensors("hypot", x, y)
    x, y = _floating_pair(xp, x, y, "hypot_cpu", integers_to_float=False)
    return xp.hypot(x, y)


hypot.defvjp(lambda g, x, y, out: div(mul(g, x), out),  # (the ops: torch's promotion)
             lambda g, x, y, out: div(mul(g, y), out))
hypot.defjvp(lambda t, x, y, out: t * x / out, lambda t, x, y, out: t * y / out)


@op(save=("x", "y"), broadcast=True, elementwise=True, batchable=True, method=True, inplace=True)
def xlogy(xp, x, y):
    """x * log(y), 0 where x is 0 (unless y is NaN); either operand may be a number."""
    if type(x) in PY_SCALARS and type(y) in PY_SCALARS:
        raise TypeError("xlogy() received an invalid combination of arguments - got "
                        f"({type(x).__name__}, {type(y).__name__})")
    x, y = _floating_pair(xp, x, y, "xlogy_cpu")
    out = xp.asarray(x * xp.log(y))
    return xp.where((x == 0) & ~xp.isnan(y), xp.zeros((), out.dtype), out)


def _xlogy_grad_x(g, x, y):
    # torch: xlogy(g, y), zeroed where x == 0 and y <= 0 (the limit of x log y there)
    grad = xlogy(g, y)
    return where((x == 0) & (y <= 0), 0.0, grad)


xlogy.defvjp(_xlogy_grad_x, lambda g, x, y: g * x / y)
# torch's: xlogy(t_x, y) masked + t_y x / y, a missing t_x materialized
xlogy.defjvp_all(first_term_materialized(_xlogy_grad_x, lambda t, x, y: t * x / y))
# torch's generated nodes run their formulas sorted by name: XlogyBackward0's other first
xlogy.vjp_order = (1, 0)


def _opmath(dtype: np.dtype) -> np.dtype:
    """The dtype torch's CPU kernels compute a float dtype in: float16 in float32."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _log_add_exp(xp, x, y, exp_fn, log1p, scale=None):
    """max + log1p(exp(-|x - y|)) * scale with torch's rule that equal infinities give
    themselves; the product and sum rounded once, as torch's fused multiply-add."""
    with np.errstate(invalid="ignore", over="ignore"):
        term = log1p(exp_fn(-xp.abs(x - y)))
        high = xp.maximum(x, y)
        out = high + term if scale is None else fused_multiply_add(xp, term, scale, high)
    return xp.where(xp.isinf(x) & (x == y), x, out)


def _complex_log_add_exp(xp, x, y):
    """torch's complex logaddexp: the operand of larger real part factored out; NaN spreads;
    equal infinite real parts give -inf's operand or log(exp(x) + exp(y))."""
    x, y = xp.broadcast_arrays(x, y)
    nan = xp.isnan(x) | xp.isnan(y)
    low = xp.where(x.real < y.real, x, y)
    high = xp.where(x.real < y.real, y, x)
    with np.errstate(all="ignore"):
        out = xp.log1p(xp.exp(low - high)) + high
        both_infinite = xp.isinf(low.real) & (low.real == high.real)
        out = xp.where(both_infinite, xp.where(low.real < 0, low,
                                                xp.log(xp.exp(low) + xp.exp(high))), out)
    return xp.where(nan, xp.asarray(complex(math.nan, math.nan), out.dtype), out)


@op(save=("x", "y"), broadcast=True, batchable=True, method=True, elementwise=True)
def logaddexp(xp, x, y):
    """log(exp(x) + exp(y)) without overflow."""
    _require_tensors("logaddexp", x, y)
    x, y = _floating_pair(xp, x, y, "logaddexp_cpu", integers_to_float=False, complex_ok=True)
    if x.dtype.kind == "c":
        return _complex_log_add_exp(xp, x, y)
    wide = _opmath(x.dtype)
    return _log_add_exp(xp, x.astype(wide), y.astype(wide), xp.exp, xp.log1p).astype(x.dtype)


# torch's formulas subtract the operands as they are, so a bool operand fails in backward
# ("Subtraction, the `-` operator, with a bool tensor is not supported"), as sub says
logaddexp.defvjp(lambda g, x, y: g / conj(1 + exp(sub(y, x))),
                 lambda g, x, y: g / conj(1 + exp(sub(x, y))))
logaddexp.defjvp(lambda t, x, y: t / (1 + exp(sub(y, x))),
                 lambda t, x, y: t / (1 + exp(sub(x, y))))


@op(save=("x", "y"), broadcast=True, batchable=True, method=True, elementwise=True)
def logaddexp2(xp, x, y):
    """log2(2**x + 2**y) without overflow."""
    _require_tensors("logaddexp2", x, y)
    x, y = _floating_pair(xp, x, y, "logaddexp2_cpu", integers_to_float=False)
    wide = _opmath(x.dtype)  # torch's 1 / ln 2 is a constant of the computing dtype
    out = _log_add_exp(xp, x.astype(wide), y.astype(wide), xp.exp2, xp.log1p, wide.type(1 / _LOG2))
    return out.astype(x.dtype)


logaddexp2.defvjp(lambda g, x, y: g / (1 + 2 ** sub(y, x)),
                  lambda g, x, y: g / (1 + 2 ** sub(x, y)))
logaddexp2.defjvp(lambda t, x, y: t / (1 + 2 ** sub(y, x)),
                  lambda t, x, y: t / (1 + 2 ** sub(x, y)))


@op(save=("x", "y"), broadcast=True, elementwise=True, batchable=True, method=True, inplace=True)
def fmod(xp, x, y):
    """The C remainder x - trunc(x / y) * y: the sign of x (``remainder`` takes y's)."""
    if type(x) in PY_SCALARS:
        raise invalid_combination("fmod", x, y)
    x, y = promote(xp, x, y)
    kind = result_type(x, y).kind
    if kind in "bc":
        raise kernel_error("fmod_cpu")(np.empty(0, result_type(x, y)))
    if kind in "iu" and getattr(x, "size", 1) and not xp.all(y):  # empty: divides nothing
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(invalid="ignore"):
        return xp.fmod(x, y)


# torch's div(x, y, rounding_mode="trunc"): differentiable with zero gradients (its second
# derivative is 0 where one through x / y would be 0 * inf = NaN at y = 0)
@op(name="div", broadcast=True)
def _trunc_quotient(xp, x, y):
    with np.errstate(all="ignore"):
        return xp.trunc(x / y)


_trunc_quotient.defvjp(lambda g: zeros_like(g), lambda g: zeros_like(g))
_trunc_quotient.defjvp(lambda t: zeros_like(t), lambda t: zeros_like(t))
fmod.defvjp(lambda g, x, y: g, lambda g, x, y: -g * _trunc_quotient(x, y))
fmod.defjvp(lambda t, x, y: t, lambda t, x, y: -t * _trunc_quotient(x, y))


def _check_same_dtype(expected, name: str, value) -> None:
    if value.dtype != expected.dtype:
        raise RuntimeError(f"expected dtype {c_type_name(expected)} for `{name}` but got dtype "
                           f"{c_type_name(value)}")


@op(save=("x", "y", "weight"), broadcast=True, batchable=True, method=True, inplace=True,
    elementwise=True)
def lerp(xp, x, y, weight):
    """x + weight * (y - x), computed from y's side when |weight| >= 0.5, as torch (exact
    at weight 1); x, y and a weight with dims share one dtype (a 0-d weight is promoted)."""
    if type(x) in PY_SCALARS or type(y) in PY_SCALARS or not (  # no overload takes numbers
            type(weight) in PY_SCALARS or hasattr(weight, "dtype")):  # there, nor a str weight
        raise invalid_combination("lerp", x, y, weight)
    _check_same_dtype(x, "end", y)
    if type(weight) is int and not -2 ** 63 <= weight < 2 ** 63:  # read as torch's Scalar:
        weight = number_argument(weight, "lerp", "weight")  # past uint64, Python's overflow
    number = type(weight) in PY_SCALARS
    if not number and weight.ndim:
        _check_same_dtype(x, "weight", weight)
    # a 0-d weight tensor takes part in type promotion (as a 0-d operand), a number does not
    dtype = x.dtype if number else result_type(x, y, weight)
    if dtype.kind not in "fc":
        raise kernel_error("lerp_kernel_scalar" if number else "lerp_kernel_tensor")(
            np.empty(0, dtype))
    if number:  # c10's conversion to the kernel's type (float16's is float)
        weight = scalar_as(weight, dtype)
    wide = _opmath(dtype)  # float16 in float32, the weight at its own value: torch's kernel
    x, y, w = as_dtype(xp, x, wide), as_dtype(xp, y, wide), as_dtype(xp, weight, wide)
    diff = y - x
    return xp.where(xp.abs(w) < 0.5, multiply_add(xp, diff, w, x),
                    multiply_add(xp, -diff, 1 - w, y)).astype(dtype, copy=False)


def _conj_value(v):
    return v.conjugate() if type(v) in PY_SCALARS else conj(v)


lerp.defvjp(lambda g, x, y, weight: g * _conj_value(1 - weight),
            lambda g, x, y, weight: g * _conj_value(weight),
            lambda g, x, y, weight: g * conj(y - x))


def _lerp_jvp(tangents, x, y, weight):
    """torch's lerp(t_x, t_y, weight) + t_weight (y - x), a missing tangent 0: an inf t_x
    with a finite t_y gives inf - inf = NaN there, as torch's."""
    t_x, t_y, t_weight = tangents
    out = None
    if t_x is not None or t_y is not None:
        out = lerp(zeros_like(x) if t_x is None else t_x, zeros_like(y) if t_y is None else t_y,
                   weight)
    if t_weight is not None:
        out = t_weight * (y - x) if out is None else out + t_weight * (y - x)
    return out


lerp.defjvp_all(_lerp_jvp)


def _fused_operands(xp, kernel: str, x, t1, t2, value):
    """The three operands of addcmul/addcdiv in their result dtype, value in it (an integer
    result truncates a float value, as torch), and that dtype; float16 ones in float32, with
    the value unrounded, as torch's opmath (the op rounds its result once)."""
    _require_tensors(kernel.split("_")[0], x, t1, t2, names=("input", "tensor1", "tensor2"))
    dtype = result_type(x, t1, t2)
    if dtype.kind == "b":
        raise kernel_error(kernel)(np.empty(0, dtype))
    value = scalar_as(value, dtype)  # an integer input's complex value, after the checks
    if dtype.kind in "iu":
        value = int(value)
    wide = _opmath(dtype)
    return (*(as_dtype(xp, as_dtype(xp, v, dtype), wide) for v in (x, t1, t2)),
            as_dtype(xp, value, wide), dtype)


def _complex_kept(read):
    """``read`` (a numbers_reader), a complex value kept complex (its real part, read): torch's
    derivatives multiply by the complex Scalar, so an infinite operand's gradient is NaN."""
    def numbers(params: dict, positional=(), inputs=()) -> dict:
        given = params.get("value")
        was_complex = np.iscomplexobj(getattr(given, "_data", given))
        params = read(params, positional, inputs)
        if was_complex and not isinstance(params["value"], complex):
            params["value"] = complex(params["value"])
        return params
    return numbers


@op(save=("t1", "t2"), broadcast=True, elementwise=True, batchable=True, method=True, inplace=True)
def addcmul(xp, x, t1, t2, *, value=1):
    """x + value * t1 * t2 (broadcasting)."""
    x, t1, t2, v, dtype = _fused_operands(xp, "addcmul_cpu_out", x, t1, t2, value)
    return multiply_add(xp, v * t1, t2, x).astype(dtype, copy=False)


addcmul.defvjp(lambda g, t1, t2, value: g,
               lambda g, t1, t2, value: g * conj(t2 * value),
               lambda g, t1, t2, value: g * conj(t1 * value))
addcmul.numbers = _complex_kept(numbers_reader("addcmul", value=(None, "input")))
addcmul.defjvp(lambda t, t1, t2, value: t, lambda t, t1, t2, value: t * t2 * value,
               lambda t, t1, t2, value: t1 * t * value)

ADDCDIV_INTEGER_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


@op(save=("t1", "t2"), broadcast=True, elementwise=True, batchable=True, method=True, inplace=True)
def addcdiv(xp, x, t1, t2, *, value=1):
    """x + value * t1 / t2 (broadcasting); two integer (or bool) divisor tensors are refused."""
    _require_tensors("addcdiv", x, t1, t2, names=("input", "tensor1", "tensor2"))
    if t1.dtype.kind in "biu" and t2.dtype.kind in "biu":
        raise RuntimeError(ADDCDIV_INTEGER_MESSAGE)
    x, t1, t2, v, dtype = _fused_operands(xp, "addcdiv_cpu_out", x, t1, t2, value)
    return (x + v * t1 / t2).astype(dtype, copy=False)


def _value_over(value, t2):
    """``value / tensor2`` in torch's formula, C++'s Scalar / Tensor: a tensor of value divided
    by tensor2 (not Python's reciprocal times value: an ulp apart at times, and another double
    backward), so an integer tensor2 refuses its true quotient and a real one a complex value."""
    data = getattr(t2, "_data", t2)
    if data.dtype.kind in "biu":
        name = scalar_type_name(np.empty(0, get_default_dtype().np))
        raise RuntimeError(f"result type {name} can't be cast to the desired output type "
                           f"{scalar_type_name(data)}")
    return div(scalar_as(value, data.dtype), t2)


addcdiv.defvjp(lambda g, t1, t2, value: g,
               lambda g, t1, t2, value: g * conj(_value_over(value, t2)),
               # (the ops, not NumPy's operators: a plain backward's arrays would promote a
               # bool t1 times value, or a quotient by a 0-d t2, to float64; torch's float32)
               lambda g, t1, t2, value: -g * conj(div(mul(t1, value), mul(t2, t2))))
addcdiv.numbers = _complex_kept(numbers_reader("addcdiv", value=(None, "input")))
# torch's tangent: t_x + t_1 / t2 * value - t_2 * (t1 / t2) / t2 * value (no t2², which
# underflows to 0 for a tiny t2 and overflows for a huge one)
addcdiv.defjvp(lambda t, t1, t2, value: t, lambda t, t1, t2, value: t / t2 * value,
               lambda t, t1, t2, value: -(t * (t1 / t2) / t2 * value))
