"""The trace is written straight from the recorder's tuples; events() builds FunctionEvents.

Two independent paths over the same records: every X event, memory record and flow
of the trace must say what the FunctionEvents / Timeline say.
"""
import itertools
import threading

import pytest
from test_profiler_rules import validate_trace

import gradkit
from gradkit.profiler import profile, record_function
from gradkit.profiler.chrome_trace import format_us
from gradkit.profiler.recorder import BACKWARD, BACKWARD_NAME, NODE, OP, RANGE, Recorder
from gradkit.profiler.op_arguments import concrete_text
from gradkit.profiler.timeline import EVALUATE_PREFIX, build
from gradkit.profiler.trace_export import export_chrome_trace

OPTIONS = [{}, {"record_shapes": True}, {"profile_memory": True}, {"with_stack": True},
           {"with_flops": True},
           {"record_shapes": True, "profile_memory": True, "with_stack": True, "with_flops": True}]


def _program():
    x = gradkit.randn(4, 3, dtype=gradkit.float64, requires_grad=True)
    w = gradkit.randn(3, 2, dtype=gradkit.float64, requires_grad=True)
    with record_function("model"):
        loss = ((x @ w).relu() * 2 + 1.5 + True).sum()  # torch refuses `- True`
    loss.backward()

    def other_thread():
        (x * 3).sin().sum().backward()
    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()


def _step_clock(step: int):
    ticks = itertools.count(0, step)
    return lambda: next(ticks)


def _expected_args(event) -> dict:
    args = {"External id": event.id, "Record function id": 0}
    if event.sequence_nr >= 0:
        args["Sequence number"] = event.sequence_nr
        args["Fwd thread id"] = event.fwd_thread
    if event.input_shapes is not None and (event.input_shapes or not event.is_user_annotation):
        args["Input Dims"] = event.input_shapes
        args["Input type"] = event.input_types
        args["Concrete Inputs"] = [concrete_text(v) for v in event.concrete_inputs]
        args["Input Strides"] = event.input_strides
    if event.site and (event.fwd_thread or event.sequence_nr < 0):  # an op without a node too
        args["Forward call site"] = event.site
    if event.stack:
        args["Call stack"] = ";".join(event.stack)
    if event.flops:
        args["flops"] = event.flops
    return args


def _assert_trace_matches(path, events) -> list:
    trace = validate_trace(path)["traceEvents"]
    complete = [e for e in trace if e["ph"] == "X"]
    assert len(complete) == len(events)
    for item, event in zip(complete, events):
        assert (item["name"], item["cat"], item["tid"]) == (event.name, event.cat, event.thread)
        assert item["ts"] == float(format_us(event.start_ns))
        assert item["dur"] == float(format_us(event.end_ns - event.start_ns))
        assert item["args"] == _expected_args(event)
    return trace


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "+".join(o) or "defaults")
@pytest.mark.parametrize("clock_step", [None, 0, 7], ids=["real", "frozen", "step7"])
def test_trace_says_what_the_events_say(tmp_path, options, clock_step):
    clock = None if clock_step is None else _step_clock(clock_step)
    with profile(clock=clock, **options) as prof:
        _program()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    events = prof.events()
    assert len(events) > 10
    trace = _assert_trace_matches(path, events)
    flows = [e for e in trace if e["ph"] == "s"]
    linked = [e for e in events if e.forward is not None
              and not e.name.startswith(EVALUATE_PREFIX)]
    assert [(f["tid"], f["ts"]) for f in flows] == \
        [(e.forward.thread, float(format_us(e.forward.start_ns))) for e in linked]
    memory = [e["args"]["Bytes"] for e in trace if e["name"] == "[memory]"]
    assert memory == [nbytes for _, nbytes, _, _ in prof._session().memory]
    if options.get("profile_memory"):
        assert memory and any(e["name"] == "Saved for backward (bytes)" for e in trace)


def test_overlapping_records_are_clamped_into_their_parent_as_events_are(tmp_path):
    recorder = Recorder(clock=_step_clock(0))
    recorder.start()
    recorder.stop()
    for record in [  # a range 10..50; an op 20..80 sticks out of it, a node 70..90 after
            (RANGE, "step", 10, 50, 1), (OP, "gradkit::mul", 20, 80, 1, 3, None, None, -1, None),
            (OP, "gradkit::add", 30, 40, 1, -1, None, None, -1, None),
            (NODE, "MulBackward0", 70, 90, 1, 3),
            (BACKWARD, BACKWARD_NAME, 60, 95, 2), (RANGE, "empty", 95, 95, 2)]:
        recorder.add(record)
    path = tmp_path / "t.json"
    export_chrome_trace(recorder, str(path))
    events = build(recorder).events
    assert [(e.name, e.end_ns) for e in events][:3] == [("step", 50), ("gradkit::mul", 50),
                                                      ("gradkit::add", 40)]
    _assert_trace_matches(path, events)


def test_names_with_percent_and_quotes_are_written_as_they_are(tmp_path):
    with profile() as prof:
        with record_function('50% "done"'):
            gradkit.ones(2) * 2
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    names = [e["name"] for e in validate_trace(path)["traceEvents"] if e["ph"] == "X"]
    assert '50% "done"' in names


def test_export_before_anything_was_recorded_says_so(tmp_path):
    prof = profile()
    with pytest.raises(RuntimeError, match="nothing was recorded yet"):
        prof.export_chrome_trace(str(tmp_path / "t.json"))


def test_backward_of_a_forward_run_before_profiling_has_no_flow(tmp_path):
    x = gradkit.randn(3, dtype=gradkit.float64, requires_grad=True)
    loss = (x * 2).sin().sum()  # recorded before the profile: no forward op to link to
    with profile() as prof:
        loss.backward()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    trace = _assert_trace_matches(path, prof.events())
    nodes = [e for e in trace if e["ph"] == "X" and e["name"] == "MulBackward0"]
    assert len(nodes) == 1 and nodes[0]["args"]["Fwd thread id"] == nodes[0]["tid"]
    assert "Forward call site" not in nodes[0]["args"]
    assert not [e for e in trace if e["ph"] in "sf"]
