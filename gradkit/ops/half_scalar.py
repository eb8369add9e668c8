"""float16 with a scalar right operand: torch's CPU mul and div kernels read that scalar (a
Python number, or a tensor of one value that float16 wins over) at its own value in float32 and
round the result once, so ``float16 1e-5 * 1e5`` is 1.0, not ``1e-5 * float16(1e5) = inf``."""
from __future__ import annotations

import numpy as np

from gradkit.ops.promotion import int_scalar_dtype

HALF = np.dtype(np.float16)


def half_with_scalar(x, y) -> bool:
    """Whether x is a float16 array and y a real scalar of another dtype, with a float16 result."""
    if type(x) is not np.ndarray or x.dtype != HALF:
        return False
    if type(y) is int:
        int_scalar_dtype(y)  # torch's parse refuses an int past uint64
        return True
    if type(y) is float:
        return True
    return (type(y) is np.ndarray and y.size == 1 and y.dtype != HALF
            and (y.dtype.kind in "biu" or (y.ndim == 0 < x.ndim and y.dtype.kind == "f")))


def in_float32(ufunc, x: np.ndarray, y) -> np.ndarray:
    """``ufunc(x, y)`` computed in float32 (y at its own value) and rounded to float16."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        wide = ufunc(x.astype(np.float32), np.asarray(y).astype(np.float32))
        return wide.astype(HALF)
