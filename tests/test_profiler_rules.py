"""The Trace Event Format rules viewers enforce, as a checker; and tests that the checker bites.

``validate_trace(path)`` is used by the other profiler tests on every trace they write.
"""
import gzip
import json
import re

import pytest

_PHASES = {"X", "B", "E", "i", "I", "C", "M", "s", "t", "f"}
_METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name",
             "thread_sort_index"}
_TS_TEXT = re.compile(rb'"(?:ts|dur)":\s*(-?[0-9.eE+-]+)')
_FINAL_BACKSLASH = re.compile(rb'(?<!\\)(?:\\\\)+"')
_UNICODE_ESCAPE = re.compile(rb'(?<!\\)(?:\\\\)*\\u([0-9a-fA-F]{4})')


def read_trace_text(path) -> bytes:
    with open(path, "rb") as f:
        raw = f.read()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def validate_trace(path, three_decimals: bool = True) -> dict:
    """Check a Chrome trace against the format's rules; return the parsed JSON.

    ``three_decimals``: also require every ts/dur written as PyTorch does (us, 3 decimals).
    """
    text = read_trace_text(path)
    assert not re.search(rb"[\x00-\x1f]", text.replace(b"\n", b"")), "raw control character"
    data = json.loads(text)  # strict: raw control characters inside strings fail here too
    # the Perfetto UI fails on a string whose last character is a backslash written \\
    assert not _FINAL_BACKSLASH.search(text), "a string ends in an escaped backslash"
    # and shows \u escapes of non-ASCII letters literally (lone surrogates have no UTF-8 form)
    escaped = [m for m in _UNICODE_ESCAPE.findall(text)
               if int(m, 16) >= 0x80 and not 0xD800 <= int(m, 16) <= 0xDFFF]
    assert not escaped, f"non-ASCII written as \\u escapes: {escaped[:3]}"
    for match in _TS_TEXT.finditer(text) if three_decimals else ():
        assert re.fullmatch(rb"[0-9]+\.[0-9]{3}", match.group(1)), \
            f"time not in us with 3 decimals: {match.group(0)!r}"
    assert isinstance(data, dict) and isinstance(data["traceEvents"], list)
    assert data.get("displayTimeUnit", "ms") in ("ms", "ns")
    assert isinstance(data["baseTimeNanoseconds"], int) and data["baseTimeNanoseconds"] >= 0
    slices, flows = {}, {}
    for e in data["traceEvents"]:
        assert e["ph"] in _PHASES, e
        assert isinstance(e["name"], str)
        for key in ("pid", "tid"):
            assert isinstance(e[key], int) and not isinstance(e[key], bool) and e[key] >= 0, \
                f"{key} must be a non-negative int: {e[key]!r}"
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        if e["ph"] == "M":
            assert e["name"] in _METADATA, f"unknown metadata {e['name']!r}"
        elif e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, f"bad dur {e['dur']!r}"
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
        elif e["ph"] == "C":
            assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values()), \
                f"C event args must be numbers: {e['args']}"
        elif e["ph"] in ("s", "f"):
            assert isinstance(e["id"], int) and 0 <= e["id"] < 2 ** 53
            if e["ph"] == "f":
                assert e.get("bp") == "e", f"flow end without bp 'e': {e}"
            flows.setdefault(e["id"], []).append(e)
    _check_nesting(slices)
    _check_flows(flows, slices)
    return data


def _check_nesting(slices) -> None:
    """X events of one thread nest strictly: no partial overlap (in integer ns), and no two
    non-empty slices with the same span (HTA nests the events after such a pair wrongly)."""
    for events in slices.values():
        events.sort(key=lambda e: (_ns(e["ts"]), -_ns(e["dur"])))
        open_ends, previous = [], None
        for e in events:
            start, end = _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])
            assert end == start or (start, end) != previous, f"two slices with one span: {e}"
            previous = (start, end)
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1], f"partial overlap: {e}"
            open_ends.append(end)


def _check_flows(flows, slices) -> None:
    """One start and one end per id, each inside a slice of its own thread."""
    for flow_id, pair in flows.items():
        assert sorted(p["ph"] for p in pair) == ["f", "s"], f"flow {flow_id}: {pair}"
        for point in pair:
            ts = _ns(point["ts"])
            owners = slices.get((point["pid"], point["tid"]), [])
            assert any(_ns(s["ts"]) <= ts <= _ns(s["ts"]) + _ns(s["dur"]) for s in owners), \
                f"flow {flow_id} {point['ph']} binds to no slice"


def _ns(us) -> int:
    return round(us * 1000)


# -- the checker rejects what viewers reject ------------------------------------------

def _write(tmp_path, events, **top):
    path = tmp_path / "t.json"
    body = {"baseTimeNanoseconds": 0, "displayTimeUnit": "ms", "traceEvents": events, **top}
    path.write_text(json.dumps(body))
    return path


def _x(ts, dur, tid=1, name="op"):
    return {"ph": "X", "name": name, "cat": "cpu_op", "pid": 1, "tid": tid, "ts": ts, "dur": dur}


def test_checker_accepts_nested_slices(tmp_path):
    validate_trace(_write(tmp_path, [_x(1.0, 10.0), _x(2.0, 3.0), _x(5.0, 6.0)]),
                   three_decimals=False)


@pytest.mark.parametrize("events, message", [
    ([_x(1.0, 10.0), _x(5.0, 10.0)], "partial overlap"),
    ([_x(1.0, -1.0)], "dur"),
    ([{**_x(1.0, 1.0), "tid": -3}], "tid"),
    ([{"ph": "s", "id": 1, "name": "fwdbwd", "pid": 1, "tid": 1, "ts": 1.0}], "flow 1"),
    ([_x(1.0, 1.0), {"ph": "s", "id": 1, "name": "f", "pid": 1, "tid": 1, "ts": 1.0},
      {"ph": "f", "id": 1, "name": "f", "pid": 1, "tid": 1, "ts": 1.5}], "bp"),
    ([{"ph": "C", "name": "c", "pid": 1, "tid": 0, "ts": 1.0, "args": {"v": "1"}}], "C"),
    ([{"ph": "M", "name": "nonsense", "pid": 1, "tid": 0, "ts": 0.0, "args": {}}], "nonsense"),
])
def test_checker_rejects(tmp_path, events, message):
    with pytest.raises(AssertionError, match=message):
        validate_trace(_write(tmp_path, events), three_decimals=False)


def test_checker_rejects_times_without_three_decimals(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"baseTimeNanoseconds": 0, "traceEvents": [{"ph": "X", "name": "a", '
                    '"pid": 1, "tid": 1, "ts": 1.5, "dur": 1.000}]}')
    with pytest.raises(AssertionError, match="3 decimals"):
        validate_trace(path)
