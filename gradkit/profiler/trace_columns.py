"""A trace's host events as compact NumPy columns, nested and linked as load_trace links
FunctionEvents, in a few dozen bytes per event: what ``gradkit trace summary`` reads a large
trace with. The rules are load.py's (same validation, same notes, same nesting, flow and
sequence-number links); tests check that both give the same summary.
"""
from __future__ import annotations

import collections
from array import array

import numpy as np

from gradkit.nn.module_paths import MODULE_PREFIX
from gradkit.profiler.load import (_FLOW_CAT, _SKIPPED_CATS, _args, _notes, _ns, _number,
                                   _read_events, _site, _thread)
from gradkit.profiler.trace_export import SAVED_EVENT

_CHUNK = 1 << 14  # events per step of the Python loops: their lists stay small
_CODES = ("name", "cat", "thread", "site", "seq")  # compared, never added: may be narrowed
_QUERIES = 1 << 17  # (thread, time) lookups per vectorized step
_FORWARD, _FALSY_NONZERO, _BACKWARD = 0, 1, 2  # "Fwd thread id": 0; "" or null; a thread id


class _Interned(dict):
    """value -> small int, in order of first appearance."""

    def code(self, value) -> int:
        code = self.get(value)
        if code is None:
            code = self[value] = len(self)
        return code


class TraceColumns:
    """Host events of a trace, one array per field, in nest order (thread, start, longest
    first). ``end`` is cut at the enclosing event's end; ``self_time`` is in ns; ``parent``,
    ``forward`` (backward nodes: their forward op) and ``site`` are -1 where absent (an
    empty call site is none); ``names``/``cats``/``sites``/``threads`` turn codes back into
    values; ``saved`` holds the ``[saved]`` events' columns (ts, bytes, thread, pack).
    ``module`` (the innermost nn.Module range's name code) exists only when the
    trace has module ranges, ``memory``/``self_memory`` only when it has memory events."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.notes: list = []
        self._read(path)
        self._nest()
        self._charge_memory()
        self._link_by_flows()
        self._link_by_sequence()

    # -- reading ---------------------------------------------------------------------------
    def _read(self, path: str) -> None:
        self.names, self.cats, self.sites = _Interned(), _Interned(), _Interned()
        self.threads, pids, flow_ids = _Interned(), _Interned(), _Interned()
        # codes start as 16-bit and widen when one needs it (_append): few names, threads
        x = {"start": array("q"), "end": array("q"), "seq": array("i"), "state": array("b")}
        x.update({k: array("h") for k in ("name", "cat", "thread", "site")})
        mem = {"ts": array("q"), "bytes": array("q"), "thread": array("h")}
        flow = {"kind": array("b"), "key": array("q"), "f": array("b"), "thread": array("h"),
                "ts": array("q"), "bound": array("b")}
        saved = {"ts": array("q"), "bytes": array("q"), "thread": array("h"),
                 "kind": array("b"), "pack": array("q")}
        pack_ids = _Interned()
        skipped, negative = collections.Counter(), 0
        for index, item in enumerate(_read_events(path, self.notes)):
            if not isinstance(item, dict):
                skipped["not an object"] += 1
                continue
            phase = item.get("ph")
            try:
                if phase == "X":
                    if item.get("cat") in _SKIPPED_CATS:
                        skipped[item["cat"]] += 1
                    else:
                        self._read_op(item, x)
                    negative += _ns(item.get("dur", 0)) < 0
                elif phase == "i" and item.get("name") == "[memory]":
                    args = _args(item)
                    if args.get("Device Type", 0) == 0:  # host memory only in the CPU columns
                        mem["ts"].append(_ns(item.get("ts", 0)))
                        mem["bytes"].append(int(args.get("Bytes", 0)))
                        _append(mem, "thread", self.threads.code(_thread(item)))
                elif phase == "i" and item.get("name") == SAVED_EVENT:  # saved_columns reads
                    args = _args(item)
                    saved["ts"].append(_ns(item.get("ts", 0)))
                    saved["bytes"].append(int(_number(args, "Bytes", 0)))
                    _append(saved, "thread", self.threads.code(_thread(item)))
                    kind, pack = _flow_key(_number(args, "Pack", 0), pack_ids)
                    saved["kind"].append(kind)
                    saved["pack"].append(pack)
                elif phase in ("s", "f") and item.get("cat") == _FLOW_CAT:
                    kind, key = _flow_key(item.get("id"), flow_ids)
                    flow["kind"].append(kind)
                    flow["key"].append(key)
                    _append(flow, "thread", self.threads.code(_thread(item)))
                    flow["ts"].append(_ns(item.get("ts", 0)))
                    flow["f"].append(phase == "f")
                    flow["bound"].append(item.get("bp") == "e")
            except (TypeError, ValueError, OverflowError) as e:
                raise ValueError(f"{path}: event #{index} ({item.get('name', '?')!r}): {e}") \
                    from e
        self._columns, self._memory, self._flows = (_as_numpy(x), _as_numpy(mem),
                                                    _as_numpy(flow))
        self.saved = _as_numpy(saved)  # [saved] pack/release events, in file order
        self.profile_memory = len(mem["ts"]) > 0
        self.pid_of_thread = np.array([pids.code(t[0]) for t in self.threads], dtype=np.int32)
        self._skipped, self._negative = skipped, negative

    def _read_op(self, item: dict, x: dict) -> None:
        thread = _thread(item)
        start = _ns(item.get("ts", 0))
        end = start + max(_ns(item.get("dur", 0)), 0)
        args = _args(item)
        seq = int(args.get("Sequence number", -1))
        fwd = args.get("Fwd thread id", 0)
        site = _site(args)
        _number(args, "flops", 0)  # not in the summary's tables, but checked as load_trace does
        x["start"].append(start)
        x["end"].append(end)
        _append(x, "seq", seq)
        _append(x, "name", self.names.code(str(item.get("name", ""))))
        _append(x, "cat", self.cats.code(str(item.get("cat", ""))))
        _append(x, "thread", self.threads.code(thread))
        _append(x, "site", self.sites.code(site) if site else -1)
        x["state"].append(_BACKWARD if fwd else _FORWARD if fwd == 0 else _FALSY_NONZERO)

    # -- nesting ---------------------------------------------------------------------------
    def _nest(self) -> None:
        """nest()'s sort and stack, over arrays: parents, cut ends, self times, the module
        each event runs in."""
        c = self._columns
        # threads sort as nest() sorts them: by str() of their (pid, tid)
        labels = [str(t) for t in self.threads]
        rank_of = {label: r for r, label in enumerate(sorted(set(labels)))}
        self.thread_rank = np.array([rank_of[label] for label in labels], dtype=np.int32)
        np.negative(c["end"], out=c["end"])  # longest first, without a copy
        ranks = self.thread_rank[c["thread"]]
        order = np.lexsort((c["end"], c["start"], ranks) if ranks.any() else (c["end"], c["start"]))
        np.negative(c["end"], out=c["end"])
        del ranks
        for key in list(c):
            column = c.pop(key)[order]
            setattr(self, key, _narrowest(column) if key in _CODES else column)
        del order, self._columns
        n = len(self.start)
        event_ranks = self.thread_rank[self.thread]  # each thread's events are one run
        self.thread_runs = np.searchsorted(event_ranks, np.arange(len(self.threads) + 1))
        index = np.int32 if n < (1 << 31) - 1 else np.int64
        self.parent = np.full(n, -1, dtype=index)
        self.self_time = np.empty(n, dtype=np.int64)
        is_module = [name.startswith(MODULE_PREFIX) for name in self.names]
        # innermost nn.Module range around each event; the last event of each one's subtree
        has_modules = any(is_module)
        self.module = np.full(n, -1, dtype=index) if has_modules else None
        self.last = np.empty(n, dtype=index) if self.profile_memory else None
        stack: list = []  # [position, start, end, children's time] of the open events
        current, self.clamped = None, 0
        for lo in range(0, n, _CHUNK):
            hi = min(lo + _CHUNK, n)
            starts, ends = self.start[lo:hi].tolist(), self.end[lo:hi].tolist()
            names, ranks = self.name[lo:hi].tolist(), event_ranks[lo:hi].tolist()
            parents, modules, closed = [-1] * (hi - lo), [-1] * (hi - lo), []
            for i in range(hi - lo):
                if ranks[i] != current:
                    current = ranks[i]
                    _close(stack, lo + i - 1, closed)
                _close(stack, lo + i - 1, closed, starts[i])
                if stack:
                    parent = stack[-1]
                    if ends[i] > parent[2]:
                        ends[i] = parent[2]
                        self.clamped += 1
                    parent[3] += ends[i] - starts[i]
                    p = parents[i] = parent[0]
                    if has_modules:
                        q = p - lo
                        p_name = names[q] if q >= 0 else int(self.name[p])
                        modules[i] = p_name if is_module[p_name] else (
                            modules[q] if q >= 0 else int(self.module[p]))
                stack.append([lo + i, starts[i], ends[i], 0])
            self.end[lo:hi], self.parent[lo:hi] = ends, parents
            if self.module is not None:
                self.module[lo:hi] = modules
            self._write_closed(closed)
        closed = []
        _close(stack, n - 1, closed)
        self._write_closed(closed)

    def _write_closed(self, closed: list) -> None:
        if closed:
            position, self_time, last = np.array(closed, dtype=np.int64).T
            self.self_time[position] = self_time
            if self.last is not None:
                self.last[position] = last

    # -- lookups by (thread, time) ---------------------------------------------------------
    def _find(self, threads: np.ndarray, ts: np.ndarray, side: str, before: bool) -> np.ndarray:
        """Per query, among its thread's events (nest order): the last one left of where
        searchsorted puts ``ts`` among their starts (``before``), else the first one right
        of it; -1 for none. One searchsorted per thread."""
        found = np.full(len(ts), -1, dtype=np.int64)
        for lo in range(0, len(ts), _QUERIES):  # in slices: the temporaries stay small
            ranks, times = self.thread_rank[threads[lo:lo + _QUERIES]], ts[lo:lo + _QUERIES]
            by_thread = np.argsort(ranks, kind="stable")
            for group in np.split(by_thread, np.flatnonzero(np.diff(ranks[by_thread])) + 1):
                if not len(group):
                    continue
                a, b = self.thread_runs[ranks[group[0]]], self.thread_runs[ranks[group[0]] + 1]
                at = np.searchsorted(self.start[a:b], times[group], side)
                found[lo + group] = (np.where(at > 0, a + at - 1, -1) if before
                                     else np.where(at < b - a, a + at, -1))
        return found

    def _enclosing(self, threads: np.ndarray, ts: np.ndarray, side: str) -> np.ndarray:
        """The innermost event open at ``ts`` on each thread (-1 for none), among those that
        start before ``ts`` (side "left": nest()'s memory rule) or at it ("right": a flow's)."""
        found = self._find(threads, ts, side, before=True)
        while True:  # out of the events that ended before ts: their parents, level by level
            ended = found >= 0
            ended[ended] = self.end[found[ended]] < ts[ended]
            if not ended.any():
                return found
            found[ended] = self.parent[found[ended]]

    def _next(self, threads: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """The first event of each thread starting at or after ``ts`` (-1 for none)."""
        return self._find(threads, ts, "left", before=False)

    # -- memory and links ------------------------------------------------------------------
    def _charge_memory(self) -> None:
        """Each allocation to the innermost event open on its thread (``self_memory``), and
        each event's subtree total (``memory``)."""
        n, m = len(self.start), self._memory
        del self._memory
        self.self_memory = self.memory = None  # no memory events: no memory columns
        self.outside_memory = (0, 0)  # (count, bytes) made while no event was open
        if not self.profile_memory:
            return
        self.self_memory = np.zeros(n, dtype=np.int64)
        target = self._enclosing(m["thread"], m["ts"], "left")
        hit = target >= 0
        self.outside_memory = (int((~hit).sum()), int(m["bytes"][~hit].sum()))
        np.add.at(self.self_memory, target[hit], m["bytes"][hit])
        sums = np.concatenate(([0], np.cumsum(self.self_memory)))
        self.memory = sums[self.last + 1] - sums[:n]  # a subtree is a run of nest order

    def _link_by_flows(self) -> None:
        """load._link_by_flows: each complete ``fwdbwd`` flow (its last start and last end),
        in order of its id's first appearance, links a backward node to its forward op."""
        f = self._flows
        del self._flows
        self.forward = np.full(len(self.start), -1, dtype=self.parent.dtype)
        if not len(f["key"]):
            return
        s, e = _pair_flows(f, self.parent.dtype)
        forwards = self._enclosing(f["thread"][s], f["ts"][s], "right")
        nodes = np.where(f["bound"][e] == 1, self._enclosing(f["thread"][e], f["ts"][e], "right"),
                         self._next(f["thread"][e], f["ts"][e]))
        site, state = self.site, self.state
        for lo in range(0, len(nodes), _CHUNK):
            for fw, node in zip(forwards[lo:lo + _CHUNK].tolist(),
                                nodes[lo:lo + _CHUNK].tolist(), strict=True):
                if fw < 0 or node < 0 or node == fw:
                    continue
                self.forward[node] = fw
                if site[node] < 0:
                    site[node] = site[fw]
                if site[fw] < 0:  # gradkit writes the site on the node only
                    site[fw] = site[node]
                state[node] = _BACKWARD

    def _link_by_sequence(self) -> None:
        """load._link_by_sequence: a backward event no flow reached gets the last forward op
        of its (process, sequence number) that started before it."""
        events = np.flatnonzero(self.seq >= 0)
        events = events[np.argsort(self.start[events], kind="stable")]
        pid, seq = self.pid_of_thread[self.thread[events]], self.seq[events]
        grouped = np.lexsort((seq, pid))  # stable: start order within a group
        events, pid, seq = events[grouped], pid[grouped], seq[grouped]
        del grouped
        steps = np.arange(len(events), dtype=self.parent.dtype)
        new_group = np.ones(len(events), dtype=bool)
        new_group[1:] = (pid[1:] != pid[:-1]) | (seq[1:] != seq[:-1])
        group_start = np.maximum.accumulate(np.where(new_group, steps, 0))
        creator = self.state[events] != _BACKWARD
        last_creator = np.maximum.accumulate(np.where(creator, steps, -1))
        linked = ~creator & (last_creator >= group_start) & (self.forward[events] < 0)
        nodes, forwards = events[linked], events[last_creator[linked]]
        self.forward[nodes] = forwards
        self.site[nodes] = np.where(self.site[nodes] >= 0, self.site[nodes], self.site[forwards])

    # -- what the tables need --------------------------------------------------------------
    @property
    def is_backward(self) -> np.ndarray:
        return self.state != _FORWARD

    def reading_notes(self) -> list:
        """load_trace's notes, in its order."""
        return self.notes + _notes(self._skipped, self._negative, self.clamped)


def _append(columns: dict, key: str, value: int) -> None:
    """Append to an integer column, widening it (16 -> 32 -> 64 bits) when ``value`` needs it."""
    try:
        columns[key].append(value)
    except OverflowError:
        if columns[key].typecode == "q":
            raise
        columns[key] = array({"h": "i", "i": "q"}[columns[key].typecode], columns[key])
        _append(columns, key, value)


def _pair_flows(f: dict, index) -> tuple:
    """The last start and the last end (entry numbers) of each flow id that has both, in
    order of the id's first appearance."""
    order = np.lexsort((f["f"], f["key"], f["kind"]))  # stable: file order within an id
    key = f["key"][order]
    new_id = np.ones(len(order), dtype=bool)
    new_id[1:] = key[1:] != key[:-1]
    del key
    kind = f["kind"][order]
    new_id[1:] |= kind[1:] != kind[:-1]
    del kind
    flow_of = np.cumsum(new_id, dtype=index) - 1
    first = np.full(flow_of[-1] + 1, len(order), dtype=index)
    np.minimum.at(first, flow_of, order)
    is_end = f["f"][order]
    last_of_phase = np.ones(len(order), dtype=bool)  # a later point replaces an earlier
    last_of_phase[:-1] = new_id[1:] | (is_end[1:] != is_end[:-1])
    del new_id
    ends = []
    for phase in (0, 1):
        ends.append(np.full(len(first), -1, dtype=index))
        pick = last_of_phase & (is_end == phase)
        ends[phase][flow_of[pick]] = order[pick]
    complete = np.flatnonzero((ends[0] >= 0) & (ends[1] >= 0))
    complete = complete[np.argsort(first[complete], kind="stable")]
    return ends[0][complete], ends[1][complete]


def _close(stack: list, last: int, closed: list, start: int | None = None) -> None:
    """Pop the open events that end by ``start`` (all of them for None: a new thread),
    noting (position, self time, last position of its subtree) of each."""
    while stack and (start is None or stack[-1][2] <= start):
        position, begin, end, children = stack.pop()
        closed.append((position, end - begin - children, last))


def _narrowest(values: np.ndarray) -> np.ndarray:
    """Integer codes in the smallest type that holds them (names, threads: few)."""
    if not len(values):
        return values
    for kind in (np.int8, np.int16, np.int32):
        info = np.iinfo(kind)
        if values.dtype.itemsize > info.bits // 8 and info.min <= values.min() \
                and values.max() <= info.max:
            return values.astype(kind)
    return values


def _as_numpy(columns: dict) -> dict:
    """The arrays as NumPy arrays over the same memory (no copy)."""
    return {k: np.frombuffer(v, dtype=v.typecode) if len(v) else np.zeros(0, v.typecode)
            for k, v in columns.items()}


def _flow_key(flow_id, interned: _Interned) -> tuple:
    """A flow id as (kind, int64): integers as themselves (1, 1.0 and True are one id, as
    in a dict), anything else by its first appearance."""
    if isinstance(flow_id, float) and flow_id.is_integer():
        flow_id = int(flow_id)
    if isinstance(flow_id, int) and -(1 << 63) <= flow_id < (1 << 63):
        return 0, int(flow_id)
    return 1, interned.code(flow_id)
