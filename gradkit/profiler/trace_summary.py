"""What ``gradkit trace summary`` prints, computed from a trace's columns in bounded memory.

The tables are those of ``load_trace(path).events()`` through ``key_averages()``,
``line_costs``, ``category_totals`` and ``slowest_backward`` (analysis.py): same rows, same
order, same float sums (``np.bincount`` adds in nest order, as the loops there do), without a
Python object per event: a trace of 10^6 events is summarized in tens of MB, not GB.

>>> summary = summarize_trace("trace.json")
>>> print(summary.averages.table(sort_by="self_cpu_time_total", row_limit=10))
"""
from __future__ import annotations

import numpy as np

from gradkit.nn.module_paths import MODULE_PREFIX
from gradkit.profiler.analysis import UNATTRIBUTED, BackwardCost, CategoryTotal, LineCost
from gradkit.profiler.events import EventList, FunctionEvent, FunctionEventAvg
from gradkit.profiler.load import trace_path
from gradkit.profiler.timeline import EVALUATE_PREFIX
from gradkit.profiler.trace_columns import TraceColumns


class TraceSummary:
    """A trace's op table (``averages``, an EventList of FunctionEventAvg: ``.table()``),
    time per source line, per category, its ``top`` slowest backward nodes, and the notes
    on what it held that is not in the tables."""

    def __init__(self, path: str, top: int = 10) -> None:
        if top < 0:
            raise ValueError(f"limit must be non-negative, got {top}")
        columns = TraceColumns(path)
        self.path = path
        self.notes: list[str] = columns.reading_notes()
        self.event_count = len(columns.start)
        self.averages = _averages(columns)
        self.lines: list[LineCost] = _line_costs(columns)
        self.categories: list[CategoryTotal] = _category_totals(columns)
        self.slowest_backward: list[BackwardCost] = _slowest_backward(columns, top)


def summarize_trace(path, top: int = 10) -> TraceSummary:
    """Summarize a Chrome trace file (gradkit's or PyTorch's, ``.json`` or ``.json.gz``)."""
    return TraceSummary(trace_path(path), top)


def _in_first_appearance(codes: np.ndarray) -> tuple:
    """The distinct codes in order of first appearance, and each code's group (0, 1, ...)."""
    distinct, first, group = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return distinct[order], rank[group.reshape(-1)]


def _sums(group: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    """Per group, the values added one by one in order (float), as a Python loop would."""
    return np.bincount(group, weights=values, minlength=groups)


def _int_sums(group: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    total = np.zeros(groups, dtype=np.int64)
    np.add.at(total, group, values)
    return total


def _averages(c: TraceColumns) -> EventList:
    """``events.key_averages()``: one FunctionEventAvg per name, first seen first."""
    names = list(c.names)
    codes, group = _in_first_appearance(c.name)
    count = np.bincount(group, minlength=len(codes))
    total = _sums(group, (c.end - c.start) / 1000, len(codes))
    self_total = _sums(group, c.self_time / 1000, len(codes))
    memory = self_memory = np.zeros(len(codes), dtype=np.int64)
    if c.profile_memory:
        memory = _int_sums(group, c.memory, len(codes))
        self_memory = _int_sums(group, c.self_memory, len(codes))
    averages = []
    for i, code in enumerate(codes.tolist()):
        avg = FunctionEventAvg(names[code])
        avg.count, avg.cpu_time_total = int(count[i]), float(total[i])
        avg.self_cpu_time_total = float(self_total[i])
        avg.cpu_memory_usage, avg.self_cpu_memory_usage = int(memory[i]), int(self_memory[i])
        averages.append(avg)
    return EventList(averages, profile_memory=c.profile_memory)


def _category_totals(c: TraceColumns) -> list[CategoryTotal]:
    """analysis.category_totals."""
    cats = list(c.cats)
    codes, group = _in_first_appearance(c.cat)
    count = np.bincount(group, minlength=len(codes))
    self_total = _sums(group, c.self_time / 1000, len(codes))
    totals = [CategoryTotal(cats[code], int(count[i]), float(self_total[i]))
              for i, code in enumerate(codes.tolist())]
    return sorted(totals, key=lambda t: t.self_time_us, reverse=True)


def _line_costs(c: TraceColumns) -> list[LineCost]:
    """analysis.line_costs: ``cpu_op`` self time per (source line, nn.Module)."""
    names, sites = list(c.names), list(c.sites)
    ops = np.flatnonzero(c.cat == c.cats["cpu_op"]) if "cpu_op" in c.cats else np.zeros(0, int)
    backward = c.is_backward[ops]
    forward = np.where(backward, c.forward[ops], ops)
    module = np.where(forward >= 0, c.module[np.maximum(forward, 0)], -1)
    site = c.site[ops].astype(np.int64)
    codes, group = _in_first_appearance((site + 1) * (len(names) + 1) + module + 1)
    self_us = c.self_time[ops] / 1000
    forward_us = _sums(group[~backward], self_us[~backward], len(codes))
    backward_us = _sums(group[backward], self_us[backward], len(codes))
    calls = np.bincount(group[~backward], minlength=len(codes))
    lines = []
    for i, code in enumerate(codes.tolist()):
        site_code, module_code = divmod(code, len(names) + 1)
        line_site = sites[site_code - 1] if site_code else UNATTRIBUTED
        line_module = names[module_code - 1][len(MODULE_PREFIX):] if module_code else ""
        lines.append(LineCost(line_site, line_module,
                              int(calls[i]) if line_site != UNATTRIBUTED else 0,
                              float(forward_us[i]), float(backward_us[i])))
    return sorted(lines, key=lambda line: line.total_us, reverse=True)


def _slowest_backward(c: TraceColumns, limit: int) -> list[BackwardCost]:
    """analysis.slowest_backward: the longest backward nodes, wrappers left out."""
    wrapper = np.array([name.startswith(EVALUATE_PREFIX) for name in c.names] or [False])
    nodes = np.flatnonzero(c.is_backward & ~wrapper[c.name])
    nodes = nodes[np.argsort(c.start[nodes] - c.end[nodes], kind="stable")[:limit]]
    return [BackwardCost(_event(c, node), _event(c, c.forward[node]))
            for node in nodes.tolist()]


def _event(c: TraceColumns, position: int) -> FunctionEvent | None:
    """One event of the columns as a FunctionEvent (name, times, thread, site)."""
    if position < 0:
        return None
    event = FunctionEvent(list(c.names)[c.name[position]], list(c.cats)[c.cat[position]],
                          list(c.threads)[c.thread[position]], int(c.start[position]),
                          int(c.end[position]))
    site = int(c.site[position])
    event.site = list(c.sites)[site] if site >= 0 else None
    return event
