"""More of torch's creation functions and shape helpers: ``asarray``, ``scalar_tensor``, the
deprecated end-inclusive ``range``, ``broadcast_shapes`` and ``unravel_index``."""
from __future__ import annotations

import builtins
import itertools
import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from gradkit import backend, creation, interop
from gradkit._tensor import Size, Tensor
from gradkit.ops.arithmetic import floor_divide, remainder
from gradkit.ops.conversion import fitted
from gradkit.ops.joining import unbind
from gradkit.ops.shape import unsqueeze
from gradkit.ops.unary_helpers import kernel_error, scalar_type_name
from gradkit.range_arguments import range_arguments

_UNSET = object()
_NUMBERS = (bool, int, float, complex, np.number, np.bool_)


def _alias_refusal(source: np.dtype, target: np.dtype) -> ValueError:
    return ValueError(f"can't alias tensor with dtype '{scalar_type_name(np.empty(0, source))}' "
                      f"into dtype '{scalar_type_name(np.empty(0, target))}'.")


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None,
            requires_grad=_UNSET) -> Tensor:
    """torch's asarray: ``obj`` itself (a Tensor) or its memory (a NumPy array) when dtype and
    device allow, a copy when ``copy=True`` or they differ (``copy=False`` then refuses);
    Python data is always copied. ``requires_grad`` defaults to obj's (with torch's warning);
    given, it is set on the result (on obj itself when that is a leaf it returns)."""
    if isinstance(obj, np.generic):  # a NumPy scalar has a buffer: a 0-d array of its dtype
        obj = np.asarray(obj)
    elif type(obj).__name__ == "PyCapsule" or (
            hasattr(obj, "__dlpack__") and not isinstance(obj, (Tensor, np.ndarray))):
        obj = interop.from_dlpack(obj)  # torch reads DLPack (its memory) before buffers
    elif isinstance(obj, (memoryview, bytes, bytearray)):  # raw bytes read as dtype (aliased)
        obj = interop.frombuffer(obj, dtype=dtype or backend.get_default_dtype())
    if isinstance(obj, Tensor):
        out = _tensor_as(obj, dtype, device, copy)
        if requires_grad is _UNSET:
            requires_grad = obj._requires_grad
            if requires_grad:
                warnings.warn("torch.asarray: unspecified requires_grad now defaults to "
                              "obj.requires_grad instead of False. Pass requires_grad=False "
                              "explicitly to get the old behavior and silence this warning.",
                              UserWarning, stacklevel=2)
    elif isinstance(obj, np.ndarray):
        target = obj.dtype if dtype is None else backend.to_numpy_dtype(dtype)
        if copy is False and target != obj.dtype:
            raise _alias_refusal(obj.dtype, target)
        out = creation.tensor(obj, dtype=dtype, device=device) if copy or \
            target != obj.dtype else creation.as_tensor(obj, device=device)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        out = creation.tensor(obj, dtype=dtype, device=device)
    if requires_grad is _UNSET or not requires_grad:
        if out._requires_grad:  # a leaf loses the flag, a result of ops its history
            out = out.detach() if out.grad_fn is not None else out._set_requires_grad(False)
        return out
    if out._data.dtype.kind not in "fc":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return out if out._requires_grad else out._set_requires_grad(True)


def _tensor_as(tensor: Tensor, dtype, device, copy: bool | None) -> Tensor:
    target = tensor._data.dtype if dtype is None else backend.to_numpy_dtype(dtype)
    place = tensor.device if device is None else backend.device(device)
    differs = target != tensor._data.dtype or place != tensor.device
    if copy is False and differs:
        raise _alias_refusal(tensor._data.dtype, target)
    if differs:
        return tensor.to(place, backend.from_numpy_dtype(target))
    return tensor.clone() if copy else tensor


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the number ``s``, in the default float dtype unless ``dtype``."""
    if isinstance(s, Tensor) or not isinstance(s, _NUMBERS):
        raise TypeError("scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    target = backend.to_numpy_dtype(dtype or backend.get_default_dtype())
    # torch's overflow check (1j into a float, 300 into uint8; a fill of one element, so
    # 70000 into float16 is inf)
    value = fitted(s, target, one_element=True)
    # a cast, not a conversion: -1 wraps into uint8 and 2.5 truncates into int64, as torch
    return creation.tensor(np.asarray(value).astype(target), device=device,
                           requires_grad=requires_grad)


def range(*args, dtype=None, device=None, requires_grad: bool = False,  # noqa: A001
          **numbers) -> Tensor:
    """``range(start, end, step=1)``: start, start + step, ... up to ``end`` included
    (deprecated in torch, with its warning: ``arange`` excludes ``end``); the default float
    dtype unless ``dtype``."""
    start, end, step = range_arguments(args, numbers)
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    dtype = dtype or backend.get_default_dtype()
    if backend.to_numpy_dtype(dtype).kind in "bc":  # torch has no such kernel
        raise kernel_error("range_cpu")(np.empty(0, backend.to_numpy_dtype(dtype)))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = math.floor((end - start) / step) + 1
    exact = all(isinstance(v, (int, np.integer)) for v in (start, step))  # no float rounding
    values = start + np.arange(count, dtype=np.int64 if exact else np.float64) * step
    return creation.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def broadcast_shapes(*shapes) -> Size:
    """The shape tensors of ``shapes`` broadcast to (ints are 1-d shapes), with torch's
    errors for shapes that do not broadcast."""
    shapes = tuple((s,) if isinstance(s, (int, np.integer)) else s
                   for s in shapes if s is not None)
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * builtins.max((len(s) for s in shapes), default=0)
    for index, shape in enumerate(shapes):
        for axis in builtins.range(-1, -1 - len(shape), -1):
            size = shape[axis]
            if size == common[axis]:
                continue
            if common[axis] == 1:
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[axis] = size
            if size != 1 and common[axis] != size:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {axis}! "
                    f"Mismatching argument at index {index} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    for position, size in enumerate(common):
        if not isinstance(size, (int, np.integer)):
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {position} is "
                            f"'{type(size).__name__}')")
    return Size(common)


def unravel_index(indices: Tensor, shape) -> tuple[Tensor, ...]:
    """The coordinates, one int64 tensor per dim of ``shape``, of flat ``indices`` (taken
    modulo each dim, as torch's floor_divide and remainder give them)."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype == backend.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (int, tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for size in shape:
        if not isinstance(size, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(size)}")
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    strides = list(itertools.accumulate(reversed(shape[1:] + (1,)), operator.mul))[::-1]
    as_int64 = {"dtype": backend.int64, "device": indices.device}
    coordinates = remainder(floor_divide(unsqueeze(indices, dim=-1),
                                         creation.tensor(strides, **as_int64)),
                            creation.tensor(shape, **as_int64))
    return unbind(coordinates, -1)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` whose dims lie in memory in the order ``physical_layout``
    (outermost first): ``empty(size[physical_layout]).permute(inverse)`` (zeros here,
    uninitialised in torch)."""
    if not isinstance(size, (tuple, list, Size)):
        raise TypeError("empty_permuted(): argument 'size' (position 1) must be tuple of ints, "
                        f"not {type(size).__name__}")
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    for index, dim in enumerate(order):
        if not 0 <= dim < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(size) - 1}, but got {dim} at index {index}).  NB: negative "
                               "dims not currently supported; file an issue if you want it.")
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    out = creation.zeros(tuple(size[d] for d in order), dtype=dtype, device=device)
    inverse = tuple(sorted(builtins.range(len(order)), key=order.__getitem__))
    out = Tensor._make(out._data.transpose(inverse))
    return out._set_requires_grad(True) if requires_grad else out
