"""What ``gradkit trace summary`` prints, computed from a trace's columns in bounded memory.

The tables are those of ``load_trace(path).events()`` through ``key_averages()``,
``costs_per_line`` (saved_lines.py: with the bytes saved at the peak), ``category_totals`` and
``slowest_backward`` (analysis.py): same rows, same order, same float sums (``np.bincount``
adds in nest order, as the loops there do), without a Python object per event: a trace of
10^6 events is summarized in tens of MB, not GB.

>>> summary = summarize_trace("trace.json")
>>> print(summary.averages.table(sort_by="self_cpu_time_total", row_limit=10))
"""
from __future__ import annotations

import numpy as np

from gradkit.nn.module_paths import MODULE_PREFIX
from gradkit.profiler.analysis import UNATTRIBUTED, BackwardCost, CategoryTotal, LineCost
from gradkit.profiler.events import (MEMORY_KEY, EventList, FunctionEvent, FunctionEventAvg,
                                     step_key)
from gradkit.profiler.load import trace_path
from gradkit.profiler.saved_columns import saved_at_peak
from gradkit.profiler.saved_lines import fill_saved_bytes
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
        fill_saved_bytes(self.lines, saved_at_peak(columns)[1])  # with [saved] events
        self.categories: list[CategoryTotal] = _category_totals(columns)
        self.slowest_backward: list[BackwardCost] = _slowest_backward(columns, top)


def summarize_trace(path, top: int = 10) -> TraceSummary:
    """Summarize a Chrome trace file (gradkit's or PyTorch's, ``.json`` or ``.json.gz``)."""
    return TraceSummary(trace_path(path), top)


_SLICE = 1 << 18  # events per vectorized step: the temporaries stay a few MB


class _Rows:
    """Table rows keyed by integer codes, in order of first appearance, with sums added one
    by one in event order (``np.add.at`` is unbuffered): the floats of analysis.py's loops."""

    def __init__(self, **columns) -> None:
        self.row_of: dict = {}  # code -> row
        self.sums = {name: np.zeros(0, dtype) for name, dtype in columns.items()}

    def add(self, codes: np.ndarray, **values) -> None:
        distinct, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        for code in distinct[np.argsort(first)].tolist():
            self.row_of.setdefault(code, len(self.row_of))
        rows = np.array([self.row_of[code] for code in distinct.tolist()],
                        dtype=np.int64)[inverse.reshape(-1)]
        for name, value in values.items():
            total = self.sums[name]
            if len(total) < len(self.row_of):
                total = self.sums[name] = np.concatenate(
                    (total, np.zeros(len(self.row_of) - len(total), total.dtype)))
            np.add.at(total, rows, value)

    def __iter__(self):
        """(code, {column: sum}) per row, first seen first."""
        for code, row in self.row_of.items():
            yield code, {name: total[row].item() for name, total in self.sums.items()}


def _slices(c: TraceColumns):
    for lo in range(0, len(c.start), _SLICE):
        yield slice(lo, lo + _SLICE)


def _averages(c: TraceColumns) -> EventList:
    """``events.key_averages()``: one FunctionEventAvg per name, first seen first."""
    memory = ("memory", "self_memory") if c.profile_memory else ()
    rows = _Rows(count=np.int64, total=np.float64, self_total=np.float64,
                 **dict.fromkeys(memory, np.int64))
    keys = [step_key(name) for name in c.names]  # the steps share one key, as in events.py
    first = {}
    key_code = np.array([first.setdefault(k, i) for i, k in enumerate(keys)] or [0])
    for s in _slices(c):
        rows.add(key_code[c.name[s]], count=1, total=(c.end[s] - c.start[s]) / 1000,
                 self_total=c.self_time[s] / 1000, **{k: getattr(c, k)[s] for k in memory})
    averages = []
    for code, row in rows:
        avg = FunctionEventAvg(keys[code])
        avg.count, avg.cpu_time_total, avg.self_cpu_time_total = (
            row["count"], row["total"], row["self_total"])
        avg.cpu_memory_usage = row.get("memory", 0)
        avg.self_cpu_memory_usage = row.get("self_memory", 0)
        averages.append(avg)
    count, nbytes = c.outside_memory
    if count:  # events.py's "[memory]" row, last
        avg = FunctionEventAvg(MEMORY_KEY)
        avg.count, avg.cpu_memory_usage, avg.self_cpu_memory_usage = count, nbytes, nbytes
        averages.append(avg)
    return EventList(averages, profile_memory=c.profile_memory)


def _category_totals(c: TraceColumns) -> list[CategoryTotal]:
    """analysis.category_totals."""
    rows = _Rows(count=np.int64, self_total=np.float64)
    for s in _slices(c):
        rows.add(c.cat[s], count=1, self_total=c.self_time[s] / 1000)
    cats = list(c.cats)
    totals = [CategoryTotal(cats[code], row["count"], row["self_total"]) for code, row in rows]
    return sorted(totals, key=lambda t: t.self_time_us, reverse=True)


def _line_costs(c: TraceColumns) -> list[LineCost]:
    """analysis.line_costs: ``cpu_op`` self time per (source line, nn.Module)."""
    names, sites = list(c.names), list(c.sites)
    rows = _Rows(calls=np.int64, forward=np.float64, backward=np.float64)
    for s in _slices(c) if "cpu_op" in c.cats else ():
        ops = s.start + np.flatnonzero(c.cat[s] == c.cats["cpu_op"])
        backward = c.is_backward[ops]
        forward = np.where(backward, c.forward[ops], ops)
        module = (np.where(forward >= 0, c.module[np.maximum(forward, 0)], -1)
                  if c.module is not None else -1)
        self_us = c.self_time[ops] / 1000  # adding 0.0 leaves a sum of these as it is
        rows.add((c.site[ops].astype(np.int64) + 1) * (len(names) + 1) + module + 1,
                 calls=~backward, forward=np.where(backward, 0.0, self_us),
                 backward=np.where(backward, self_us, 0.0))
    lines = []
    for code, row in rows:
        site_code, module_code = divmod(code, len(names) + 1)
        site = sites[site_code - 1] if site_code else UNATTRIBUTED
        lines.append(LineCost(site, names[module_code - 1][len(MODULE_PREFIX):]
                              if module_code else "", row["calls"] if site != UNATTRIBUTED
                              else 0, row["forward"], row["backward"]))
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
