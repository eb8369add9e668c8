"""Elementwise math and activations.

Most ops state only f'(x) (``defderivative``): the vjp ``g * conj(f')`` and the
jvp ``t * f'`` follow. Ops whose derivative is cheapest from the output save
``"result"`` instead of the input.
"""
from __future__ import annotations

import functools
import math

from gradkit.backend import get_default_dtype
from gradkit.ops._op import op
from gradkit.ops.complex import conj, real
from gradkit.ops.special import erf_array
from gradkit.ops.promotion import check_fits, promote, result_type
from gradkit.ops.unary_helpers import CLAMP_COMPLEX, fixed_error, kernel_error, reject_complex


def _unary(save="x", floating=False, complex_error=None, bool_error=None, integer_error=None,
           **options):
    """Declare an elementwise op; ``floating`` ops compute integer inputs in the default dtype;
    ``complex_error(x)`` (``bool_error(x)``, ``integer_error(x)``) is the error torch raises
    for complex (bool, integer or bool) inputs (None: they are fine)."""
    def declare(forward):
        for kinds, error in (("c", complex_error), ("b", bool_error), ("biu", integer_error)):
            if error is not None:
                forward = _refusing(forward, kinds, error)
        return op(save=save, elementwise=True, **options)(
            _on_floats(forward) if floating else forward)
    return declare


def _refusing(forward, kinds: str, error):
    @functools.wraps(forward)
    def checked(xp, x, *args, **kwargs):
        if x.dtype.kind in kinds:
            raise error(x)
        return forward(xp, x, *args, **kwargs)
    return checked


def _on_floats(forward):
    @functools.wraps(forward)
    def on_floats(xp, x, *args, **kwargs):
        if x.dtype.kind in "biu":  # torch: exp(int tensor) is a float tensor
            x = x.astype(get_default_dtype().np)
        return forward(xp, x, *args, **kwargs)
    return on_floats


def defmask(op, passes) -> None:
    """An elementwise op whose derivative is 1 where ``passes(*saved)`` holds, else 0: vjp and
    jvp select rather than multiply, so a NaN or inf gradient stays out where the derivative
    is 0, as torch's threshold and clamp backward kernels."""
    op.defvjp(lambda g, *saved, **params: where(passes(*saved, **params), g, 0.0))
    op.defjvp(lambda t, *saved, **params: where(passes(*saved, **params), t, 0.0))
    op.batchable = True  # where(mask, g, 0) broadcasts over a leading batch dim


@_unary(save="result", floating=True, method=True, inplace=True)
def exp(xp, x):
    """e ** x elementwise."""
    return xp.exp(x)


exp.defderivative(lambda out: out)


@_unary(save="result", floating=True, method=True)
def exp2(xp, x):
    """2 ** x elementwise."""
    return xp.exp2(x)


exp2.defderivative(lambda out: out * math.log(2.0))


@_unary(floating=True, method=True, inplace=True)
def log(xp, x):
    """Natural logarithm, elementwise."""
    return xp.log(x)


log.defderivative(lambda x: 1 / x)


@_unary(floating=True, method=True)
def log2(xp, x):
    """Base-2 logarithm, elementwise."""
    return xp.log2(x)


log2.defderivative(lambda x: 1 / (x * math.log(2.0)))


@_unary(floating=True, method=True)
def log10(xp, x):
    """Base-10 logarithm, elementwise."""
    return xp.log10(x)


log10.defderivative(lambda x: 1 / (x * math.log(10.0)))


@_unary(floating=True, method=True)
def log1p(xp, x):
    """log(1 + x) elementwise, accurate near 0."""
    return xp.log1p(x)


log1p.defderivative(lambda x: 1 / (x + 1))


@_unary(save="result", floating=True, method=True)
def expm1(xp, x):
    """exp(x) - 1 elementwise, accurate near 0."""
    return xp.expm1(x)


expm1.defderivative(lambda out: out + 1)


@_unary(save="result", floating=True, method=True, inplace=True)
def sqrt(xp, x):
    """Square root, elementwise."""
    return xp.sqrt(x)


# as torch, 1 / (2 * out): for complex, 2 * (inf + 0j) is inf + nanj, so the gradient is NaN
# there (0.5 / out gives the limit 0); for real, the same numbers as 0.5 / out (2 * out is exact)
sqrt.defderivative(lambda out: 1 / (2 * out))


@_unary(save="result", floating=True, method=True)
def rsqrt(xp, x):
    """1 / sqrt(x) elementwise."""
    return 1 / xp.sqrt(x)


rsqrt.defderivative(lambda out: -0.5 * out * out * out)


@_unary(method=True, inplace=True)
def square(xp, x):
    """x * x elementwise (pow(x, 2): bools square to int64, as in torch)."""
    x, _ = promote(xp, x, 2)
    return x * x


square.defderivative(lambda x: 2 * x)


@_unary(save="result", floating=True, method=True, inplace=True)
def reciprocal(xp, x):
    """1 / x elementwise."""
    return 1 / x


reciprocal.defderivative(lambda out: -(out * out))


@_unary(floating=True, method=True, inplace=True)
def sin(xp, x):
    """sin(x) elementwise."""
    return xp.sin(x)


sin.defderivative(lambda x: cos(x))


@_unary(floating=True, method=True, inplace=True)
def cos(xp, x):
    """cos(x) elementwise."""
    return xp.cos(x)


cos.defderivative(lambda x: -sin(x))


@_unary(save="result", floating=True, method=True)
def tan(xp, x):
    """tan(x) elementwise."""
    return xp.tan(x)


tan.defderivative(lambda out: 1 + out * out)


@_unary(floating=True, method=True)
def sinh(xp, x):
    """sinh(x) elementwise."""
    return xp.sinh(x)


sinh.defderivative(lambda x: cosh(x))


@_unary(floating=True, method=True)
def cosh(xp, x):
    """cosh(x) elementwise."""
    return xp.cosh(x)


cosh.defderivative(lambda x: sinh(x))


@_unary(save="result", floating=True, method=True, inplace=True)
def tanh(xp, x):
    """tanh(x) elementwise."""
    return xp.tanh(x)


tanh.defderivative(lambda out: 1 - out * out)


@_unary(floating=True, method=True)
def asin(xp, x):
    """arcsin(x) elementwise."""
    return xp.arcsin(x)


asin.defderivative(lambda x: rsqrt(1 - x * x))


@_unary(floating=True, method=True)
def acos(xp, x):
    """arccos(x) elementwise."""
    return xp.arccos(x)


acos.defderivative(lambda x: -rsqrt(1 - x * x))


@_unary(floating=True, method=True)
def atan(xp, x):
    """arctan(x) elementwise."""
    return xp.arctan(x)


atan.defderivative(lambda x: 1 / (1 + x * x))


@_unary(save="result", floating=True, method=True, inplace=True)
def sigmoid(xp, x):
    """1 / (1 + exp(-x)) elementwise."""
    if x.dtype.kind == "c":  # complex: no sign split (comparisons would drop the imaginary part)
        return 1 / (1 + xp.exp(-x))
    e = xp.exp(-xp.abs(x))  # never overflows
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


sigmoid.defderivative(lambda out: out * (1 - out))


@_unary(save="x", complex_error=kernel_error("log_sigmoid_cpu"),
        integer_error=kernel_error("log_sigmoid_cpu"))
def logsigmoid(xp, x):
    """log(sigmoid(x)) elementwise, computed stably."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))  # never overflows


logsigmoid.defderivative(lambda x: sigmoid(-x))


@_unary(save="result", complex_error=CLAMP_COMPLEX, method=True, inplace=True,
        bool_error=fixed_error(RuntimeError, "Boolean inputs not supported for relu"))
def relu(xp, x):
    """max(x, 0) elementwise; NaN and -0.0 pass through, as torch."""
    return xp.where(x < 0, 0, x)


@op(save="out", elementwise=True, node_name="ThresholdBackwardBackward0")
def _relu_backward(xp, g, out):
    """relu's gradient, torch's threshold_backward: g where out > 0 or is NaN, else 0 (a
    selection: NaN/inf in g stay out). Its derivative in ``out`` is zero but, as torch's,
    a graph edge: a second backward reaches relu's node (and the hooks of its output)."""
    return xp.where(out <= 0, 0, g)


_relu_backward.defvjp(lambda gg, out: _relu_backward(gg, out), lambda gg, out: zeros_like(gg))
_relu_backward.defjvp(lambda t, out: _relu_backward(t, out), None)
relu.defvjp(lambda g, out: _relu_backward(g, out))
relu.defjvp(lambda t, out: _relu_backward(t, out))
relu.batchable = True


@_unary(floating=True, method=True)
def erf(xp, x):
    """The error function, elementwise."""
    return erf_array(xp, x)


erf.defderivative(lambda x: (2 / math.sqrt(math.pi)) * exp(-(x * x)))


@_unary(save="x", integer_error=kernel_error("silu_cpu"))
def silu(xp, x):
    """x * sigmoid(x) elementwise."""
    return x * sigmoid(x)


def _silu_derivative(x):
    s = sigmoid(x)
    return s * (1 + x * (1 - s))


silu.defderivative(_silu_derivative)

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@_unary(save="x", complex_error=kernel_error("GeluKernelImpl"),
        integer_error=kernel_error("GeluKernelImpl"))
def gelu(xp, x, approximate="none"):
    """x * Phi(x) (Gaussian CDF); ``approximate='tanh'`` for the tanh formula."""
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    if approximate != "none":
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return 0.5 * x * (1 + erf_array(xp, x * _INV_SQRT_2))


def _gelu_derivative(x, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        t = tanh(inner)
        d_inner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner
    return 0.5 * (1 + erf(x * _INV_SQRT_2)) + x * _INV_SQRT_2PI * exp(-0.5 * x * x)


gelu.defderivative(_gelu_derivative)


@_unary(save="x", complex_error=kernel_error("softplus_cpu"),
        integer_error=kernel_error("softplus_cpu"))
def softplus(xp, x, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold``, elementwise."""
    bx = x * beta
    soft = xp.log1p(xp.exp(xp.minimum(bx, threshold))) / beta
    return xp.where(bx > threshold, x, soft).astype(x.dtype, copy=False)


def _softplus_derivative(x, beta, threshold):
    bx = x * beta
    return where(bx > threshold, 1.0, sigmoid(bx))


softplus.defderivative(_softplus_derivative)


@_unary(save="x", complex_error=kernel_error("elu_cpu"), integer_error=kernel_error("elu_cpu"))
def elu(xp, x, alpha=1.0):
    """x if x > 0 else alpha * (exp(x) - 1), elementwise."""
    return xp.where(x > 0, x, alpha * xp.expm1(xp.where(x > 0, 0, x))).astype(x.dtype, copy=False)


def _elu_derivative(x, alpha):
    # torch: alpha at 0, 1 at NaN, and a second derivative of 0 at 0 (where(x < 0, x, 0)
    # is flat there); exp never sees a positive argument
    return where(x <= 0, alpha * exp(where(x < 0, x, 0.0)), 1.0)


elu.defderivative(_elu_derivative)


@_unary(save="x", complex_error=kernel_error("leaky_relu_cpu"),
        integer_error=kernel_error("leaky_relu_cpu"))
def leaky_relu(xp, x, negative_slope=0.01):
    """x if x > 0 else negative_slope * x, elementwise."""
    return xp.where(x > 0, x, x * negative_slope)


leaky_relu.defderivative(lambda x, negative_slope: where(x > 0, 1.0, negative_slope))


@op(save="x", batchable=True, method=True, inplace=True)
def abs(xp, x):  # noqa: A001 - torch's name
    """|x| elementwise (the modulus for complex x)."""
    if x.dtype.kind == "b":
        raise kernel_error("abs_cpu")(x)
    return xp.abs(x)


abs.defvjp(lambda g, x: g * sgn(x))
abs.defjvp(lambda t, x: real(conj(sgn(x)) * t))


@op(save=("x", "result"), batchable=True, method=True)
def sgn(xp, x):
    """sign for real numbers, x/|x| (0 at 0) for complex ones."""
    if x.dtype.kind != "c":
        return _real_sign(xp, x)
    mag = xp.abs(x)
    return xp.where(mag == 0, 0, x / xp.where(mag == 0, 1, mag))


def _sgn_derivative(g, x, out):
    """d(z/|z|) applied to g: (g - Re(g conj(s)) s) / |z| (0 at 0); zero for real inputs.

    The same expression is the vjp and the jvp: the map is self-adjoint.
    """
    if getattr(x, "_data", x).dtype.kind != "c":
        return zeros_like(g)
    mag = abs(x)
    safe = where(mag == 0, 1.0, mag)
    return where(mag == 0, 0.0, (g - real(g * conj(out)) * out) / safe)


sgn.defvjp(_sgn_derivative)
sgn.defjvp(_sgn_derivative)


def _real_sign(xp, x):
    """-1, 0 or 1; 0 at NaN, as torch ((0 < x) - (x < 0)); bools stay as they are."""
    if x.dtype.kind == "b":
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _zero_gradient(g, x, **params):
    """Piecewise-constant ops: zeros, even for an inf or NaN upstream gradient (not g * 0)."""
    return zeros_like(g)


def _piecewise_constant(op_):
    op_.defvjp(_zero_gradient)
    op_.defjvp(_zero_gradient)
    op_.batchable = True


_ROUNDING_COMPLEX = {name: fixed_error(NotImplementedError, f"{name} is not supported for "
                                                              "complex inputs")
                     for name in ("floor", "ceil", "trunc")}


@_unary(complex_error=fixed_error(NotImplementedError, "Unlike NumPy, torch.sign is not intended "
                                  "to support complex numbers. Please use torch.sgn instead."),
        method=True)
def sign(xp, x):
    """-1, 0 or 1 by the sign of x, elementwise (zero gradient; 0 at NaN, as torch)."""
    return _real_sign(xp, x)


_piecewise_constant(sign)


@_unary(complex_error=_ROUNDING_COMPLEX["floor"], bool_error=kernel_error("floor_vml_cpu"),
        method=True, inplace=True)
def floor(xp, x):
    """Largest integer <= x, elementwise (zero gradient)."""
    return xp.floor(x)


_piecewise_constant(floor)


@_unary(complex_error=_ROUNDING_COMPLEX["ceil"], bool_error=kernel_error("ceil_vml_cpu"),
        method=True, inplace=True)
def ceil(xp, x):
    """Smallest integer >= x, elementwise (zero gradient)."""
    return xp.ceil(x)


_piecewise_constant(ceil)


@_unary(complex_error=kernel_error("round_vml_cpu"), bool_error=kernel_error("round_vml_cpu"),
        method=True, inplace=True)
def round(xp, x, decimals=0):  # noqa: A001
    """Round half to even, to ``decimals`` places (zero gradient)."""
    return xp.round(x, decimals)


_piecewise_constant(round)


@_unary(complex_error=_ROUNDING_COMPLEX["trunc"], bool_error=kernel_error("trunc_vml_cpu"),
        method=True)
def trunc(xp, x):
    """x rounded toward zero, elementwise (zero gradient)."""
    return xp.trunc(x)


_piecewise_constant(trunc)


@op()
def zeros_like(xp, x):
    """Zeros of x's shape and dtype (never differentiable: its output is constant)."""
    return xp.zeros_like(x)


@op()
def ones_like(xp, x):
    """Ones of x's shape and dtype (no gradient)."""
    return xp.ones_like(x)


@op(save=("cond",), broadcast=True, batchable=True, method=True)
def where(xp, cond, x, y):
    """x where ``cond`` is true, else y (broadcasting; no gradient to cond)."""
    for number, other in ((x, y), (y, x)):
        check_fits(number, result_type(other, number))
    x, y = promote(xp, x, y)  # two Python numbers become arrays of their promoted dtype
    return xp.where(cond, x, y)


where.defvjp(None,
             lambda g, cond: where(cond, g, 0.0),
             lambda g, cond: where(cond, 0.0, g))
where.defjvp(None,
             lambda t, cond: where(cond, t, 0.0),
             lambda t, cond: where(cond, 0.0, t))


_PAIRWISE_COMPLEX = {name: fixed_error(RuntimeError, f"{name} not implemented for complex tensors.")
                     for name in ("maximum", "minimum")}


@op(save=("x", "y"), broadcast=True, batchable=True, method=True)
def maximum(xp, x, y):
    """Elementwise maximum of x and y (broadcasting)."""
    x, y = promote(xp, x, y)
    reject_complex(x, _PAIRWISE_COMPLEX["maximum"])
    return xp.maximum(x, y)


def _share(g, x, y):
    """Gradient share of x in max/min: 1 where x wins, 1/2 at ties, like torch."""
    return where(x == y, g * 0.5, g)


# torch's rules: the loser gets 0, ties share, and both get the gradient where one is NaN
maximum.defvjp(lambda g, x, y: where(x < y, 0.0, _share(g, x, y)),
               lambda g, x, y: where(y < x, 0.0, _share(g, x, y)))
maximum.defjvp(lambda t, x, y: where(x < y, 0.0, _share(t, x, y)),
               lambda t, x, y: where(y < x, 0.0, _share(t, x, y)))


@op(save=("x", "y"), broadcast=True, batchable=True, method=True)
def minimum(xp, x, y):
    """Elementwise minimum of x and y (broadcasting)."""
    x, y = promote(xp, x, y)
    reject_complex(x, _PAIRWISE_COMPLEX["minimum"])
    return xp.minimum(x, y)


minimum.defvjp(lambda g, x, y: where(x > y, 0.0, _share(g, x, y)),
               lambda g, x, y: where(y > x, 0.0, _share(g, x, y)))
minimum.defjvp(lambda t, x, y: where(x > y, 0.0, _share(t, x, y)),
               lambda t, x, y: where(y > x, 0.0, _share(t, x, y)))
