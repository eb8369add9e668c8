"""ChromeTraceWriter: Trace Event Format JSON, streamed to disk and written atomically.

Events go to a temporary file next to the target as they are added (nothing
but the current event is held as text) and the file is renamed into place on
a clean close, so a crash never leaves half a trace. ``.json.gz`` paths are
gzip-compressed. Timestamps are microseconds with 3 decimals relative to
``baseTimeNanoseconds``, as PyTorch writes them; complete (``X``) events of a
thread must arrive in start order (parents first) and are clamped into their
parent, so every thread's events nest strictly as Perfetto requires.
"""
from __future__ import annotations

import gzip
import json
import os
import tempfile

encode_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode
_encode = encode_json


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
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(self.path) + ".",
                                         suffix=".tmp")
        os.chmod(self._tmp, 0o644)  # mkstemp's 0600 would make the trace private
        self._raw = None
        if self.path.endswith(".gz"):
            self._raw = os.fdopen(fd, "wb")
            self._file = gzip.open(self._raw, "wt", encoding="ascii", compresslevel=6)
        else:
            self._file = os.fdopen(fd, "w", encoding="ascii", buffering=1 << 16)
        self._names: dict = {}
        self._open: dict = {}    # tid -> stack of end times (ns) of its open X events
        self._first = True
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
        if self._first:
            self._first = False
            self._file.write(text)
        else:
            self._file.write(",\n" + text)
        self.count += 1

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
        self._emit(f'{{"ph":"X","cat":{self._name(cat)},"name":{self._name(name)},"pid":{pid},'
                   f'"tid":{tid},"ts":{format_us(ts_ns)},"dur":{format_us(end - ts_ns)}{tail}')

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
        name = self._name(cat)
        self._emit(f'{{"ph":"s","id":{flow_id},"pid":{pid},"tid":{start_tid},'
                   f'"ts":{format_us(start_ns)},"cat":{name},"name":{name}}}')
        self._emit(f'{{"ph":"f","id":{flow_id},"pid":{pid},"tid":{end_tid},'
                   f'"ts":{format_us(end_ns)},"cat":{name},"name":{name},"bp":"e"}}')

    def metadata(self, name: str, pid: int, tid: int, args: dict) -> None:
        """An ``M`` event: process_name, process_labels, thread_name, *_sort_index."""
        self._emit(f'{{"ph":"M","name":{self._name(name)},"pid":{pid},"tid":{tid},"ts":0.000,'
                   f'"args":{_encode(args)}}}')

    # -- closing --------------------------------------------------------------------------
    def close(self) -> None:
        """Finish the JSON and move it into place."""
        self._file.write(f'\n],"traceName":{_encode(self.path)}}}\n')
        self._file.close()
        if self._raw is not None:
            self._raw.close()
        os.replace(self._tmp, self.path)

    def abort(self) -> None:
        """Drop the temporary file; the target path is left untouched."""
        for f in (self._file, self._raw):
            if f is None:
                continue
            try:
                f.close()
            except Exception:  # noqa: BLE001 - closing a broken stream must not mask the error
                pass
        if os.path.exists(self._tmp):
            os.remove(self._tmp)

    def __enter__(self) -> ChromeTraceWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
