"""Tensor methods that need ops: conversions, hooks and ``backward``, varargs shape helpers.

The methods layer above the Tensor core (``_tensor.py``) and the ops: ``gradkit/__init__.py``
imports it once every op is loaded, and ``extend`` adds these methods to Tensor.
"""
from __future__ import annotations

import warnings

from gradkit import backend, creation, legacy_tensor
from gradkit import memory_format as memory_formats
from gradkit._tensor import Size, Tensor, extend
from gradkit.number_arguments import number_argument
from gradkit.autograd.api import backward as autograd_backward
from gradkit._user_frames import warn_at_user
from gradkit.int_arguments import (
    bool_argument, check_dimensions, int_argument, invalid_combination, size_argument,
    type_name, unpack_failed)
from gradkit.autograd.graph import node_type
from gradkit.autograd.hooks import (
    register_post_accumulate_hook, register_tensor_hook, retain_grad_hook)
from gradkit.autograd.transform_errors import RETAIN_GRAD, refuse_in_transform
from gradkit.legacy_tensor import legacy_new
from gradkit.to_arguments import to_arguments
from gradkit.ops import comparison, conversion
from gradkit.ops import shape as shape_ops
# not ``from gradkit.ops import complex``: that name is the op torch.complex
from gradkit.ops.complex import (
    conj as _conj, detached_view, imag as _imag, is_conjugated_view, real as _real)
from gradkit.ops.dims import existing_dim
from gradkit.ops.dtype_view import is_dtype_argument, view_dtype
from gradkit.ops.keywords import numpy_names
from gradkit.ops.view_scatter import check_implicit

_new = object.__new__


def _cast_method(name: str, dtype):
    """Tensor.<name>(): ``self.to(dtype)``, differentiable to a floating or complex dtype."""
    def method(self, *args, memory_format=memory_formats.preserve_format) -> Tensor:
        if args:  # torch's parser: the format is keyword-only
            raise TypeError(f"{name}() takes 0 positional arguments but {len(args)} "
                            f"{'was' if len(args) == 1 else 'were'} given")
        return self.to(dtype, memory_format=memory_formats.check_format(memory_format, name))
    differentiable = " (differentiable)" if dtype.np.kind in "fc" else ""
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"Cast to {dtype.np.name}{differentiable}."
    return method


_CASTS = {"float": backend.float32, "double": backend.float64, "half": backend.float16,
          "long": backend.int64, "int": backend.int32, "bool": backend.bool_,
          "cfloat": backend.complex64, "cdouble": backend.complex128, "byte": backend.uint8,
          "char": backend.int8, "short": backend.int16}


def _shape_of(other, method: str) -> tuple:
    """The shape of the tensor ``other``, or torch's TypeError (``view_as(None)``)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"{method}(): argument 'other' (position 1) must be Tensor, not "
                        f"{type_name(other)}")
    return tuple(other.shape)


class _TensorMethods:
    def __new__(cls, *args, **kwargs):
        """torch's legacy constructor: ``Tensor([1, 2])`` (default dtype), ``Tensor(2, 3)``
        (uninitialised), ``Tensor()`` (empty), ``Tensor(t)`` (an alias of t)."""
        if cls is Tensor:
            return legacy_new(args, kwargs)
        return _new(cls)

    def __init__(self, *args, **kwargs) -> None:
        if type(self) is Tensor:  # __new__ made it
            return
        # a subclass (nn.Parameter): the memory and version of what Tensor(*args) would alias
        source = args[0] if len(args) == 1 and isinstance(args[0], Tensor) and not kwargs \
            else legacy_new(args, kwargs)
        self._data = source._data
        self.grad_fn = None
        self._output_nr = 0
        self._vc = source._vc
        self._requires_grad = False

    # -- metadata -------------------------------------------------------------------
    def size(self, dim: int | None = None):
        """The shape as a ``gradkit.Size``, or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        dim = int_argument(dim, "size", "dim", 1)
        return self._data.shape[existing_dim(dim, self._data.ndim)]  # (a 0-d one has none)

    @numpy_names  # other= as x2= too
    def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        """``gradkit.allclose(self, other, ...)``: isclose everywhere, as a Python bool."""
        return comparison.allclose(self, other, rtol, atol, equal_nan)

    # -- autograd state ---------------------------------------------------------------
    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (no-op for leaves)."""
        if self.grad_fn is None and not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        refuse_in_transform(RETAIN_GRAD)
        if self.grad_fn is None or getattr(self, "_retains_grad", False):
            return
        self._retains_grad = True
        retain_grad_hook(self)

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; may return a new grad."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` after ``.grad`` of this leaf has been accumulated."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        return register_post_accumulate_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
                 inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into each leaf's ``.grad`` (see autograd.backward)."""
        autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- conversion -------------------------------------------------------------------
    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``, each with an
        optional ``memory_format`` (a copy laid out so unless already); differentiable."""
        dev, dtype, copy, layout = to_arguments(args, kwargs)
        out = self
        if dtype is not None and backend.to_numpy_dtype(dtype) != self._data.dtype:
            out = conversion.astype(out, dtype=backend.to_numpy_dtype(dtype))
        if dev is not None and backend.device(dev) != self.device:
            out = conversion.to_device(out, device=backend.device(dev))
        if layout is memory_formats.preserve_format or out is not self:
            relayout = (copy and out is self) or (layout is not memory_formats.preserve_format
                                                  and not out.is_contiguous(memory_format=layout))
        else:  # torch returns self itself when it suggests the format asked for
            relayout = copy or layout is not memory_formats.suggested_format(self._data)
        if relayout:
            out = _to_copy(out.clone(memory_format=layout))
        return out

    def cpu(self) -> Tensor:
        """This tensor on the CPU (itself if already there); differentiable."""
        return self.to("cpu")

    def cuda(self, device=None) -> Tensor:
        """This tensor on a GPU (``cuda:0`` by default); differentiable."""
        return self.to("cuda" if device is None else
                       (f"cuda:{device}" if isinstance(device, int) else device))

    def type(self, dtype=None, non_blocking: bool = False, *,
             memory_format=memory_formats.preserve_format):
        """torch's type name (``gradkit.FloatTensor``) or, given a dtype or a tensor type
        (``DoubleTensor``, ``"torch.LongTensor"``), a cast to it (laid out in
        ``memory_format``)."""
        if dtype is None:
            return legacy_tensor.type_name(self)
        memory_formats.check_format(memory_format, "type")
        return legacy_tensor.cast_to_type(self, dtype, memory_format)

    # x.float(), x.long()...: the casts by name are built from _CASTS below

    def clone(self, *, memory_format=memory_formats.preserve_format) -> Tensor:
        """A copy with its own memory; differentiable (CloneBackward0). ``preserve_format``
        keeps a dense tensor's strides (else the order of its strides), ``contiguous_format``
        is C order, channels last its order."""
        memory_formats.check_format(memory_format, "clone")
        return conversion.clone(self, memory_format=memory_format)

    def contiguous(self, *, memory_format=memory_formats.contiguous_format) -> Tensor:
        """Self if laid out in ``memory_format`` (C order by default), else a copy that is."""
        memory_formats.check_format(memory_format, "contiguous")
        if self.is_contiguous(memory_format=memory_format):
            return self
        if memory_format is memory_formats.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return conversion.clone(self, memory_format=_explicit(memory_format))

    # -- shape helpers with torch's varargs signatures ------------------------------------
    @property
    def T(self) -> Tensor:  # noqa: N802 - torch's name
        ndim = self._data.ndim
        if ndim != 2:
            _warn_reversing_t(ndim)
        return shape_ops.permute(self, tuple(range(ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        return self if _is_0d_for(self, "mT", 1) else shape_ops.transpose(self, -2, -1)

    @property
    def H(self) -> Tensor:  # noqa: N802
        return _conj(self if _is_0d_for(self, "H", 2) else self.T)

    @property
    def mH(self) -> Tensor:  # noqa: N802
        return _conj(self if _is_0d_for(self, "mH", 1)
                                else shape_ops.transpose(self, -2, -1))

    @property
    def real(self) -> Tensor:
        """The real part (a view for complex tensors; the tensor itself when real)."""
        return _real(self)

    @real.setter
    def real(self, value) -> None:
        # torch's setter copies into the view: ``x.real = v`` is ``x.real.copy_(v)``
        _write_into(self.real, value)

    @property
    def imag(self) -> Tensor:
        """The imaginary part, a view (complex tensors only)."""
        return _imag(self)

    @imag.setter
    def imag(self, value) -> None:
        _write_into(self.imag, value)

    def detach(self) -> Tensor:
        """A tensor sharing this data (and version counter) with no history; a conjugated
        view's detach is a conjugated view of the same memory (torch's conj bit)."""
        view = getattr(self, "_view", None)
        if view is not None and view.computed:
            return detached_view(self)
        return Tensor._make(self._data, None, 0, self._vc)

    def is_conj(self) -> bool:
        """Whether this is a conjugated view of a complex tensor (``z.conj()``)."""
        return is_conjugated_view(self)

    def resolve_conj(self) -> Tensor:
        """A conjugated view's values in memory of their own (a clone); else self."""
        return self.clone() if self.is_conj() else self

    def reshape(self, *shape, **keyword) -> Tensor:
        """Same data in a new shape (a view when possible): ``x.reshape(2, -1)``."""
        return shape_ops.reshape(self, size_argument(shape, keyword, "reshape", "shape"))

    def view(self, *shape, **keyword) -> Tensor:
        """A view with a new shape (same memory; must be compatible with the strides), or,
        given a dtype, the same memory read as that dtype (no graph, as torch's)."""
        if len(shape) == 1 and not keyword and is_dtype_argument(shape[0]):
            return view_dtype(self, shape[0])
        if not shape and not keyword:
            raise TypeError("view() received an invalid combination of arguments - got (), but "
                            "expected one of: (torch.dtype dtype), (tuple of ints size)")
        try:
            size = size_argument(shape, keyword, "view", "size")
        except TypeError as error:  # torch's view has a dtype signature too: it lists both
            if unpack_failed(error):
                raise
            raise invalid_combination("view", shape, keyword) from None
        return shape_ops.view(self, size)

    @numpy_names  # other= as x2= too
    def view_as(self, other: Tensor) -> Tensor:
        """A view with the shape of ``other``."""
        return shape_ops.view(self, _shape_of(other, "view_as"))

    @numpy_names  # other= as x2= too
    def reshape_as(self, other: Tensor) -> Tensor:
        """Reshape to the shape of ``other``."""
        return shape_ops.reshape(self, _shape_of(other, "reshape_as"))

    def expand(self, *sizes, implicit: bool = False, **keyword) -> Tensor:
        """Broadcast size-1 dims (a view, no copy): ``x.expand(4, -1)``; ``implicit``: torch's
        tracing flag, ignored."""
        check_implicit(implicit, "expand")
        return shape_ops.expand(self, size_argument(sizes, keyword, "expand", "size"))

    @numpy_names  # other= as x2= too
    def expand_as(self, other: Tensor) -> Tensor:
        """Broadcast (without copying) to the shape of ``other``."""
        return shape_ops.expand(self, _shape_of(other, "expand_as"))

    def permute(self, *dims, **keyword) -> Tensor:
        """Reorder the dimensions (a view): ``x.permute(2, 0, 1)``."""
        return shape_ops.permute(self, size_argument(dims, keyword, "permute", "dims", False))

    def repeat(self, *sizes, **keyword) -> Tensor:
        """Tile the tensor ``sizes`` times along each dim (a copy)."""
        return shape_ops.repeat(self, size_argument(sizes, keyword, "repeat", "repeats"))

    def flip(self, *dims, **keyword) -> Tensor:
        """Reverse the order of elements along ``dims``."""
        return shape_ops.flip(self, size_argument(dims, keyword, "flip", "dims", False))

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A new tensor from ``data`` with this tensor's dtype and device by default."""
        if isinstance(data, Tensor):  # torch's warning names the method
            warn_at_user(creation.COPY_CONSTRUCT.format("tensor.new_tensor"))
            return creation.copied_tensor(data, dtype or self.dtype, device or self.device,
                                          bool_argument(requires_grad, "new_tensor",
                                                        "requires_grad"))
        return creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False,
                  **named) -> Tensor:
        """Zeros of ``size`` (or ``size=``) with this tensor's dtype and device by default."""
        size = size_argument(size, named, "new_zeros", "size")  # (one required)
        check_dimensions(size)  # (torch's new_zeros words it as the other factories)
        return creation.zeros(size, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False,
                 **named) -> Tensor:
        """Ones of ``size`` (or ``size=``) with this tensor's dtype and device by default."""
        size = size_argument(size, named, "new_ones", "size")  # (one required)
        return creation.ones(size, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
        """``fill_value`` everywhere, with this tensor's dtype and device by default."""
        fill_value = number_argument(fill_value, "new_full", "fill_value", 2)
        return creation.full(size, fill_value, dtype=dtype or self.dtype,
                             device=device or self.device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """An uninitialised-in-torch tensor of ``size`` (zeros here)."""
        size = size_argument(size, {}, "new_empty", "size")
        return self.new_zeros(size, dtype=dtype, device=device, requires_grad=requires_grad)


extend(_TensorMethods)
for _name, _dtype in _CASTS.items():
    setattr(Tensor, _name, _cast_method(_name, _dtype))
del _name, _dtype


def _to_copy(copy: Tensor) -> Tensor:
    """A copy ``to()`` made: its node is torch's ToCopyBackward0, not clone's."""
    if copy.grad_fn is not None and copy.grad_fn.name() == "CloneBackward0":
        copy.grad_fn.__class__ = node_type("ToCopyBackward0")
    return copy


def _explicit(memory_format):
    """The format ``clone`` lays a copy out in: None (C order) unless channels last."""
    return memory_format if memory_format.physical_order else None


def _warn_reversing_t(ndim: int) -> None:
    """torch's deprecation warnings for ``x.T`` of a tensor that is not 2-d (the result stays
    the reversed view)."""
    text = ("Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
            "cases." if ndim == 0 else
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
            "to reverse the dimensions of a tensor.")
    warnings.warn(text, UserWarning, stacklevel=3)


def _is_0d_for(t, name: str, least: int) -> bool:
    """torch's checks for ``x.mT``/``x.mH`` (``least`` 1: not 1-d) and ``x.H`` (2: 2-d only):
    a 0-d tensor passes with a deprecation warning (the property is then the identity/conj)."""
    ndim = t._data.ndim
    if ndim == 0:
        advice = "This function is the identity in these cases." if name == "mT" else \
            "Consider using x.conj()."
        warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. {advice}", UserWarning,
                      stacklevel=3)
        return True
    if least == 1 and ndim == 1:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           "Got 1-D tensor.")
    if least == 2 and ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D "
                           "tensor." + (" For batches of matrices, consider using tensor.mH"
                                        if ndim > 2 else ""))
    return False


def _write_into(part: Tensor, value) -> None:
    """``x.real = value``: a tensor is copied into the view, a number fills it."""
    if isinstance(value, Tensor):
        part.copy_(value)
    else:
        part.fill_(value)
