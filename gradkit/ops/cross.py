"""The cross product of 3-vectors: linalg.cross and torch.cross (whose dim is optional)."""
from __future__ import annotations

import warnings

import numpy as np

from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.fused import complex_product, fused_multiply_add
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.unary_helpers import kernel_error, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters


@op(save=("x", "y"), broadcast=True)
def linalg_cross(xp, x, y, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (other dims broadcast)."""
    if x.ndim != y.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    axis = _normalize_dim(dim, x.ndim)
    if x.shape[axis] != 3 or y.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x.shape[axis]} and {y.shape[axis]}")
    if x.dtype.kind == "b":
        raise kernel_error("cross")(x)
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(x)} but found "
                           f"{scalar_type_name(y)}")
    try:
        x, y = xp.broadcast_arrays(x, y)
    except ValueError:  # torch's message for shapes that do not broadcast
        raise RuntimeError(_broadcast_message([x, y])) from None
    a, b = [xp.take(x, i, axis) for i in range(3)], [xp.take(y, i, axis) for i in range(3)]
    # torch's kernel: a_j b_k - a_k b_j, for floats as one fused multiply-add, for complex
    # numbers each product fused (the cross of a vector with itself is then a rounding
    # error, not 0)
    return xp.stack([_cross_term(xp, a[j], b[k], a[k], b[j])
                     for j, k in ((1, 2), (2, 0), (0, 1))], axis)


def _cross_term(xp, p, q, r, s):
    """p q - r s as torch's cross kernel rounds it (measured): float and double as one fma,
    complex double's products each fused, half and complex float at each step."""
    if p.dtype in (np.float32, np.float64):
        return fused_multiply_add(xp, p, q, -(r * s))
    if p.dtype.kind == "c":
        fused = p.dtype == np.complex128
        return complex_product(xp, p, q, fused) - complex_product(xp, r, s, fused)
    return p * q - r * s


linalg_cross.defvjp(lambda g, x, y, dim: linalg_cross(conj(y), g, dim=dim),
                    lambda g, x, y, dim: linalg_cross(g, conj(x), dim=dim))
linalg_cross.defjvp(lambda t, x, y, dim: linalg_cross(t, y, dim=dim),
                    lambda t, x, y, dim: linalg_cross(x, t, dim=dim))


@tensor_method()
@tensor_parameters("other")
def cross(input, other, dim: int | None = None):
    """linalg.cross along ``dim``; without it (deprecated, with torch's warning) along the
    first dim of size 3."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=2)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)

