"""torch.index_put and ``Tensor.index_put(_)``: values written (or added) at a tuple of index
tensors, as ``input[indices] = values`` (``x[key] = v`` itself is ``setitem.setitem_``)."""
from __future__ import annotations

from gradkit.memory_format import preserved_copy
from gradkit.ops._op import op
from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.index_keys import _is_basic, _located, _raw_key
from gradkit.ops.indexing import _value_grad, getitem, index_put_key
from gradkit.ops.masked_fill import warn_masked_fill_dispatch, warns_when_expanded
from gradkit.ops.memory_overlap import aliased_copy, has_internal_overlap
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.unary_helpers import scalar_type_name


@tensor_method()
def index_put(input, indices, values, accumulate: bool = False):  # noqa: A002 - torch's name
    """``input`` with ``values`` written at ``indices`` (a tuple of index tensors, read as
    ``input[indices]``); ``accumulate=True`` adds them (repeated indices add up)."""
    return _index_put(input, indices, values, accumulate)


def _index_put_in_place(input, indices, values, accumulate: bool = False):  # noqa: A002
    """``x.index_put_``'s values: as ``index_put``, but adding into an expanded ``x`` adds
    once per element sharing a location, as torch's kernel writing into its memory does; its
    events named as torch's, index_put_."""
    return _index_put(input, indices, values, accumulate, aliased=True)


def _index_put(input, indices, values, accumulate: bool, aliased: bool = False):  # noqa: A002
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' (position 1) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(input)} for the destination and "
                           f"{scalar_type_name(values)} for the source.")
    key = _raw_key(tuple(indices))
    if not accumulate:
        if aliased and has_internal_overlap(input._data):
            warn_masked_fill_dispatch(key, values)
        return (in_place_form(index_put_key) if aliased else index_put_key)(input, values, key=key)
    region = getitem(input, key)
    if not _broadcasts(tuple(values.shape), tuple(region.shape)):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(region.shape)}")
    add = in_place_form(index_put_add) if aliased else index_put_add
    return add(input, values, key=key, _aliased=aliased)


@op(save=("x.shape", "value.shape"), name="index_put", node_name="IndexPutBackward0",
    linear=True)
def index_put_add(xp, x, value, key=None, _aliased=False):
    """``x`` with ``value`` added at ``key``, one index after another (repeats add up);
    ``_aliased``: x's elements sharing memory still share it while adding (x.index_put_)."""
    out = aliased_copy(x) if _aliased else preserved_copy(xp, x)
    if _is_basic(key):
        out[key] += value
    elif value.size:  # an empty value adds nothing (its key may hold indices out of range)
        xp.add.at(*_located(out, key), value)
    return xp.array(out) if _aliased else out


index_put_add.defvjp(lambda g, x_shape, value_shape, key, _aliased: g,
                     lambda g, x_shape, value_shape, key, _aliased: _value_grad(
                         g, value_shape, key))


def _broadcasts(shape: tuple, target: tuple) -> bool:
    """Whether values of ``shape`` broadcast to ``target`` (no leading 1-dims dropped here)."""
    return len(shape) <= len(target) and all(
        n in (1, t) for n, t in zip(reversed(shape), reversed(target)))


_index_put_in_place.check_overlap = warns_when_expanded("index_put_", "tensor[indices] = tensor")
register(_index_put_in_place, "index_put", (), inplace=True)
