"""torch.special's Bessel and Airy functions as ops of one input: J0, J1, Y0, Y1, the modified
I0, I1, K0, K1 and scaled K0, K1, the spherical j0 and Airy's Ai. Integers and bools are
computed in the default float dtype; complex inputs get torch's kernel errors. Torch defines no
derivative for any of them, so their outputs never require grad (as torch's)."""
from __future__ import annotations

from gradkit.ops import bessel
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import kernel_error, refuse_half


def _declare(name: str):
    """The op ``name`` over ``bessel.<name>_array``, refusing complex and float16 with torch's
    messages (its kernels have no Half version)."""
    kernel, values = f"{name}_cpu", getattr(bessel, f"{name}_array")

    def forward(xp, x):
        refuse_half(x, kernel)
        return values(xp, x)
    forward.__doc__ = values.__doc__
    return unary(save=(), floating=True, name=name, complex_error=kernel_error(kernel))(forward)


# One op per kernel, each bound to its kernel's name.
(
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_i0, modified_bessel_i1,
    modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0,
    scaled_modified_bessel_k1, spherical_bessel_j0,
) = map(_declare, (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
))
