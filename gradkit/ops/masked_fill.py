"""``masked_fill``: x with a value (a number, or a 0-d tensor read as one) where a
bool mask is true."""
from __future__ import annotations

import warnings

import numpy as np

from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import op, seam
from gradkit.ops.conversion import fitted_item
from gradkit.ops.piecewise import where


def expanded_warning(name: str, example: str) -> str:
    """torch's deprecation warning for a write into an expanded tensor."""
    return (f"Use of {name} on expanded tensors is deprecated. Please clone() the tensor before "
            f"performing this operation. This also applies to advanced indexing e.g. {example}")


@op(save="mask", broadcast=True, method=True, inplace=True, contiguous=True)
def masked_fill(xp, x, mask, value):
    """x with ``value`` where the bool ``mask`` (broadcasting) is true."""
    if getattr(value, "ndim", 0):  # torch checks the value after x and mask broadcast
        try:
            np.broadcast_shapes(x.shape, getattr(mask, "shape", ()))
        except ValueError:
            raise RuntimeError(_broadcast_message((x, mask))) from None
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if getattr(mask, "dtype", None) is not None and mask.dtype.kind != "b":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype}")
    return xp.where(mask, xp.asarray(fitted_item(value, x.dtype), dtype=x.dtype), x)


def _masked_fill_overlap(target, mask, value) -> bool:
    warnings.warn(expanded_warning("masked_fill_", "tensor[mask] = scalar"), UserWarning,
                  stacklevel=5)
    return True


masked_fill.check_overlap = _masked_fill_overlap


def _masked_value_grad(g, mask):
    return seam.sum(where(mask, g, 0.0))  # reduction.py imports this file, through indexing


masked_fill.defvjp(lambda g, mask: masked_fill(g, mask, 0.0), None, _masked_value_grad)


def _masked_value_jvp(t, mask):
    return where(mask, t, 0.0)


masked_fill.defjvp(lambda t, mask: masked_fill(t, mask, 0.0), None, _masked_value_jvp)
