"""pow's derivatives as torch's ``pow_backward`` family computes them (their nodes included:
``grad * (exponent * self.pow(exponent - 1)).conj()`` for a number exponent is a MulBackward0
of a mul.Scalar, MulBackward1, with no where)."""
from __future__ import annotations

import cmath
import math

from gradkit.ops.arithmetic import mul, pow, sub  # noqa: A004 - torch's name
from gradkit.ops.complex import conj, imag, real
from gradkit.ops.conversion import astype
from gradkit.ops.elementwise import log
from gradkit.ops.piecewise import where, zeros_like
from gradkit.ops.promotion import PY_SCALARS
from gradkit.ops.scalar_overloads import mul_scalar


def _pow_grad_exponent(x, y, out):
    # conj(out * log(x)), taken as 0 (not conjugated: 0 + 0j) where x == 0 and y >= 0, like
    # torch; the base is taken in the result's dtype first, as torch's: a real base of a
    # complex power is differentiated as the complex number it was promoted to (log(-2) is
    # finite), an integer or narrower base's log rounds in the result's precision
    complex_out = _array_dtype(out).kind == "c"
    if type(x) in PY_SCALARS:  # a number base (2 ** t): its log is a number too
        if x == 0:
            return where(_real_nonnegative(y), 0.0, conj(out * -math.inf))
        if complex_out or isinstance(x, complex):
            return conj(out * cmath.log(x))
        return out * (math.log(x) if x > 0 else math.nan)
    if _array_dtype(x) != _array_dtype(out):
        x = astype(x, dtype=_array_dtype(out))
    return where((x == 0) & _real_nonnegative(y), 0.0, conj(out * log(x)))


def _real_nonnegative(y):
    """y >= 0; for a complex y torch asks for a real number >= 0 (no complex ordering)."""
    if type(y) in PY_SCALARS:
        return complex(y).imag == 0 and complex(y).real >= 0
    if _array_dtype(y).kind == "c":
        return (imag(y) == 0) & (real(y) >= 0)
    return y >= 0


def _array_dtype(v):
    return getattr(v, "_data", v).dtype


def _pow_vjp_base(g, x, y, out):
    if type(y) in PY_SCALARS and y == 0:  # torch: zeros whatever g holds, and no graph (g's
        return zeros_like(g)  # shape: a batch of gradients in jacrev is_grads_batched)
    if type(y) in PY_SCALARS:  # torch's pow_backward: no where for a number exponent
        return g * conj(mul_scalar(pow(x, y - 1), y))
    # g * y x**(y-1), 0 where y == 0 even at x == 0 or a NaN g: torch's pow_backward_self
    # selects after multiplying (pow: x ** -0.5 is torch's rsqrt)
    # (mul, not NumPy's `*`: a 0-d float64 y would make a float32 x's gradient float64)
    # (a complex y - 1 as torch's sub: its alpha product makes a -0.0 imaginary part +0.0;
    # a bool y's is gradkit's, where torch's sub raises: docs/numerics.md)
    less_one = sub(y, 1) if _array_dtype(y).kind == "c" else y - 1
    return where(y == 0, 0.0, g * conj(mul(y, pow(x, less_one))))


pow.defvjp(_pow_vjp_base,
           lambda g, x, y, out: g * _pow_grad_exponent(x, y, out))
pow.saves_for_every_tensor = True  # torch's Pow1 keeps its result: a write into it refuses
def _pow_jvp(tangents, x, y, out):
    """torch's (pow_backward_self(conj(t_x)) + pow_backward_exponent(conj(t_y))).conj(): with
    only the exponent's tangent a tensor base's term is a tensor of zeros added to it (so
    -0.0 becomes +0.0); a number base has no such term."""
    t_x, t_y = tangents
    base = None if t_x is None else _pow_vjp_base(conj(t_x), x, y, out)
    if t_y is None:
        return conj(base)
    power = conj(t_y) * _pow_grad_exponent(x, y, out)
    if base is None:
        return conj(power if type(x) in PY_SCALARS else zeros_like(power) + power)
    return conj(base + power)


pow.defjvp_all(_pow_jvp)
