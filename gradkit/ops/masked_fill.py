"""``masked_fill``: x with a value (a number, or a 0-d tensor read as one) where a
bool mask is true."""
from __future__ import annotations

import numpy as np

from gradkit._user_frames import warn_at_user
from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import op, seam
from gradkit.ops.conversion import fitted_item
from gradkit.ops.piecewise import where
from gradkit.ops.promotion import PY_SCALARS, WIDE_UNSIGNED
from gradkit.ops.unary_helpers import c_type_name, kernel_error


def expanded_warning(name: str, example: str) -> str:
    """torch's deprecation warning for a write into an expanded tensor."""
    return (f"Use of {name} on expanded tensors is deprecated. Please clone() the tensor before "
            f"performing this operation. This also applies to advanced indexing e.g. {example}")


@op(save="mask", broadcast=True, method=True, inplace=True, contiguous=True)
def masked_fill(xp, x, mask, value):
    """x with ``value`` where the bool ``mask`` (broadcasting) is true."""
    # torch's out-of-place masked_fill expands (mask, self) first, then runs masked_fill_
    _check_broadcast(mask, x)
    _check_value_and_mask(mask, value)
    if x.dtype in WIDE_UNSIGNED:  # torch's kernel refuses them before it reads the value
        raise kernel_error("masked_fill")(x)
    return xp.where(mask, xp.asarray(fitted_item(value, x.dtype), dtype=x.dtype), x)


def _check_broadcast(first, second) -> None:
    """torch's infer_size message when ``first`` and ``second`` do not broadcast."""
    try:
        np.broadcast_shapes(getattr(first, "shape", ()), getattr(second, "shape", ()))
    except ValueError:
        raise RuntimeError(_broadcast_message((first, second))) from None


def _check_value_and_mask(mask, value) -> None:
    """masked_fill_'s own checks, in its order: a 0-d value, then a bool mask (a number is
    none: torch's parser finds no signature for it)."""
    if type(mask) in PY_SCALARS:
        got = "Tensor" if hasattr(value, "dtype") else type(value).__name__
        raise TypeError("masked_fill() received an invalid combination of arguments - got "
                        f"(Tensor, {type(mask).__name__}, {got}), but expected one of:")
    if getattr(value, "ndim", 0):
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if getattr(mask, "dtype", None) is not None and mask.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{c_type_name(mask)}")


def _check_in_place(target, mask, value) -> None:
    """x.masked_fill_(mask, value) checks the value and mask before it broadcasts the mask
    to x (self first in torch's message)."""
    _check_value_and_mask(getattr(mask, "_data", mask), getattr(value, "_data", value))
    _check_broadcast(target, getattr(mask, "_data", mask))


masked_fill.check_in_place = _check_in_place


def warns_when_expanded(name: str, example: str):
    """The ``check_overlap`` (ops/inplace.py) of an op torch lets write into an expanded
    tensor: it warns that this is deprecated, and the write's backward refuses the region."""
    def check(target, *args) -> bool:
        warn_at_user(expanded_warning(name, example))
        return True
    return check


def warn_index_put_expanded(key, value) -> bool:
    """index_put_'s ``check_overlap`` (``key``: a raw indexing key): torch warns, then writes
    (``warn_masked_fill_dispatch``: it may warn again)."""
    warn_at_user(expanded_warning("index_put_", "tensor[indices] = tensor"))
    warn_masked_fill_dispatch(key, value)
    return True


def warn_masked_fill_dispatch(key, value) -> None:
    """torch's index_put_ (not adding) into an expanded tensor of a one-element value at one
    bool or uint8 mask, and no other index tensor, runs masked_fill_, which warns too
    (canDispatchToMaskedFill)."""
    arrays = [k for k in (key if type(key) is tuple else (key,)) if hasattr(k, "dtype")]
    if getattr(getattr(value, "_data", value), "size", 1) == 1 and len(arrays) == 1 and \
            arrays[0].dtype in (np.bool_, np.uint8):
        warn_at_user(expanded_warning("masked_fill_", "tensor[mask] = scalar"))


masked_fill.check_overlap = warns_when_expanded("masked_fill_", "tensor[mask] = scalar")


def _masked_value_grad(g, mask):
    return seam.sum(where(mask, g, 0.0))  # reduction.py imports this file, through indexing


masked_fill.defvjp(lambda g, mask: masked_fill(g, mask, 0.0), None, _masked_value_grad)


def _masked_value_jvp(t, mask):
    return where(mask, t, 0.0)


masked_fill.defjvp(lambda t, mask: masked_fill(t, mask, 0.0), None, _masked_value_jvp)
