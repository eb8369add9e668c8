"""The profiler's observer: appends one compact tuple per event, formats nothing.

Everything expensive (names, JSON, nesting, flows) happens later in
``timeline.py``; here each op costs two clock reads, a thread id and a tuple.
Records (``kind`` first, times in the clock's nanoseconds)::

    (OP, name, start, end, tid, seq, inputs, site, stack)   op dispatch; seq = node created or -1
    (NODE, name, start, end, tid, seq)                       backward node execution
    (RANGE, name, start, end, tid)                           record_function / ProfilerStep#N
    (BACKWARD, name, start, end, tid)                        one engine run (backward() / grad())
    (MEM, ts, nbytes, addr, tid)                             allocation (+) or free (-)
    (SAVED, ts, nbytes, tid)                                 saved for backward (+) or released (-)
"""
from __future__ import annotations

import os
import sys
import threading
import time
import weakref

from gradkit.autograd import observers

OP, NODE, RANGE, BACKWARD, MEM, SAVED = range(6)
BACKWARD_NAME = "autograd::engine::backward"

_GRADKIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_internal_code: dict = {}   # code object -> True when it belongs to gradkit itself
_recording: list = []       # recorders currently attached (record_function looks here)
_lock = threading.Lock()
_Tensor = None


def active_recorders() -> tuple:
    """The recorders currently collecting (empty tuple when no profile is on)."""
    return tuple(_recording)


def _is_internal(code) -> bool:
    internal = _internal_code.get(code)
    if internal is None:
        internal = _internal_code[code] = code.co_filename.startswith(_GRADKIT_DIR)
    return internal


_depth_of: dict = {}  # op name -> how deep its caller's frame was last time


def _user_frame(depth: int, key=None):
    """The innermost frame outside gradkit, ``depth`` levels above the caller.

    Walking ``f_back`` materializes every frame object on the way; probing the
    depth that worked last time with ``sys._getframe(n)`` materializes two.
    """
    known = _internal_code
    guess = _depth_of.get(key, 0)
    frame = below = None
    if guess > depth + 1:  # never probe 0 or 1: our own frame in a local is a reference cycle
        try:
            frame = sys._getframe(guess)
            below = sys._getframe(guess - 1)
        except ValueError:
            frame = below = None
    if frame is not None:
        outside = known.get(frame.f_code)
        inside = known.get(below.f_code)
        if outside is False and inside is True:
            return frame
    frame = sys._getframe(depth + 1)
    level = depth + 1
    while frame is not None:
        code = frame.f_code
        internal = known.get(code)
        if internal is None:
            internal = _is_internal(code)
        if not internal:
            _depth_of[key] = level
            return frame
        frame = frame.f_back
        level += 1
    return None


class _ThreadId(threading.local):
    """The OS thread id (PyTorch's tid), read once per thread: get_native_id is a syscall."""

    def __init__(self) -> None:
        self.tid = threading.get_native_id()


_this_thread = _ThreadId()


def _user_stack(frame, limit: int = 64) -> tuple:
    """(code, line) pairs from ``frame`` outwards, innermost first."""
    stack = []
    while frame is not None and len(stack) < limit:
        stack.append((frame.f_code, frame.f_lineno))
        frame = frame.f_back
    return tuple(stack)


def _input_meta(inputs) -> tuple:
    """Shapes/dtypes of tensor and array inputs; scalars as themselves (formatted later)."""
    meta = []
    for a in inputs:
        if type(a) is _Tensor:
            data = a._data
            meta.append((data.shape, data.dtype))
            continue
        data = a._data if isinstance(a, _Tensor) else a
        if hasattr(data, "shape") and hasattr(data, "dtype"):
            meta.append((tuple(data.shape), data.dtype))
        elif isinstance(a, (int, float, complex, bool)) or a is None:
            meta.append(a)
        else:
            meta.append(type(a).__name__)
    return tuple(meta)


def _ignore(nbytes: int) -> None:
    pass


class Recorder(observers.Observer):
    """Collects raw records while attached; ``records`` is the list of tuples."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, clock=None) -> None:
        global _Tensor
        if _Tensor is None:
            from gradkit._tensor import Tensor
            _Tensor = Tensor
        self.clock = clock or time.perf_counter_ns
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.records: list = []
        self.start_ns = self.end_ns = None
        self.start_epoch_ns = None
        self._live = {}   # id(array) -> _Watch on it, only with profile_memory
        self._on_free = self._freed
        self.watches_saved = profile_memory  # saved bytes belong to the memory profile only
        if not profile_memory:
            self.saved_pack = self.saved_release = _ignore
            if not record_shapes and not with_stack:
                self._bind_plain_paths()

    # -- session ------------------------------------------------------------------------
    def start(self) -> None:
        self._on_free = self._freed
        self.start_epoch_ns = time.time_ns()
        self.start_ns = self.clock()
        with _lock:
            _recording.append(self)
        observers.attach(self)

    def stop(self) -> None:
        observers.detach(self)
        with _lock:
            if self in _recording:
                _recording.remove(self)
        self.end_ns = self.clock()
        self._live.clear()  # dropping the weakrefs cancels their callbacks
        self._on_free = None  # the bound method is a cycle through self: break it once stopped

    # -- op dispatch --------------------------------------------------------------------
    def _bind_plain_paths(self) -> None:
        """Closures over locals for the default options: the per-op cost is most of the price."""
        clock, append, thread, user_frame = self.clock, self.records.append, _this_thread, \
            _user_frame

        def op_enter(name, inputs):
            return (name, clock())

        def op_exit(token, outputs, node):
            end = clock()
            if node is None:
                append((OP, token[0], token[1], end, thread.tid, -1, None, None, None))
                return
            frame = user_frame(1, token[0])
            site = (frame.f_code, frame.f_lineno) if frame is not None else None
            append((OP, token[0], token[1], end, thread.tid, node._sequence_nr, None, site, None))

        def node_exit(token, grad_inputs):
            append((NODE, token[0], token[2], clock(), thread.tid, token[1]))

        self.op_enter, self.op_exit, self.node_exit = op_enter, op_exit, node_exit

    def op_enter(self, name, inputs):
        meta = _input_meta(inputs) if self.record_shapes else None
        ids = [id(getattr(a, "_data", a)) for a in inputs] if self.profile_memory else None
        return (name, self.clock(), meta, ids)

    def op_exit(self, token, outputs, node) -> None:
        end = self.clock()
        tid = _this_thread.tid
        seq = -1
        site = stack = None
        if node is not None or self.with_stack:
            frame = _user_frame(1, token[0])
            if frame is not None:
                site = (frame.f_code, frame.f_lineno)
                if self.with_stack:
                    stack = _user_stack(frame)
            if node is not None:
                seq = node._sequence_nr
        self.records.append((OP, token[0], token[1], end, tid, seq, token[2], site, stack))
        if self.profile_memory and outputs is not None:
            if type(outputs) is not tuple:
                outputs = (outputs,)
            self._allocated([o._data for o in outputs if isinstance(o, _Tensor)], token[3],
                            end, tid)

    # -- backward -----------------------------------------------------------------------
    def node_enter(self, node, grads):
        return (node.name(), node._sequence_nr, self.clock())

    def node_exit(self, token, grad_inputs) -> None:
        end = self.clock()
        tid = _this_thread.tid
        self.records.append((NODE, token[0], token[2], end, tid, token[1]))
        if self.profile_memory and grad_inputs:
            arrays = [getattr(g, "_data", g) for g in grad_inputs if g is not None]
            self._allocated(arrays, (), end, tid)

    def backward_enter(self):
        return self.clock()

    def backward_exit(self, token) -> None:
        self.records.append((BACKWARD, BACKWARD_NAME, token, self.clock(),
                             _this_thread.tid))

    # -- ranges (record_function, ProfilerStep#N) --------------------------------------
    def range_enter(self, name: str):
        return (name, self.clock())

    def range_exit(self, token) -> None:
        self.records.append((RANGE, token[0], token[1], self.clock(),
                             _this_thread.tid))

    # -- memory -------------------------------------------------------------------------
    def saved_pack(self, nbytes: int) -> None:
        self.records.append((SAVED, self.clock(), nbytes, _this_thread.tid))

    def saved_release(self, nbytes: int) -> None:
        if nbytes:
                self.records.append((SAVED, self.clock(), -nbytes, _this_thread.tid))

    def _allocated(self, arrays, input_ids, ts, tid) -> None:
        """Record new arrays (not views, not inputs handed back) and watch for their free."""
        live = self._live
        for array in arrays:
            key = id(array)
            if key in live or key in input_ids or getattr(array, "base", None) is not None:
                continue
            try:
                watch = _Watch(array, self._on_free)
            except TypeError:  # an array type without weak references: count nothing
                continue
            watch.nbytes = nbytes = int(array.nbytes)
            watch.addr = key
            live[key] = watch
            self.records.append((MEM, ts, nbytes, key, tid))

    def _freed(self, watch) -> None:
        live = self._live
        if live.get(watch.addr) is watch:
            del live[watch.addr]
            self.records.append((MEM, self.clock(), -watch.nbytes, watch.addr,
                                 _this_thread.tid))


class _Watch(weakref.ref):
    """A weak reference to an allocated array that remembers its size and address."""

    __slots__ = ("nbytes", "addr")
