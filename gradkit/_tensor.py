"""The Tensor core: an array (NumPy or CuPy) plus what autograd needs to know about it.

This is the lowest layer that knows Tensors: the op mechanism (``ops/_op.py``) and the graph
build on it, so it imports no op. The methods that need ops (``x.to()``, ``x.reshape(2, -1)``,
``x + y``, ``x.exp()``...) are added by the layers above: ``_tensor_methods.py`` and
``_tensor_operators.py`` (see docs/architecture.md).
"""
from __future__ import annotations

import copy
import warnings
from types import FunctionType


from gradkit import backend
from gradkit import memory_format as memory_formats
from gradkit._tensor_repr import host_array, tensor_repr
from gradkit.autograd import inference
from gradkit.autograd.grad_mode import state as _grad_state
from gradkit.autograd.inference import InferenceVersion as _InferenceVersion
from gradkit.autograd.transform_errors import REQUIRES_GRAD, refuse_captured_detach
from gradkit.size import Size
from gradkit.storage_owner import deepcopy_sharing


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Create tensors with :func:`gradkit.tensor`, :func:`gradkit.zeros` and friends::

        >>> x = gradkit.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

    # always set: _data, _requires_grad, grad_fn, _output_nr, _vc; __dict__: user attributes
    __slots__ = ("_data", "_requires_grad", "grad_fn", "_output_nr", "_vc", "_grad", "_view",
                 "_hooks", "_post_acc_hooks", "_retains_grad", "_accum", "_fw", "__weakref__",
                 "__dict__")

    @staticmethod
    def _make(data, grad_fn=None, output_nr: int = 0, version_counter=None) -> Tensor:
        """Fast internal constructor (no checks): the op dispatcher's."""
        t = _new(Tensor)
        t._data = data
        t.grad_fn = grad_fn
        t._requires_grad = grad_fn is not None
        t._output_nr = output_nr
        if version_counter is None:  # inference_mode makes inference tensors (inference.py)
            version_counter = _InferenceVersion((0,)) if _grad_state.inference else [0]
        t._vc = version_counter
        return t

    # -- metadata -------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        """The dimensions, as a gradkit.Size."""
        return tuple.__new__(Size, self._data.shape)  # NumPy's ints: nothing to check

    @property
    def dtype(self) -> backend.dtype:
        """The element type (gradkit.float32, ...)."""
        return backend.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> backend.device:
        """Where the data lives: device('cpu') or device('cuda:N')."""
        return backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._data.ndim

    def dim(self) -> int:
        """Number of dimensions."""
        return self._data.ndim

    def ndimension(self) -> int:
        """Number of dimensions (alias of dim())."""
        return self._data.ndim

    def numel(self) -> int:
        """Number of elements."""
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def is_floating_point(self) -> bool:
        """True for float16/32/64 (and bfloat16)."""
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        """True for complex64/complex128."""
        return self._data.dtype.kind == "c"

    def is_contiguous(self, memory_format=memory_formats.contiguous_format) -> bool:
        """True when the data is dense in ``memory_format``'s order (C order by default)."""
        if memory_format is memory_formats.contiguous_format:
            return bool(self._data.flags.c_contiguous)
        memory_formats.check_format(memory_format, "is_contiguous")
        array = self._data
        return memory_formats.is_in_format(
            array.shape, tuple(s // array.itemsize for s in array.strides), memory_format)

    @property
    def _version(self) -> int:
        if type(self._vc) is _InferenceVersion:
            raise RuntimeError(inference.VERSION_MESSAGE)
        return self._vc[0]

    def is_inference(self) -> bool:
        """True for a tensor made in ``inference_mode()`` (or a view or detach() of one)."""
        return type(self._vc) is _InferenceVersion

    @property
    def _base(self):
        view = getattr(self, "_view", None)
        return view.base if view is not None and not view.detached else None

    def _is_view(self) -> bool:
        view = getattr(self, "_view", None)
        return view is not None and not view.detached

    # -- autograd state ---------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor are recorded for backward."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value)  # torch allows the setter inside a func transform

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")  # torch: `del t.requires_grad`

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad on a leaf (in place); returns self. torch refuses it inside a
        function a ``gradkit.func`` transform runs (gradkit's own code calls
        ``_set_requires_grad``, as torch's factories set the flag in C++)."""
        if _grad_state.transforms:
            raise RuntimeError(REQUIRES_GRAD)
        if requires_grad and not self._requires_grad and self.grad_fn is None and \
                not _differentiable_dtype(self._data):  # (a no-op reads no stale history)
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self._set_requires_grad(requires_grad)

    def _set_requires_grad(self, requires_grad: bool = True, factory: bool = False) -> Tensor:
        """``requires_grad_`` without the transform check (``factory``: a factory's
        ``requires_grad=True``, whose refusal torch words with a capital O)."""
        if requires_grad and self._requires_grad:  # a no-op (a stale view's history unread)
            return self
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and type(self._vc) is _InferenceVersion and not _grad_state.inference:
            raise RuntimeError(inference.REQUIRES_GRAD_MESSAGE)
        if requires_grad and not _differentiable_dtype(self._data):
            if self._data.dtype.kind == "u" and self._data.itemsize > 1 and not factory:
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            raise RuntimeError(f"{'O' if factory else 'o'}nly Tensors of floating point and "
                               "complex dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def data(self) -> Tensor:
        """The values without history: shares memory, not the version counter (as torch).

        Assigning a tensor replaces the values (any shape or dtype) and keeps the history.
        A conjugated view's is ``detach()``'s view, its computed values kept in step with the
        memory, moved to a version counter of its own (writes through it bump no version of
        the base's and leave its views valid, as torch's; conj_views seed 308543).
        """
        view = getattr(self, "_view", None)
        if view is not None and view.computed:
            data = self.detach()
            shared = data._vc
            own = [0] + [ref for ref in shared[1:] if ref() is data]
            shared[1:] = [ref for ref in shared[1:] if ref() is not data]
            data._vc = data._view.base._vc = own
            return data
        fresh = _InferenceVersion((0,)) if type(self._vc) is _InferenceVersion else [0]
        return Tensor._make(self._data, None, 0, fresh)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and not _differentiable_dtype(value._data):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for leaves)."""
        return self._output_nr if self.grad_fn is not None else 0

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (no grad_fn)."""
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaves, and non-leaves with retain_grad())."""
        grad = getattr(self, "_grad", None)
        if grad is None and self.grad_fn is not None and not getattr(self, "_retains_grad", False):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.", UserWarning,
                stacklevel=2)
        return grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.shape != self._data.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if backend.device_of(value._data) != backend.device_of(self._data):
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        """True after retain_grad() on a non-leaf tensor."""
        return getattr(self, "_retains_grad", False)

    def detach_(self) -> Tensor:
        """Detach this tensor from its history in place (not allowed on views)."""
        refuse_captured_detach(self)
        view = getattr(self, "_view", None)
        if view is not None and not (view.transform_leaf or view.detached):
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        if view is not None and not view.detached:  # a transform's input: a leaf
            self._view = None
        self.grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        self._fw = None  # as detach(): no forward-mode tangent either
        return self

    # -- conversion -------------------------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        """The data as (nested) Python lists."""
        return host_array(self._data).tolist()

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    # -- Python protocol ----------------------------------------------------------------
    def __reduce_ex__(self, protocol):
        """Pickle as torch does (every protocol): a fresh leaf's values, requires_grad and the
        user's own attributes; no ``.grad``, history or view relation."""
        state = (self.__dict__,) if self.__dict__ else ()
        return (_rebuild_tensor, (type(self), self._data, self._requires_grad)) + state

    def __deepcopy__(self, memo):  # keeps what it kept before pickling was defined (.grad)
        if self.grad_fn is not None:  # torch copies graph leaves only (a pruned module's weight)
            raise RuntimeError(_DEEPCOPY_NON_LEAF)
        if id(self._data) not in memo:  # views copied together keep sharing their memory
            memo[id(self._data)] = deepcopy_sharing(self._data, memo)
        return copy._reconstruct(self, memo, *object.__reduce_ex__(self, 4))

    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:  # torch's: a plain 0-d tensor as its number
        if self._data.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if self._data.size == 0 else 'more than one value'}"
                               f" is ambiguous")
        return bool(self._data.reshape(()))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

_new = object.__new__
_DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")


def _differentiable_dtype(array) -> bool:
    """Only floating and complex tensors can require gradients."""
    return array.dtype.kind in "fc" or str(array.dtype) == "bfloat16"



def _varargs(args, method: str | None = None, name: str | None = None):
    """Accept both f(2, 3) and f((2, 3)) as torch does; ``x.method()`` with no ``name`` at all
    is torch's TypeError (an empty tuple, ``x.reshape(())``, is a valid argument)."""
    if not args and method is not None:
        raise TypeError(f'{method}() missing 1 required positional arguments: "{name}"')
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        return tuple(args[0])
    return tuple(args)


_SKIPPED = frozenset({"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"})


def extend(methods: type) -> None:
    """Give Tensor the methods and properties of the class body ``methods``: how the layers
    above the core add what needs ops, once those are loaded."""
    for name, value in vars(methods).items():
        if name in _SKIPPED:
            continue
        function = getattr(value, "fget", None) or getattr(value, "__func__", value)
        if isinstance(function, FunctionType):
            function.__qualname__ = f"Tensor.{name}"
        setattr(Tensor, name, value)


def _rebuild_tensor(cls, data, requires_grad: bool) -> Tensor:
    """Unpickle a Tensor (or subclass) made by ``Tensor.__reduce_ex__``."""
    t = Tensor._make(data)
    if cls is not Tensor:
        t.__class__ = cls
    t._requires_grad = requires_grad
    return t
