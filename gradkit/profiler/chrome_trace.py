"""ChromeTraceWriter: Trace Event Format JSON, streamed to disk and written atomically.

Events go to a temporary file next to the target as they are added (in chunks
of a few thousand events: only those are held as text) and the file is renamed
into place on a clean close, so a crash never leaves half a trace (:class:`OutputFile`:
symlinks followed, devices and FIFOs written through). ``.json.gz`` paths are
gzip-compressed. Timestamps are microseconds with 3 decimals relative to
``baseTimeNanoseconds``, as PyTorch writes them; complete (``X``) events of a
thread must arrive in start order (parents first) and are clamped into their
parent, so every thread's events nest strictly as Perfetto requires.
"""
from __future__ import annotations

import gzip
import json
import os
import re

from gradkit.profiler.output_file import OutputFile

# UTF-8 text, not \u escapes: the Perfetto UI shows escapes of non-ASCII letters literally
_encode_plain = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False,
                                 allow_nan=False).encode
# a string that ends in an escaped backslash (an even run of backslashes before a closing quote)
_FINAL_BACKSLASH = re.compile(r'(?<!\\)((?:\\\\)+)"')


def encode_json(value) -> str:
    r"""``value`` as compact JSON that every viewer parses: UTF-8, and a string's final backslash
    written ``\u005c`` (the Perfetto UI's parser fails on ``\\"``)."""
    text = _encode_plain(value)
    if '\\"' in text:
        text = _FINAL_BACKSLASH.sub(lambda m: m.group(1)[:-2] + '\\u005c"', text)
    return text


_encode = encode_json


_CHUNK = 256  # events per write: tens of kB of text at most
# the two ends of a flow arrow, as one text
_FLOW = ('{"ph":"s","id":%s,"pid":%s,"tid":%s,"ts":%.3f,"cat":%s,"name":%s},\n'
         '{"ph":"f","id":%s,"pid":%s,"tid":%s,"ts":%.3f,"cat":%s,"name":%s,"bp":"e"}')
# an X event less its tail; ts and dur are >= 0 there, so "%.3f" of µs is format_us exactly
_COMPLETE = '{"ph":"X","cat":%s,"name":%s,"pid":%s,"tid":%s,"ts":%.3f,"dur":%.3f%s'
_COMPLETE_ARGS = _COMPLETE[:-2] + ',"args":%s}'


def format_us(ns: int) -> str:
    """Nanoseconds as microseconds with exactly 3 decimals (``1234567`` -> ``1234.567``)."""
    # exact: a double holds ns / 1000 to well under 0.0005 for any trace shorter than years
    return f"{ns / 1000:.3f}" if ns > 0 else "0.000"


class ChromeTraceWriter:
    """Write a Chrome/Perfetto trace event by event.

    >>> with ChromeTraceWriter("out.json", base_time_ns=0) as w:
    ...     w.complete("step", "user_annotation", pid=1, tid=1, ts_ns=0, dur_ns=5000)
    """

    def __init__(self, path, base_time_ns: int, metadata: dict | None = None) -> None:
        self.path = os.fspath(path)
        self._output = OutputFile(self.path, make_folders=True)
        fd = self._output.fd
        self._raw = None
        if self.path.endswith(".gz"):
            self._raw = os.fdopen(fd, "wb")
            self._file = gzip.open(self._raw, "wt", encoding="utf-8", errors="backslashreplace",
                                   compresslevel=6)
        else:
            # a lone surrogate (an undecodable file name) is written as its JSON escape
            self._file = os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace",
                                   buffering=1 << 16)
        self._names: dict = {}
        self._open: dict = {}    # tid -> stack of end times (ns) of its open X events
        self._pending: list = []  # event texts not written yet (one write per chunk)
        self._held = 0            # events in them
        self._written = False    # whether a chunk is in the file (the next one needs a comma)
        self.count = 0
        head = {"schemaVersion": 1, "deviceProperties": [], **(metadata or {}),
                "displayTimeUnit": "ms", "baseTimeNanoseconds": int(base_time_ns)}
        self._file.write(_encode(head)[:-1] + ',"traceEvents":[\n')

    # -- events ---------------------------------------------------------------------------
    def json_string(self, text: str) -> str:
        """``text`` as a JSON string literal, cached (names and call sites repeat)."""
        return self._name(text)

    def _name(self, name: str) -> str:
        text = self._names.get(name)
        if text is None:
            text = self._names[name] = _encode(str(name))
        return text

    def _emit(self, text: str) -> None:
        self._pending.append(text)
        self.count += 1
        self._held += 1
        if self._held >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        pending = self._pending
        if pending:
            if self._written:
                self._file.write(",\n")
            self._file.write(",\n".join(pending))
            self._written = True
            pending.clear()
            self._held = 0

    def complete(self, name: str, cat: str, pid: int, tid: int, ts_ns: int, dur_ns: int,
                 args: dict | str | None = None) -> None:
        """An ``X`` event; clamped into the enclosing event of the same thread.

        ``args`` is a dict, or the JSON text of one (made by a caller that knows its keys).
        """
        ts_ns = max(int(ts_ns), 0)
        end = ts_ns + max(int(dur_ns), 0)
        stack = self._open.get(tid)
        if stack is None:
            stack = self._open[tid] = []
        while stack and stack[-1] <= ts_ns:
            stack.pop()
        if stack and end > stack[-1]:
            end = stack[-1]
        stack.append(end)
        if args:
            tail = f',"args":{args if type(args) is str else _encode(args)}}}'
        else:
            tail = "}"
        names = self._names
        self._emit(_COMPLETE % (names.get(cat) or self._name(cat),
                                names.get(name) or self._name(name), pid, tid,
                                ts_ns / 1000, (end - ts_ns) / 1000, tail))

    def complete_many(self, pid: int, rows) -> None:
        """Many ``X`` events at once (the same clamping as :meth:`complete`, less per event).

        ``rows``: ``(name, cat, tid, ts_ns, dur_ns, args)`` with integer times and ``args``
        the JSON text of an object, each thread's events in start order.
        """
        names, name_of, opened, emit = self._names, self._name, self._open, self.raw_events
        texts = []
        append = texts.append
        for name, cat, tid, ts_ns, dur_ns, args in rows:
            if ts_ns < 0:
                ts_ns = 0
            end = ts_ns + dur_ns if dur_ns > 0 else ts_ns
            stack = opened.get(tid)
            if stack is None:
                stack = opened[tid] = []
            while stack and stack[-1] <= ts_ns:
                stack.pop()
            if stack and end > stack[-1]:
                end = stack[-1]
            stack.append(end)
            append(_COMPLETE_ARGS % (names.get(cat) or name_of(cat),
                                     names.get(name) or name_of(name),
                                     pid, tid, ts_ns / 1000, (end - ts_ns) / 1000, args))
            if len(texts) >= _CHUNK:
                emit(texts)
        emit(texts)

    def flows(self, pid: int, rows, cat: str = "fwdbwd") -> None:
        """Many :meth:`flow` arrows: ``rows`` of ``(flow_id, start_tid, start_ns, end_tid,
        end_ns)``."""
        name = self._names.get(cat) or self._name(cat)
        texts = []
        for flow_id, start_tid, start_ns, end_tid, end_ns in rows:
            texts.append(_FLOW % (flow_id, pid, start_tid, max(start_ns, 0) / 1000, name, name,
                                  flow_id, pid, end_tid, max(end_ns, 0) / 1000, name, name))
            if len(texts) >= _CHUNK:
                self.raw_events(texts, 2)
        self.raw_events(texts, 2)

    def raw_events(self, texts: list, events_each: int = 1) -> None:
        """Add events already formatted as JSON objects, ``events_each`` per text (each
        thread's ``X`` events nested and in start order: they are not clamped here).
        Empties ``texts``."""
        self.raw_chunk(texts, len(texts) * events_each)

    def raw_chunk(self, texts: list, events: int) -> None:
        """:meth:`raw_events` for texts holding ``events`` events in all. Empties ``texts``."""
        if texts:
            self._pending.append(",\n".join(texts))
            self.count += events
            self._held += events
            texts.clear()
            if self._held >= _CHUNK:
                self._flush()

    def instant(self, name: str, cat: str, pid: int, tid: int, ts_ns: int,
                args: dict | None = None, scope: str = "t") -> None:
        tail = f',"args":{_encode(args)}}}' if args else "}"
        self._emit(f'{{"ph":"i","cat":{self._name(cat)},"s":"{scope}","name":{self._name(name)},'
                   f'"pid":{pid},"tid":{tid},"ts":{format_us(ts_ns)}{tail}')

    def counter(self, name: str, pid: int, ts_ns: int, values: dict) -> None:
        """A ``C`` event: one counter track per name, one series per numeric value."""
        self._emit(f'{{"ph":"C","name":{self._name(name)},"pid":{pid},"tid":0,'
                   f'"ts":{format_us(ts_ns)},"args":{_encode(values)}}}')

    def flow(self, flow_id: int, pid: int, start_tid: int, start_ns: int, end_tid: int,
             end_ns: int, cat: str = "fwdbwd") -> None:
        """An arrow from the slice open at (start_tid, start_ns) to the one at the end."""
        name = self._names.get(cat) or self._name(cat)
        self.raw_events([_FLOW % (flow_id, pid, start_tid, max(start_ns, 0) / 1000, name, name,
                                  flow_id, pid, end_tid, max(end_ns, 0) / 1000, name, name)], 2)

    def metadata(self, name: str, pid: int, tid: int, args: dict) -> None:
        """An ``M`` event: process_name, process_labels, thread_name, *_sort_index."""
        self._emit(f'{{"ph":"M","name":{self._name(name)},"pid":{pid},"tid":{tid},"ts":0.000,'
                   f'"args":{_encode(args)}}}')

    # -- closing --------------------------------------------------------------------------
    def close(self) -> None:
        """Finish the JSON and move it into place; on any failure (disk full, the target
        turned into a directory) no temporary file is left behind."""
        try:
            self._flush()
            self._file.write(f'\n],"traceName":{_encode(self.path)}}}\n')
            self._file.close()
            if self._raw is not None:
                self._raw.close()
            self._output.commit()
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Drop the temporary file; the target path is left untouched (a device or FIFO
        written through keeps what it was sent)."""
        for f in (self._file, self._raw):
            if f is None:
                continue
            try:
                f.close()
            except Exception:  # noqa: BLE001 - closing a broken stream must not mask the error
                pass
        self._output.discard()

    def __enter__(self) -> ChromeTraceWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
