"""Complex numbers in polar form: their argument (``angle``), and ``polar(abs, angle)``."""
from __future__ import annotations

import math

from gradkit.backend import get_default_dtype
from gradkit.ops._op import op
from gradkit.ops.complex import _is_complex, conj, real
from gradkit.ops.grad_edges import sum_of_defined
from gradkit.ops.complex_build import check_parts, complex_, from_parts
from gradkit.ops.elementwise import cos, sin
from gradkit.ops.piecewise import abs, sgn, where, zeros_like  # noqa: A004


@op(save=("x",), batchable=True, method=True)
def angle(xp, x):
    """The argument of each element in radians (real x: pi where negative, else 0; NaN stays)."""
    if x.dtype.kind == "c":  # torch copies a complex result into a fresh (C-ordered) one
        out = xp.angle(x)
        return out if out.flags.c_contiguous else out.copy(order="C")
    dtype = x.dtype if x.dtype.kind == "f" else get_default_dtype().np
    out = xp.where(x < 0, math.pi, 0.0).astype(dtype)
    return xp.where(xp.isnan(x), math.nan, out).astype(dtype) if x.dtype.kind == "f" else out


def _angle_backward(g, x):
    """torch's angle_backward: zeros for a real x (whatever g); g i x / |x|^2 for a complex
    one, exactly 0 where x is 0 (a NaN g included). The unselected 0 / 0 at x = 0 is kept,
    as torch's: the second derivative there is NaN, as torch's."""
    if not _is_complex(x):
        return zeros_like(g)  # g's shape: a batched gradient keeps its leading dim
    # torch's order (an inf g gives NaN) and |x| ** 2 (x conj(x)'s imaginary part is
    # inf - inf where |x|² overflows: torch's gradient there is 0)
    return where(x == 0, 0.0, g * x / abs(x) ** 2 * 1j)


angle.defvjp(_angle_backward)
angle.defjvp(lambda t, x: real(_angle_backward(conj(t), x)))  # torch: its conj, real part


@op(save=("abs", "angle", "result"), broadcast=True, elementwise=True)
def polar(xp, abs, angle):  # noqa: A002 - torch's argument names
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    dtype = check_parts(xp, abs, angle)
    return from_parts(xp, abs * xp.cos(angle), abs * xp.sin(angle), dtype)


# torch's polar_backward: d result / d abs is its phase, d result / d angle is i result
polar.defvjp(lambda g, abs, angle, result: real(conj(g) * sgn(result)),
             lambda g, abs, angle, result: real(conj(g) * (result * 1j)))


def _polar_jvp(tangents, abs, angle, result):  # noqa: A002
    """torch's complex(t_abs cos - t_angle abs sin, t_abs sin + t_angle abs cos): the parts
    summed as reals (a sum of two complex tangents would add inf + nan j parts)."""
    t_abs, t_angle = tangents
    on_abs = (None, None) if t_abs is None else (t_abs * cos(angle), t_abs * sin(angle))
    on_angle = (None, None) if t_angle is None else (
        -(t_angle * abs * sin(angle)), t_angle * abs * cos(angle))
    return complex_(sum_of_defined(on_abs[0], on_angle[0]), sum_of_defined(on_abs[1], on_angle[1]))


polar.defjvp_all(_polar_jvp)
