"""Small Tensor queries and torch functions: ``type_as``, ``is_signed``, ``is_nonzero``,
``is_same_size``, ``is_cpu``, ``get_device``, ``sum_to_size``, ``resolve_neg``/``is_neg``,
``detach``, ``fix``, ``ger``, ``is_conj``/``resolve_conj``, ``concatenate``, the public
``cat``/``stack`` (which refuse NumPy arrays), ``typename`` and
the thread-count settings (recorded only: NumPy's threads are its BLAS's, set when it loads)."""
from __future__ import annotations

import functools

from gradkit import _tensor_methods  # noqa: F401 - is_conj, resolve_conj (for _as_function)
from gradkit import backend
from gradkit._tensor import Tensor, extend
from gradkit.backend import get_array_module
from gradkit.int_arguments import size_argument
from gradkit.ops import aliases  # noqa: F401 - the methods fix, ger (for _as_function)
from gradkit.ops.complex import is_negative_view
from gradkit.ops import joining
from gradkit.ops.joining import _check_sequence
from gradkit.ops.reduction import sum as _sum
from gradkit.ops.shape import view as _view


def _require_tensor(function: str, value, argument: str = "input", position: int = 1) -> None:
    """torch's TypeError for an argument that must be a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{function}(): argument '{argument}' (position {position}) must be "
                        f"Tensor, not {type(value).__name__}")


class _TensorQueries:
    def type_as(self, other: Tensor) -> Tensor:
        """This tensor in ``other``'s dtype (and device); itself when they match."""
        _require_tensor("type_as", other, "other")
        return self.to(other.device, other.dtype)

    def is_signed(self) -> bool:
        """Whether the dtype holds negative values (not uint8 or bool)."""
        return self._data.dtype.kind in "ifc"

    def is_nonzero(self) -> bool:
        """The truth of a one-element tensor (torch's errors for any other size)."""
        return Tensor.__bool__(self)

    def is_same_size(self, other: Tensor) -> bool:
        """Whether ``other`` has this tensor's shape."""
        _require_tensor("is_same_size", other, "other")
        return self._data.shape == other._data.shape

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor lives on the CPU."""
        return self.device.type == "cpu"

    def get_device(self) -> int:
        """The GPU's index, -1 on the CPU."""
        device = self.device
        return -1 if device.type == "cpu" else device.index or 0

    def sum_to_size(self, *size, **named) -> Tensor:
        """The sum over the dims broadcasting would add to expand ``size`` (or ``size=``) to
        this shape: its leading dims and its size-1 dims (torch's ``sum_to``); self when the
        shape is ``size``."""
        shape = size_argument(size, named, "sum_to_size", "size")
        own = self._data.shape
        lead = len(own) - len(shape)
        if lead < 0 or any(s != o and s != 1 for s, o in zip(shape, own[lead:])):
            raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                               f"{{{list(own)}}}.")
        if not shape:  # torch's sum_to sums to a 0-d size even from a 0-d tensor (bool: int64)
            return _sum(self)
        if shape == own:
            return self
        dims = tuple(range(lead)) + tuple(
            lead + i for i, (s, o) in enumerate(zip(shape, own[lead:])) if s == 1 and o != 1)
        out = _sum(self, dim=dims, keepdim=True) if dims else self
        return _view(out, shape=tuple(shape)) if lead else out

    def resolve_neg(self) -> Tensor:
        """A negative view's values in memory of their own (a clone); else the tensor."""
        return self.clone() if is_negative_view(self) else self

    def is_neg(self) -> bool:
        """Whether this views the imaginary part of a conjugated view (``z.conj().imag``)."""
        return is_negative_view(self)

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        """``nonzero()``'s (n, ndim) int64 coordinates in exactly ``size`` rows: the first
        ``size``, or all then rows of ``fill_value``."""
        if size < 0:
            raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
        data = self._data
        xp = get_array_module(data)
        found = xp.argwhere(data)[:size]
        out = xp.full((size, data.ndim), fill_value, dtype=xp.int64)
        out[:found.shape[0]] = found
        return Tensor._make(out)


extend(_TensorQueries)


def _as_function(name: str, n_tensors: int = 1, other: str = "other"):
    """torch's function form of a query method: ``torch.is_signed(t)`` is ``t.is_signed()``."""
    method = getattr(Tensor, name)

    def function(input, *args, **kwargs):  # noqa: A002 - torch's name
        _require_tensor(name, input)
        if n_tensors == 2 and args:
            _require_tensor(name, args[0], other, 2)
        return method(input, *args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``: " + (method.__doc__ or "")
    return function


# Queries of one tensor, then the two of a tensor and another.
(
    is_signed, is_nonzero, get_device, resolve_neg, is_neg, nonzero_static, detach, fix, is_conj,
    resolve_conj,
) = map(_as_function, (
    "is_signed", "is_nonzero", "get_device", "resolve_neg", "is_neg", "nonzero_static", "detach",
    "fix", "is_conj", "resolve_conj",
))
is_same_size = _as_function("is_same_size", 2)
ger = _as_function("ger", 2, "vec2")


_UNSET = object()


def concatenate(tensors, dim=_UNSET, *, axis=_UNSET) -> Tensor:
    """``cat(tensors, dim)`` under NumPy's name, which takes ``axis=`` too (not both)."""
    if dim is not _UNSET and axis is not _UNSET:
        raise TypeError("concatenate() got an unexpected keyword argument 'axis'")
    dim = axis if axis is not _UNSET else 0 if dim is _UNSET else dim
    return joining.cat(_check_sequence("concatenate", tensors, arrays=False), dim)


def _refusing_arrays(join):
    """torch's ``cat``/``stack``: gradkit.ops' own take a list of NumPy arrays (derivative rules
    join raw arrays); torch's refuse any element that is not a tensor."""
    @functools.wraps(join)
    def public(*args, **kwargs):
        if args or "tensors" in kwargs:
            _check_sequence(join.__name__, args[0] if args else kwargs["tensors"], arrays=False)
        return join(*args, **kwargs)
    return public


cat, stack = _refusing_arrays(joining.cat), _refusing_arrays(joining.stack)


def typename(obj) -> str:
    """torch's name of ``obj``'s type: a tensor's legacy type (``gradkit.FloatTensor``), else
    ``module.qualname`` (builtins unqualified)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


_threads = backend.threads  # torch starts from the machine's cores too


def get_num_threads() -> int:
    """The thread count set by ``set_num_threads`` (the CPU count at first)."""
    return _threads[0]


def set_num_threads(count: int) -> None:
    """Record a thread count, as torch's setting: gradkit's NumPy kernels run on the threads
    of NumPy's BLAS, but ``arange`` rounds as torch's kernel split among that many threads."""
    if not isinstance(count, int) or isinstance(count, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(count).__name__}")
    if count <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[0] = count

