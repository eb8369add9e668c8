"""Two summaries of profiled events that key_averages() does not give: self time per trace
category, and the slowest backward nodes with the forward op (and call site) behind each.

They work on any EventList: ``prof.events()`` of a live profile or
``load_trace(path).events()`` of a file, gradkit's or PyTorch's.

>>> events = gradkit.profiler.load_trace("trace.json").events()
>>> [(t.category, t.count) for t in category_totals(events)]
[('cpu_op', 11), ('user_annotation', 1)]
>>> [(c.node.name, c.forward.name, c.site) for c in slowest_backward(events, limit=1)]
[('MmBackward0', 'aten::mm', None)]
"""
from __future__ import annotations

from dataclasses import dataclass

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
