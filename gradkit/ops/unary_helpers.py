"""Small helpers shared by op forwards (dtype promotion as torch does it)."""
from __future__ import annotations

import numpy as np

from gradkit.backend import get_default_dtype

_PY_FLOATS = (float, complex)


def promote(xp, x, y, true_division: bool = False):
    """torch's promotion where NumPy's differs: integer arrays meet floats in the default dtype.

    NumPy turns ``int64_array * 2.5`` (and ``int_array / int_array``) into float64;
    torch gives the default float dtype (float32).
    """
    x_int = _is_integral(x)
    y_int = _is_integral(y)
    if not (x_int or y_int):  # the common case: nothing to do
        return x, y
    if x_int and (type(y) in _PY_FLOATS or true_division and y_int):
        x = _to_default_float(xp, x, y)
    if y_int and (type(x) in _PY_FLOATS or true_division and x_int):
        y = _to_default_float(xp, y, x)
    return x, y


def _is_integral(v) -> bool:
    kind = type(v)
    if kind is float or kind is complex:
        return False
    if kind is int or kind is bool:
        return True
    dtype = getattr(v, "dtype", None)
    return dtype is not None and dtype.kind in "iub"


def _to_default_float(xp, v, other):
    dtype = get_default_dtype().np
    if isinstance(other, complex):
        dtype = np.result_type(dtype, np.complex64)
    return xp.asarray(v, dtype=dtype)
