"""load_trace: read a Chrome trace (gradkit's or PyTorch's, .json or .json.gz) back into events."""
from __future__ import annotations

import collections
import contextlib
import gzip
import os
import stat
import zlib
from bisect import bisect_left, bisect_right
from operator import itemgetter

import ijson

from gradkit.profiler.events import EventList, FunctionEvent, nest
from gradkit.profiler.trace_export import SAVED_EVENT

# device-side and Python-tracer events are not host ops: torch's table leaves them out too
_SKIPPED_CATS = {"python_function", "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
                 "ac2g", "Trace", "overhead"}
_FLOW_CAT = "fwdbwd"  # forward op -> backward node arrows, in torch's traces and ours


_GZIP_MAX_RATIO = 100    # traces inflate 5-20x; far beyond that a .gz is a bomb
_GZIP_FREE_BYTES = 1 << 28  # a small file may inflate to 256 MiB whatever its ratio
_JSON_KINDS = {"number": "a number", "string": "a string", "null": "null",
               "boolean": "a boolean", "start_map": "an object", "start_array": "a list"}


class _CappedReader:
    """A gzip stream that refuses to inflate past ``limit`` bytes (a bomb, not a trace)."""

    def __init__(self, stream, limit: int, path: str) -> None:
        self._stream, self._left, self._limit, self._path = stream, limit, limit, path

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size if 0 <= size <= self._left + 1 else self._left + 1)
        self._left -= len(chunk)
        if self._left < 0:
            raise ValueError(f"{self._path} inflates past {self._limit >> 20} MiB, over "
                             f"{_GZIP_MAX_RATIO}x its size: refused as a gzip bomb")
        return chunk

    def close(self) -> None:
        self._stream.close()


def _open_trace(path: str):
    """The file's bytes, inflated if gzip; only regular files (a device or FIFO would never
    end, or block)."""
    mode = os.stat(path).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a directory: open() says so
        raise ValueError(f"{path} is not a regular file (a device, FIFO or socket); give a "
                         "trace file")
    f = open(path, "rb")  # noqa: SIM115 - closed by the caller
    if f.read(2) != b"\x1f\x8b":
        f.seek(0)
        return f
    f.seek(0)
    limit = max(_GZIP_FREE_BYTES, os.fstat(f.fileno()).st_size * _GZIP_MAX_RATIO)
    return _CappedReader(gzip.GzipFile(fileobj=f, mode="rb"), limit, path)


def _events_prefix(path: str) -> str:
    """Where the events sit: ``"item"`` (a top-level list) or ``"traceEvents.item"``; reads
    only as far as the first token of ``traceEvents``."""
    with contextlib.closing(_open_trace(path)) as f:
        tokens = ijson.parse(f)
        _, first, _ = next(tokens)
        if first == "start_array":
            return "item"
        if first != "start_map":
            raise ValueError(f"{path}: not a Chrome trace: the top-level JSON value is "
                             f"{_JSON_KINDS.get(first, first)}, expected an object with "
                             "'traceEvents' or a list of events")
        for prefix, event, _ in tokens:
            if prefix == "traceEvents" and event != "map_key":
                if event != "start_array":
                    raise ValueError(f"{path}: not a Chrome trace: 'traceEvents' must be a "
                                     f"list, got {_JSON_KINDS.get(event, event)}")
                break
        return "traceEvents.item"


def _read_events(path: str, notes: list):
    """The trace's events one by one, streamed: the file is never held whole. A list that
    ends without its ``]`` (the format allows it: a tracer may die) ends there, noted."""
    try:
        prefix = _events_prefix(path)
        with contextlib.closing(_open_trace(path)) as f:
            try:
                yield from ijson.items(f, prefix, use_float=True)
            except ijson.IncompleteJSONError:
                if prefix != "item":
                    raise
                notes.append("the event list ends without its closing ']' (allowed: the "
                             "events read up to there are summarized)")
    except (ijson.JSONError, UnicodeDecodeError, EOFError, zlib.error, gzip.BadGzipFile,
            StopIteration) as e:
        reason = str(e).splitlines()[0] if str(e) else "empty file"
        raise ValueError(f"{path} is not a readable Chrome trace (JSON): {reason}") from None


def _json_kind(value) -> str:
    """How JSON calls the type of ``value`` (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    kinds = {str: "a string", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


def _ns(value) -> int:
    return round(float(value) * 1000)


def _args(item: dict) -> dict:
    args = item.get("args")
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise ValueError(f"'args' must be an object, got {_json_kind(args)}")
    return args


def _thread(item: dict) -> tuple:
    pid, tid = item.get("pid", 0), item.get("tid", 0)
    for name, value in (("pid", pid), ("tid", tid)):
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            raise ValueError(f"'{name}' must be a number or a string, got {_json_kind(value)}")
    return (pid, tid)


def _number(args: dict, key: str, default):
    value = args.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValueError(f"'args.{key}' must be a number, got {_json_kind(value)}")
    return value


def _site(args: dict) -> str | None:
    """``file:line`` of the user's forward call, if the event has one."""
    site = args.get("Forward call site")
    if site is not None and not isinstance(site, str):
        raise ValueError(f"'args.Forward call site' must be a string, got {_json_kind(site)}")
    return site


def _function_event(item: dict, thread: tuple) -> FunctionEvent:
    start = _ns(item.get("ts", 0))
    event = FunctionEvent(str(item.get("name", "")), str(item.get("cat", "")), thread,
                          start, start + max(_ns(item.get("dur", 0)), 0))
    args = _args(item)
    event.sequence_nr = int(args.get("Sequence number", -1))
    event.fwd_thread = args.get("Fwd thread id", 0)
    if "Input Dims" in args:
        event.input_shapes = args["Input Dims"]
        event.input_types = args.get("Input type")
    event.site = _site(args)
    event.flops = _number(args, "flops", 0)
    return event


class TraceFile:
    """The host-side events of a trace file; ``key_averages()`` like a live profile.

    Backward node events point at the forward op that created them (``event.forward``),
    found through the trace's ``fwdbwd`` flows, else through sequence numbers.

    >>> trace = gradkit.profiler.load_trace("trace.json")
    >>> print(trace.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.notes: list = []  # what was read but is not in the tables, and why
        events, memory, saved, skipped = [], [], [], collections.Counter()
        flows: dict = {}  # flow id -> {"s": (thread, ts), "f": (thread, ts, binds_enclosing)}
        negative = 0
        for index, item in enumerate(_read_events(path, self.notes)):
            if not isinstance(item, dict):
                skipped["not an object"] += 1
                continue
            try:
                self._read(item, events, memory, flows, skipped, saved)
                negative += item.get("ph") == "X" and _ns(item.get("dur", 0)) < 0
            except (TypeError, ValueError, OverflowError) as e:
                raise ValueError(f"{path}: event #{index} ({item.get('name', '?')!r}): {e}") \
                    from e
        ends = [e.end_ns for e in events]
        outside = []
        ordered = nest(events, memory, outside)
        clamped = sum(e.end_ns != end for e, end in zip(events, ends))
        _link_by_flows(ordered, flows)
        _link_by_sequence(ordered)
        has_shapes = any(e.input_shapes is not None for e in ordered)
        self._events = EventList(ordered, record_shapes=has_shapes, profile_memory=bool(memory))
        self._events.outside = outside
        memory.sort(key=itemgetter(0))
        saved.sort(key=itemgetter(0))
        self._events.memory, self._events.saved = memory, saved  # series in time order
        self.notes += _notes(skipped, negative, clamped)

    @staticmethod
    def _read(item: dict, events: list, memory: list, flows: dict, skipped, saved: list) -> None:
        phase = item.get("ph")
        if phase == "X":
            if item.get("cat") in _SKIPPED_CATS:
                skipped[item["cat"]] += 1
            else:
                events.append(_function_event(item, _thread(item)))
        elif phase == "i" and item.get("name") == "[memory]":
            args = _args(item)
            if args.get("Device Type", 0) == 0:  # host memory only in the CPU columns
                memory.append((_ns(item.get("ts", 0)), int(args.get("Bytes", 0)), _thread(item)))
        elif phase == "i" and item.get("name") == SAVED_EVENT:  # gradkit's, saved_lines reads
            args = _args(item)
            saved.append((_ns(item.get("ts", 0)), int(_number(args, "Bytes", 0)), _thread(item),
                          _number(args, "Pack", 0)))
        elif phase in ("s", "f") and item.get("cat") == _FLOW_CAT:
            end = (_thread(item), _ns(item.get("ts", 0)))
            if phase == "f":
                end += (item.get("bp") == "e",)
            flows.setdefault(item.get("id"), {})[phase] = end

    def events(self) -> EventList:
        return self._events

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)


def _notes(skipped: collections.Counter, negative: int, clamped: int) -> list:
    """What was read but is not in the tables as it stood in the file, and why."""
    notes = [f"{count} {what} events are not host ops: left out of the tables"
             for what, count in sorted(skipped.items()) if what != "not an object"]
    if skipped["not an object"]:
        notes.append(f"{skipped['not an object']} entries of the event list are not objects: "
                     "ignored")
    if negative:
        notes.append(f"{negative} events have a negative duration: counted as 0")
    if clamped:
        notes.append(f"{clamped} events overlap the event they start in: cut at its end "
                     "(Perfetto drops such slices)")
    return notes


def _link_by_flows(events: list, flows: dict) -> None:
    """Follow each ``fwdbwd`` arrow from the forward op slice to the backward node slice."""
    if not flows:
        return
    threads: dict = {}
    for e in events:  # nest() ordered them by thread, then start, parents first
        starts, slices = threads.setdefault(e.thread, ([], []))
        starts.append(e.start_ns)
        slices.append(e)
    for ends in flows.values():
        if "s" not in ends or "f" not in ends:
            continue
        forward = _enclosing(threads, *ends["s"])
        thread, ts, bound_enclosing = ends["f"]
        node = _enclosing(threads, thread, ts) if bound_enclosing else _next(threads, thread, ts)
        if forward is None or node is None or node is forward:
            continue
        node.forward = forward
        node.site = node.site or forward.site
        forward.site = forward.site or node.site  # gradkit writes the site on the node only
        if not node.fwd_thread:
            node.fwd_thread = forward.thread[1] or -1  # non-zero: marks it as a backward event


def _enclosing(threads: dict, thread, ts: int):
    """The innermost slice of ``thread`` open at ``ts`` (Chrome's binding of a flow point)."""
    starts, slices = threads.get(thread, ((), ()))
    i = bisect_right(starts, ts) - 1
    event = slices[i] if i >= 0 else None  # among equal starts the last is the innermost
    while event is not None and event.end_ns < ts:
        event = event.cpu_parent
    return event


def _next(threads: dict, thread, ts: int):
    """The first slice of ``thread`` starting at or after ``ts`` (a flow end without bp=e)."""
    starts, slices = threads.get(thread, ((), ()))
    i = bisect_left(starts, ts)
    return slices[i] if i < len(slices) else None


def _link_by_sequence(events: list) -> None:
    """Backward events no flow reached: the last forward op of their sequence number (same
    process) that started before them (torch wraps each node in an unlinked
    ``autograd::engine::evaluate_function: ...`` event that carries the same number)."""
    creators: dict = {}
    for e in sorted(events, key=lambda e: e.start_ns):
        if e.sequence_nr < 0:
            continue
        key = (e.thread[0], e.sequence_nr)
        if not e.fwd_thread:
            creators[key] = e  # a later forward with a reused number replaces the earlier
        elif e.forward is None and key in creators:
            e.forward = creators[key]
            e.site = e.site or creators[key].site


def load_trace(path) -> TraceFile:
    """Read a Chrome trace file written by gradkit or PyTorch (``.json`` or ``.json.gz``).

    >>> trace = gradkit.profiler.load_trace("traces/train.json.gz")
    >>> [(e.name, e.forward.name) for e in trace.events() if e.forward][:1]
    [('SumBackward0', 'gradkit::sum')]
    """
    return TraceFile(trace_path(path))


def trace_path(path) -> str:
    """``path`` as a string, or FileNotFoundError naming it."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such trace file: {path}")
    return path
