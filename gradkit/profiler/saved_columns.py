"""saved_lines.saved_at_peak over a trace's columns (trace_columns.py): the bytes each source
line held for backward at the peak, from the ``[saved]`` pack/release events, with a few
arrays of one number per event instead of an object each (what ``gradkit trace summary``
prints as "Saved at peak"). Same rules as saved_lines.py: a pack is charged to the
innermost forward op open on its thread, a release to its pack's line; tests check that
both give the same column.
"""
from __future__ import annotations

import numpy as np

from gradkit.nn.module_paths import MODULE_PREFIX
from gradkit.profiler.analysis import UNATTRIBUTED
from gradkit.profiler.saved_lines import ENGINE_PREFIX
from gradkit.profiler.trace_columns import TraceColumns


def saved_at_peak(c: TraceColumns) -> tuple[int, dict]:
    """``(peak bytes, {(site, module): bytes held at the peak})``, in order of first
    appearance; ``(0, {})`` when the trace has no ``[saved]`` events."""
    saved = c.saved
    if not len(saved["ts"]):
        return 0, {}
    order = np.argsort(saved["ts"], kind="stable")  # time order; file order among equals
    held = np.cumsum(saved["bytes"][order])
    peak_at = int(np.argmax(held))  # the first moment of the highest total
    if held[peak_at] <= 0:
        return 0, {}
    order = order[:peak_at + 1]  # what happened after the peak does not change it
    nbytes = saved["bytes"][order]
    packs = np.flatnonzero(nbytes > 0)
    codes = np.zeros(len(order), dtype=np.int64)  # (site + 1) * (names + 1) + module + 1
    ops = _open_forward_ops(c, saved["thread"][order[packs]], saved["ts"][order[packs]])
    found = ops >= 0
    module = (np.where(found, c.module[np.maximum(ops, 0)], -1) if c.module is not None
              else np.full(len(ops), -1))
    codes[packs] = np.where(found, (c.site[np.maximum(ops, 0)].astype(np.int64) + 1)
                            * (len(c.names) + 1) + module + 1, 0)
    del ops, found, module
    # a release takes its pack's line: the event before it of the same pack number, when
    # that one is a pack (a release in between has used it up)
    pack, kind = saved["pack"][order], saved["kind"][order]
    by_pack = np.lexsort((np.arange(len(order)), pack, kind))  # each pack number in time order
    pack, kind = pack[by_pack], kind[by_pack]
    after_pack = np.zeros(len(order), dtype=bool)
    after_pack[1:] = (pack[1:] == pack[:-1]) & (kind[1:] == kind[:-1]) & (
        nbytes[by_pack][:-1] > 0)
    del pack, kind
    releases = np.flatnonzero(nbytes[by_pack] <= 0)
    codes[by_pack[releases]] = np.where(after_pack[releases], codes[by_pack[releases - 1]], 0)
    return int(held[peak_at]), _by_line(c, codes, nbytes)


def _by_line(c: TraceColumns, codes: np.ndarray, nbytes: np.ndarray) -> dict:
    """Bytes summed per line code, first seen first, lines at 0 left out."""
    distinct, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    sums = np.zeros(len(distinct), dtype=np.int64)
    np.add.at(sums, inverse.reshape(-1), nbytes)
    names, sites = list(c.names), list(c.sites)
    by_line = {}
    for row in np.argsort(first).tolist():
        if sums[row]:
            site_code, module_code = divmod(int(distinct[row]), len(names) + 1)
            by_line[(sites[site_code - 1] if site_code else UNATTRIBUTED,
                     names[module_code - 1][len(MODULE_PREFIX):] if module_code else "")] = \
                int(sums[row])
    return by_line


def _open_forward_ops(c: TraceColumns, threads: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """saved_lines._open_op per query: among its thread's forward ops the last started by
    ``ts``, then up its parents to the first forward op still open (-1 for none)."""
    names = list(c.names)
    engine = np.array([name.startswith(ENGINE_PREFIX) for name in names] or [False])
    forward = ((c.cat == c.cats["cpu_op"]) & ~c.is_backward & ~engine[c.name]
               if "cpu_op" in c.cats else np.zeros(len(c.start), dtype=bool))
    candidates = np.flatnonzero(forward)  # nest order: by thread, then start
    runs = np.searchsorted(c.thread_rank[c.thread[candidates]],
                           np.arange(len(c.threads) + 1))
    found = np.full(len(ts), -1, dtype=np.int64)
    ranks = c.thread_rank[threads]
    by_thread = np.argsort(ranks, kind="stable")  # one searchsorted per thread
    for queries in np.split(by_thread, np.flatnonzero(np.diff(ranks[by_thread])) + 1):
        run = candidates[runs[ranks[queries[0]]]:runs[ranks[queries[0]] + 1]] \
            if len(queries) else ()
        if len(run):
            at = np.searchsorted(c.start[run], ts[queries], "right") - 1
            found[queries] = np.where(at >= 0, run[np.maximum(at, 0)], -1)
    while True:  # out of the ops that ended before ts, and what is not a forward op
        up = found >= 0
        up[up] = (c.end[found[up]] < ts[up]) | ~forward[found[up]]
        if not up.any():
            return found
        found[up] = c.parent[found[up]]
