"""Two summaries of a loaded trace that key_averages() does not give: time per category,
and the slowest backward nodes with the forward op that created each.

They read the events ``gradkit.profiler.load_trace`` returns; nothing here parses a file.
"""
from __future__ import annotations

from dataclasses import dataclass

EVALUATE_PREFIX = "autograd::engine::evaluate_function: "  # torch's wrapper around each node


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


def category_totals(events) -> list[CategoryTotal]:
    """Self time per category (self, so nested events are not counted twice), largest first."""
    totals: dict[str, CategoryTotal] = {}
    for event in events:
        total = totals.setdefault(event.cat, CategoryTotal(event.cat, 0, 0.0))
        total.count += 1
        total.self_time_us += event.self_cpu_time_total
    return sorted(totals.values(), key=lambda t: t.self_time_us, reverse=True)


def slowest_backward(events, limit: int) -> list[BackwardCost]:
    """The ``limit`` longest backward node executions, each with its forward op (or None)."""
    creators = _forward_ops_by_sequence(events)
    nodes = [e for e in events if e.is_backward and not e.name.startswith(EVALUATE_PREFIX)]
    nodes.sort(key=lambda e: e.cpu_time_total, reverse=True)
    return [BackwardCost(node, node.forward or _creator(creators, node)) for node in nodes[:limit]]


def _forward_ops_by_sequence(events) -> dict:
    """(process, sequence number) -> forward op events carrying it, in start order."""
    creators: dict = {}
    for event in events:
        if event.sequence_nr is not None and event.sequence_nr >= 0 and not event.is_backward:
            creators.setdefault((_process(event), event.sequence_nr), []).append(event)
    return creators


def _creator(creators: dict, node):
    """The last forward op with the node's sequence number that started before it ran."""
    candidates = creators.get((_process(node), node.sequence_nr), ())
    earlier = [e for e in candidates if e.start_ns <= node.start_ns]
    return earlier[-1] if earlier else None


def _process(event):
    thread = event.thread
    return thread[0] if isinstance(thread, tuple) else None
