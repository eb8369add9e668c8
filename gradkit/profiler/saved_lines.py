"""Bytes held for backward per line of the user's source, at the peak of all bytes held.

With ``profile_memory=True`` gradkit records each pack of tensors saved for backward (and its
release) with the thread that packed and a number pairing the two. A pack is charged to the
forward op open on its thread at that moment, so to that op's line (and module); a release
to its pack's. At the moment the total held is highest, the bytes each line still holds are
its share of the peak: the rows add up to the ``Saved for backward (bytes)`` counter's peak.

>>> with gradkit.profiler.profile(profile_memory=True) as prof:
...     loss = model(x).sum()
...     loss.backward()
>>> peak, by_line = saved_at_peak(prof.events())
>>> by_line[("train.py:12", "")]
8192
"""
from __future__ import annotations

from bisect import bisect_right

from gradkit.profiler.analysis import UNATTRIBUTED, LineCost, _module_of, line_costs

ENGINE_PREFIX = "autograd::engine"  # the engine's own ranges: no op saves in them


def saved_at_peak(events) -> tuple[int, dict]:
    """``(peak bytes, {(site, module): bytes held at the peak})``; ``(0, {})`` when the
    events carry no saved-bytes records (no ``profile_memory``, or a trace by PyTorch, which
    does not record them). The first moment of the highest total is the peak."""
    changes = list(_charged_changes(events))
    held = peak = 0
    peak_index = -1
    for i, (nbytes, _) in enumerate(changes):
        held += nbytes
        if held > peak:
            peak, peak_index = held, i
    by_line: dict = {}
    for nbytes, key in changes[:peak_index + 1]:
        by_line[key] = by_line.get(key, 0) + nbytes
    return peak, {key: n for key, n in by_line.items() if n}


def add_saved_at_peak(costs: list, events) -> int:
    """Fill ``saved_bytes`` of the line table ``costs`` (from ``line_costs(events)``) with
    each line's bytes held at the peak; a line that held bytes but ran no op gets a row.
    Returns the peak (0 when the events carry no saved-bytes records: nothing is filled)."""
    peak, by_line = saved_at_peak(events)
    fill_saved_bytes(costs, by_line)
    return peak


def fill_saved_bytes(costs: list, by_line: dict) -> None:
    """Set ``saved_bytes`` of each row of ``costs`` from ``{(site, module): bytes}`` (as
    ``saved_at_peak`` gives it), appending a row per line that held bytes but ran no op;
    nothing when ``by_line`` is empty (no saved-bytes records: no Saved column)."""
    if not by_line:
        return
    rows = {(c.site, c.module): c for c in costs}
    for cost in costs:
        cost.saved_bytes = by_line.get((cost.site, cost.module), 0)
    for key, nbytes in by_line.items():
        if key not in rows:
            costs.append(LineCost(*key, saved_bytes=nbytes))


def costs_per_line(events) -> list:
    """``line_costs(events)``, with each line's bytes held at the peak when recorded."""
    costs = line_costs(events)
    add_saved_at_peak(costs, events)
    return costs


def _charged_changes(events):
    """``(nbytes, (site, module))`` of each saved-bytes change, in time order."""
    saved = getattr(events, "saved", ())
    if not saved:
        return
    threads = _thread_index(events)
    keys: dict = {}  # pack number -> the line its bytes are charged to
    for ts, nbytes, thread, pack in saved:
        if nbytes > 0:
            op = _open_op(threads, thread, ts)
            key = keys[pack] = (op.site or UNATTRIBUTED, _module_of(op)) if op is not None \
                else (UNATTRIBUTED, "")
        else:
            key = keys.pop(pack, (UNATTRIBUTED, ""))
        yield nbytes, key


def _thread_index(events) -> dict:
    """{thread: (starts, events)} of the forward ops, each thread's in start order."""
    threads: dict = {}
    for e in sorted((e for e in events if e.cat == "cpu_op" and not e.is_backward
                     and not e.name.startswith(ENGINE_PREFIX)), key=lambda e: e.start_ns):
        starts, ops = threads.setdefault(e.thread, ([], []))
        starts.append(e.start_ns)
        ops.append(e)
    return threads


def _open_op(threads: dict, thread, ts: int):
    """The innermost forward op of ``thread`` open at ``ts`` (None outside any)."""
    starts, ops = threads.get(thread, ((), ()))
    i = bisect_right(starts, ts) - 1
    event = ops[i] if i >= 0 else None  # the last op started by ts, or one around it
    while event is not None and (event.end_ns < ts or event.cat != "cpu_op" or event.is_backward
                                 or event.name.startswith(ENGINE_PREFIX)):
        event = event.cpu_parent
    return event
