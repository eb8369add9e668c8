"""Tensor methods about a tensor's memory: ``resize_``, ``resize_as_``, ``set_``, ``new``,
``layout``, ``is_shared``/``share_memory_``, ``is_pinned``/``pin_memory``.

A tensor's storage is the NumPy array that owns its memory (``ops/memory_overlap.storage_of``);
``resize_`` keeps it when the new size fits and moves the tensor to a larger copy of it
otherwise, as torch's storage grows.
"""
from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

from gradkit import backend, memory_format as memory_formats
from gradkit._tensor import Tensor, _varargs, extend
from gradkit.autograd.grad_mode import records_graph, state as grad_state
from gradkit.autograd.inference import check_inplace
from gradkit.legacy_tensor import legacy_new
from gradkit.ops.memory_overlap import storage_of, storage_offset
from gradkit.ops.shape import view
from gradkit.ops.strided import strided_array
from gradkit.ops.unary_helpers import scalar_type_name
from gradkit.storage import TypedStorage, UntypedStorage
from gradkit.storage_owner import in_shared_memory, mark_shared_memory, shared_with_numpy

# torch's C++ names of the dtypes, in set_()'s dtype error
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}

_SET_SIGNATURES = (
    " * ()\n * (torch.Storage source)\n"
    " * (torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride = "
    "None)\n * (Tensor source)\n"
    " * (Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)\n")


def _storage_elements(storage, tensor: Tensor) -> Tensor:
    """A storage as a flat tensor of ``tensor``'s dtype (a TypedStorage keeps its own dtype,
    which set_ then checks), to set ``tensor`` on: its memory, from the storage's start."""
    typed = isinstance(storage, TypedStorage)
    memory = storage._untyped_storage._bytes if typed else storage._bytes
    dtype = backend.to_numpy_dtype(storage.dtype) if typed else tensor._data.dtype
    return Tensor._make(memory[:len(memory) - len(memory) % dtype.itemsize].view(dtype))


def _sizes(sizes: tuple) -> tuple[int, ...]:
    """resize_'s size argument, with torch's errors."""
    shape = _varargs(sizes, "resize_", "size")
    for position, n in enumerate(shape, 1):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"resize_(): argument 'size' failed to unpack the object at pos "
                            f"{position} with error \"type must be tuple of ints,but got "
                            f"{type(n).__name__}\"")
    if any(n < 0 for n in shape):
        raise RuntimeError("numel: integer multiplication overflow")  # torch's text
    return tuple(int(n) for n in shape)


def _check_overflow(shape: tuple, itemsize: int) -> None:
    """torch's errors for a size whose element count or byte count passes int64."""
    numel = 1
    for size in shape:
        numel *= size
    if numel >= 2 ** 63:
        raise RuntimeError("numel: integer multiplication overflow")
    if numel * itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")


def _suggested_format(tensor: Tensor):
    """torch's suggest_memory_format: channels last when the strides are (and not C order)."""
    shape, strides = tuple(tensor.shape), tensor.stride()
    for fmt in (memory_formats.channels_last, memory_formats.channels_last_3d):
        if len(shape) == fmt.rank and not tensor.is_contiguous() and \
                memory_formats.is_in_format(shape, strides, fmt):
            return fmt
    return memory_formats.contiguous_format


def _grown_storage(array, elements: int):
    """A storage of ``elements`` items of array's dtype starting with a copy of array's storage
    (torch's storage resize: the old bytes kept, the rest zeros here, uninitialised there);
    refused for memory NumPy shares, as torch's storages of NumPy memory are not resizable."""
    if shared_with_numpy(array):
        raise RuntimeError("Trying to resize storage that is not resizable")
    owner = storage_of(array)
    xp = backend.get_array_module(array)
    grown = xp.zeros(elements * array.itemsize, dtype=np.uint8)
    grown[:owner.nbytes] = owner.reshape(-1).view(np.uint8)
    return grown.view(array.dtype)


def _resized_view(tensor: Tensor, sizes: tuple) -> Tensor:
    """torch's autograd Resize: the same elements viewed in ``sizes``, its error otherwise (its
    sizes multiplied as given: a tuple among them is not unpacked)."""
    numel = functools.reduce(operator.mul, sizes, 1)
    if numel != tensor.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, tensor.shape))} "
            f"({tensor.numel()} elements). autograd's resize can only change the shape of a "
            "given tensor, while preserving the number of elements. ")
    return view(tensor.contiguous(), shape=sizes)


def _sizes_or_keyword(sizes: tuple, size, name: str) -> tuple:
    """The sizes given positionally, or by torch's keyword ``size=`` (not both)."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


class _StorageMethods:
    def resize_(self, *sizes, memory_format=None, size=None) -> Tensor:
        """This tensor with the shape ``sizes`` (dense, C order or ``memory_format``'s) on its
        memory when the storage holds enough elements, else on a grown copy of the storage;
        refused on a tensor that requires grad, as torch, except in inference mode (where
        torch's autograd layer, which refuses it, is skipped)."""
        shape = _sizes(_sizes_or_keyword(sizes, size, "resize_"))
        check_inplace(self)
        if self._requires_grad and not grad_state.inference:
            raise RuntimeError("cannot resize variables that require grad")
        if memory_format is None and shape == tuple(self._data.shape):
            return self  # torch keeps the strides of a tensor already of that size
        _check_overflow(shape, self._data.itemsize)
        fmt = memory_formats.contiguous_format if memory_format is None else \
            memory_formats.check_format(memory_format, "resize_")
        if fmt is memory_formats.preserve_format:
            raise RuntimeError("Unsupported memory formatPreserve")
        strides = memory_formats.format_strides(shape, fmt)
        offset = storage_offset(self._data)
        span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        storage = self._data
        if offset + span > storage_of(storage).nbytes // storage.itemsize:
            storage = _grown_storage(storage, offset + span)
        elif getattr(self, "_view", None) is not None:  # a view stays its base's (a conj
            return self.as_strided_(shape, strides, offset)  # view's values come from it)
        before = self._data.shape, self._data.strides
        self._data = strided_array(storage, shape, strides, offset)
        if (self._data.shape, self._data.strides) != before:
            self._vc[0] += 1
        return self

    def resize_as_(self, the_template: Tensor, memory_format=None) -> Tensor:
        """``resize_(the_template.shape)``."""
        if not isinstance(the_template, Tensor):
            raise TypeError("resize_as_(): argument 'the_template' (position 1) must be Tensor, "
                            f"not {type(the_template).__name__}")
        if memory_format is memory_formats.preserve_format:  # the template's own layout
            memory_format = _suggested_format(the_template)
        return self.resize_(the_template.shape, memory_format=memory_format)

    def resize(self, *sizes) -> Tensor:
        """Deprecated (torch's warning): ``contiguous().view(*sizes)``, which must keep the
        number of elements (torch's autograd ``Resize``)."""
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        return _resized_view(self, sizes)

    def resize_as(self, tensor: Tensor) -> Tensor:
        """Deprecated (torch's warning): ``resize(*tensor.size())``."""
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        return _resized_view(self, tuple(tensor.shape))

    def set_(self, source: Tensor | None = None, storage_offset: int | None = None,
             size=None, stride=None) -> Tensor:
        """This tensor on ``source``'s memory with its shape and strides (or ``size``/``stride``
        at ``storage_offset`` of it); empty memory without a source. Version bumped; gradkit
        refuses it where autograd would record it."""
        if isinstance(source, TypedStorage) and source.dtype is not self.dtype:
            elements = np.empty(0, backend.to_numpy_dtype(source.dtype))
            raise RuntimeError(f"Expected a Storage of type {_CPP_NAMES[self.dtype.name]} or an "
                               f"UntypedStorage, but got type {scalar_type_name(elements)} for "
                               "argument 1 'storage'")
        if isinstance(source, (UntypedStorage, TypedStorage)):
            source = _storage_elements(source, self)
        if source is not None and not isinstance(source, Tensor):
            raise TypeError("set_() received an invalid combination of arguments - got "
                            f"({type(source).__name__}), but expected one of:\n"
                            + _SET_SIGNATURES)
        if self._requires_grad and self.grad_fn is None and records_graph():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if records_graph() and (self._requires_grad or
                                (source is not None and source._requires_grad)):
            raise NotImplementedError("gradkit: set_ on tensors with autograd history")
        if source is None:
            data = backend.get_array_module(self._data).empty(0, dtype=self._data.dtype)
        elif source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_CPP_NAMES[source.dtype.name]} "
                               f"to a tensor of type {_CPP_NAMES[self.dtype.name]}")
        elif size is None:
            data = source._data
        else:
            if stride is None:
                stride = memory_formats.format_strides(tuple(size),
                                                       memory_formats.contiguous_format)
            data = source.detach().as_strided(size, stride, storage_offset)._data
        self._data = data
        if self.grad_fn is None:  # as torch, a leaf set_ gets a new gradient accumulator: the
            # graphs built before reach it through their old edges only
            self._accum = None
        self._vc[0] += 1
        return self

    def new(self, *args, **kwargs) -> Tensor:
        """torch's legacy ``x.new(...)``: ``Tensor(...)`` in x's dtype and on x's device (a
        size makes an uninitialised tensor, zeros here; data is copied; a tensor is aliased)."""
        return legacy_new(args, kwargs, self.dtype, own_device=self.device)

    def is_set_to(self, tensor: Tensor) -> bool:
        """Whether ``tensor`` is this tensor's memory with its shape, strides and offset (what
        ``set_(tensor)`` makes)."""
        if not isinstance(tensor, Tensor):
            raise TypeError("is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                            f"{type(tensor).__name__}")
        mine, theirs = self._data, tensor._data
        return (storage_of(mine) is storage_of(theirs) and mine.size > 0
                and storage_offset(mine) == storage_offset(theirs)
                and mine.shape == theirs.shape and mine.strides == theirs.strides)

    def dim_order(self, *, ambiguity_check: bool = False) -> tuple[int, ...]:
        """The dims from outermost to innermost in memory (by decreasing stride, as torch);
        ``ambiguity_check=True``: torch's error when two dims have one stride."""
        strides = self.stride()
        if ambiguity_check and len(set(strides)) != len(strides):
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
        return memory_formats.stride_order(tuple(self.shape), strides)

    @property
    def layout(self) -> memory_formats.layout:
        """``gradkit.strided``: every gradkit tensor is a strided array."""
        return memory_formats.strided

    def is_shared(self) -> bool:
        """Whether ``share_memory_()`` marked this tensor's storage."""
        return in_shared_memory(self._data)

    def share_memory_(self) -> Tensor:
        """Mark the storage as shared and return self: gradkit has no torch.multiprocessing,
        so its memory stays where it is."""
        mark_shared_memory(self._data)
        return self

    def is_pinned(self, device=None) -> bool:
        """False: gradkit never pins host memory."""
        return False

    def pin_memory(self, device=None) -> Tensor:
        """Refused: gradkit has no page-locked host memory (torch's error without a GPU)."""
        if backend.cuda_is_available():
            raise NotImplementedError("gradkit does not pin host memory (no CUDA pinned memory)")
        raise RuntimeError("Cannot access accelerator device when none is available.")


extend(_StorageMethods)


def _false(name: str, what: str) -> property:
    def query(self) -> bool:
        return False
    query.__name__ = name
    query.__doc__ = f"False: gradkit has no {what}."
    return property(query)


# the kinds of tensor torch has and gradkit has not: its queries answer False
for _name, _what in (
        ("is_sparse", "sparse tensors"), ("is_sparse_csr", "sparse tensors"),
        ("is_quantized", "quantized tensors"), ("is_meta", "meta tensors"),
        ("is_mkldnn", "MKL-DNN tensors"), ("is_nested", "nested tensors"),
        ("is_xpu", "XPU device"), ("is_mps", "MPS device"), ("is_vulkan", "Vulkan device"),
        ("is_xla", "XLA device"), ("is_ipu", "IPU device"), ("is_maia", "MAIA device"),
        ("is_mtia", "MTIA device")):
    setattr(Tensor, _name, _false(_name, _what))
del _name, _what
