"""``allow_mutation_on_saved_tensors``: in-place changes of tensors saved for backward.

Re-exported from :mod:`gradkit.autograd.graph` (torch's home for it). Inside the block,
tensors are saved through a pair of saved-tensor hooks that remember them by buffer; the
in-place mechanism (``ops/inplace.py``) calls ``before_write`` before it writes, and a saved
tensor that shares the buffer being written is copied first, so backward sees the values it
was recorded with (torch's behaviour).
"""
from __future__ import annotations

import threading

from gradkit._tensor import Tensor
from gradkit.autograd.saved_hooks import saved_tensors_hooks

OUTSIDE_MESSAGE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                   "in which the graph was originally recorded.")


class _MutationState(threading.local):
    active: tuple = ()  # the open contexts of this thread, innermost last


state = _MutationState()


def _root(array):
    """The array that owns the memory of ``array`` (views share it)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def _memory_of(tensor) -> int:
    """The id of the array that owns ``tensor``'s memory. A view holding computed values (conj)
    has an array of its own, kept in step with its base's: it counts as its base's memory."""
    view = getattr(tensor, "_view", None)
    return id(_root(view.base._data if view is not None and view.computed else tensor._data))


class _Saved:
    """A tensor saved inside the block, and its copy once something wrote into it."""

    __slots__ = ("tensor", "copy")

    def __init__(self, tensor) -> None:
        self.tensor = tensor
        self.copy = None


class allow_mutation_on_saved_tensors(saved_tensors_hooks):  # noqa: N801 - torch's spelling
    """Allow in-place changes of tensors saved for backward; backward uses the saved values.

    Backward must run inside the same block, as in torch.

    >>> with gradkit.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = x * 1
    ...     y = (a * a).sum()
    ...     a.mul_(10)       # copied first: backward still sees the old a
    ...     y.backward()
    """

    def __init__(self) -> None:
        self._by_buffer = {}  # id of the owning array -> [_Saved, ...]
        self._open = False
        super().__init__(self._pack, self._unpack)

    def __enter__(self):
        if state.active:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        super().__enter__()
        self._open = True
        state.active = (*state.active, self)
        return self

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self._open = False
        self._by_buffer.clear()
        state.active = tuple(c for c in state.active if c is not self)

    def _pack(self, tensor) -> _Saved:
        saved = _Saved(tensor)
        self._by_buffer.setdefault(_memory_of(tensor), []).append(saved)
        return saved

    def _unpack(self, saved: _Saved):
        if not self._open:
            raise AssertionError(OUTSIDE_MESSAGE)
        if saved.copy is None:
            return saved.tensor
        return Tensor._make(saved.copy)

    def before_write(self, tensor) -> None:
        """Copy the saved tensors that share ``tensor``'s memory, before it is written."""
        for saved in self._by_buffer.get(_memory_of(tensor), ()):
            if saved.copy is None:
                saved.copy = saved.tensor._data.copy()


def before_write(tensor) -> None:
    """Called by every in-place op before it writes into ``tensor`` (one check when unused)."""
    for context in state.active:
        context.before_write(tensor)
