"""Piecewise elementwise ops: abs and sign, rounding (zero gradient), where, maximum and
minimum, and zeros_like/ones_like."""
from __future__ import annotations

from gradkit.autograd.zero_grads import marked
from gradkit.ops._op import op
from gradkit.ops.complex import conj, real
from gradkit.ops.promotion import PY_SCALARS, check_fits, promote, result_type
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import (
    fixed_error, half_in_float, kernel_error, reject_complex, require_tensors)


def defmask(op, passes) -> None:
    """An elementwise op whose derivative is 1 where ``passes(*saved)`` holds, else 0: vjp and
    jvp select rather than multiply, so a NaN or inf gradient stays out where the derivative
    is 0, as torch's threshold and clamp backward kernels."""
    op.defvjp(lambda g, *saved, **params: where(passes(*saved, **params), g, 0.0))
    op.defjvp(lambda t, *saved, **params: where(passes(*saved, **params), t, 0.0))
    op.batchable = True  # where(mask, g, 0) broadcasts over a leading batch dim


@op(save="x", batchable=True, method=True, inplace=True)
def abs(xp, x):  # noqa: A001 - torch's name
    """|x| elementwise (the modulus for complex x)."""
    if x.dtype.kind == "b":
        raise kernel_error("abs_cpu")(x)
    return _modulus(xp, x)


def _modulus(xp, x):
    """|x|; for complex x hypot(re, im), as torch's kernels (NumPy's complex abs rounds apart
    from it on about a third of inputs: |z| of a unit z 1 ulp under 1, breadth seed 1178361)."""
    return xp.hypot(x.real, x.imag) if x.dtype.kind == "c" else xp.abs(x)


def _refuse_complex_in_place(target) -> None:
    """abs_ would write |z| into z: torch refuses rather than cast the moduli back."""
    if target.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")


abs.check_in_place = _refuse_complex_in_place
abs.defvjp(lambda g, x: g * sgn(x))
abs.defjvp(lambda t, x: real(conj(sgn(x)) * t))


@op(save=("x", "result"), batchable=True, method=True, inplace=True)
def sgn(xp, x):
    """sign for real numbers, x/|x| (0 at 0) for complex ones."""
    if x.dtype.kind != "c":
        return _real_sign(xp, x)
    mag = _modulus(xp, x)
    return xp.where(mag == 0, 0, x / xp.where(mag == 0, 1, mag))


def _sgn_derivative(g, x, out):
    """d(z/|z|) applied to g: (g - Re(g conj(s)) s) / |z| (0 at 0); zero for real inputs.

    The same expression is the vjp and the jvp: the map is self-adjoint.
    """
    if getattr(x, "_data", x).dtype.kind != "c":
        return zeros_like(g)
    mag = abs(x)
    # divided by |z| itself, then masked, as torch's sgn_backward (masked_fill_ after the
    # division): a second derivative at 0 is NaN there, as torch's
    return where(mag == 0, 0.0, (g - real(g * conj(out)) * out) / mag)


def _sgn_vjp(g, x, out):
    """For real x, zeros known to be zero (torch's efficient zero tensor), which later
    gradients and tangents pass on as zero; else d(z/|z|) applied to g."""
    grad = _sgn_derivative(g, x, out)
    return marked(grad) if getattr(x, "_data", x).dtype.kind != "c" else grad


def _sgn_jvp(t, x, out):
    """The tangent: as the vjp, but torch's forward mode makes a real x's an efficient zero
    tensor only where x has one element; of more, plain zeros, which multiply an inf or
    NaN beside them into NaN (torch 2.13; fwd seeds 524665 and 595807)."""
    if getattr(x, "_data", x).size == 1:
        return _sgn_vjp(t, x, out)
    return _sgn_derivative(t, x, out)


sgn.defvjp(_sgn_vjp)
sgn.defjvp(_sgn_jvp)


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


@unary(complex_error=fixed_error(NotImplementedError, "Unlike NumPy, torch.sign is not intended "
                                  "to support complex numbers. Please use torch.sgn instead."),
        method=True, inplace=True)
def sign(xp, x):
    """-1, 0 or 1 by the sign of x, elementwise (zero gradient; 0 at NaN, as torch)."""
    return _real_sign(xp, x)


_piecewise_constant(sign)


@unary(complex_error=_ROUNDING_COMPLEX["floor"], bool_error=kernel_error("floor_vml_cpu"),
        method=True, inplace=True)
def floor(xp, x):
    """Largest integer <= x, elementwise (zero gradient)."""
    return xp.floor(x)


_piecewise_constant(floor)


@unary(complex_error=_ROUNDING_COMPLEX["ceil"], bool_error=kernel_error("ceil_vml_cpu"),
        method=True, inplace=True)
def ceil(xp, x):
    """Smallest integer >= x, elementwise (zero gradient)."""
    return xp.ceil(x)


_piecewise_constant(ceil)


@unary(method=True, inplace=True)
@half_in_float  # 1001.2 * 100 overflows float16
def round(xp, x, decimals=None):  # noqa: A001
    """Round half to even, to ``decimals`` places (zero gradient). As torch: without decimals
    an integer tensor is copied; with them (0 too) its kernels refuse integers."""
    if x.dtype.kind in "bc" or (decimals is not None and x.dtype.kind in "iu"):
        raise kernel_error("round_cpu" if decimals else "round_vml_cpu")(x)
    return xp.round(x, decimals or 0)


_piecewise_constant(round)
# torch: round(x) and round(x, *, decimals)
round.keyword_only("decimals", overloaded=True, required=True)


@unary(complex_error=_ROUNDING_COMPLEX["trunc"], bool_error=kernel_error("trunc_vml_cpu"),
        method=True, inplace=True)
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


@op(save=("cond",), broadcast=True, batchable=True, elementwise=True)  # method: ops/searching.py
def where(xp, cond, x, y):
    """x where ``cond`` is true, else y (broadcasting; no gradient to cond)."""
    dtype = result_type(x, y)  # torch's message names x's dtype first
    for number in (x, y):
        check_fits(number, dtype)
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


def _extreme(xp, name: str, x, y):
    """The forward of ``maximum``/``minimum`` (``name``, NumPy's too): torch's checks, then
    NumPy's function, but x where x == y: torch keeps the first of 0.0 and -0.0, NumPy the
    second (see docs/numerics.md)."""
    require_tensors(name, x, y)
    for operand in (x, y):  # before promotion: uint16 with complex64 is this error too
        reject_complex(operand, _PAIRWISE_COMPLEX[name])
    x, y = promote(xp, x, y)
    out = getattr(xp, name)(x, y)
    return xp.where(x == y, x, out) if out.dtype.kind == "f" else out


@op(save=("x", "y"), broadcast=True, elementwise=True, batchable=True, method=True)
def maximum(xp, x, y):
    """Elementwise maximum of x and y (broadcasting)."""
    return _extreme(xp, "maximum", x, y)


def _share(g, x, y):
    """Gradient share of x in max/min: 1 where x wins, 1/2 at ties, like torch."""
    return where(x == y, g * 0.5, g)


# torch's rules: the loser gets 0, ties share, and both get the gradient where one is NaN
maximum.defvjp(lambda g, x, y: where(x < y, 0.0, _share(g, x, y)),
               lambda g, x, y: where(y < x, 0.0, _share(g, x, y)))


def _pairwise_jvp(x_wins):
    """torch's forward rule for maximum/minimum: t_y + w (t_x - t_y), w 1/2 at ties, 1 where
    x wins, else 0; so a NaN takes y's tangent alone (backward gives both the gradient)."""
    def rule(tangents, x, y):
        return blend_tangents(*tangents, where(x == y, 0.5, where(x_wins(x, y), 1.0, 0.0)))
    return rule


def first_term_materialized(first, second):
    """A jvp rule for torch's formula first(t_x, ...) + second(t_y, ...) whose missing t_x is
    a zero tensor that the first term's kernel materializes (a -0.0 second term then reads
    +0.0; a number x has no first term); a missing t_y adds nothing."""
    def rule(tangents, x, *saved):
        t_x, t_y = tangents
        if t_x is None and type(x) in PY_SCALARS:
            return second(t_y, x, *saved)
        head = first(zeros_like(x) if t_x is None else t_x, x, *saved)
        return head if t_y is None else head + second(t_y, x, *saved)
    return rule


def blend_tangents(tx, ty, w):
    """t_y + w (t_x - t_y) with torch's zero tensors for a missing tangent: adding one passes
    the other on as it is (a -0.0 too: 0 * -1 stays -0.0), subtracting from one negates."""
    if ty is None:
        return w * tx
    return ty + w * (-ty if tx is None else tx - ty)


maximum.defjvp_all(_pairwise_jvp(lambda x, y: x > y))


@op(save=("x", "y"), broadcast=True, elementwise=True, batchable=True, method=True)
def minimum(xp, x, y):
    """Elementwise minimum of x and y (broadcasting)."""
    return _extreme(xp, "minimum", x, y)


minimum.defvjp(lambda g, x, y: where(x > y, 0.0, _share(g, x, y)),
               lambda g, x, y: where(y > x, 0.0, _share(g, x, y)))
minimum.defjvp_all(_pairwise_jvp(lambda x, y: x < y))
