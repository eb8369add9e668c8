"""The buffer a base's gradient is laid out in when a view chain is replayed on it.

torch's CopySlices allocates the base's gradient with the base's sizes and strides and reads
the view's region out of it by the view's geometry relative to the base (``as_strided`` with
``view.storage_offset() - base.storage_offset()``). A base that covers its storage exactly from
offset 0 needs only its memory order (layout_of); so does any base for a chain of relative
steps (slices...). A chain with an ``as_strided`` step (absolute storage positions) on a base
that does not (after ``as_strided_``, ``set_`` or ``resize_``) gets a :class:`StorageLayout`:
a buffer whose storage mirrors the base's, so that step reads the same elements there.
torch's bounds checks of that read are kept (check_geometry).
"""
from __future__ import annotations

from gradkit.ops.memory_overlap import _dense, storage_offset
from gradkit.storage_owner import storage_of


def check_geometry(size, stride, offset: int, itemsize: int, storage_bytes: int) -> None:
    """torch's checks of a view's sizes, strides and offset against a storage of
    ``storage_bytes`` bytes."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if 0 in size:  # an empty view reads nothing: any offset will do
        return
    needed = (offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))) * itemsize
    if needed > storage_bytes:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed} are out of bounds "
            f"for storage of size {storage_bytes}")


def _geometry(array) -> tuple:
    """(shape, strides, storage offset) in elements (a base's strides are never 0-sized)."""
    return (tuple(array.shape), tuple(s // array.itemsize for s in array.strides),
            storage_offset(array))


def _extent(size, stride) -> int:
    """How many elements a geometry at offset 0 reaches (torch's new_empty_strided)."""
    return 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))


class StorageLayout:
    """A base that does not cover its storage exactly: its geometry, its storage's length,
    and the geometry of the view written into it (None: no bounds check)."""

    __slots__ = ("base", "length", "view")

    def __init__(self, base: tuple, length: int, view: tuple | None) -> None:
        self.base, self.length, self.view = base, length, view

    def __eq__(self, other) -> bool:
        return isinstance(other, StorageLayout) and (self.base, self.length, self.view) == (
            other.base, other.length, other.view)

    def __hash__(self) -> int:
        return hash((self.base, self.length, self.view))

    def buffer(self, xp, array):
        """A copy of ``array`` (base-shaped) at the base's positions of a zero storage."""
        size, stride, offset = self.base
        if self.view is not None:  # torch's as_strided into a buffer of the base's extent
            view_size, view_stride, view_offset = self.view
            check_geometry(view_size, view_stride, view_offset - offset, array.itemsize,
                           _extent(size, stride) * array.itemsize)
        storage = xp.zeros(self.length, dtype=array.dtype)
        out = xp.lib.stride_tricks.as_strided(storage[offset:], size,
                                              tuple(s * array.itemsize for s in stride))
        out[...] = array
        return out


def buffer_layout(base, chain: tuple, view=None) -> StorageLayout | tuple | None:
    """How a buffer replaying the view ``chain`` on the raw array ``base`` is laid out: a
    :class:`StorageLayout` when an ``as_strided`` step reads absolute storage positions and
    ``base`` does not cover its storage exactly from offset 0 (``view``: the raw array of the
    view written), else the base's memory order (layout_of)."""
    if not any(step[0].name == "as_strided" for step in chain):
        return layout_of(base)
    size, stride, offset = _geometry(base)
    length = storage_of(base).nbytes // base.itemsize
    if offset == 0 and length == base.size and _dense(base):
        return layout_of(base)
    return StorageLayout((size, stride, offset), length, None if view is None else
                         _geometry(view))


def layout_of(array) -> tuple | None:
    """The order of ``array``'s axes in memory, outermost first (None: C order). A buffer that
    replays a view chain is laid out as the chain's base, as torch's CopySlices allocates one
    with the base's strides: ``view`` and ``view_as_complex`` depend on that layout."""
    if array.flags.c_contiguous:
        return None
    strides = array.strides
    return tuple(sorted(range(array.ndim), key=lambda axis: -abs(strides[axis])))
