"""Array-module selection (NumPy on the CPU, CuPy on NVIDIA GPUs), devices and dtypes.

Everything above this module talks about arrays through ``xp``: the module that
owns them. CuPy is imported lazily, so gradkit imports and runs without it.
"""
from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

try:  # bfloat16 is optional, as in the design contract
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None


class dtype:  # noqa: N801 - torch's spelling
    """A tensor element type, e.g. ``gradkit.float32``; wraps a NumPy dtype."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "itemsize", "is_signed")

    def __init__(self, name: str, np_dtype) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        kind = self.np.kind
        self.is_complex = kind == "c"
        self.is_floating_point = kind == "f" or name == "bfloat16"
        self.is_signed = kind in "ifc" or name == "bfloat16"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"gradkit.{self.name}"

    def __reduce__(self) -> str:
        """One object per dtype, as torch's: pickled by its module-level name, so pickle, copy
        and deepcopy give back the same object (``copy.deepcopy(gradkit.float32) is
        gradkit.float32``)."""
        return "bool_" if self.name == "bool" else self.name

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype: ``np.dtype(gradkit.float64)`` reads it, so a gradkit dtype can be
        passed straight to an op's ``dtype=`` (``x.sum(dtype=gradkit.float64)``)."""
        if self.name == "bfloat16":
            raise TypeError(BFLOAT16_REFUSED)
        return self.np

    def to_real(self) -> dtype:
        return _BY_NP[np.dtype(np.finfo(self.np).dtype)] if self.is_complex else self

    def to_complex(self) -> dtype:
        """torch's complex dtype of the same precision; float16's is complex64, as gradkit
        has no complex32 (float16 with a complex operand computes in complex64 too)."""
        if self.is_complex:
            return self
        if not self.is_floating_point:
            raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_TYPE_NAMES[self.name]}")
        return complex128 if self.name == "float64" else complex64


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
int8 = dtype("int8", np.int8)
uint8 = dtype("uint8", np.uint8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)
# torch's "barebones" unsigned types: creation, copies, comparisons for equality, bitwise
# and, or, xor, mul and a few more ops; the rest refuse (ops/wide_unsigned.py)
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
ALL_DTYPES = [float16, float32, float64, complex64, complex128,
              int8, uint8, int16, int32, int64, bool_, uint16, uint32, uint64]
if _ml_dtypes is not None:  # pragma: no cover - optional
    bfloat16 = dtype("bfloat16", _ml_dtypes.bfloat16)
    ALL_DTYPES.append(bfloat16)

_BY_NP = {d.np: d for d in ALL_DTYPES}


# torch's ScalarType names, in its messages
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double",
                     "complex64": "ComplexFloat", "complex128": "ComplexDouble",
                     "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                     "uint8": "Byte", "bool": "Bool", "uint16": "UInt16", "uint32": "UInt32",
                     "uint64": "UInt64"}


def legacy_type_name(array) -> str:
    """torch's legacy type name of an array's tensor, as its messages print it, with gradkit's
    prefix: ``gradkit.FloatTensor``, ``gradkit.cuda.DoubleTensor``; a type torch's table of
    legacy names lacks keeps ATen's name (``CPUBoolType``, ``CUDAComplexFloatType``)."""
    name = SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)
    cpu = isinstance(array, np.ndarray)
    if name not in _LEGACY_NAMED:
        return f"{'CPU' if cpu else 'CUDA'}{name}Type"
    return f"gradkit.{'' if cpu else 'cuda.'}{name}Tensor"


# the scalar types torch's error messages rename (torch/csrc/Exceptions.cpp's table)
_LEGACY_NAMED = frozenset(("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"))


def from_numpy_dtype(np_dtype) -> dtype:
    """The gradkit dtype of a NumPy/CuPy dtype (raises TypeError for unsupported ones)."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"gradkit does not support arrays of dtype {np_dtype}") from None


BFLOAT16_REFUSED = (
    "gradkit does not support bfloat16 tensors: NumPy (with ml_dtypes) would compute "
    "bfloat16 @ bfloat16 in float32, promote int with bfloat16 to float64, print it like an "
    "int tensor, and autograd does not handle it; use float32 or float16 (gradkit.bfloat16 "
    "exists only to be named; see docs/torch_coverage.md)")


def tensor_dtype(np_dtype) -> dtype:
    """The gradkit dtype a new tensor of NumPy dtype ``np_dtype`` gets (TypeError for dtypes
    tensors cannot have: bfloat16, and any NumPy dtype gradkit lacks)."""
    found = from_numpy_dtype(np_dtype)
    if found.name == "bfloat16":
        raise TypeError(BFLOAT16_REFUSED)
    return found


def to_numpy_dtype(d) -> np.dtype:
    """Accept a gradkit dtype, a NumPy dtype or a Python type and return the NumPy dtype
    (for a tensor: bfloat16 is refused)."""
    if isinstance(d, dtype):
        if d.name == "bfloat16":
            raise TypeError(BFLOAT16_REFUSED)
        return d.np
    if d is float:  # torch reads Python's float as its double, whatever the default dtype
        return np.dtype(np.float64)
    if d is int:
        return np.dtype(np.int64)
    if d is bool:
        return np.dtype(np.bool_)
    if d is complex:
        return np.dtype(np.complex128)
    return tensor_dtype(d).np


_defaults = threading.local()


def get_default_dtype() -> dtype:
    """The floating dtype that creation functions use by default (float32 to start)."""
    return getattr(_defaults, "dtype", float32)


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float16, float32 or float64), like torch."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(("" if isinstance(d, dtype) else "invalid dtype object: ") +
                        "only floating-point types are supported as the default type")
    _defaults.dtype = d


class device:  # noqa: N801 - torch's spelling
    """Where a tensor lives: ``device("cpu")`` or ``device("cuda:0")``."""

    __slots__ = ("type", "index")

    def __init__(self, spec: str | device | int = "cpu", index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        if isinstance(spec, int) and not isinstance(spec, bool) and index is None:
            spec, index = "cuda", spec  # torch: a bare index is the accelerator's
        if not isinstance(spec, str):
            raise TypeError(f"device() expects a string like 'cpu' or 'cuda:0', got {spec!r}")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                            f"{type(index).__name__}")
        kind, _, idx = spec.partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {spec}")
        if idx:
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{spec}'")
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index "
                                   f"was passed explicitly: {spec}")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = kind
        # a CPU device keeps the index it is given (str "cpu:0"), as torch's; tensors live on
        # "cpu". gradkit names a GPU by its index always ("cuda" is "cuda:0").
        self.index = 0 if kind == "cuda" and index is None else index

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None
                                               else ")")

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """``with device(...)``: the default device inside the block, as torch's."""
        _entered_from.append(_default_device[0])
        _default_device[0] = self
        return self

    def __exit__(self, *exc_info) -> None:
        _default_device[0] = _entered_from.pop()


CPU = device("cpu")
_default_device = [CPU]
_entered_from = []  # the default device each open ``with device(...)`` block replaced
# torch.set_num_threads's count (gradkit.torch_helpers): NumPy ignores it, but torch's arange
# splits its range among that many threads, which shows in its rounding (creation.arange)
threads = [os.cpu_count() or 1]


def get_default_device() -> device:
    """The device new tensors go to when ``device=`` is not given (cpu by default)."""
    return _default_device[0]


def default_device_block():
    """A context that sets the default device now in force again (what a checkpoint's
    recomputation runs under, as torch's re-enters its forward's device context), or a null
    context while the default is the initial cpu (torch has no device context then)."""
    current = _default_device[0]
    return contextlib.nullcontext() if current is CPU else current


def set_default_device(d) -> None:
    """Set the device of new tensors (None: back to cpu)."""
    _default_device[0] = CPU if d is None else device(d)


def _cupy():
    """Import CuPy on first use; a clear error when it is missing."""
    try:
        import cupy
    except ImportError:
        raise RuntimeError(
            "CUDA support needs CuPy: pip install 'gradkit[cuda]' (cupy-cuda12x)") from None
    return cupy


def cuda_is_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no cupy, no driver or no device: all mean "no"
        return False


def array_module(dev: device):
    """The array module (numpy or cupy) that holds arrays on ``dev``."""
    return np if dev.type == "cpu" else _cupy()


def get_array_module(array):
    """numpy for NumPy arrays and scalars, cupy for CuPy arrays (without importing cupy).
    A subclass of ndarray is NumPy's too (promotion's 0-d operand, seed 14879)."""
    return np if type(array).__module__.startswith("numpy") or not hasattr(array, "device") \
        or isinstance(array, np.ndarray) else _cupy()


def device_context(array):
    """A context making ``array``'s GPU current (CuPy allocates there); nothing for NumPy."""
    if isinstance(array, (np.ndarray, np.generic)):
        return contextlib.nullcontext()
    return array.device


def device_of(array) -> device:
    if isinstance(array, (np.ndarray, np.generic)):
        return CPU
    return device("cuda", int(array.device.id))


def to_device(array, dev: device):
    """Copy ``array`` to ``dev`` (no copy when it is already there)."""
    if device_of(array) == dev:
        return array
    if dev.type == "cpu":  # "cpu:0" too
        return array if isinstance(array, np.ndarray) else array.get()
    cp = _cupy()
    with cp.cuda.Device(dev.index):
        return cp.asarray(array)
