"""Tensor: an array (NumPy or CuPy) plus what autograd needs to know about it."""
from __future__ import annotations

import numpy as np

from gradkit import backend


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Create tensors with :func:`gradkit.tensor`, :func:`gradkit.zeros` and friends::

        >>> x = gradkit.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

    # always set: _data, _requires_grad, grad_fn, _output_nr, _vc; the rest only when used
    __slots__ = ("_data", "_requires_grad", "grad_fn", "_output_nr", "_vc", "_grad", "_view",
                 "_hooks", "_post_acc_hooks", "_retains_grad", "_accum", "_fw", "__weakref__")
    __array_ufunc__ = None  # make `ndarray * tensor` call Tensor.__rmul__

    def __new__(cls, *args, **kwargs):
        """torch's legacy constructor: ``Tensor([1, 2])`` (default dtype), ``Tensor(2, 3)``
        (uninitialised), ``Tensor()`` (empty), ``Tensor(t)`` (an alias of t)."""
        if cls is Tensor:
            from gradkit.legacy_tensor import legacy_new
            return legacy_new(args, kwargs)
        return _new(cls)

    def __init__(self, *args, **kwargs) -> None:
        if type(self) is Tensor:  # __new__ made it
            return
        # a subclass (nn.Parameter): the memory and version of what Tensor(*args) would alias
        from gradkit.legacy_tensor import legacy_new
        source = args[0] if len(args) == 1 and isinstance(args[0], Tensor) and not kwargs \
            else legacy_new(args, kwargs)
        self._data = source._data
        self.grad_fn = None
        self._output_nr = 0
        self._vc = source._vc
        self._requires_grad = False

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
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape as a ``gradkit.Size``, or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[ops.shape._normalize_dim(dim, self._data.ndim)]

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

    def is_contiguous(self) -> bool:
        """True when the data is C-contiguous in memory."""
        return bool(self._data.flags.c_contiguous)

    @property
    def _version(self) -> int:
        if type(self._vc) is _InferenceVersion:
            raise RuntimeError(inference.VERSION_MESSAGE)
        return self._vc[0]

    def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        """``gradkit.allclose(self, other, ...)``: isclose everywhere, as a Python bool."""
        return ops.arithmetic.allclose(self, other, rtol, atol, equal_nan)

    def is_inference(self) -> bool:
        """True for a tensor made in ``inference_mode()`` (or a view or detach() of one)."""
        return type(self._vc) is _InferenceVersion

    @property
    def _base(self):
        view = getattr(self, "_view", None)
        return view.base if view is not None else None

    def _is_view(self) -> bool:
        return getattr(self, "_view", None) is not None

    # -- autograd state ---------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor are recorded for backward."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad on a leaf (in place); returns self."""
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
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients, "
                f"got {self.dtype}")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def data(self) -> Tensor:
        """The values without history: shares memory, not the version counter (as torch).

        Assigning a tensor replaces the values (any shape or dtype) and keeps the history.
        """
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
            import warnings
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

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (no-op for leaves)."""
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if getattr(self, "_retains_grad", False):
            return
        self._retains_grad = True
        from gradkit.autograd.hooks import retain_grad_hook
        retain_grad_hook(self)

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; may return a new grad."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from gradkit.autograd.hooks import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` after ``.grad`` of this leaf has been accumulated."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        from gradkit.autograd.hooks import register_post_accumulate_hook
        return register_post_accumulate_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
                 inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into each leaf's ``.grad`` (see autograd.backward)."""
        from gradkit.autograd.api import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing this data (and version counter) with no history."""
        return Tensor._make(self._data, None, 0, self._vc)

    def detach_(self) -> Tensor:
        """Detach this tensor from its history in place (not allowed on views)."""
        if getattr(self, "_view", None) is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
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
        return _host(self._data).tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array (shared memory; refused while it would leave the graph
        unnoticed: requires_grad with grad mode on, as torch)."""
        if self._requires_grad and not force and _grad_state.grad_enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if not isinstance(self._data, (np.ndarray, np.generic)):
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return _host(self._data)
        return self._data

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; differentiable."""
        dev = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        copy = kwargs.pop("copy", False)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dev, dtype = a.device, a.dtype
            elif isinstance(a, backend.dtype) or a in (float, int, bool, complex):
                dtype = a
            elif isinstance(a, (str, backend.device)):
                dev = a
            elif a is not None:
                raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
        from gradkit.ops import conversion
        out = self
        if dtype is not None and backend.to_numpy_dtype(dtype) != self._data.dtype:
            out = conversion.astype(out, dtype=backend.to_numpy_dtype(dtype))
        if dev is not None and backend.device(dev) != self.device:
            out = conversion.to_device(out, device=backend.device(dev))
        if copy and out is self:
            out = self.clone()
        return out

    def cpu(self) -> Tensor:
        """This tensor on the CPU (itself if already there); differentiable."""
        return self.to("cpu")

    def cuda(self, device=None) -> Tensor:
        """This tensor on a GPU (``cuda:0`` by default); differentiable."""
        return self.to("cuda" if device is None else
                       (f"cuda:{device}" if isinstance(device, int) else device))

    def type(self, dtype=None):
        """torch's type name (``gradkit.FloatTensor``) or, given a dtype or a tensor type
        (``DoubleTensor``, ``"torch.LongTensor"``), a cast to it."""
        from gradkit import legacy_tensor
        if dtype is None:
            return legacy_tensor.type_name(self)
        return legacy_tensor.cast_to_type(self, dtype)

    def float(self) -> Tensor:
        """Cast to float32 (differentiable)."""
        return self.to(backend.float32)

    def double(self) -> Tensor:
        """Cast to float64 (differentiable)."""
        return self.to(backend.float64)

    def half(self) -> Tensor:
        """Cast to float16 (differentiable)."""
        return self.to(backend.float16)

    def long(self) -> Tensor:
        """Cast to int64."""
        return self.to(backend.int64)

    def int(self) -> Tensor:
        """Cast to int32."""
        return self.to(backend.int32)

    def bool(self) -> Tensor:
        """Cast to bool."""
        return self.to(backend.bool_)

    def cfloat(self) -> Tensor:
        """Cast to complex64 (differentiable)."""
        return self.to(backend.complex64)

    def cdouble(self) -> Tensor:
        """Cast to complex128 (differentiable)."""
        return self.to(backend.complex128)

    def clone(self) -> Tensor:
        """A copy with its own memory; differentiable (CloneBackward0)."""
        from gradkit.ops import conversion
        return conversion.clone(self)

    def contiguous(self) -> Tensor:
        """Self if C-contiguous, else a contiguous copy."""
        if self._data.flags.c_contiguous:
            return self
        return self.clone()

    # -- Python protocol ----------------------------------------------------------------
    def __repr__(self) -> str:
        data = _host(self._data)
        body = np.array2string(data, separator=", ", prefix="tensor(", max_line_width=80,
                               formatter=_float_formatter(data), threshold=1000, edgeitems=3)
        extras = []
        if str(self.device) != "cpu":
            extras.append(f"device='{self.device}'")
        default_float = backend.get_default_dtype().np
        if data.dtype not in (default_float, np.int64, np.bool_, np.complex64) or data.size == 0:
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        fw = getattr(self, "_fw", None)
        if fw is not None and fw[0].open:  # a dual tensor of the open forward-AD level
            extras.append(f"tangent={fw[1]!r}")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        from gradkit.ops.shape import unbind
        return iter(unbind(self, 0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self.item().real if self.is_complex() else self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    __hash__ = object.__hash__

    # -- operators ----------------------------------------------------------------------
    def __add__(self, other):
        return _dispatch(ops.add, (self, other), _NO_PARAMS)

    def __radd__(self, other):  # self first, as torch: it is self + 1 * other
        return _dispatch(ops.add, (self, other), _NO_PARAMS)

    def __sub__(self, other):
        return _dispatch(ops.sub, (self, other), _NO_PARAMS)

    def __rsub__(self, other):
        return _dispatch(ops.sub, (other, self), _NO_PARAMS)

    def __mul__(self, other):
        return _dispatch(ops.mul, (self, other), _NO_PARAMS)

    def __rmul__(self, other):
        return _dispatch(ops.mul, (other, self), _NO_PARAMS)

    def __truediv__(self, other):
        return _dispatch(ops.div, (self, other), _NO_PARAMS)

    def __rtruediv__(self, other):
        return _dispatch(ops.div, (other, self), _NO_PARAMS)

    def __floordiv__(self, other):
        return ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return ops.floor_divide(other, self)

    def __mod__(self, other):
        return ops.remainder(self, other)

    def __rmod__(self, other):
        return ops.remainder(other, self)

    def __pow__(self, other):
        return _dispatch(ops.pow, (self, other), _NO_PARAMS)

    def __rpow__(self, other):
        return _dispatch(ops.pow, (other, self), _NO_PARAMS)

    def __matmul__(self, other):
        return _dispatch(ops.matmul, (self, other), _NO_PARAMS)

    def __rmatmul__(self, other):
        return _dispatch(ops.matmul, (other, self), _NO_PARAMS)

    def __neg__(self):
        return _dispatch(ops.neg, (self,), _NO_PARAMS)

    def __pos__(self):
        return self

    def __abs__(self):
        return ops.abs(self)

    def __invert__(self):
        return ops.logical_not(self) if self._data.dtype == np.bool_ else \
            ops.bitwise_not(self)

    def __and__(self, other):
        return ops.bitwise_and(self, other)

    def __rand__(self, other):
        return ops.bitwise_and(other, self)

    def __or__(self, other):
        return ops.bitwise_or(self, other)

    def __ror__(self, other):
        return ops.bitwise_or(other, self)

    def __xor__(self, other):
        return ops.bitwise_xor(self, other)

    def __rxor__(self, other):
        return ops.bitwise_xor(other, self)

    def __eq__(self, other):
        return ops.eq(self, other)

    def __ne__(self, other):
        return ops.ne(self, other)

    def __lt__(self, other):
        return ops.lt(self, other)

    def __le__(self, other):
        return ops.le(self, other)

    def __gt__(self, other):
        return ops.gt(self, other)

    def __ge__(self, other):
        return ops.ge(self, other)

    def __getitem__(self, key):
        return ops.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        ops.setitem_(self, key, value)

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # -- shape helpers with torch's varargs signatures ------------------------------------
    @property
    def T(self) -> Tensor:  # noqa: N802 - torch's name
        return ops.permute(self, tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        return ops.transpose(self, -2, -1)

    @property
    def H(self) -> Tensor:  # noqa: N802
        return ops.conj(self.T)

    @property
    def mH(self) -> Tensor:  # noqa: N802
        return ops.conj(self.mT)

    @property
    def real(self) -> Tensor:
        """The real part (a view for complex tensors; the tensor itself when real)."""
        return ops.real(self)

    @property
    def imag(self) -> Tensor:
        """The imaginary part, a view (complex tensors only)."""
        return ops.imag(self)

    def is_conj(self) -> bool:
        """Whether this is a conjugated view of a complex tensor (``z.conj()``)."""
        return ops.complex.is_conjugated_view(self)

    def resolve_conj(self) -> Tensor:
        """A conjugated view's values in memory of their own (a clone); else self."""
        return self.clone() if self.is_conj() else self

    def reshape(self, *shape) -> Tensor:
        """Same data in a new shape (a view when possible): ``x.reshape(2, -1)``."""
        return ops.reshape(self, _varargs(shape))

    def view(self, *shape) -> Tensor:
        """A view with a new shape (same memory; must be compatible with the strides)."""
        if len(shape) == 1 and (isinstance(shape[0], backend.dtype) or shape[0] in (float, int)):
            raise NotImplementedError("view(dtype) is not supported; use .to(dtype)")
        return ops.view(self, _varargs(shape))

    def view_as(self, other: Tensor) -> Tensor:
        """A view with the shape of ``other``."""
        return ops.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        """Reshape to the shape of ``other``."""
        return ops.reshape(self, other.shape)

    def expand(self, *sizes) -> Tensor:
        """Broadcast size-1 dims (a view, no copy): ``x.expand(4, -1)``."""
        return ops.expand(self, _varargs(sizes))

    def expand_as(self, other: Tensor) -> Tensor:
        """Broadcast (without copying) to the shape of ``other``."""
        return ops.expand(self, other.shape)

    def permute(self, *dims) -> Tensor:
        """Reorder the dimensions (a view): ``x.permute(2, 0, 1)``."""
        return ops.permute(self, _varargs(dims))

    def repeat(self, *sizes) -> Tensor:
        """Tile the tensor ``sizes`` times along each dim (a copy)."""
        return ops.repeat(self, _varargs(sizes))

    def flip(self, *dims) -> Tensor:
        """Reverse the order of elements along ``dims``."""
        return ops.flip(self, _varargs(dims))

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A new tensor from ``data`` with this tensor's dtype and device by default."""
        from gradkit import creation
        return creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Zeros of ``size`` with this tensor's dtype and device by default."""
        from gradkit import creation
        return creation.zeros(_varargs(size), dtype=dtype or self.dtype,
                              device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Ones of ``size`` with this tensor's dtype and device by default."""
        from gradkit import creation
        return creation.ones(_varargs(size), dtype=dtype or self.dtype,
                             device=device or self.device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
        """``fill_value`` everywhere, with this tensor's dtype and device by default."""
        from gradkit import creation
        return creation.full(size, fill_value, dtype=dtype or self.dtype,
                             device=device or self.device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """An uninitialised-in-torch tensor of ``size`` (zeros here)."""
        return self.new_zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)

    # -- in-place ops ---------------------------------------------------------------------
    def zero_(self) -> Tensor:
        """Fill with zeros in place."""
        return ops.inplace(self, ops.zeros_like_op)

    def fill_(self, value) -> Tensor:
        """Fill with ``value`` in place (a number or a 0-d tensor, differentiable)."""
        return ops.inplace(self, ops.fill, value)

    def copy_(self, src, non_blocking: bool = False) -> Tensor:
        """Copy ``src`` (broadcast, cast) into this tensor in place; differentiable in src."""
        return ops.inplace(self, ops.copy_from, src)

    def add_(self, other, *, alpha=1) -> Tensor:
        """``self += alpha * other`` in place."""
        return ops.inplace(self, ops.add, other, alpha=alpha)

    def sub_(self, other, *, alpha=1) -> Tensor:
        """``self -= alpha * other`` in place."""
        return ops.inplace(self, ops.sub, other, alpha=alpha)


_new = object.__new__


class Size(tuple):
    """torch.Size: a tuple of ints with ``numel()``."""

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"gradkit.Size({list(self)})"


def _differentiable_dtype(array) -> bool:
    """Only floating and complex tensors can require gradients."""
    return array.dtype.kind in "fc" or str(array.dtype) == "bfloat16"


def _varargs(args):
    """Accept both f(2, 3) and f((2, 3)) as torch does."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        return tuple(args[0])
    return tuple(args)


def _float_formatter(data):
    """torch's float style: ``1.`` for whole numbers, else 4 decimals (scientific if extreme)."""
    if data.dtype.kind != "f" or data.size == 0:
        return None
    finite = np.abs(data[np.isfinite(data)].astype(np.float64))
    if finite.size == 0 or np.all(finite == np.round(finite)) and finite.max() < 1e8:
        return {"float_kind": lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)}
    nonzero = finite[finite > 0]
    if finite.max() >= 1e8 or (nonzero.size and nonzero.min() < 1e-4):
        return {"float_kind": lambda v: f"{v:.4e}"}
    return {"float_kind": lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)}


def _host(array):
    return array if isinstance(array, (np.ndarray, np.generic)) else array.get()


# Simple method forms of ops: Tensor.exp(), x.sum(dim), x.mul_(y)... declared as names only.
# ops/__init__.py lists them; the method is the op with self as its first argument.
def _as_method(name):
    op = getattr(ops, name)
    if isinstance(op, _op.Op):
        def method(self, *args, **kwargs):
            if args or kwargs:
                return op(self, *args, **kwargs)
            return _dispatch(op, (self,), _NO_PARAMS)  # x.exp(): no Op.__call__ frame between
    else:
        def method(self, *args, **kwargs):
            return op(self, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"``gradkit.{name}(self, ...)``: " + (op.__doc__ or name)
    return method


def _as_inplace_method(name):
    def method(self, *args, **kwargs):
        return ops.inplace(self, getattr(ops, name), *args, **kwargs)
    method.__name__ = name + "_"
    method.__qualname__ = f"Tensor.{name}_"
    method.__doc__ = f"In-place ``{name}`` (bumps the version counter; see gradkit.{name})."
    return method


from gradkit import ops  # noqa: E402  (ops import Tensor; bind after the class exists)
from gradkit.autograd import inference  # noqa: E402
from gradkit.autograd.grad_mode import state as _grad_state  # noqa: E402
from gradkit.ops import _dispatch as _dispatch_module  # noqa: E402
from gradkit.ops import _op  # noqa: E402

_dispatch_module.Tensor = Tensor
_InferenceVersion = inference.InferenceVersion
_dispatch = _dispatch_module.dispatch
_NO_PARAMS: dict = {}  # shared, never mutated: ops without parameters

for _name in ops.TENSOR_METHODS:
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _as_method(_name))
for _name in ops.INPLACE_METHODS:
    if not hasattr(Tensor, _name + "_"):
        setattr(Tensor, _name + "_", _as_inplace_method(_name))
# x op= y writes into x (its views see it), as torch's in-place operators do
for _dunder, _name in (("__ipow__", "pow_"), ("__imod__", "remainder_"),
                       ("__ifloordiv__", "floor_divide_"), ("__iand__", "bitwise_and_"),
                       ("__ior__", "bitwise_or_"), ("__ixor__", "bitwise_xor_")):
    setattr(Tensor, _dunder, getattr(Tensor, _name))
del _name, _dunder
