"""The profiler's observer: appends each event's fields to a flat list, formats nothing.

Everything expensive (names, JSON, nesting, flows) happens later in
``timeline.py`` and ``trace_export.py``; here each op costs one Python call (the caller
reads the start time), a clock read, a thread id, finding the user's call site, and one
``list.extend``. Flat, because a tuple kept per event is an object
the garbage collector must track and scan while the session grows; one list per kind of
record, so that ``records`` cuts them back into tuples at C speed (the kind is not stored:
its list says it). Records (``kind`` first, times in the clock's nanoseconds)::

    (OP, name, start, end, tid, seq, inputs, code, lasti, stack)
                                                    op dispatch; seq = node created or -1,
                                                    code, lasti: the user's call (or None, -1)
    (NODE, name, start, end, tid, seq)                       backward node execution
    (RANGE, name, start, end, tid)                           record_function / ProfilerStep#N
    (BACKWARD, name, start, end, tid)                        one engine run (backward() / grad())
    (MEM, ts, nbytes, addr, tid)                             allocation (+) or free (-)
    (SAVED, ts, nbytes, tid, pack)                saved for backward (+) or released (-); pack
                                                    pairs a release with its pack

Frees are kept apart from allocations, their size positive (negating it makes an int per
free); ``records`` hands them back as MEM records.
"""
from __future__ import annotations

import threading
import time
import weakref
from itertools import repeat

from numpy import dtype as np_dtype, ndarray

from gradkit._tensor import Tensor
from gradkit.backend import dtype
from gradkit._user_frames import first_user_frame
from gradkit.autograd import observers
from gradkit.autograd.graph import Node

OP, NODE, RANGE, BACKWARD, MEM, SAVED = range(6)
_FIELDS = (9, 5, 4, 4, 4, 4)  # fields per record after its kind, by kind
_FREED = len(_FIELDS)  # the list of frees, after the kinds' lists: MEM's fields
BACKWARD_NAME = "autograd::engine::backward"

_recording: list = []       # recorders currently attached (record_function looks here)
_lock = threading.Lock()


def active_recorders() -> tuple:
    """The recorders currently collecting (empty tuple when no profile is on)."""
    return tuple(_recording)


# {native tid: Python thread name} of every thread that recorded: a worker that has ended
# by export time still gets its own name on its track
thread_names_seen: dict = {}


class _ThreadId(threading.local):
    """The OS thread id (PyTorch's tid), read once per thread: get_native_id is a syscall."""

    def __init__(self) -> None:
        self.tid = threading.get_native_id()
        thread_names_seen[self.tid] = threading.current_thread().name


_this_thread = _ThreadId()


def site_text(site: tuple) -> str:
    """``file:line`` of a recorded call site ``(code, lasti)``: the line is looked up only now."""
    code, lasti = site
    for start, end, line in code.co_lines():
        if start <= lasti < end and line is not None:
            return f"{code.co_filename}:{line}"
    return f"{code.co_filename}:{code.co_firstlineno}"


def _user_stack(frame, limit: int = 64) -> tuple:
    """(code, line) pairs from ``frame`` outwards, innermost first."""
    stack = []
    while frame is not None and len(stack) < limit:
        stack.append((frame.f_code, frame.f_lineno))
        frame = frame.f_back
    return tuple(stack)


_PLAIN_SCALARS = frozenset((int, float, complex, bool, type(None)))


class Ints(tuple):
    """A list of ints among an op's arguments (torch's ``ScalarList``: sizes, dims)."""


class Tensors(tuple):
    """A list of tensors among an op's arguments (torch's ``TensorList``): their metadata."""


class Given(tuple):
    """The keyword parameters an op call was given: ``(name, metadata, type)`` triples, last in
    its input metadata (the defaults of the others are filled in when the event is formatted;
    the type keeps 1 and 1.0 apart)."""


def value_meta(a):
    """What is kept of one argument: a tensor's (shape, dtype, strides), a number, None, a
    dtype, an int list, a tensor list's metadata; a string is None (torch lists no value);
    anything else its type's name. Nothing that keeps an array alive."""
    if type(a) in _PLAIN_SCALARS:  # exact types: a numpy scalar has a shape and a dtype
        return a
    if isinstance(a, (tuple, list)):
        if all(type(i) is int for i in a):
            return Ints(a)
        if all(isinstance(i, Tensor) for i in a):
            return Tensors(_input_meta(a))
        return type(a).__name__
    if isinstance(a, (dtype, np_dtype, str)):
        return None if isinstance(a, str) else a
    data = a._data if isinstance(a, Tensor) else a
    if hasattr(data, "shape") and hasattr(data, "dtype"):
        return tuple(data.shape), data.dtype, getattr(data, "strides", None)
    if isinstance(a, (int, float, complex, bool)):
        return a
    return type(a).__name__


def _input_meta(inputs) -> tuple:
    """Shapes/dtypes of tensor and array inputs; scalars as themselves (formatted later)."""
    meta = []
    for a in inputs:
        if type(a) is Tensor:
            data = a._data
            meta.append((data.shape, data.dtype, data.strides))
        else:
            meta.append(value_meta(a))
    return tuple(meta)


def _given(params: dict) -> Given:
    return Given((name, value_meta(value), type(value)) for name, value in params.items())


def _node_name(node, names: dict) -> str:
    """``node.name()``, remembered in ``names`` by class where the class names all its nodes
    alike (``Node.name``: the class's own name; a custom Function's node reads its op)."""
    name = node.name()
    if type(node).name is Node.name:
        names[type(node)] = name
    return name


def _ignore(nbytes: int, pack: int) -> None:
    pass


class Recorder(observers.Observer):
    """Collects raw records while attached; ``records`` is the list of tuples.

    The observer points are closures over locals, bound per instance for its options
    (attribute lookups are most of the per-op price); none refers to the recorder itself.
    """

    records_creations = True  # creation functions are op events (gradkit/creation_events.py)

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, clock=None, with_modules: bool = False) -> None:
        self.clock = clock or time.perf_counter_ns
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._flat = tuple([] for _ in range(_FREED + 1))  # per kind, its fields in a row
        self.start_ns = self.end_ns = None
        self.start_epoch_ns = None
        self._live = {}   # id(array) -> _Watch on it, only with profile_memory
        self._open = {}   # id(token) -> token of each range entered and not exited yet
        self.ranges_with_args = set()  # (name, start, tid) of record_function(name, args)
        self.watches_saved = profile_memory  # saved bytes belong to the memory profile only
        if with_modules:  # each nn.Module call is a range named by its module path
            self.module_enter, self.module_exit = self.range_enter, self.range_exit
        self._bind_points()

    # -- session ------------------------------------------------------------------------
    def start(self) -> None:
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
        for name, start, tid in self._open.values():  # an unclosed range ends with the session
            self._flat[RANGE].extend((name, start, self.end_ns, tid))
        self._open.clear()
        self._live.clear()  # dropping the weakrefs cancels their callbacks

    # -- op dispatch, backward nodes, saved bytes: the hot points ------------------------
    def _bind_points(self) -> None:
        clock, thread, live, metas, names = self.clock, _this_thread, self._live, {}, {}
        emit_op, emit_node, emit_mem, emit_saved, emit_free = (
            self._flat[kind].extend for kind in (OP, NODE, MEM, SAVED, _FREED))
        shapes, memory, with_stack = self.record_shapes, self.profile_memory, self.with_stack

        def op_enter(name, inputs):
            return clock()

        def op_exit(start, name, inputs, outputs, node, params):
            end, tid = clock(), thread.tid
            meta = None
            if shapes:  # what went in, read now: ops write into their inputs only after
                meta = []  # this point (an input resized in place later keeps these)
                numbers = params
                for a in inputs:  # _input_meta's work, inline
                    if type(a) is Tensor:
                        data = a._data
                        meta.append((data.shape, data.dtype, data.strides))
                    else:
                        meta.append(a if type(a) in _PLAIN_SCALARS else value_meta(a))
                        numbers = True
                if params:
                    meta.append(_given(params))
                # one tuple per distinct signature of tensors is kept, not one per op: fewer
                # objects. Numbers are kept as given: equal numbers of other types (1, 1.0,
                # True) must not share a signature, and a key telling them apart costs more
                # per op than the tuple it saves
                meta = tuple(meta) if numbers else metas.setdefault(meta := tuple(meta), meta)
            # the user's line that called the op (op_exit <- dispatch <- ... <- user), also
            # of an op that made no node (no_grad, an optimizer's update): the line table
            # attributes its time as any other op's
            frame = first_user_frame(name, 4)  # past op_exit, the dispatcher and its caller
            if frame is None:
                emit_op((name, start, end, tid, -1 if node is None else node._sequence_nr,
                         meta, None, -1, None))
            else:
                emit_op((name, start, end, tid, -1 if node is None else node._sequence_nr,
                         meta, frame.f_code, frame.f_lasti,
                         _user_stack(frame) if with_stack else None))
            if memory and outputs is not None:
                if type(outputs) is Tensor:  # one new tensor: allocated's work, inlined
                    array = outputs._data
                    key = id(array)
                    if key not in live and array.base is None:
                        for a in inputs:
                            if type(a) is Tensor and a._data is array:
                                break  # an in-place op hands its input back
                        else:
                            if type(array) is ndarray:  # watch's work, inlined: a call less
                                live[key] = watched = _Watch(array, freed)
                                watched.nbytes = nbytes = array.nbytes
                                watched.addr = key
                                emit_mem((end, nbytes, key, tid))
                            else:
                                watch(array, key, end, tid)
                else:
                    allocated(outputs, inputs, end, tid)

        def node_enter(node, grads):
            return clock()

        def node_exit(start, node, grads, grad_inputs):
            end, tid = clock(), thread.tid
            # the name of a node class whose nodes all share it, looked up: a call less per node
            name = names.get(type(node)) or _node_name(node, names)
            emit_node((name, start, end, tid, node._sequence_nr))
            if memory and grad_inputs:
                for g in grad_inputs:  # arrays, in a plain backward: allocated's work, inlined
                    if type(g) is ndarray:
                        key = id(g)
                        if key not in live and g.base is None:
                            watch(g, key, end, tid)
                    elif g is not None:
                        allocated(g, (), end, tid)

        def allocated(values, inputs, ts, tid) -> None:
            """Record new arrays (not views, not inputs handed back) and watch for their free."""
            if type(values) is not tuple and type(values) is not list:
                values = (values,)
            for value in values:  # the type tests first: getattr on a miss is the slow path
                array = value._data if type(value) is Tensor else getattr(value, "_data", value)
                key = id(array)
                if key in live or array is None or (
                        array.base if type(array) is ndarray else getattr(array, "base", None)
                ) is not None:
                    continue
                for a in inputs:
                    if (a._data if type(a) is Tensor else getattr(a, "_data", a)) is array:
                        break
                else:
                    watch(array, key, ts, tid)

        def watch(array, key, ts, tid) -> None:
            """Record the allocation of ``array`` (``id`` key, at ``ts`` on thread ``tid``)
            and watch for its free."""
            try:
                nbytes = array.nbytes if type(array) is ndarray else int(array.nbytes)
                watched = _Watch(array, freed)
            except (AttributeError, TypeError):  # not an array, or no weak references
                return
            watched.nbytes = nbytes
            watched.addr = key
            live[key] = watched
            emit_mem((ts, nbytes, key, tid))

        def freed(watch) -> None:
            # live holds the only reference to a watch (stop() drops them all, which cancels
            # their callbacks) and an address is one live array's: the entry is this watch's
            addr = watch.addr
            del live[addr]
            emit_free((clock(), watch.nbytes, addr, thread.tid))

        # the thread of a pack finds the op that saved (and so its line); a release is paired
        # with its pack by number, whatever thread freed it
        def saved_pack(nbytes: int, pack: int) -> None:
            emit_saved((clock(), nbytes, thread.tid, pack))

        def saved_release(nbytes: int, pack: int) -> None:
            if nbytes:
                emit_saved((clock(), -nbytes, thread.tid, pack))

        # with the default clock the caller's start time is the token (observers.py): no
        # enter point to call
        if clock is not time.perf_counter_ns:
            self.op_enter, self.node_enter = op_enter, node_enter
        self.op_exit, self.node_exit = op_exit, node_exit
        self.saved_pack, self.saved_release = (saved_pack, saved_release) if memory else \
            (_ignore, _ignore)

    def backward_enter(self):
        return self.clock()

    def backward_exit(self, token) -> None:
        self._flat[BACKWARD].extend((BACKWARD_NAME, token, self.clock(),
                                     _this_thread.tid))

    # -- ranges (record_function, ProfilerStep#N, nn.Module calls) ------------------------
    def range_enter(self, name: str, args: str | None = None) -> list:
        token = [name, self.clock(), _this_thread.tid]
        self._open[id(token)] = token
        if args is not None:  # torch lists the args string as one input of shape []
            self.ranges_with_args.add((name, token[1], token[2]))
        return token

    def range_exit(self, token) -> None:
        # a range still open when the session stopped was closed there (as torch): skip it
        if self._open.pop(id(token), None) is not None:
            self._flat[RANGE].extend((token[0], token[1], self.clock(), token[2]))

    # -- reading ---------------------------------------------------------------------------
    @property
    def records(self) -> list:
        """One tuple per event recorded so far: by kind, each kind in the order recorded."""
        return self.records_of(*range(len(_FIELDS)))

    def records_of(self, *kinds: int) -> list:
        """The records of these kinds, kind by kind."""
        records = []
        for kind in kinds:  # a copy of each list: other threads may still append
            records += zip(repeat(kind), *_columns(self._flat[kind][:], _FIELDS[kind]))
            if kind == MEM:  # frees have MEM's fields, their size stored positive
                records += ((MEM, ts, -nbytes, addr, tid) for ts, nbytes, addr, tid
                            in zip(*_columns(self._flat[_FREED][:], _FIELDS[MEM])))
        return records

    def event_count(self) -> int:
        """Events recorded so far (cheap: list lengths), each kind's records counted once."""
        widths = (*_FIELDS, _FIELDS[MEM])
        return sum(len(flat) // width for flat, width in zip(self._flat, widths, strict=True))

    def add(self, record: tuple) -> None:
        """Append one record (tests build sessions by hand with it)."""
        self._flat[record[0]].extend(record[1:])


def _columns(flat: list, width: int) -> list:
    """``width`` copies of one iterator over ``flat``: zipped, they cut it into records."""
    return [iter(flat)] * width


class _Watch(weakref.ref):
    """A weak reference to an allocated array that remembers its size and address."""

    __slots__ = ("nbytes", "addr")
