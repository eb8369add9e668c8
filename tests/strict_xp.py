"""A strict stand-in for CuPy, backed by NumPy, to catch numpy-only code on a machine without GPU.

``install(monkeypatch)`` puts it in ``sys.modules["cupy"]``: gradkit then treats its arrays as
GPU arrays ("cuda:0", "cuda:1"), dispatch picks this module as ``xp``, and anything CuPy would
refuse fails loudly:

- module functions outside the list of names CuPy also provides (``np.errstate``, ...);
- array methods outside ``cupy.ndarray``'s (``a.itemset``, ...);
- NumPy functions applied to these arrays (``np.sum(a)``): the array refuses NumPy's
  ``__array_ufunc__``/``__array_function__`` protocols and implicit conversion (``np.asarray(a)``);
- NumPy arrays mixed into GPU arithmetic or function arguments (``a + np.ones(3)``);
- arrays of two different devices meeting in one call.

Reductions return 0-d arrays, as CuPy does, never NumPy scalars. Only ``asarray``/``array``
(host to device copies) and index keys accept NumPy arrays, as CuPy does.

>>> xp = install(monkeypatch)
>>> gradkit.ones(3, device="cuda").exp()   # runs xp.exp on a StrictArray
"""
from __future__ import annotations

import contextlib
import sys
import types
import warnings

import numpy as np

DEVICE_COUNT = 2

# Module-level names of NumPy's API that CuPy also provides (cupy >= 12, cupy-cuda12x).
FUNCTIONS = frozenset("""
abs absolute add all allclose amax amin angle any arange arccos arccosh arcsin arcsinh arctan
arctan2 arctanh argmax argmin argsort argwhere around array array_equal asarray ascontiguousarray
atleast_1d atleast_2d atleast_3d bincount bitwise_and bitwise_not bitwise_or bitwise_xor
broadcast_arrays broadcast_to cbrt ceil clip column_stack concatenate conj conjugate copy
copysign cos cosh
count_nonzero cumprod cumsum deg2rad diag diagonal diff divide dot dsplit dstack einsum empty
empty_like equal exp exp2 expand_dims expm1 eye flatnonzero flip fliplr flipud float_power floor
floor_divide fmax fmin fmod full full_like greater greater_equal hsplit hstack hypot identity imag
indices inner invert isclose iscomplexobj isfinite isinf isnan isreal isscalar kron ldexp less
less_equal linspace log log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or
logical_xor logspace matmul max maximum mean median meshgrid min minimum mod moveaxis multiply
nan_to_num nanmax nanmin nansum ndim negative nextafter nonzero not_equal ones ones_like outer pad
percentile power prod ptp rad2deg ravel ravel_multi_index real reciprocal remainder repeat reshape
result_type rint roll rollaxis rot90 round searchsorted sign signbit sin sinc sinh sort split sqrt
square squeeze stack std subtract sum swapaxes take take_along_axis tan tanh tensordot tile trace
transpose tril triu true_divide trunc unique unravel_index var vdot vsplit vstack where zeros
zeros_like can_cast promote_types finfo iinfo dtype frexp gcd lcm isin
""".split())
# cupy.linalg's functions (it has no LinAlgError of its own to raise by default)
LINALG = ("cholesky", "det", "eigh", "eigvalsh", "inv", "norm", "qr", "slogdet", "solve", "svd")
# cupy.fft's n-dimensional transforms (norm="forward" since cupy 10)
FFT = ("fftn", "ifftn", "rfftn", "irfftn")
# Attributes that are plain values (dtypes, constants), passed through unchanged.
VALUES = frozenset("""
bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64
complex128 intp inf nan pi e newaxis
""".split())
# Ufunc methods available on CuPy's ufuncs (``at`` since cupy 12; reduce etc. only since 13).
UFUNC_METHODS = frozenset({"at"})
# cupy.ndarray's methods and attributes (numpy-only ones, e.g. itemset or tofile, are absent).
METHODS = frozenset("""
all any argmax argmin argsort astype clip conj conjugate copy cumprod cumsum diagonal dot fill
flatten item max mean min nonzero prod ravel repeat reshape round sort squeeze std sum swapaxes
take tolist trace transpose var view
""".split())
ATTRIBUTES = frozenset("shape ndim size dtype itemsize nbytes strides".split())


class _Flags:
    """cupy.ndarray.flags: c_contiguous, f_contiguous and owndata only (no ``writeable``)."""

    def __init__(self, flags) -> None:
        self.c_contiguous, self.f_contiguous = flags.c_contiguous, flags.f_contiguous
        self.owndata = flags.owndata


def _refuse(what: str):
    raise TypeError(f"strict_xp: {what} is numpy-only (CuPy would refuse it)")


class _Device:
    """cupy.cuda.Device: ``with Device(1): ...`` makes new arrays live on device 1."""

    current = 0

    def __init__(self, device: int | None = None) -> None:
        self.id = _Device.current if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id}")
        self._previous = []

    def __enter__(self):
        self._previous.append(_Device.current)
        _Device.current = self.id
        return self

    def __exit__(self, *exc) -> None:
        _Device.current = self._previous.pop()

    def use(self) -> None:
        _Device.current = self.id

    def synchronize(self) -> None:
        calls.append(("synchronize", self.id))

    def __eq__(self, other) -> bool:
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)


calls: list = []  # synchronize/event calls, so tests can see that they happened


class StrictArray:
    """A NumPy array dressed as a CuPy array on device ``device.id``."""

    __slots__ = ("_a", "device")
    __array_ufunc__ = None  # np.add(a, ...) and ndarray <op> a refuse to run

    def __init__(self, array: np.ndarray, device_id: int | None = None) -> None:
        self._a = array
        self.device = _Device(device_id)

    def __array_function__(self, func, types_, args, kwargs):
        _refuse(f"numpy.{func.__name__}() on a GPU array")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self._a.shape, "typestr": self._a.dtype.str, "version": 3,
                "data": (self._a.ctypes.data, False)}

    def __array_namespace__(self, api_version=None):
        return sys.modules["cupy"]

    def get(self, stream=None) -> np.ndarray:
        """Device to host copy (cupy.ndarray.get)."""
        return self._a.copy()

    def __getattr__(self, name):
        if name in ATTRIBUTES:
            return getattr(self._a, name)
        if name in METHODS:
            method = getattr(self._a, name)
            _check_current(self)
            return lambda *args, **kwargs: self._wrap(method(*_unwrap(args, self),
                                                             **_unwrap(kwargs, self)))
        if name == "flags":
            return _Flags(self._a.flags)
        if name in ("T", "real", "imag", "mT"):
            return self._wrap(getattr(self._a, name))
        raise AttributeError(f"strict_xp: cupy.ndarray has no attribute {name!r}")

    def _wrap(self, value):
        return _wrap(value, self.device.id)

    def __repr__(self) -> str:
        return f"StrictArray({self._a!r}, device={self.device.id})"

    # Python protocol
    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (self._wrap(v) for v in self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __getitem__(self, key):
        return self._wrap(self._a[_unwrap_key(key, self)])

    def __setitem__(self, key, value) -> None:
        if not self._a.flags.writeable:  # CuPy's views (diagonal, expand) are all writable
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._a.setflags(write=True)
        self._a[_unwrap_key(key, self)] = _unwrap(value, self)

    def __copy__(self):
        return self._wrap(self._a.copy())

    def __deepcopy__(self, memo):
        return self._wrap(self._a.copy())

    def __reduce__(self):
        return (StrictArray, (self._a.copy(), self.device.id))


def _check_current(array) -> None:
    """CuPy launches kernels on the current device: arrays must live there."""
    if array.device.id != _Device.current:
        raise ValueError(f"strict_xp: Array device must be same as the current device: array "
                         f"device = {array.device.id} while current = {_Device.current}")


def _binary(name):
    numpy_method = getattr(np.ndarray, name)

    def method(self, other):
        _check_current(self)
        result = numpy_method(self._a, _unwrap(other, self))
        return result if result is NotImplemented else self._wrap(result)
    method.__name__ = name
    return method


def _unary(name):
    numpy_method = getattr(np.ndarray, name)

    def method(self):
        _check_current(self)
        return self._wrap(numpy_method(self._a))
    method.__name__ = name
    return method


for _name in ("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift "
              "eq ne lt le gt ge").split():
    for _form in ("__{}__", "__r{}__", "__i{}__"):
        _attr = _form.format(_name)
        if hasattr(np.ndarray, _attr):
            setattr(StrictArray, _attr, _binary(_attr))
for _name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(StrictArray, _name, _unary(_name))
StrictArray.__hash__ = None


def _wrap(value, device_id):
    if isinstance(value, (np.ndarray, np.generic)):  # reductions give 0-d arrays, as CuPy
        return StrictArray(np.asarray(value), device_id)
    if isinstance(value, (tuple, list)):  # NumPy's named tuples (svd, qr) are plain in CuPy
        return (list if isinstance(value, list) else tuple)(_wrap(v, device_id) for v in value)
    return value


def _unwrap(value, owner=None):
    """Raw NumPy arrays for NumPy; refuse host arrays and arrays of another device."""
    if isinstance(value, StrictArray):
        if owner is not None and value.device.id != owner.device.id:
            raise ValueError(f"strict_xp: arrays on devices {owner.device.id} and "
                             f"{value.device.id} meet in one call")
        return value._a
    if isinstance(value, _HostKey):
        return _unwrap_key(value.key, owner)
    if isinstance(value, np.ndarray):
        _refuse(f"mixing a NumPy array of shape {value.shape} into a GPU computation")
    if isinstance(value, (tuple, list)):
        return type(value)(_unwrap(v, owner) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, owner) for k, v in value.items()}
    return value


class _HostKey:
    """Marks an index key inside a function's arguments (NumPy arrays allowed there)."""

    def __init__(self, key) -> None:
        self.key = key


def _unwrap_key(key, owner):
    """Index keys may hold host arrays (CuPy copies them to the device)."""
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k, owner) for k in key)
    if isinstance(key, np.ndarray):
        return key
    return _unwrap(key, owner)


def _first_device(values):
    for v in values:
        if isinstance(v, StrictArray):
            return v
        if isinstance(v, (tuple, list)):
            found = _first_device(v)
            if found is not None:
                return found
    return None


def _function(name, numpy_function):
    def call(*args, **kwargs):
        owner = _first_device(args)
        if owner is None:
            owner = _first_device(kwargs.values())
        device_id = owner.device.id if owner is not None else _Device.current
        if owner is not None:
            _check_current(owner)
        result = numpy_function(*_unwrap(args, owner), **_unwrap(kwargs, owner))
        return _wrap(result, device_id)
    call.__name__ = name
    return call


class _Ufunc:
    """A ufunc exposing only the methods CuPy's ufuncs have."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self._call = _function(ufunc.__name__, ufunc)
        at = _function(ufunc.__name__ + ".at", ufunc.at)
        # indices may be host arrays, as in a[key] (CuPy copies them to the device)
        self.at = lambda a, indices, b=None: at(a, _HostKey(indices), b)
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name):
        raise AttributeError(f"strict_xp: cupy.{self.__name__}.{name} does not exist (numpy-only)")


def _to_device(value, dtype=None, copy=None, **kwargs):
    """cupy.asarray/array: host data (NumPy, lists, scalars) is copied to the current device."""
    if isinstance(value, StrictArray):
        if value.device.id != _Device.current:
            value = StrictArray(value._a.copy(), _Device.current)
        if dtype is None or value.dtype == np.dtype(dtype):
            return value if not copy else StrictArray(value._a.copy(), value.device.id)
        return StrictArray(value._a.astype(dtype), value.device.id)
    host = value if isinstance(value, (np.ndarray, np.generic)) else _unwrap(value)
    return StrictArray(np.array(host, dtype=dtype, **kwargs), _Device.current)


class _MemoryPool:
    def used_bytes(self) -> int:
        return 0

    def total_bytes(self) -> int:
        return 0

    def free_all_blocks(self) -> None:
        pass


class _Event:
    """cupy.cuda.Event on a fake GPU clock (ms) that advances ``step`` at every record."""

    clock = [0.0]
    step = 0.5

    def __init__(self, *args, **kwargs) -> None:
        self.time = None

    def record(self, stream=None) -> None:
        self.time = _Event.clock[0]
        _Event.clock[0] += _Event.step
        calls.append(("record", self.time))

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return self.time is not None


def _get_elapsed_time(start: _Event, end: _Event) -> float:
    return end.time - start.time


class StrictModule(types.ModuleType):
    """The ``cupy`` module: only names CuPy has; anything else is an AttributeError."""

    ndarray = StrictArray

    def __getattr__(self, name):
        if name in VALUES:
            return getattr(np, name)
        if name in FUNCTIONS:
            target = getattr(np, name)
            wrapped = _Ufunc(target) if isinstance(target, np.ufunc) else \
                target if isinstance(target, type) else _function(name, target)
            setattr(self, name, wrapped)
            return wrapped
        raise AttributeError(f"strict_xp: module 'cupy' has no attribute {name!r} (numpy-only)")


def make_module() -> StrictModule:
    """A fresh fake ``cupy`` module."""
    module = StrictModule("cupy")
    module.__file__ = __file__
    module.asarray = _to_device
    module.array = lambda value, dtype=None, copy=True, **kw: _to_device(value, dtype, copy)
    module.get_array_module = lambda *arrays: np if _first_device(arrays) is None else module
    module.asnumpy = lambda a, stream=None: a.get() if isinstance(a, StrictArray) \
        else np.asarray(a)
    module.linalg = types.SimpleNamespace(**{
        name: _function(f"linalg.{name}", getattr(np.linalg, name)) for name in LINALG})
    module.fft = types.SimpleNamespace(**{
        name: _function(f"fft.{name}", getattr(np.fft, name)) for name in FFT})
    module.lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(as_strided=_function(
        "lib.stride_tricks.as_strided", np.lib.stride_tricks.as_strided)))
    pool = _MemoryPool()
    module.get_default_memory_pool = lambda: pool
    runtime = types.SimpleNamespace(getDeviceCount=lambda: DEVICE_COUNT,
                                    getDevice=lambda: _Device.current)
    module.cuda = types.SimpleNamespace(
        Device=_Device, runtime=runtime, Event=_Event, get_elapsed_time=_get_elapsed_time,
        get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None))
    return module


def install(monkeypatch) -> StrictModule:
    """Make ``import cupy`` return the strict module for the duration of a test."""
    module = make_module()
    monkeypatch.setitem(sys.modules, "cupy", module)
    _Device.current = 0
    _Event.clock[0] = 0.0
    calls.clear()
    return module


@contextlib.contextmanager
def installed():
    """Context-manager form of :func:`install`, for scripts."""
    previous = sys.modules.get("cupy")
    sys.modules["cupy"] = make_module()
    try:
        yield sys.modules["cupy"]
    finally:
        if previous is None:
            sys.modules.pop("cupy", None)
        else:
            sys.modules["cupy"] = previous
