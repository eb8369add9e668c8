"""Parameter: a leaf Tensor that a Module registers as one of its weights; Buffer; and the
placeholders of lazy modules (UninitializedParameter / UninitializedBuffer), as in torch."""
from __future__ import annotations

import sys
import weakref

from gradkit._tensor import Tensor
from gradkit.creation import empty
from gradkit.ops._op import Op


class Parameter(Tensor):
    """A Tensor that is a module's learnable weight (requires grad by default).

    Assigning a Parameter to a Module attribute registers it in ``parameters()``::

        >>> w = gradkit.nn.Parameter(gradkit.zeros(3))
        >>> w.requires_grad, w.is_leaf
        (True, True)
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        # shares memory and version counter with ``data``, like torch's Parameter
        super().__init__(data)
        self._vc = data._vc
        self._set_requires_grad(requires_grad, factory=True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        rebuild = (_rebuild_parameter, (self.detach(), self._requires_grad))
        return rebuild + (self.__dict__,) if self.__dict__ else rebuild

    def __deepcopy__(self, memo):
        """torch's: a Parameter of a copy of the values, without ``.grad`` or own attributes."""
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.detach().clone(), self._requires_grad)
        return memo[id(self)]


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


# -- lazy modules' placeholders and nn.Buffer -----------------------------------------------

_ARRAY = Tensor.__dict__["_data"]  # the slot itself: the placeholders' own reads and writes

_SHAPE_MESSAGE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
    "in `load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
    "Call `forward` to initialize the parameters before accessing their attributes.")


_OP_MODULES = ("gradkit.ops", "gradkit._tensor", "gradkit.nn.functional", "gradkit.nn.aten",
               "gradkit.linalg", "gradkit.fft", "gradkit.special", "gradkit.creation")


def _user_of_array(frame) -> str:
    """The op (or else the function) that read a placeholder's array, for the error: ops read
    ``_data`` in the dispatcher, so the op is a few frames up."""
    caller = frame.f_code.co_name
    for _ in range(8):
        if frame is None:
            break
        for name in ("self", "op"):
            if isinstance(frame.f_locals.get(name), Op):
                return repr(frame.f_locals[name])
        frame = frame.f_back
    return f"<function {caller}>"


def _on_plain(name: str):
    """The method ``name`` run on a plain tensor of the placeholder's (empty) array: what torch
    lets an uninitialized tensor do (cast, move, size, copy_)."""
    def method(self, *args, **kwargs):
        result = getattr(self._plain(), name)(*args, **kwargs)
        if isinstance(result, Tensor) and result._data is _ARRAY.__get__(self):
            return self  # a cast or move to where it already is: itself, as torch
        return self._rewrap(result)
    method.__name__ = method.__qualname__ = name
    return method


def _plain_property(name: str) -> property:
    def read(self):
        self._check_reader()
        return self._rewrap(getattr(self._plain(), name))
    return property(read, doc=f"The placeholder's {name}.")


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: no shape until
    ``materialize``; any op on them raises torch's ValueError, while casts, moves, ``size()``,
    ``dtype`` and ``device`` work on the empty placeholder."""

    __slots__ = ()
    cls_to_become: type

    @property
    def _data(self):  # every op reads the array here: this is where using one is refused
        raise self._used(sys._getframe(1))

    def _used(self, reader) -> ValueError:
        return ValueError(
            f"Attempted to use an uninitialized parameter in {_user_of_array(reader)}. This error "
            "happens when you are using a `LazyModule` or explicitly manipulating "
            f"`gradkit.nn.parameter.{type(self).__name__}` objects. When using LazyModules Call "
            "`forward` with a dummy batch to initialize the parameters before calling gradkit "
            "functions")

    @_data.setter
    def _data(self, array) -> None:
        _ARRAY.__set__(self, array)

    def _plain(self) -> Tensor:
        return Tensor._make(_ARRAY.__get__(self))

    def _rewrap(self, result):
        return result

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Become a ``cls_to_become`` (Parameter or Tensor) of ``shape``, in place, on this
        one's device and dtype unless given."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        array = empty(shape, device=self.device if device is None else device,
                      dtype=self.dtype if dtype is None else dtype)
        _ARRAY.__set__(self, array._data)
        self.__class__ = self.cls_to_become

    def _check_reader(self) -> None:
        # an op that checks shapes or dtypes before it reads the array (F.linear, conv2d,
        # indexing) is using the placeholder: torch's ops refuse it before any such check
        reader = sys._getframe(2)
        if reader.f_globals.get("__name__", "").startswith(_OP_MODULES):
            raise self._used(reader)

    @property
    def shape(self):
        self._check_reader()
        raise RuntimeError(_SHAPE_MESSAGE)

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def requires_grad_(self, requires_grad: bool = True):
        raise self._used(sys._getframe(0))  # torch lets only the attribute change it

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._requires_grad = self._plain()._set_requires_grad(value).requires_grad

    def copy_(self, other, non_blocking: bool = False):
        self._plain().copy_(other._plain() if is_lazy(other) else other, non_blocking)
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return type(self), (self._requires_grad,)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._requires_grad, self.device, self.dtype)
        return memo[id(self)]

    dtype = _plain_property("dtype")
    device = _plain_property("device")
    ndim = _plain_property("ndim")
    is_cuda = _plain_property("is_cuda")
    data = _plain_property("data")


for _name in ("size", "is_complex", "is_floating_point", "half", "float", "double", "char",
              "short", "int", "long", "cuda", "cpu", "to", "get_device"):
    setattr(UninitializedTensorMixin, _name, _on_plain(_name))


def _start_empty(tensor: Tensor, requires_grad: bool, device, dtype) -> None:
    data = empty(0, device=device, dtype=dtype)
    if requires_grad and not (data.is_floating_point() or data.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    Tensor.__init__(tensor, data)
    tensor._requires_grad = requires_grad


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's weight until its first call):
    it becomes a plain Parameter, the same object, on ``materialize``."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        _start_empty(self, requires_grad, device, dtype)


class _BufferMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return id(instance) in _BUFFERS or isinstance(instance, UninitializedBuffer)


# id -> persistent of the tensors made by Buffer(...) (dropped when the tensor dies): as in
# torch, nn.Buffer(t) is a plain Tensor that ``isinstance(b, nn.Buffer)`` recognises
_BUFFERS: dict[int, bool] = {}


def _mark_buffer(tensor: Tensor, persistent: bool) -> None:
    if id(tensor) not in _BUFFERS:
        weakref.finalize(tensor, _BUFFERS.pop, id(tensor), None)
    _BUFFERS[id(tensor)] = persistent


def buffer_persistent(tensor: Tensor) -> bool:
    """Whether the Buffer ``tensor`` goes to the state dict (torch's ``buffer.persistent``)."""
    return _BUFFERS.get(id(tensor), True)


class Buffer(Tensor, metaclass=_BufferMeta):
    """``Buffer(data, persistent=True)``: a tensor that, assigned to a Module attribute,
    registers as a buffer (in ``state_dict`` unless not persistent), as torch's nn.Buffer.

    >>> m = gradkit.nn.Module()
    >>> m.steps = gradkit.nn.Buffer(gradkit.zeros(2))
    >>> list(m.state_dict())
    ['steps']
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        data = empty(0) if data is None else data
        tensor = data.detach()._set_requires_grad(data.requires_grad)
        _mark_buffer(tensor, persistent)
        return tensor


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy norm layer's running stats): it becomes a
    plain Tensor, the same object, on ``materialize``; casts and moves keep it uninitialized."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True) -> None:
        _start_empty(self, requires_grad, device, dtype)
        _mark_buffer(self, persistent)

    @property
    def persistent(self) -> bool:
        return buffer_persistent(self)

    def __deepcopy__(self, memo):  # torch's Tensor.__deepcopy__ uses it: refused
        raise self._used(sys._getframe(0))

    def _rewrap(self, result):
        if not isinstance(result, Tensor):
            return result
        fresh = UninitializedBuffer(self._requires_grad, persistent=self.persistent)
        _ARRAY.__set__(fresh, result._data)
        return fresh


def is_lazy(param) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)
