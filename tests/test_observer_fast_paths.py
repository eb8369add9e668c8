"""The observers' fast paths give the same events as the general ones.

Observers are called only at the points they implement; one watching observer takes a
shorter path than several; anomaly mode's stack capture probes a cached depth and shares
the stack of callers; the profiler records the call site as (code, lasti).
"""
from __future__ import annotations

import gc
import inspect
import json
import sys
import time
import weakref

import numpy as np
import pytest

import gradkit
from gradkit.autograd import anomaly_mode, observers
from gradkit.autograd.anomaly_report import source_frames


class _Log(observers.Observer):
    """Logs every op and node point it sees."""

    def __init__(self, log: list, tag: str) -> None:
        self.log, self.tag = log, tag

    def op_enter(self, name, inputs):
        return name

    def op_exit(self, token, name, inputs, outputs, node, params):
        self.log.append((self.tag, "op", token, outputs is not None,
                         node.name() if node is not None else None))

    def node_enter(self, node, grads):
        return node.name()

    def node_exit(self, token, node, grads, grad_inputs):
        self.log.append((self.tag, "node", token, grad_inputs is not None))


class _ErrorsOnly(observers.Observer):
    def __init__(self) -> None:
        self.errors = []

    def node_error(self, node, exc) -> None:
        self.errors.append((node.name(), type(exc).__name__))


class _Attached:
    def __init__(self, *observed) -> None:
        self.observed = observed

    def __enter__(self):
        for o in self.observed:
            observers.attach(o)

    def __exit__(self, *exc) -> None:
        for o in self.observed:
            observers.detach(o)


def test_points_list_only_the_observers_that_implement_them():
    quiet, errors_only, log = observers.Observer(), _ErrorsOnly(), _Log([], "a")

    def closure_op_exit(token, name, inputs, outputs, node, params):
        pass
    bound = observers.Observer()
    bound.op_exit = closure_op_exit  # a function set on the instance counts too
    with _Attached(quiet, errors_only, log, bound):
        assert observers.active == (quiet, errors_only, log, bound)
        assert observers.op_watchers == (log, bound)
        assert observers.node_watchers == (log,)
    assert observers.active == observers.op_watchers == observers.node_watchers == ()


def test_one_watching_observer_and_several_see_the_same_events():
    def run():
        x = gradkit.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sin().sum().backward()

    alone, together = [], []
    with _Attached(_Log(alone, "a")):
        run()
    with _Attached(_Log(together, "a"), observers.Observer(), _Log(together, "b")):
        run()
    assert [e[1:] for e in together if e[0] == "a"] == [e[1:] for e in alone]
    assert [e[1:] for e in together if e[0] == "b"] == [e[1:] for e in alone]
    assert ("op", "gradkit::mul", True, "MulBackward0") in [e[1:] for e in alone]
    assert [e[2] for e in alone if e[1] == "node"] == ["SumBackward0", "SinBackward0",
                                                       "MulBackward0"]


class _ExitsOnly(observers.Observer):
    """No enter points: its tokens are the start times the caller read."""

    def __init__(self) -> None:
        self.starts = []

    def op_exit(self, token, name, inputs, outputs, node, params):
        self.starts.append(("op", token, time.perf_counter_ns()))

    def node_exit(self, token, node, grads, grad_inputs):
        self.starts.append(("node", token, time.perf_counter_ns()))


@pytest.mark.parametrize("extra", [False, True], ids=["one observer", "two observers"])
def test_an_observer_without_enter_points_gets_the_start_time_as_token(extra):
    exits = _ExitsOnly()
    watchers = [exits] + ([_Log([], "b")] if extra else [])
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    before = time.perf_counter_ns()
    with _Attached(*watchers):
        assert observers.op_entering is observers.node_entering is extra
        (x * 2).sum().backward()
    assert [kind for kind, _, _ in exits.starts] == ["op", "op", "node", "node"]
    previous_end = before
    for _, start, end in exits.starts:  # each start lies between the last exit and its own
        assert type(start) is int and previous_end <= start <= end
        previous_end = end


@pytest.mark.parametrize("extra", [False, True], ids=["one observer", "two observers"])
def test_a_failing_op_or_node_still_closes_its_points(extra):
    log = []
    watchers = [_Log(log, "a")] + ([_Log(log, "b")] if extra else [])
    errors = _ErrorsOnly()
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    y = gradkit.tensor([1.0, 2.0, 3.0])
    with _Attached(*watchers, errors):
        with pytest.raises(RuntimeError, match="size of tensor a"):
            x * y
        assert [e[1:] for e in log] == [("op", "gradkit::mul", False, None)] * len(watchers)
        log.clear()
        z = x * 2
        z.grad_fn.saved = None  # backward through a freed graph raises inside the node
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            z.sum().backward()
    assert ("a", "node", "MulBackward0", False) in log  # node_exit(..., None) after the error
    assert errors.errors == [("MulBackward0", "RuntimeError")]


def test_observers_that_watch_no_node_still_hear_of_errors():
    errors = _ErrorsOnly()
    x = gradkit.tensor([1.0], requires_grad=True)
    z = x * 2
    z.grad_fn.saved = None
    with _Attached(errors):
        assert observers.node_watchers == ()
        with pytest.raises(RuntimeError, match="second time"):
            z.sum().backward()
    assert errors.errors == [("MulBackward0", "RuntimeError")]


# -- anomaly mode's capture ----------------------------------------------------------------

def _stack_of(tensor) -> list[tuple[str, int]]:
    frames = source_frames(tensor.grad_fn.anomaly_trace)
    return [(f.function, f.lineno) for f in frames]


def _line(marker: str) -> int:
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    return next(i + 1 for i, text in enumerate(lines) if text.rstrip().endswith(marker))


def _mul_in_helper(x):
    return x * 3  # HELPER-MUL


def _mul_via_method(x):
    return x.mul(3)  # METHOD-MUL


def test_anomaly_stacks_stay_exact_when_the_same_op_comes_by_different_paths():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    here = sys._getframe().f_code.co_name
    with gradkit.autograd.detect_anomaly():
        outputs = []
        for _ in range(2):  # the second round probes the cached depths
            outputs.append((x * 3, _line("# DIRECT-MUL"), None))  # DIRECT-MUL
            outputs.append((_mul_via_method(x), _line("# METHOD-MUL"), "_mul_via_method"))
            outputs.append((_mul_in_helper(x), _line("# HELPER-MUL"), "_mul_in_helper"))
            outputs.append((gradkit.mul(x, 3), _line("# FUNCTION-MUL"), None))  # FUNCTION-MUL
    for out, line, helper in outputs:
        stack = _stack_of(out)
        if helper is None:
            assert stack[-1] == (here, line)
        else:
            assert stack[-1] == (helper, line)
            assert stack[-2][0] == here
        assert all(not fn.startswith("_dispatch") for fn, _ in stack)


def test_ops_of_one_call_site_share_one_captured_stack():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    with gradkit.autograd.detect_anomaly():
        outs = []
        for _ in range(3):
            outs.append(x * 2)
        other = x + 1
    traces = [o.grad_fn.anomaly_trace for o in outs]
    assert traces[0] is traces[1] is traces[2]
    assert other.grad_fn.anomaly_trace[2:] == traces[0][2:]  # same callers
    assert other.grad_fn.anomaly_trace[:2] != traces[0][:2]


def _generator_of_products(x):
    while True:
        yield x * 5  # GENERATOR-MUL


def _advance(gen):
    return next(gen)  # ADVANCE


def test_a_generator_resumed_from_two_callers_gets_each_callers_stack():
    x = gradkit.tensor([1.0], requires_grad=True)
    gen = _generator_of_products(x)
    with gradkit.autograd.detect_anomaly():
        first = _advance(gen)
        second = next(gen)  # SECOND-CALLER
    assert _stack_of(first)[-1] == ("_generator_of_products", _line("# GENERATOR-MUL"))
    assert _stack_of(first)[-2] == ("_advance", _line("# ADVANCE"))
    assert _stack_of(second)[-2][1] == _line("# SECOND-CALLER")


def _forward_holding(x, marker):
    local = marker  # noqa: F841 - a local of this frame: it dies with the frame
    return (x * 2).sum()


def test_anomaly_mode_holds_no_frame_once_backward_ran():
    class Marker:
        pass
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    marker = Marker()
    ref = weakref.ref(marker)
    with gradkit.autograd.set_detect_anomaly(True):
        loss = _forward_holding(x, marker)
        del marker
        loss.backward()
        gc.collect()
        assert ref() is None
    assert anomaly_mode._last_capture is None


@pytest.mark.parametrize("values, expected", [
    ([1.0, 2.0], False), ([np.inf, -np.inf, 1e38, 3e38], False), ([1.0, np.nan], True),
    ([], False), ([[1.0, np.nan], [0.0, 1.0]], True), ([[np.inf, 1.0]], False),
])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_check_sees_nan_only(values, expected, dtype):
    data = np.array(values, dtype=dtype)
    assert anomaly_mode._has_nan(data) is expected


def test_backward_nan_in_a_vector_gradient_is_reported_with_its_index():
    x = gradkit.tensor([0.0, 1.0], requires_grad=True)
    with gradkit.autograd.detect_anomaly(), pytest.warns(UserWarning), \
            pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values "
                                              r"in its 0th output"), np.errstate(all="ignore"):
        (x.sqrt() * 0).sum().backward()


# -- the profiler's call sites -------------------------------------------------------------

def test_profiler_call_site_is_the_line_of_the_call_even_in_a_multiline_statement(tmp_path):
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    with gradkit.profiler.profile() as prof:
        y = (
            x
            * 2  # MULTILINE-MUL
        )
        y.sum().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    sites = {e["name"]: e["args"].get("Forward call site") for e in events
             if e.get("ph") == "X" and e["name"].endswith("Backward0")}
    assert sites["MulBackward0"] == f"{__file__}:{_line('# MULTILINE-MUL') - 1}" or \
        sites["MulBackward0"] == f"{__file__}:{_line('# MULTILINE-MUL')}"
    assert sites["SumBackward0"] == f"{__file__}:{_line('y.sum().backward()')}"


# -- the trace writer's batch methods ------------------------------------------------------

_ROWS = [  # name, cat, tid, ts_ns, dur_ns: a parent, a child that overruns it, one after
    ("step", "user_annotation", 1, 0, 10_000), ("gradkit::mul", "cpu_op", 1, 2_500, 9_000),
    ("gradkit::add", "cpu_op", 1, 12_345, -5), ("early", "cpu_op", 2, -700, 1_234),
    ('quote"name', "cpu_op", 2, 1_000, 1),
]


def test_complete_many_and_flows_write_what_complete_and_flow_write(tmp_path):
    from gradkit.profiler.chrome_trace import ChromeTraceWriter
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    arrows = [(1, 1, 2_500, 2, 1_000), (2, 2, -5, 1, 12_345)]
    with ChromeTraceWriter(str(one), base_time_ns=7) as w:
        for i, (name, cat, tid, ts, dur) in enumerate(_ROWS):
            w.complete(name, cat, 3, tid, ts, dur, f'{{"External id":{i}}}')
        for flow_id, start_tid, start, end_tid, end in arrows:
            w.flow(flow_id, 3, start_tid, start, end_tid, end)
    with ChromeTraceWriter(str(many), base_time_ns=7) as w:
        w.complete_many(3, [(*row, f'{{"External id":{i}}}') for i, row in enumerate(_ROWS)])
        w.flows(3, arrows)
    assert w.count == len(_ROWS) + 2 * len(arrows)
    assert many.read_text().replace(str(many), "") == one.read_text().replace(str(one), "")
    events = json.loads(many.read_text())["traceEvents"]
    mul = next(e for e in events if e["name"] == "gradkit::mul")
    assert (mul["ts"], mul["dur"]) == (2.5, 7.5)  # clamped into "step"
    assert next(e for e in events if e["name"] == "early")["ts"] == 0
    assert [e["ph"] for e in events[-4:]] == ["s", "f", "s", "f"]


def test_a_chunked_trace_is_one_valid_json_document(tmp_path):
    from gradkit.profiler.chrome_trace import _CHUNK, ChromeTraceWriter
    path = tmp_path / "chunks.json"
    n = 3 * _CHUNK + 7
    with ChromeTraceWriter(str(path), base_time_ns=0) as w:
        w.complete("first", "cpu_op", 1, 1, 0, 1)
        w.complete_many(1, [("op", "cpu_op", 1, 10 * i, 5, "{}") for i in range(1, n)])
        w.flows(1, [(i, 1, 10 * i, 1, 10 * i) for i in range(1, n)])
    events = json.loads(path.read_text())["traceEvents"]
    assert len(events) == w.count == n + 2 * (n - 1)


def test_a_long_session_is_exported_in_chunks_with_every_event_counted(tmp_path, monkeypatch):
    from gradkit.profiler import trace_export
    from gradkit.profiler.chrome_trace import ChromeTraceWriter
    monkeypatch.setattr(trace_export, "_CHUNK_RECORDS", 64)
    chunks = []
    raw_chunk = ChromeTraceWriter.raw_chunk

    def spy(self, texts, events):
        chunks.append((len(texts), events))
        raw_chunk(self, texts, events)
    monkeypatch.setattr(ChromeTraceWriter, "raw_chunk", spy)
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    with gradkit.profiler.profile() as prof:
        y = x
        for _ in range(300):
            y = y * 1.5
        y.sum().backward()
    path = tmp_path / "long.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert len(chunks) > 9 and max(texts for texts, _ in chunks) <= 64  # never the whole text
    # a linked backward node is one text of four events: two X events and its flow's two ends
    assert sum(n for _, n in chunks) == sum(e["ph"] in "Xsf" for e in events)
    assert sum(e["ph"] == "s" for e in events) == 301  # the muls and the sum


def test_saved_bytes_reach_one_watcher_directly_and_several_in_turn():
    class Saved(observers.Observer):
        def __init__(self) -> None:
            self.held = 0

        def saved_pack(self, nbytes, pack):
            self.held += nbytes

        def saved_release(self, nbytes, pack):
            self.held -= nbytes

    def run(*watchers):
        x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
        with _Attached(*watchers):
            y = x.sin()  # saves x: 16 bytes
            peaks = [w.held for w in watchers]
            y.sum().backward()
        return peaks, [w.held for w in watchers]

    one = Saved()
    with _Attached(one):
        assert observers.saved_pack == one.saved_pack  # no loop in between
    assert run(one) == ([16], [0])
    a, b = Saved(), Saved()
    assert run(a, b) == ([16, 16], [0, 0])
    assert observers.saved_pack is observers._saved_pack_all  # nothing attached: a no-op loop
