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
    if x_int and (isinstance(y, _PY_FLOATS) or true_division and y_int):
        x = _to_default_float(xp, x, y)
    if y_int and (isinstance(x, _PY_FLOATS) or true_division and x_int):
        y = _to_default_float(xp, y, x)
    return x, y


def _is_integral(v) -> bool:
    kind = getattr(getattr(v, "dtype", None), "kind", None)
    if kind is None:
        return isinstance(v, (int, bool))
    return kind in "iub"


def _to_default_float(xp, v, other):
    dtype = get_default_dtype().np
    if isinstance(other, complex):
        dtype = np.result_type(dtype, np.complex64)
    return xp.asarray(v, dtype=dtype)
