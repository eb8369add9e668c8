"""load_trace links backward nodes to their forward op through fwdbwd flows; its errors;
the trace analyses (time per category, slowest backward nodes) on loaded and live events."""
import json
from pathlib import Path

import pytest

import gradkit
from gradkit.profiler import load_trace, profile
from gradkit.profiler.analysis import category_totals, slowest_backward

HAND_WRITTEN = Path(__file__).parent / "fixtures" / "torch_trace_small.json"  # see its README


def _op(name, tid, ts, dur, seq=None, fwd_thread=0, **args):
    if seq is not None:
        args.update({"Sequence number": seq, "Fwd thread id": fwd_thread})
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 7, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def _flow(flow_id, phase, tid, ts, bp="e"):
    event = {"ph": phase, "id": flow_id, "pid": 7, "tid": tid, "ts": ts, "cat": "fwdbwd",
             "name": "fwdbwd"}
    if phase == "f" and bp:
        event["bp"] = bp
    return event


def _two_thread_trace():
    """Two forward threads whose ops both carry sequence number 0 (torch numbers nodes per
    thread); the backward of thread 1's op runs last, on the engine's thread 3."""
    return [
        _op("aten::exp", 1, 10, 5, seq=0), _flow(1, "s", 1, 10),
        _op("aten::log", 2, 20, 5, seq=0), _flow(2, "s", 2, 20),
        _op("autograd::engine::evaluate_function: LogBackward0", 3, 40, 8, seq=0, fwd_thread=2),
        _op("LogBackward0", 3, 40, 6, seq=0, fwd_thread=2), _flow(2, "f", 3, 40),
        _op("ExpBackward0", 3, 50, 4, seq=0, fwd_thread=1), _flow(1, "f", 3, 50),
    ]


def _write(tmp_path, data, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _forward_of(path) -> dict:
    return {e.name: e.forward for e in load_trace(path).events() if e.forward is not None}


def test_flows_link_each_node_to_its_forward_op_where_sequence_numbers_collide(tmp_path):
    linked = _forward_of(_write(tmp_path, _two_thread_trace()))
    assert (linked["ExpBackward0"].name, linked["ExpBackward0"].thread) == ("aten::exp", (7, 1))
    assert (linked["LogBackward0"].name, linked["LogBackward0"].thread) == ("aten::log", (7, 2))
    # the wrapper has no arrow: it falls back to the sequence number (the last forward op)
    assert linked["autograd::engine::evaluate_function: LogBackward0"].name == "aten::log"


def test_without_flows_sequence_numbers_are_the_fallback(tmp_path):
    no_flows = [e for e in _two_thread_trace() if e["ph"] == "X"]
    linked = _forward_of(_write(tmp_path, no_flows))
    assert linked["LogBackward0"].name == "aten::log"
    assert linked["ExpBackward0"].name == "aten::log"  # ambiguous: what the flows above fix


def test_flow_end_binds_to_the_innermost_slice_or_the_next_one(tmp_path):
    trace = [_op("aten::mm", 1, 10, 20), _op("aten::inner", 1, 10, 5), _flow(1, "s", 1, 10),
             _op("outer", 1, 50, 20), _op("MmBackward0", 1, 51, 10), _flow(1, "f", 1, 55),
             _op("aten::add", 1, 80, 2), _flow(2, "s", 1, 81),
             _op("AddBackward0", 1, 90, 2), _flow(2, "f", 1, 85, bp=None)]
    linked = _forward_of(_write(tmp_path, trace))
    assert linked["MmBackward0"].name == "aten::inner"  # innermost slice open at ts=10
    assert linked["AddBackward0"].name == "aten::add"   # no bp=e: the next slice to start
    assert set(linked) == {"MmBackward0", "AddBackward0"}
    node = next(e for e in load_trace(tmp_path / "t.json").events() if e.name == "AddBackward0")
    assert node.is_backward  # an arrow's target is a backward event even without Fwd thread id


def test_half_flows_and_flows_to_nowhere_are_ignored(tmp_path):
    trace = [_op("aten::mm", 1, 10, 5), _flow(1, "s", 1, 10), _flow(2, "f", 1, 12),
             _flow(3, "s", 9, 10), _flow(3, "f", 1, 12)]
    assert _forward_of(_write(tmp_path, trace)) == {}


def _gradkit_trace(tmp_path):
    x = gradkit.randn(4, 3, requires_grad=True)
    w = gradkit.randn(3, 2, requires_grad=True)
    with profile() as prof:
        (x @ w).relu().sum().backward()
    path = tmp_path / "gradkit.json"
    prof.export_chrome_trace(str(path))
    return prof, path


def _drop_sequence_numbers(path):
    data = json.loads(path.read_text())
    for event in data["traceEvents"]:
        for key in ("Sequence number", "Fwd thread id"):
            event.get("args", {}).pop(key, None)
    path.write_text(json.dumps(data))


def test_gradkit_trace_flows_alone_give_the_live_links(tmp_path):
    prof, path = _gradkit_trace(tmp_path)
    live = {e.name: (e.forward.name, e.forward.start_ns, e.site)
            for e in prof.events() if e.forward is not None and not e.name.startswith("auto")}
    assert set(live) == {"MmBackward0", "ReluBackward0", "SumBackward0"}
    _drop_sequence_numbers(path)
    loaded = {e.name: (e.forward.name, e.forward.start_ns, e.site)
              for e in load_trace(path).events() if e.forward is not None}
    assert loaded == live  # no number left: the wrappers have no arrow, so no link either


def test_pytorch_trace_flows_link_nodes_to_the_forward_op(tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.ones(4, 3, requires_grad=True)
    with torch.profiler.profile() as prof:
        (x.sin() * 2).sum().backward()
    path = tmp_path / "torch.json"
    prof.export_chrome_trace(str(path))
    _drop_sequence_numbers(path)
    events = load_trace(path).events()
    linked = {e.name: e.forward for e in events if e.forward is not None}
    assert {name: f.name for name, f in linked.items()} == {
        "SinBackward0": "aten::sin", "MulBackward0": "aten::mul", "SumBackward0": "aten::sum"}
    for name, forward in linked.items():  # the forward call, not an op run inside backward
        node = next(e for e in events if e.name == name)
        assert forward.start_ns < node.start_ns and forward.cpu_parent is None


@pytest.mark.parametrize("content, message", [
    ("42", r"t\.json: not a Chrome trace: the top-level JSON value is a number, expected an "
           r"object with 'traceEvents' or a list of events"),
    ('"trace"', r"not a Chrome trace: the top-level JSON value is a string"),
    ("null", r"not a Chrome trace: the top-level JSON value is null"),
    ("true", r"not a Chrome trace: the top-level JSON value is a boolean"),
    ('{"traceEvents": {}}', r"not a Chrome trace: 'traceEvents' must be a list, got an object"),
    ('[{"ph": "X", "name": "a", "args": [1]}]',
     r"t\.json: event #0 \('a'\): 'args' must be an object, got a list$"),
    ('[{}, {"ph": "i", "name": "[memory]", "args": "x"}]',
     r"event #1 \('\[memory\]'\): 'args' must be an object, got a string$"),
    ('[{"ph": "X", "name": "a", "pid": [1]}]', r"event #0 \('a'\): 'pid' must be a number or a "
                                               r"string, got a list$"),
    ('[{"ph": "X", "name": "a", "ts": "soon"}]', r"event #0 \('a'\): could not convert"),
    ('[{"ph": "X", "name": "a", "args": {"Sequence number": null}}]', r"event #0 \('a'\): "),
])
def test_malformed_content_is_a_value_error_naming_the_event(tmp_path, content, message):
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_trace(path)


def test_category_totals_are_self_times_per_category():
    totals = category_totals(load_trace(HAND_WRITTEN).events())
    assert [(t.category, t.count, t.self_time_us) for t in totals] == [
        ("cpu_op", 11, pytest.approx(306.0)), ("user_annotation", 1, pytest.approx(94.0))]


def test_slowest_backward_nodes_with_their_forward_op():
    costs = slowest_backward(load_trace(HAND_WRITTEN).events(), limit=2)
    assert [(c.node.name, c.node.cpu_time_total, c.forward.name) for c in costs] == [
        ("MmBackward0", pytest.approx(90.0), "aten::mm"),
        ("ReluBackward0", pytest.approx(40.0), "aten::relu")]
    assert costs[0].forward.start_ns == 110_000  # the forward mm, not the one inside backward
    assert slowest_backward(load_trace(HAND_WRITTEN).events(), limit=0) == []
    with pytest.raises(ValueError, match="limit must be non-negative, got -1"):
        slowest_backward([], limit=-1)


def test_analysis_of_live_events_names_the_forward_call_site(tmp_path):
    prof, _ = _gradkit_trace(tmp_path)
    costs = slowest_backward(prof.events(), limit=10)
    assert sorted(c.node.name for c in costs) == ["MmBackward0", "ReluBackward0",
                                                   "SumBackward0"]
    line = _gradkit_trace.__code__.co_firstlineno + 4  # (x @ w).relu().sum().backward()
    assert {c.site for c in costs} == {f"{__file__}:{line}"}
    totals = {t.category: t for t in category_totals(prof.events())}
    assert set(totals) == {"cpu_op"}
    assert totals["cpu_op"].self_time_us == pytest.approx(prof.events().self_cpu_time_total)
