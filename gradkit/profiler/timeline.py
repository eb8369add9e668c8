"""From a Recorder's raw tuples to nested FunctionEvents, memory and saved-bytes series."""
from __future__ import annotations

import os
import threading
from operator import itemgetter

from gradkit._user_frames import user_frame_count
from gradkit.profiler.events import EventList, FunctionEvent, nest
from gradkit.profiler.flops import count_flops
from gradkit.profiler.op_arguments import input_lists
from gradkit.profiler.recorder import (BACKWARD, MEM, NODE, OP, RANGE, SAVED, site_text,
                                       thread_names_seen)

EVALUATE_PREFIX = "autograd::engine::evaluate_function: "


def node_inside_wrapper(start: int, end: int) -> tuple:
    """A backward node's span, 1 ns inside its evaluate_function wrapper's ``(start, end)`` on
    both sides: HTA nests the events after two slices of one span wrongly."""
    return (start + 1, end - 1) if end - start >= 2 else (start, end)

class Timeline:
    """Everything one recording session produced, ready for tables and trace writers."""

    def __init__(self, events: EventList, memory: list, saved: list, base_epoch_ns: int,
                 duration_ns: int, origin_ns: int = 0) -> None:
        self.events = events          # nested, ordered by (thread, start, longest first)
        self.memory = memory          # (ts_ns, nbytes, tid, addr) by time; nbytes < 0 = free
        self.saved = saved            # (ts_ns, nbytes, tid, pack) by time; nbytes < 0 = released
        self.base_epoch_ns = base_epoch_ns
        self.duration_ns = duration_ns
        self.origin_ns = origin_ns    # the session's start on the recorder's clock (time 0)
        self.pid = os.getpid()
        self.thread_names = thread_names({e.thread for e in events})


def thread_names(tids) -> dict:
    """{tid: name} of the threads that recorded events: the live thread's name, else the one it
    had when it first recorded ("python" for a tid never seen)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    return {tid: names.get(tid) or thread_names_seen.get(tid, "python") for tid in tids}


def memory_series(records: list, base: int) -> tuple:
    """The (ts, nbytes, tid, addr) allocations and (ts, nbytes, tid, pack) saved bytes, by
    time."""
    memory = [(r[1] - base, r[2], r[4], r[3]) for r in records if r[0] == MEM]
    saved = [(r[1] - base, r[2], r[3], r[4]) for r in records if r[0] == SAVED]
    memory.sort(key=itemgetter(0))
    saved.sort(key=itemgetter(0))
    return memory, saved


def stack_frames(stack: tuple) -> tuple:
    """"file(line): function" texts of a recorded stack, the user's frames only (not runpy)."""
    user = stack[:user_frame_count(code for code, _ in stack)]
    return tuple(f"{code.co_filename}({line}): {code.co_name}" for code, line in user)


def build(recorder, record_shapes: bool = False, with_flops: bool = False) -> Timeline:
    """Turn ``recorder.records`` into a Timeline (times relative to the session start)."""
    base = recorder.start_ns
    records = list(recorder.records)
    events, backward = [], []
    forward = {}   # sequence number -> the op event that created that node
    sites: dict = {}
    for r in records:
        kind = r[0]
        if kind == OP:
            _, name, start, end, tid, seq, meta, code, lasti, stack = r
            event = FunctionEvent(name, "cpu_op", tid, start - base, end - base, seq)
            if meta is not None:
                (event.input_shapes, event.input_types, event.concrete_inputs,
                 event.input_strides) = input_lists(name, meta)
                if with_flops:
                    event.flops = count_flops(name, event.input_shapes)
                if not record_shapes:
                    event.input_shapes = event.input_types = event.concrete_inputs = \
                        event.input_strides = None
            if code is not None:
                text = sites.get((code, lasti))
                if text is None:
                    text = sites[code, lasti] = site_text((code, lasti))
                event.site = text
            if stack:
                event.stack = stack_frames(stack)
            if seq >= 0:
                forward[seq] = event
            events.append(event)
        elif kind == NODE:
            _, name, start, end, tid, seq = r
            start, end = start - base, end - base
            for label, span in ((EVALUATE_PREFIX + name, (start, end)),
                                (name, node_inside_wrapper(start, end))):
                event = FunctionEvent(label, "cpu_op", tid, *span, seq)
                events.append(event)
                backward.append(event)
        elif kind == RANGE or kind == BACKWARD:
            _, name, start, end, tid = r
            cat = "user_annotation" if kind == RANGE else "cpu_op"
            event = FunctionEvent(name, cat, tid, start - base, end - base)
            if record_shapes and kind == RANGE:  # as torch: record_function's args string
                with_args = (name, start, tid) in recorder.ranges_with_args  # is one input
                event.input_shapes = [[]] if with_args else []
                event.input_types = [""] if with_args else []
                event.concrete_inputs = [""] if with_args else []  # torch: [None], trace [""]
                event.input_strides = [[]] if with_args else []
            events.append(event)
    for event in backward:
        source = forward.get(event.sequence_nr)
        if source is not None:
            event.forward = source
            event.fwd_thread = source.thread
            event.site = source.site
        else:  # the forward ran before profiling began: still mark it as backward
            event.fwd_thread = event.thread
    memory, saved = memory_series(records, base)
    outside = []
    ordered = nest(events, memory, outside)
    end = (recorder.end_ns if recorder.end_ns is not None else recorder.clock()) - base
    events = EventList(ordered)
    events.memory, events.saved, events.outside = [m[:3] for m in memory], saved, outside
    return Timeline(events, memory, saved, recorder.start_epoch_ns, end, base)
