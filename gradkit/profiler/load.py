"""load_trace: read a Chrome trace (gradkit's or PyTorch's, .json or .json.gz) back into events."""
from __future__ import annotations

import gzip
import json
import os

from gradkit.profiler.events import EventList, FunctionEvent, nest

# device-side and Python-tracer events are not host ops: torch's table leaves them out too
_SKIPPED_CATS = {"python_function", "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
                 "ac2g", "Trace", "overhead"}


def _read_json(path: str):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError, EOFError, OSError) as e:
        raise ValueError(f"{path} is not a readable Chrome trace (JSON): {e}") from e


def _ns(value) -> int:
    return round(float(value) * 1000)


class TraceFile:
    """The host-side events of a trace file; ``key_averages()`` like a live profile.

    >>> trace = gradkit.profiler.load_trace("trace.json")
    >>> print(trace.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    """

    def __init__(self, path: str, data) -> None:
        self.path = path
        raw = data.get("traceEvents", []) if isinstance(data, dict) else data
        if not isinstance(raw, list):
            raise ValueError(f"{path}: 'traceEvents' must be a list")
        self.metadata = {k: v for k, v in data.items() if k != "traceEvents"} \
            if isinstance(data, dict) else {}
        events, memory = [], []
        has_shapes = has_memory = False
        for item in raw:
            if not isinstance(item, dict):
                continue
            phase = item.get("ph")
            thread = (item.get("pid", 0), item.get("tid", 0))
            if phase == "X" and item.get("cat") not in _SKIPPED_CATS:
                start = _ns(item.get("ts", 0))
                event = FunctionEvent(str(item.get("name", "")), item.get("cat", ""), thread,
                                      start, start + max(_ns(item.get("dur", 0)), 0))
                args = item.get("args") or {}
                event.sequence_nr = args.get("Sequence number", -1)
                event.fwd_thread = args.get("Fwd thread id", 0)
                if "Input Dims" in args:
                    event.input_shapes = args["Input Dims"]
                    event.input_types = args.get("Input type")
                    has_shapes = True
                event.site = args.get("Forward call site")
                event.flops = args.get("flops", 0)
                events.append(event)
            elif phase == "i" and item.get("name") == "[memory]":
                args = item.get("args") or {}
                if args.get("Device Type", 0) == 0:  # host memory only in the CPU columns
                    memory.append((_ns(item.get("ts", 0)), int(args.get("Bytes", 0)), thread))
                    has_memory = True
        _link_forward(events)
        self._events = EventList(nest(events, memory), record_shapes=has_shapes,
                                 profile_memory=has_memory)

    def events(self) -> EventList:
        return self._events

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)


def _link_forward(events) -> None:
    """Point each backward event at the forward op of its sequence number (same process)."""
    creators: dict = {}
    for e in sorted(events, key=lambda e: e.start_ns):
        if e.sequence_nr is None or e.sequence_nr < 0:
            continue
        key = (e.thread[0], e.sequence_nr)
        if not e.fwd_thread:
            creators[key] = e  # a later forward with a reused number replaces the earlier
        elif key in creators:
            e.forward = creators[key]
            e.site = e.site or creators[key].site


def load_trace(path) -> TraceFile:
    """Read a Chrome trace file written by gradkit or PyTorch (``.json`` or ``.json.gz``)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such trace file: {path}")
    return TraceFile(path, _read_json(path))
