"""Strides and storage as torch exposes them, and ``as_strided``: any view of a tensor's memory.

A NumPy array's memory is its *storage*: the array that owns the memory at the end of its
``.base`` chain. torch counts strides and storage offsets in elements, NumPy in bytes; the
functions here convert. ``as_strided`` reads the storage at element positions
``storage_offset + sum(i_k * stride_k)``; its backward (torch's as_strided_backward) adds the
gradient into a storage-shaped buffer at those positions, overlapping outputs adding up, and
reads the input's own positions back out of it.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import enable_grad, records_graph
from gradkit.backend import get_array_module
from gradkit.int_arguments import int_argument, int_parameters
from gradkit.ops._op import op
from gradkit.ops.base_layout import check_geometry
from gradkit.ops.indexing import _index, index_put_into_zeros
from gradkit.ops.inplace import set_history
from gradkit.ops.inplace_views import restride_in_place, stale_views_of
from gradkit.ops.memory_overlap import _address, storage_of
from gradkit.ops.memory_overlap import storage_offset as offset_in_storage
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.view_copies import derived_op
from gradkit.ops.views import DEFAULT, _ArrayInterface, live_views


def element_strides(array) -> tuple:
    """torch's ``stride()``: NumPy's byte strides counted in elements. NumPy gives a fresh
    empty array strides of 0; torch's are the contiguous ones of its sizes (0 taken as 1)."""
    return strides_in_elements(array.shape, array.strides, array.itemsize)


def strides_in_elements(shape: tuple, byte_strides: tuple | None, itemsize: int) -> tuple:
    """:func:`element_strides` of an array known by its shape, byte strides (None:
    contiguous) and item size (what the profiler records of each input)."""
    if byte_strides is None or (0 in shape and not any(byte_strides)):
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        return tuple(reversed(strides))
    return tuple(s // itemsize for s in byte_strides)


def storage_elements(array) -> int:
    """How many elements of ``array``'s dtype its storage holds."""
    return storage_of(array).nbytes // array.itemsize


def whole_storage_copy(array):
    """torch's clone_preserve_strides: a copy of ``array``'s whole storage, viewed as
    ``array`` is (its strides and storage offset)."""
    copy = strided_array(array, (storage_elements(array),), (1,), 0).copy()
    return strided_array(copy, array.shape, element_strides(array), offset_in_storage(array))


def geometry(array) -> tuple:
    """(shape, strides, storage offset) in elements: where each element of ``array`` lives."""
    return tuple(array.shape), element_strides(array), offset_in_storage(array)


@tensor_method()
def stride(x: Tensor, dim: int | None = None):
    """torch's strides in elements: a tuple, or the stride of dimension ``dim``."""
    strides = element_strides(x._data)
    if dim is None:
        return strides
    dim = int_argument(dim, "stride", "dim", 1)
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return strides[_normalize_dim(dim, x.ndim)]


@tensor_method("storage_offset")
def tensor_storage_offset(x: Tensor) -> int:
    """How many elements into its storage x's first element is."""
    return offset_in_storage(x._data)


@tensor_method(("data_ptr", "const_data_ptr"))
def data_ptr(x: Tensor) -> int:
    """The address of x's first element (0 for an empty tensor, as torch)."""
    return _address(x._data) if x._data.size else 0


def positions(size, stride, offset: int) -> np.ndarray:
    """The storage position of each element of the geometry (an int64 array shaped ``size``)."""
    out = np.full(tuple(size), offset, dtype=np.int64)
    for dim, (n, step) in enumerate(zip(size, stride)):
        out += (np.arange(n, dtype=np.int64) * step).reshape((n,) + (1,) * (len(size) - dim - 1))
    return out


def int_tuples(function: str, first_position: int, size, stride) -> tuple:
    """torch's parsing of the ``int[]`` arguments size and stride of ``function`` (tuples,
    lists or Sizes of ints), at ``first_position`` and the next in torch's messages."""
    parsed = []
    for position, (argument, value) in enumerate((("size", size), ("stride", stride)),
                                                 first_position):
        where = f"{function}(): argument '{argument}' (position {position}) must be tuple of ints"
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"{where}, not {type(value).__name__}")
        items = [item.item() if isinstance(item, Tensor) else item for item in value]
        for i, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
                raise TypeError(f"{where}, but found element of type {type(item).__name__} at "
                                f"pos {i}")
        parsed.append(tuple(int(item) for item in items))
    return tuple(parsed)


def strided_array(array, size, stride, offset: int):
    """The raw array ``size``/``stride`` reads from ``array``'s storage at ``offset`` (all in
    elements): it shares that memory."""
    if isinstance(array, np.generic):  # a NumPy scalar's __array_interface__ points into a
        array = np.asarray(array)  # temporary, freed at once (wide seed 107830: garbage read)
    owner = storage_of(array)
    itemsize = array.itemsize
    byte_strides = tuple(s * itemsize for s in stride)
    if hasattr(owner, "__array_interface__"):  # NumPy: exactly there, even past the end
        interface = {"data": (_address(owner) + offset * itemsize, not owner.flags.writeable),
                     "shape": tuple(size), "strides": byte_strides, "typestr": array.dtype.str,
                     "version": 3}
        return np.asarray(_ArrayInterface(interface, owner))
    flat = owner.reshape(-1)  # CuPy: a view, as an owner is contiguous
    if flat.dtype != array.dtype:
        flat = flat.view(array.dtype)
    xp = get_array_module(array)
    return xp.lib.stride_tricks.as_strided(flat[min(offset, flat.size):], tuple(size),
                                           byte_strides)


@op(linear=True)
def times_constant(xp, g, *, factor):
    """``g`` times a constant host array ``factor`` (copied to g's device)."""
    return g * xp.asarray(factor, dtype=g.dtype)


times_constant.defvjp(lambda g, factor: times_constant(g, factor=factor))


def through_storage(values, placed: tuple, read: tuple, source: tuple):
    """Put ``values`` in a zero storage at the geometry ``placed`` (overlapping elements add
    up), then read the geometry ``read`` out of it; all geometries are (size, stride, offset).
    Where the input geometry ``source`` holds several elements at one position (an expanded
    or overlapping input), that position is divided by their count, as torch's
    as_strided_backward does."""
    placed_at, read_at = positions(*placed), positions(*read)
    low = int(min(placed_at.min(initial=0), read_at.min(initial=0)))
    length = int(max(placed_at.max(initial=0), read_at.max(initial=0))) + 1 - low
    storage = index_put_into_zeros(values, (length,), (placed_at - low,))
    counts = np.bincount((positions(*source) - low).reshape(-1), minlength=length)
    if counts.size and counts.max() > 1:  # the input's elements overlap
        storage = times_constant(storage, factor=1.0 / np.maximum(counts, 1))
    return _index(storage, (read_at - low,))


@op(view=True, node_name="AsStridedBackward0")
def _as_strided(xp, x, *, size, stride, storage_offset, source):
    return strided_array(x, size, stride, storage_offset)


def _as_strided_vjp(g, size, stride, storage_offset, source):
    if 0 in size:  # torch's as_strided_backward: new zeros, off the graph of g
        data = getattr(g, "_data", g)
        batch = data.shape[:data.ndim - len(size)]  # a batched backward's leading dims
        zeros = get_array_module(data).zeros(batch + tuple(source[0]), data.dtype)
        return zeros if data is g else Tensor._make(zeros)
    return through_storage(g, (size, stride, storage_offset), source, source)


_as_strided.defvjp(_as_strided_vjp)
_as_strided.defjvp(lambda t, size, stride, storage_offset, source:
                   through_storage(t, source, (size, stride, storage_offset), source))
_as_strided.name, _as_strided.profiler_name = "as_strided", "gradkit::as_strided"
_as_strided.profiled_params = ("size", "stride", "storage_offset")  # torch's (no source)


def _strided_arguments(x: Tensor, size, stride, offset, function: str,
                       first_position: int) -> tuple:
    """torch's parsing and checks of as_strided's arguments: (size, stride, offset)."""
    size, stride = int_tuples(function, first_position, size, stride)
    offset = offset_in_storage(x._data) if offset is None else int(offset)
    check_geometry(size, stride, offset, x.itemsize, storage_elements(x._data) * x.itemsize)
    return size, stride, offset


@tensor_method()
def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of x's storage with the given sizes and strides (in elements) starting at
    ``storage_offset`` (default: x's own); elements may overlap."""
    size, stride, offset = _strided_arguments(input, size, stride, storage_offset, "as_strided", 1)
    return _as_strided(input, size=size, stride=stride, storage_offset=offset,
                       source=geometry(input._data))


def _replay_views_of(base: Tensor, recording: bool) -> None:
    """torch regenerates the views of a base whose version ``as_strided_`` bumped as
    ``as_strided`` of the base's new geometry: their gradient reaches only the elements the
    base still covers (breadth seed 1241178), and a write through one (or its tangent's)
    replays that ``as_strided``, not its old chain."""
    for other in live_views(base):
        info = getattr(other, "_view", None)
        if info is None or info.creation != DEFAULT:
            continue
        params = {"size": tuple(other.shape), "stride": other.stride(),
                  "storage_offset": offset_in_storage(other._data),
                  "source": geometry(base._data)}
        if recording and other.grad_fn is not None:
            with enable_grad():
                fresh = _as_strided(base, **params)
            set_history(other, fresh.grad_fn, fresh._output_nr)
        if not info.computed:
            info.parent, info.op, info.params, info.index = None, _as_strided, params, None


# torch's node of as_strided_: the view's rules, its result on x's memory but no view of it
_as_strided_in_place = derived_op(_as_strided, "as_strided_", "AsStridedBackward1", copies=False)


@tensor_method()
def as_strided_(x: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """``as_strided`` in place: x itself takes the given sizes, strides and offset (its memory
    unchanged; the version bumped). With autograd history it records torch's
    AsStridedBackward1; a view stays a view of its base (as after ``transpose_``)."""
    recording = x.requires_grad and records_graph()
    if recording and x.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    size, stride, offset = _strided_arguments(x, size, stride, storage_offset, "as_strided_",
                                              1)
    if getattr(x, "_view", None) is not None:
        return restride_in_place(x, _as_strided, None, size=size, stride=stride,
                                 storage_offset=offset, source=geometry(x._data))
    moved = _as_strided_in_place(x, size=size, stride=stride, storage_offset=offset,
                                 source=geometry(x._data))
    x._data = moved._data
    if recording:
        set_history(x, moved.grad_fn, 0)
    _replay_views_of(x, recording)
    if getattr(moved, "_fw", None) is not None:  # forward AD: the tangent is restrided too
        x._fw = moved._fw
    x._vc[0] += 1
    stale_views_of(x)
    return x


_as_strided_copy = derived_op(_as_strided, "as_strided_copy", "AsStridedBackward0_copy",
                              copies=True)


def as_strided_copy(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A copy of ``x.as_strided(size, stride, storage_offset)``."""
    size, stride, offset = _strided_arguments(input, size, stride, storage_offset,
                                              "as_strided_copy", 2)
    return _as_strided_copy(input, size=size, stride=stride, storage_offset=offset,
                            source=geometry(input._data))


# -- unfold: the windows of one dimension, a view --------------------------------------------

def _contiguous_geometry(shape) -> tuple:
    """(shape, C-order strides, 0): the geometry of a contiguous tensor of ``shape``."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(shape), tuple(reversed(strides)), 0


def _windows(shape, strides, dim: int, size: int, step: int) -> tuple:
    """The (shape, strides) of ``unfold(dim, size, step)`` over (shape, strides) in elements."""
    if not shape:  # a 0-d tensor unfolds as one of one element
        return (size,), (1,)
    count = (shape[dim] - size) // step + 1
    out_shape = shape[:dim] + (count,) + shape[dim + 1:] + (size,)
    out_strides = strides[:dim] + (strides[dim] * step,) + strides[dim + 1:] + (strides[dim],)
    return out_shape, out_strides


def _unfold_geometries(x_shape, dimension, size, step) -> tuple:
    """The geometries of x and of its windows, as if x were contiguous (for the rules)."""
    source = _contiguous_geometry(tuple(x_shape))
    return _windows(source[0], source[1], dimension, size, step) + (0,), source


@op(save="x.shape", view=True, node_name="UnfoldBackward0")
def _unfold(xp, x, *, dimension, size, step):
    shape, strides = _windows(x.shape, element_strides(x), dimension, size, step)
    return xp.lib.stride_tricks.as_strided(x, shape, tuple(s * x.itemsize for s in strides))


def _unfold_vjp(g, x_shape, dimension, size, step):
    windows, source = _unfold_geometries(x_shape, dimension, size, step)
    return through_storage(g, windows, source, source)


def _unfold_jvp(t, x_shape, dimension, size, step):
    windows, source = _unfold_geometries(x_shape, dimension, size, step)
    return through_storage(t, source, windows, source)


_unfold.defvjp(_unfold_vjp)
_unfold.defjvp(_unfold_jvp)
_unfold.name, _unfold.profiler_name = "unfold", "gradkit::unfold"


_unfold_copy = derived_op(_unfold, "unfold_copy", "UnfoldBackward0_copy", copies=True)


def _unfold_arguments(x: Tensor, dimension: int, size: int, step: int) -> dict:
    """torch's checks of unfold's arguments; the dimension made non-negative."""
    dimension = _normalize_dim(dimension, max(x.ndim, 1))
    extent = x.shape[dimension] if x.ndim else 1
    if size > extent:
        raise RuntimeError(f"maximum size for tensor at dimension {dimension} is {extent} but "
                           f"size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return {"dimension": dimension, "size": int(size), "step": int(step)}


@tensor_method()
@int_parameters("unfold", dimension=(1, "int"), size=(2, "SymInt"), step=(3, "SymInt"))
def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of the windows of ``size`` elements, ``step`` apart, along ``dimension``: that
    dimension counts the windows and a last one of ``size`` walks each window."""
    return _unfold(x, **_unfold_arguments(x, dimension, size, step))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A copy of ``x.unfold(dimension, size, step)``."""
    return _unfold_copy(input, **_unfold_arguments(input, dimension, size, step))
