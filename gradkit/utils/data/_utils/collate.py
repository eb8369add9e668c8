"""default_collate and default_convert: samples -> a batch, with torch 2.13's rules.

``collate(batch, collate_fn_map=...)`` is the general walk; ``default_collate_fn_map`` says
what to do with each leaf type (extend it, as in torch, to collate types of your own).
"""
from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.creation import as_tensor, tensor
from gradkit.int_arguments import type_name
from gradkit.ops.joining import stack
from gradkit.utils.data._utils.worker import get_worker_info

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtypes that cannot become tensors: bytes, strings, objects
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _rebuilt(elem, values: list):
    """A container like ``elem`` holding ``values``: a copy for mutable sequences, the type
    called on the list otherwise, a plain list when the type cannot be built from one."""
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def _rebuilt_mapping(elem, values: dict):
    """A mapping like ``elem`` holding ``values`` (a plain dict when the type refuses)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def default_convert(data):
    """Convert the NumPy arrays (and NumPy scalars) in ``data`` to tensors, through
    mappings, namedtuples and sequences; everything else is left as is (tuples become
    lists, as torch)."""
    if isinstance(data, Tensor):
        return data
    kind = type(data)
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)  # (torch leaves np.bytes_ to as_tensor's TypeError)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt(data, [default_convert(d) for d in data])
    return data


def collate(batch: list, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None):
    """Collate ``batch`` (a list of samples): leaves by ``collate_fn_map`` (exact type first,
    then the first key ``batch[0]`` is an instance of), containers element by element."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuilt_mapping(elem, {key: collate([d[key] for d in batch],
                                                    collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map)
                   for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuilt(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    """Tensors -> one tensor with a new first dimension (``stack``). In a worker process
    torch stacks into shared memory (``out=``), which refuses tensors that require grad."""
    if (get_worker_info() is not None and is_grad_enabled()
            and any(getattr(t, "requires_grad", False) for t in batch)):
        raise RuntimeError("stack(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    for i, value in enumerate(batch):  # gradkit's stack takes arrays too; torch's refuses
        if not isinstance(value, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(value)}")
    return stack(batch, 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: dict | None = None):
    """NumPy arrays -> tensors, then collated as tensors (string/object arrays refused)."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    """NumPy scalars (and any numbers after them) -> a 1-d tensor, ``as_tensor(batch)`` as
    torch's: dtypes promoted as tensor() promotes them (int64 with float16 is float16)."""
    if all(type(value) is type(batch[0]) for value in batch):  # one dtype: NumPy's array
        return as_tensor(np.asarray(batch))
    return as_tensor(batch)


def collate_float_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    """Python floats -> a float64 tensor (whatever the default dtype)."""
    return tensor(batch, dtype=backend.float64)


def collate_int_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    """Python ints (and bools) -> an int64 (bool) tensor."""
    return tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: dict | None = None):
    """Strings and bytes stay a list."""
    return batch


# the order matters: NumPy's float64 is also a Python float, and bool an int
default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list):
    """Put a list of samples into a batch: tensors, NumPy arrays and numbers are stacked
    into tensors with a new first dimension (floats as float64, ints as int64), strings
    stay lists, and mappings, namedtuples and sequences are collated field by field
    (tuples give lists, as torch)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
