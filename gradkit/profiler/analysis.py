"""Summaries of profiled events that key_averages() does not give: self time per trace
category, the slowest backward nodes with the forward op (and call site) behind each, and
time per line of the user's source.

They work on any EventList: ``prof.events()`` of a live profile or
``load_trace(path).events()`` of a file, gradkit's or PyTorch's.

>>> events = gradkit.profiler.load_trace("trace.json").events()
>>> [(t.category, t.count) for t in category_totals(events)]
[('cpu_op', 11), ('user_annotation', 1)]
>>> [(c.node.name, c.forward.name, c.site) for c in slowest_backward(events, limit=1)]
[('MmBackward0', 'aten::mm', None)]
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass

from gradkit.nn.module_paths import MODULE_PREFIX
from gradkit.profiler.timeline import EVALUATE_PREFIX  # torch's wrapper event around each node


@dataclass
class CategoryTotal:
    """Self time (µs) and number of events of one trace category (``cpu_op``, ...)."""

    category: str
    count: int
    self_time_us: float


@dataclass
class BackwardCost:
    """One backward node execution and the forward op event that created the node."""

    node: object
    forward: object | None

    @property
    def site(self) -> str | None:
        """``file:line`` of the user's forward call, when the trace has it (gradkit's do)."""
        return self.node.site or (self.forward.site if self.forward is not None else None)


def category_totals(events) -> list[CategoryTotal]:
    """Self time per category (self, so nested events are not counted twice), largest first."""
    totals: dict[str, CategoryTotal] = {}
    for event in events:
        total = totals.setdefault(event.cat, CategoryTotal(event.cat, 0, 0.0))
        total.count += 1
        total.self_time_us += event.self_cpu_time_total
    return sorted(totals.values(), key=lambda t: t.self_time_us, reverse=True)


def slowest_backward(events, limit: int) -> list[BackwardCost]:
    """The ``limit`` longest backward node executions, each with its forward op (or None).

    torch's ``evaluate_function`` wrappers are left out: each wraps a node listed itself.
    """
    if limit < 0:
        raise ValueError(f"limit must be non-negative, got {limit}")
    nodes = [e for e in events if e.is_backward and not e.name.startswith(EVALUATE_PREFIX)]
    nodes.sort(key=lambda e: e.cpu_time_total, reverse=True)
    return [BackwardCost(node, node.forward) for node in nodes[:limit]]


UNATTRIBUTED = "(no source line)"  # engine work and ops whose call site was not recorded


@dataclass
class LineCost:
    """What one line of the user's source cost: its ops' forward time, the backward time of
    the nodes they created, and how many op calls it made (times in µs, self times)."""

    site: str
    module: str = ""  # with profile(with_modules=True): the nn.Module path the ops ran in
    calls: int = 0
    forward_us: float = 0.0
    backward_us: float = 0.0
    saved_bytes: int | None = None  # held for backward at the peak (saved_lines, with memory)

    @property
    def total_us(self) -> float:
        return self.forward_us + self.backward_us


def line_costs(events) -> list[LineCost]:
    """Time per source line, largest total first: each op's self time goes to the line that
    called it, each backward node's (and its wrapper's) to the forward line that created the
    node. Other ``cpu_op`` time (the engine's own, ops without a recorded site) is the row
    ``UNATTRIBUTED``; so the rows add up to the ``cpu_op`` self time of the op table.
    ``record_function`` ranges are not ops and are left out. With module ranges in the events
    (``profile(with_modules=True)``) a line is split by the module its ops ran in, so layers
    called from one line are told apart."""
    lines: dict[tuple, LineCost] = {}
    for event in events:
        if event.cat != "cpu_op":
            continue
        site = event.site or UNATTRIBUTED
        forward = event.forward if event.is_backward else event
        key = (site, _module_of(forward) if forward is not None else "")
        line = lines.get(key)
        if line is None:
            line = lines[key] = LineCost(*key)
        if event.is_backward:
            line.backward_us += event.self_cpu_time_total
        else:
            line.forward_us += event.self_cpu_time_total
            line.calls += site != UNATTRIBUTED
    return sorted(lines.values(), key=lambda line: line.total_us, reverse=True)


def _module_of(event) -> str:
    """The path of the innermost nn.Module range around ``event`` ("" outside any)."""
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith(MODULE_PREFIX):
            return parent.name[len(MODULE_PREFIX):]
        parent = parent.cpu_parent
    return ""


def source_text(site: str, width: int = 48) -> str:
    """The stripped text of the line ``file:line`` names (empty when the file cannot be read),
    cut to ``width`` characters."""
    filename, _, line = site.rpartition(":")
    text = linecache.getline(filename, int(line)).strip() if line.isdigit() else ""
    return text if len(text) <= width else text[:width - 3] + "..."
