"""Profiled events as torch.autograd.profiler presents them: FunctionEvent and friends.

Built after recording (from a Recorder's tuples or from a trace file), never on
the hot path. Times are integer nanoseconds internally and microseconds (float)
through torch's attribute names.
"""
from __future__ import annotations

import json
import weakref
from collections import defaultdict

from gradkit.profiler.output_file import write_text_file
from gradkit.profiler.table import format_table


class FunctionEvent:
    """One profiled range: an op, a backward node, a record_function or ProfilerStep range."""

    # defaults shared by all events; instances store only what differs (building is cheap)
    id = 0
    sequence_nr = -1
    fwd_thread = 0          # non-zero on backward events: the forward op's thread
    input_shapes = input_types = concrete_inputs = input_strides = None
    site = None             # "file:line" of the user's call (for backward: the forward's)
    stack = ()              # "file(line): function" entries, innermost first
    flops = 0
    forward = None          # backward node events: the forward op event that made the node
    _parent = None          # a weak reference: parent and children make no reference cycle
    cpu_children = ()       # becomes a list when the first child is linked
    self_cpu_memory_usage = 0
    cpu_memory_usage = 0

    def __init__(self, name: str, cat: str, thread, start_ns: int, end_ns: int,
                 sequence_nr: int = -1) -> None:
        self.name = name
        self.cat = cat
        self.thread = thread
        self.start_ns = start_ns
        self.end_ns = end_ns
        if sequence_nr >= 0:
            self.sequence_nr = sequence_nr

    @property
    def cpu_parent(self) -> FunctionEvent | None:
        """The enclosing event on the same thread (None at top level)."""
        return self._parent() if self._parent is not None else None

    @cpu_parent.setter
    def cpu_parent(self, event: FunctionEvent | None) -> None:
        self._parent = weakref.ref(event) if event is not None else None

    @property
    def key(self) -> str:
        """What ``key_averages()`` groups by: the name, all ``ProfilerStep#N`` as one
        ``ProfilerStep*`` (torch's key)."""
        return step_key(self.name)

    @property
    def count(self) -> int:
        return 1

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1000

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        children = sum(c.end_ns - c.start_ns for c in self.cpu_children)
        return (self.end_ns - self.start_ns - children) / 1000

    @property
    def is_backward(self) -> bool:
        return self.fwd_thread != 0

    @property
    def is_user_annotation(self) -> bool:
        """A record_function (or ProfilerStep#N) range, as torch marks them."""
        return self.cat == "user_annotation"

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us>")


STEP_PREFIX, STEP_KEY = "ProfilerStep#", "ProfilerStep*"
MEMORY_KEY = "[memory]"  # torch's key of memory events outside every op


def step_key(name: str) -> str:
    """``name``'s key_averages key: "ProfilerStep*" for every "ProfilerStep#N"."""
    return STEP_KEY if name.startswith(STEP_PREFIX) else name


def nest(events: list, memory=(), outside: list | None = None) -> list:
    """Link parents and children per thread, clamping each child into its parent.

    ``memory`` holds (ts_ns, nbytes, thread) allocations/frees; each is charged
    to the innermost event open on its thread at that time, or (when no event is open)
    appended to ``outside``. Returns the events sorted by (thread, start, longest first),
    the order trace writers need.
    """
    items = [(_thread_key(e.thread), e.start_ns, 1, -e.end_ns, i, e)
             for i, e in enumerate(events)]
    items += [(_thread_key(m[2]), m[0], 0, 0, -1, m) for m in memory]
    items.sort(key=lambda item: item[:5])
    ordered = []
    stack = []
    thread = None
    for key, _, is_event, _, _, item in items:
        if key != thread:
            thread, stack = key, []
        if not is_event:
            while stack and stack[-1].end_ns < item[0]:
                stack.pop()
            if stack:
                stack[-1].self_cpu_memory_usage += item[1]
            elif outside is not None:
                outside.append(item)
            continue
        while stack and stack[-1].end_ns <= item.start_ns:
            stack.pop()
        if stack:
            parent = stack[-1]
            if item.end_ns > parent.end_ns:
                item.end_ns = parent.end_ns
            item.cpu_parent = parent
            if parent.cpu_children:
                parent.cpu_children.append(item)
            else:
                parent.cpu_children = [item]
        stack.append(item)
        ordered.append(item)
    if memory:
        for e in reversed(ordered):  # children come after parents: sum memory bottom-up
            e.cpu_memory_usage += e.self_cpu_memory_usage
            if e.cpu_parent is not None:
                e.cpu_parent.cpu_memory_usage += e.cpu_memory_usage
    for i, e in enumerate(ordered):
        e.id = i + 1
    return ordered


def _thread_key(thread):
    """Threads sort as (kind, value): traces may mix integer and string tids."""
    return (0, thread, "") if isinstance(thread, int) else (1, 0, str(thread))


class FunctionEventAvg:
    """Totals over the events that share a key (name, and shapes/stack when grouped)."""

    def __init__(self, key: str, input_shapes=None, stack=()) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.stack = stack
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0
        self.site = None
        self.is_user_annotation = False
        self.cpu_parent = None  # the first event's (torch's): table(top_level_events_only=True)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, event) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        self.flops += event.flops
        if self.count == event.count:  # the first event: torch takes its kind and parent
            self.is_user_annotation = event.is_user_annotation
            self.cpu_parent = event.cpu_parent
        if self.site is None:
            self.site = event.site
        return self

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us>")


class EventList(list):
    """A list of events with torch's helpers: ``key_averages()``, ``table()``, ``total_average()``.

    >>> with gradkit.profiler.profile() as prof:
    ...     (gradkit.ones(3, requires_grad=True) * 2).sum().backward()
    >>> print(prof.events().key_averages().table(sort_by="cpu_time_total", row_limit=5))
    """

    # with profile_memory, in time order: (ts_ns, nbytes, thread) allocations (+) and frees (-),
    # and (ts_ns, nbytes, thread, pack) bytes saved for backward (+) and released (-)
    memory: list = ()
    saved: list = ()
    outside: list = ()  # the memory records made while no event was open (nest())

    def __init__(self, events=(), *, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False) -> None:
        super().__init__(events)
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops

    def _like(self, events) -> EventList:
        return EventList(events, record_shapes=self.record_shapes,
                         profile_memory=self.profile_memory, with_stack=self.with_stack,
                         with_flops=self.with_flops)

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """One FunctionEventAvg per name (and input shapes / top stack frames when asked)."""
        groups: dict = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            stack = tuple(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else ()
            key = (e.key, shapes, stack)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None, stack)
            avg.add(e)
        if self.outside:  # torch's "[memory]" row: what no op allocated or freed
            avg = groups[MEMORY_KEY] = FunctionEventAvg(MEMORY_KEY)
            avg.count = len(self.outside)
            avg.cpu_memory_usage = avg.self_cpu_memory_usage = sum(m[1] for m in self.outside)
        averages = self._like(groups.values())
        averages.record_shapes = self.record_shapes and group_by_input_shape
        averages.with_stack = self.with_stack and group_by_stack_n > 0
        return averages

    def total_average(self) -> FunctionEventAvg:
        """One FunctionEventAvg summing every event of the list."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        """Sum of the events' self CPU times, in microseconds (a property, as torch's)."""
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The text table torch prints (see gradkit.profiler.table.format_table)."""
        return format_table(self, sort_by=sort_by, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path: str) -> str:
        """torch's ``EventList.export_chrome_trace``: the events as a JSON array of ``X`` events
        (``pid`` "CPU functions", times in microseconds); averaged rows have no times and are
        left out. ``profile.export_chrome_trace`` writes the full trace."""
        records = [{"name": e.name, "ph": "X", "ts": e.start_ns / 1000,
                    "dur": (e.end_ns - e.start_ns) / 1000, "tid": e.thread,
                    "pid": "CPU functions", "args": {}}
                   for e in self if isinstance(e, FunctionEvent)]
        return write_text_file(path, json.dumps(records, ensure_ascii=False))

    def by_thread(self) -> dict:
        """{thread: [events]} in start order."""
        threads = defaultdict(list)
        for e in self:
            threads[e.thread].append(e)
        return dict(threads)
