"""Complex tensors built from their real and imaginary parts: ``complex(real, imag)``."""
from __future__ import annotations

from gradkit.creation import zeros
from gradkit.ops._op import op
from gradkit.ops.complex import imag, real
from gradkit.ops.index_ops import broadcast_shape
from gradkit.ops.unary_helpers import scalar_type_name

_FLOATS = ("float16", "float32", "float64")


def check_parts(xp, a, b):
    """torch takes two tensors of one floating dtype (NumPy has no complex half: refused)."""
    if a.dtype.name not in _FLOATS or b.dtype.name not in _FLOATS:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(a)} and {scalar_type_name(b)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(a)} but got scalar "
                           f"type {scalar_type_name(b)} for second argument")
    if a.dtype.name == "float16":
        raise TypeError("complex32 (ComplexHalf) tensors are not supported by gradkit")
    return xp.complex64 if a.dtype.name == "float32" else xp.complex128


def from_parts(xp, real_part, imag_part, dtype):
    """A complex array of ``dtype`` with these parts, bit for bit (``re + 1j * im`` would make
    NaN of an infinite imaginary part's real product)."""
    shape = broadcast_shape(real_part.shape, imag_part.shape)
    out = xp.empty(shape, dtype=dtype)
    xp.real(out)[...] = real_part
    xp.imag(out)[...] = imag_part
    return out


@op(name="complex", broadcast=True, save=("real", "imag"), elementwise=True)
def complex_(xp, real, imag):
    """The complex tensor ``real + i imag`` (both of one floating dtype; broadcasting)."""
    return from_parts(xp, real, imag, check_parts(xp, real, imag))


def _complex_tangent(tangents, *saved_parts):
    t_real, t_imag = tangents
    given = t_real if t_real is not None else t_imag
    missing = zeros(tuple(given.shape), dtype=given.dtype, device=given.device)
    return complex_(missing if t_real is None else t_real, missing if t_imag is None else t_imag)


# torch's ComplexBackward0 keeps each part whose gradient it computes (``_saved_real`` is None
# for a real part that needs none; a write into a kept one before backward is refused), though
# no gradient reads it: each rule names its part, so the node keeps what torch's keeps
complex_.defvjp(lambda g, real_part, imag_part: real(g) if real_part is not None else None,
                lambda g, real_part, imag_part: imag(g) if imag_part is not None else None)
complex_.defjvp_all(_complex_tangent)
