"""torch.index_put and ``Tensor.index_put(_)``: values written (or added) at a tuple of index
tensors, as ``input[indices] = values`` (``x[key] = v`` itself is ``setitem.setitem_``)."""
from __future__ import annotations

from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.index_keys import _raw_key
from gradkit.ops.indexing import getitem, index_put_into_zeros, index_put_key
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import expand
from gradkit.ops.unary_helpers import scalar_type_name


@tensor_method(inplace=True)
def index_put(input, indices, values, accumulate: bool = False):  # noqa: A002 - torch's name
    """``input`` with ``values`` written at ``indices`` (a tuple of index tensors, read as
    ``input[indices]``); ``accumulate=True`` adds them (repeated indices add up)."""
    return _index_put(input, indices, values, accumulate, index_put_key)


def _index_put_in_place(input, indices, values, accumulate: bool = False):  # noqa: A002
    """index_put as ``x.index_put_(...)`` runs it: its event named as torch's, index_put_."""
    return _index_put(input, indices, values, accumulate, in_place_form(index_put_key))


index_put.in_place = _index_put_in_place


def _index_put(input, indices, values, accumulate: bool, put):  # noqa: A002 - torch's name
    """index_put's work, writing with the op ``put`` (index_put_key or its in-place form)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' (position 1) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(input)} for the destination and "
                           f"{scalar_type_name(values)} for the source.")
    key = _raw_key(tuple(indices))
    if not accumulate:
        return put(input, values, key=key)
    region = getitem(input, key)
    if not _broadcasts(tuple(values.shape), tuple(region.shape)):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(region.shape)}")
    return input + index_put_into_zeros(expand(values, tuple(region.shape)),
                                        shape=tuple(input.shape), key=key)


def _broadcasts(shape: tuple, target: tuple) -> bool:
    """Whether values of ``shape`` broadcast to ``target`` (no leading 1-dims dropped here)."""
    return len(shape) <= len(target) and all(
        n in (1, t) for n, t in zip(reversed(shape), reversed(target)))
