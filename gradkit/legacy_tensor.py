"""torch's legacy constructors: ``Tensor(data)``, ``Tensor(*size)``, ``FloatTensor(...)`` & co.

``gradkit.Tensor([1, 2])`` is a float tensor of the default dtype (unlike
``gradkit.tensor``, which infers int64), ``Tensor(2, 3)`` an uninitialised one of
shape (2, 3) (zeros here), ``Tensor()`` an empty one, and ``Tensor(t)`` an alias of
the tensor ``t`` (same memory and version counter, ``AliasBackward0``).
``FloatTensor`` and the other typed names build tensors of their dtype and answer
``isinstance(t, FloatTensor)`` by dtype, as torch's do.
"""
from __future__ import annotations

import weakref

import numpy as np

from gradkit import backend, creation
from gradkit._tensor import Size, Tensor, extend
from gradkit.ops.slicing import _alias


def _describe(args, kwargs) -> str:
    parts = [type(a).__name__ for a in args]
    parts += [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _is_size(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def legacy_new(args: tuple, kwargs: dict, dtype: backend.dtype | None = None,
               name: str = "new", own_device=None) -> Tensor:
    """The tensor ``Tensor(*args, **kwargs)`` makes (``dtype=None``: the default dtype);
    ``own_device``: the device of the tensor whose ``new`` this is (None: a constructor)."""
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    if not args and len(kwargs) == 1 and ("data" in kwargs or isinstance(
            kwargs.get("size"), (tuple, list))):  # the size or the data by keyword
        args = (Size(kwargs.pop("size")),) if "size" in kwargs else (kwargs.pop("data"),)
    if kwargs:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({_describe(args, kwargs)}), but expected one of: (*, device), "
                        "(Tensor other), (tuple of ints size, *, device), "
                        "(object data, *, device)")
    first = args[0] if args else None
    if device is not None and len(args) == 1 and isinstance(first, Tensor):
        raise RuntimeError("Legacy tensor constructor of the form torch.Tensor(tensor, device="
                           "device) is not supported.  Use torch.tensor(...) or torch.as_tensor"
                           "(...) instead." if own_device is None else "Legacy tensor new of "
                           "the form tensor.new(tensor, device=device) is not supported.  Use "
                           "torch.as_tensor(...) instead.")
    expected = "cpu" if own_device is None else own_device.type
    if device is not None and backend.device(device).type != expected:
        raise RuntimeError(f"legacy constructor expects device type: {expected} but device "
                           f"type: {backend.device(device).type} was passed")
    device = own_device if device is None else device
    target = dtype or backend.get_default_dtype()
    if not args:
        return creation.empty(0, dtype=target, device=device)
    if len(args) == 1 and isinstance(first, Tensor):
        if dtype is not None and first.dtype is not dtype:
            raise TypeError(f"expected {dtype} tensor (got {first.dtype} tensor)")
        return _alias(first)
    # (a later Python bool reads as a size, as in any int list)
    if len(args) == 1 and isinstance(first, Size) or all(
            _is_size(a) or i and type(a) is bool for i, a in enumerate(args)):
        return creation.empty(*args, dtype=target, device=device)
    if len(args) > 1:
        bad = next(i for i, a in enumerate(args) if not (_is_size(a) or i and type(a) is bool))
        raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                        f"{bad + 1} with error \"type must be tuple of ints,but got "
                        f"{type(args[bad]).__name__}\"")
    if isinstance(first, (str, bytes)):
        raise TypeError(f"{name}(): invalid data type '{type(first).__name__}'")
    if not isinstance(first, (list, tuple, np.ndarray)) and \
            not hasattr(first, "__cuda_array_interface__"):  # any sequence, as torch's
        if isinstance(first, dict) or not hasattr(type(first), "__getitem__"):
            raise TypeError(f"{name}(): data must be a sequence (got {type(first).__name__})")
        if not hasattr(type(first), "__len__"):
            raise TypeError(f"object of type '{type(first).__name__}' has no len()")
    return creation.tensor(first, dtype=target, device=device)


class LegacyTensorType:
    """``gradkit.FloatTensor`` & co.: a constructor of one dtype and an isinstance test."""

    def __init__(self, name: str, dtype: backend.dtype) -> None:
        self.__name__ = self.__qualname__ = name
        self.dtype = dtype

    def __call__(self, *args, **kwargs) -> Tensor:
        return legacy_new(args, kwargs, self.dtype)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is self.dtype and obj.device.type == "cpu"

    def __mro_entries__(self, bases):  # ``class Foo(FloatTensor)``: torch's refusal
        raise TypeError(f"type 'gradkit.{self.__name__}' is not an acceptable base type")

    def __repr__(self) -> str:
        return f"<class 'gradkit.{self.__name__}'>"


FloatTensor = LegacyTensorType("FloatTensor", backend.float32)
DoubleTensor = LegacyTensorType("DoubleTensor", backend.float64)
HalfTensor = LegacyTensorType("HalfTensor", backend.float16)
LongTensor = LegacyTensorType("LongTensor", backend.int64)
IntTensor = LegacyTensorType("IntTensor", backend.int32)
ShortTensor = LegacyTensorType("ShortTensor", backend.int16)
CharTensor = LegacyTensorType("CharTensor", backend.int8)
ByteTensor = LegacyTensorType("ByteTensor", backend.uint8)
BoolTensor = LegacyTensorType("BoolTensor", backend.bool_)

LEGACY_TYPES = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                CharTensor, ByteTensor, BoolTensor)
_BY_DTYPE = {t.dtype: t for t in LEGACY_TYPES}
_BY_NAME = {t.__name__: t for t in LEGACY_TYPES}


# complex and wide unsigned tensors have a type name in torch but no legacy constructor
_COMPLEX_TYPE_NAMES = {"complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
                       "uint16": "UInt16Tensor", "uint32": "UInt32Tensor",
                       "uint64": "UInt64Tensor"}


def type_name(tensor: Tensor) -> str:
    """``x.type()``: ``gradkit.FloatTensor``, ``gradkit.cuda.DoubleTensor``, ... (torch's names)."""
    legacy = _BY_DTYPE.get(tensor.dtype)
    name = legacy.__name__ if legacy else _COMPLEX_TYPE_NAMES.get(tensor.dtype.name,
                                                                  tensor.dtype.name)
    return "gradkit." + ("cuda." if tensor.device.type == "cuda" else "") + name


def cast_to_type(tensor: Tensor, spec, memory_format=None) -> Tensor:
    """``x.type(spec)`` for a dtype, a tensor type (``FloatTensor``) or its name as a string
    (``"torch.cuda.DoubleTensor"``, ``"gradkit.LongTensor"``), laid out in ``memory_format``
    (None: preserved)."""
    layout = {} if memory_format is None else {"memory_format": memory_format}
    if isinstance(spec, LegacyTensorType):
        return tensor.to(spec.dtype, **layout)
    if spec is Tensor:  # torch.Tensor stands for the default tensor type
        return tensor.to(backend.get_default_dtype(), **layout)
    if isinstance(spec, str):
        parts = spec.split(".")
        legacy = _BY_NAME.get(parts[-1])
        if legacy is None or parts[0] not in ("torch", "gradkit"):
            raise ValueError(f"invalid type: '{spec}'")
        return tensor.to("cuda" if "cuda" in parts[1:-1] else tensor.device, legacy.dtype,
                         **layout)
    if isinstance(spec, backend.dtype):
        return tensor.to(spec, **layout)
    if not isinstance(spec, type):
        raise TypeError("dtype must be a type, str, or dtype object")
    # torch reads any other class by its name, a tensor type's name only (x.type(float) too)
    module = "" if spec.__module__ == "builtins" else f"{spec.__module__}."
    raise ValueError(f"invalid type: '{module}{spec.__qualname__}'")


_NOT_A_TENSOR_CLASS = ("Creating a Tensor subclass from a class that does not inherit from "
                       "Tensor is not possible. Make sure your class inherits from Tensor.")


class _SubclassAccess:
    def as_subclass(self, cls: type) -> Tensor:
        """This tensor as an instance of the Tensor subclass ``cls``, without running its
        constructor: an alias on the same memory and version counter (``AliasBackward0``
        when self requires grad), as torch's. Ops on it give plain Tensors (gradkit has no
        ``__torch_function__``)."""
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not issubclass(cls, Tensor):
            raise TypeError(_NOT_A_TENSOR_CLASS)
        alias = _alias(self)
        if cls is Tensor:
            return alias
        result = object.__new__(cls)
        for slot in Tensor.__slots__:
            if slot not in ("__weakref__", "__dict__") and hasattr(alias, slot):
                setattr(result, slot, getattr(alias, slot))
        refs = result._vc  # the version counter's weak reference to the alias names result
        if isinstance(refs, list) and refs[-1]() is alias:
            refs[-1] = weakref.ref(result)
        return result


extend(_SubclassAccess)
