"""How a Tensor prints, as torch: ``tensor([1., 2.], grad_fn=<MulBackward0>)``."""
from __future__ import annotations

import numpy as np

from gradkit import backend


def host_array(array):
    """The array on the host (a NumPy array; a CuPy array is copied)."""
    return array if isinstance(array, (np.ndarray, np.generic)) else array.get()


def tensor_repr(tensor) -> str:
    """torch's text of a tensor: values, then device, dtype and autograd extras."""
    data = host_array(tensor._data)
    body = np.array2string(data, separator=", ", prefix="tensor(", max_line_width=80,
                           formatter=_float_formatter(data), threshold=1000, edgeitems=3)
    extras = []
    if str(tensor.device) != "cpu":
        extras.append(f"device='{tensor.device}'")
    default_float = backend.get_default_dtype().np
    if data.dtype not in (default_float, np.int64, np.bool_, np.complex64) or data.size == 0:
        extras.append(f"dtype={tensor.dtype}")
    if tensor.grad_fn is not None:
        extras.append(f"grad_fn=<{tensor.grad_fn.name()}>")
    elif tensor._requires_grad:
        extras.append("requires_grad=True")
    fw = getattr(tensor, "_fw", None)
    if fw is not None and fw[0].open:  # a dual tensor of the open forward-AD level
        extras.append(f"tangent={fw[1]!r}")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _float_formatter(data):
    """torch's float style: ``1.`` for whole numbers, else 4 decimals (scientific if extreme)."""
    if data.dtype.kind != "f" or data.size == 0:
        return None
    finite = np.abs(data[np.isfinite(data)].astype(np.float64))
    if finite.size == 0 or np.all(finite == np.round(finite)) and finite.max() < 1e8:
        return {"float_kind": lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)}
    nonzero = finite[finite > 0]
    if finite.max() >= 1e8 or (nonzero.size and nonzero.min() < 1e-4):
        return {"float_kind": lambda v: f"{v:.4e}"}
    return {"float_kind": lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)}
