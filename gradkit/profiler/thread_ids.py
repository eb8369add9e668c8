"""The OS id of the thread that records (PyTorch's tid), looked up cheaply per record.

A thread-local attribute read costs about 900 instructions; the recorder's hot points
look the id up instead by ``threading.get_ident()`` in ``native_ids``.
"""
from __future__ import annotations

import threading

# {native tid: Python thread name} of every thread that recorded: a worker that has ended
# by export time still gets its own name on its track
thread_names_seen: dict = {}


class _NativeIds(dict):
    """``threading.get_ident()`` -> the OS thread id (PyTorch's tid) of each live thread that
    recorded: the hot points look the id up here, cheaper than a thread-local attribute. A
    thread not seen yet reads its id once (``_ThreadId``)."""

    def __missing__(self, ident: int) -> int:
        tid = self[ident] = this_thread.tid
        return tid


native_ids = _NativeIds()


class _Forget:
    """Held by a thread's ``_ThreadId``: drops the thread's ident when the thread ends (its
    thread-local values are freed then), since a later thread may get the same ident."""

    __slots__ = ("ident", "ids")

    def __init__(self, ident: int) -> None:
        self.ident, self.ids = ident, native_ids  # (the module's globals may be gone at exit)

    def __del__(self) -> None:
        self.ids.pop(self.ident, None)


class _ThreadId(threading.local):
    """The OS thread id, read once per thread: get_native_id is a syscall."""

    def __init__(self) -> None:
        self.tid = threading.get_native_id()
        thread_names_seen[self.tid] = threading.current_thread().name
        ident = threading.get_ident()
        self.forget = _Forget(ident)
        native_ids[ident] = self.tid


this_thread = _ThreadId()
