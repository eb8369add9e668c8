"""Chrome traces: PyTorch's fields, gzip, atomic streaming writes, escaping, and load_trace."""
import gzip
import json
import os
import tracemalloc
from collections import Counter

import pytest
from test_profiler_rules import read_trace_text, validate_trace

import gradkit
from gradkit.profiler import ChromeTraceWriter, load_trace, profile, record_function
from gradkit.profiler.chrome_trace import format_us


def _program():
    x = gradkit.randn(4, 3, requires_grad=True)
    w = gradkit.randn(3, 2, requires_grad=True)
    with record_function("model"):
        loss = (x @ w).relu().sum()
    loss.backward()


def _profile(**options):
    with profile(**options) as prof:
        _program()
    return prof


def test_trace_uses_pytorch_fields(tmp_path):
    path = tmp_path / "t.json"
    _profile(record_shapes=True).export_chrome_trace(str(path))
    data = validate_trace(path)
    assert data["schemaVersion"] == 1 and data["displayTimeUnit"] == "ms"
    assert data["record_shapes"] == 1 and data["traceName"] == str(path)
    assert abs(data["baseTimeNanoseconds"] / 1e9 - __import__("time").time()) < 600
    events = data["traceEvents"]
    mm = next(e for e in events if e["name"] == "gradkit::matmul")
    assert mm["cat"] == "cpu_op"
    assert mm["args"]["Input Dims"] == [[4, 3], [3, 2]]
    assert mm["args"]["Input type"] == ["float", "float"]
    assert mm["args"]["Fwd thread id"] == 0 and mm["args"]["Sequence number"] >= 0
    assert isinstance(mm["args"]["External id"], int)
    model = next(e for e in events if e["name"] == "model")
    assert model["cat"] == "user_annotation"
    metadata = Counter(e["name"] for e in events if e["ph"] == "M")
    assert metadata["process_name"] == 1 and metadata["thread_name"] == 1


def test_gzip_round_trips(tmp_path):
    prof = _profile(profile_memory=True)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    prof.export_chrome_trace(str(tmp_path / "t.json.gz"))
    with open(tmp_path / "t.json.gz", "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    plain = validate_trace(tmp_path / "t.json")
    packed = validate_trace(tmp_path / "t.json.gz")
    assert packed["traceEvents"] == plain["traceEvents"]
    with gzip.open(tmp_path / "t.json.gz", "rt") as f:
        assert json.load(f)["traceEvents"] == plain["traceEvents"]


def test_names_are_escaped(tmp_path):
    weird = 'line\nbreak\ttab "quote" back\\slash \x01 ctrl \u00e9'
    with profile() as prof:
        with record_function(weird):
            gradkit.ones(2) * 2
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    data = validate_trace(path)  # no raw control characters, valid JSON
    assert any(e["name"] == weird for e in data["traceEvents"])
    assert "\u00e9".encode() in read_trace_text(path)  # UTF-8, not an escape Perfetto shows


@pytest.mark.parametrize("name", ["ends in a backslash\\", "two\\\\", "\\", "quote\\\"",
                                  "surrogate \udcff", "na\u00efve \u20ac \U0001f600"])
def test_names_load_in_the_perfetto_ui(tmp_path, name):
    """A final backslash is written \\u005c, non-ASCII as UTF-8 (what the Perfetto UI parses
    and shows); the names read back unchanged."""
    with profile() as prof:
        with record_function(name):
            gradkit.ones(2) * 2
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    data = validate_trace(path)
    assert any(e["name"] == name for e in data["traceEvents"])


def test_writer_clamps_children_into_parents(tmp_path):
    path = tmp_path / "t.json"
    with ChromeTraceWriter(str(path), base_time_ns=0) as w:
        w.complete("parent", "cpu_op", 1, 1, 1000, 5000)
        w.complete("child", "cpu_op", 1, 1, 2000, 9000)      # runs past its parent
        w.complete("after", "cpu_op", 1, 1, 6000, 1000)      # parent closed by now
        w.complete("other thread", "cpu_op", 1, 2, 0, 99000)
        w.complete("negative", "cpu_op", 1, 3, -500, -10)
    events = {e["name"]: e for e in validate_trace(path)["traceEvents"]}
    assert events["child"]["ts"] == 2.0 and events["child"]["dur"] == 4.0
    assert events["after"]["dur"] == 1.0 and events["other thread"]["dur"] == 99.0
    assert events["negative"]["ts"] == 0.0 and events["negative"]["dur"] == 0.0


def test_format_us_has_three_decimals():
    assert [format_us(n) for n in (0, 1, 999, 1000, 1234567, -5)] == \
        ["0.000", "0.001", "0.999", "1.000", "1234.567", "0.000"]


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("old")
    with pytest.raises(ValueError, match="Out of range float values"):
        with ChromeTraceWriter(str(path), base_time_ns=0) as w:
            w.complete("ok", "cpu_op", 1, 1, 0, 1000)
            w.counter("bad", 1, 0, {"v": float("nan")})
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["t.json"]


def test_writer_streams_instead_of_buffering(tmp_path):
    path = tmp_path / "big.json"
    tracemalloc.start()
    with ChromeTraceWriter(str(path), base_time_ns=0) as w:
        for i in range(30_000):
            w.complete("gradkit::mul", "cpu_op", 1, 1, i * 1000, 500, {"External id": i})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    size = path.stat().st_size
    assert size > 3 * 2 ** 20
    assert peak < size / 10  # the JSON text is never held whole
    assert w.count == 30_000


def test_load_trace_reproduces_our_key_averages(tmp_path):
    prof = _profile(record_shapes=True, profile_memory=True)
    path = tmp_path / "t.json.gz"
    prof.export_chrome_trace(str(path))
    live = {e.key: e for e in prof.key_averages()}
    loaded = {e.key: e for e in load_trace(path).key_averages()}
    assert set(loaded) == set(live)
    for key, e in live.items():
        assert loaded[key].count == e.count
        assert loaded[key].cpu_time_total == pytest.approx(e.cpu_time_total, abs=1e-3)
        assert loaded[key].self_cpu_time_total == pytest.approx(e.self_cpu_time_total, abs=1e-3)
        assert loaded[key].self_cpu_memory_usage == e.self_cpu_memory_usage
    for e in load_trace(path).events():
        if e.name == "MmBackward0":
            assert e.forward.name == "gradkit::matmul" and e.is_backward
            assert e.site == e.forward.site or e.site.startswith(__file__)
    table = load_trace(path).key_averages().table(sort_by="cpu_time_total")
    assert "CPU Mem" in table and "gradkit::matmul" in table


def test_load_trace_reads_pytorch_traces(tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 3, requires_grad=True)
    with torch.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with torch.profiler.record_function("model"):
            loss = (x * 2).sin().sum()
        loss.backward()
    path = tmp_path / "torch.json"
    prof.export_chrome_trace(str(path))
    theirs = {e.key: e for e in prof.key_averages()}
    ours = {e.key: e for e in load_trace(path).key_averages()}
    loaded = load_trace(path).events()
    sin_backward = next(e for e in loaded if e.name == "SinBackward0")
    assert sin_backward.is_backward and sin_backward.forward.name == "aten::sin"
    for key in ("model", "aten::mul", "aten::sin", "MulBackward0", "SinBackward0"):
        assert ours[key].count == theirs[key].count
        assert ours[key].cpu_time_total == pytest.approx(theirs[key].cpu_time_total, abs=0.01)
        assert ours[key].self_cpu_time_total == pytest.approx(
            theirs[key].self_cpu_time_total, abs=0.05)


def test_load_trace_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such trace file: .*missing.json"):
        load_trace(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    with pytest.raises(ValueError, match="bad.json is not a readable Chrome trace"):
        load_trace(bad)
    odd = tmp_path / "odd.json"
    odd.write_text('{"traceEvents": 3}')
    with pytest.raises(ValueError, match="'traceEvents' must be a list"):
        load_trace(odd)


def test_load_trace_accepts_the_array_form(tmp_path):
    path = tmp_path / "array.json"
    path.write_text(json.dumps([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
                                {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]))
    events = {e.key: e for e in load_trace(path).key_averages()}
    assert events["a"].self_cpu_time_total == 3.0 and events["b"].cpu_time_total == 2.0
