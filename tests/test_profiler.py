"""The profiler's events: one per op and backward node, nested per thread, linked by flows."""
import itertools
import json
import threading
from collections import Counter

import numpy as np
import pytest
from test_profiler_rules import validate_trace

import gradkit
from gradkit.autograd import observers
from gradkit.profiler import profile, record_function


def fake_clock(step_ns: int = 1000):
    """A clock that advances ``step_ns`` per read: durations count clock reads."""
    return itertools.count(0, step_ns).__next__


def names(events):
    return Counter(e.name for e in events)


def test_every_op_and_backward_node_is_an_event():
    x = gradkit.randn(4, requires_grad=True)
    with profile() as prof:
        y = (x * 2).sin().sum()
        y.backward()
    counts = names(prof.events())
    assert counts["gradkit::mul"] == 1 and counts["gradkit::sin"] == 1
    assert counts["gradkit::sum"] == 1
    for node in ("MulBackward0", "SinBackward0", "SumBackward0"):
        assert counts[node] == 1
        assert counts["autograd::engine::evaluate_function: " + node] == 1
    assert counts["autograd::engine::backward"] == 1
    assert len(prof.events()) == 3 + 6 + 1


def test_event_count_follows_the_program():
    x = gradkit.randn(16, requires_grad=True)
    n = 137
    with profile() as prof:
        y = x
        for _ in range(n):
            y = y * 1.5
        y.sum().backward()
        with gradkit.no_grad():
            x * 2  # no node: an op event without a sequence number
    counts = names(prof.events())
    assert counts["gradkit::mul"] == n + 1
    assert counts["MulBackward0"] == n
    no_grad_mul = [e for e in prof.events() if e.name == "gradkit::mul"][-1]
    assert no_grad_mul.sequence_nr == -1


def test_nothing_is_recorded_outside_the_profile():
    x = gradkit.randn(4, requires_grad=True)
    with profile() as prof:
        x * 2
    before = len(prof.events())
    x * 3
    with record_function("outside"):
        x * 4
    assert len(prof.events()) == before
    assert not any(type(o).__name__ == "Recorder" for o in observers.active)


def _ancestors(event):
    out = []
    while event.cpu_parent is not None:
        event = event.cpu_parent
        out.append(event.name)
    return out


def test_ranges_nest_even_inside_backward_hooks(tmp_path):
    x = gradkit.randn(3, requires_grad=True)

    def hook(g):
        with record_function("in_hook"):
            return g * 1.0

    with profile() as prof:
        with record_function("forward"):
            h = x * 2
            h.register_hook(hook)
            y = h.sin().sum()
        y.backward()
    events = prof.events()
    in_hook_op = [e for e in events if e.name == "gradkit::mul" and e.cpu_parent
                  and e.cpu_parent.name == "in_hook"]
    assert len(in_hook_op) == 1
    assert _ancestors(in_hook_op[0]) == ["in_hook", "autograd::engine::backward"]
    forward_ops = [e for e in events if e.name in ("gradkit::mul", "gradkit::sin", "gradkit::sum")
                   and e.sequence_nr >= 0]
    assert all(_ancestors(e) == ["forward"] for e in forward_ops)
    for e in events:  # children lie inside their parent
        if e.cpu_parent is not None:
            assert e.cpu_parent.start_ns <= e.start_ns <= e.end_ns <= e.cpu_parent.end_ns
    path = tmp_path / "hook.json"
    prof.export_chrome_trace(str(path))
    validate_trace(path)


def test_each_backward_node_has_a_flow_from_its_forward_op(tmp_path):
    x = gradkit.randn(5, requires_grad=True)
    w = gradkit.randn(5, requires_grad=True)
    with profile() as prof:
        loss = (x * w).exp().mean()  # the forward line
        forward_line = test_each_backward_node_has_a_flow_from_its_forward_op.__code__ \
            .co_firstlineno + 4
        loss.backward()
    path = tmp_path / "flows.json"
    prof.export_chrome_trace(str(path))
    data = validate_trace(path)
    slices = [e for e in data["traceEvents"] if e["ph"] == "X"]
    backward = [e for e in slices if e["name"].endswith("Backward0")
                and not e["name"].startswith("autograd::")]
    forward = {e["args"]["Sequence number"]: e for e in slices
               if e["cat"] == "cpu_op" and e["args"].get("Fwd thread id") == 0}
    starts = {e["id"]: e for e in data["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in data["traceEvents"] if e["ph"] == "f"}
    assert len(backward) == 3 and len(starts) == len(ends) == 3
    for b in backward:
        fwd = forward[b["args"]["Sequence number"]]
        assert b["name"] == {"gradkit::mul": "MulBackward0", "gradkit::exp": "ExpBackward0",
                             "gradkit::mean": "MeanBackward0"}[fwd["name"]]
        (flow_id,) = [i for i, f in ends.items() if f["ts"] == b["ts"] and f["tid"] == b["tid"]]
        assert starts[flow_id]["ts"] == fwd["ts"] and starts[flow_id]["tid"] == fwd["tid"]
        assert b["args"]["Fwd thread id"] == fwd["tid"] != 0
        assert b["args"]["Forward call site"] == f"{__file__}:{forward_line}"


def test_events_from_threads_land_on_their_own_tracks(tmp_path):
    def work(n):
        x = gradkit.randn(8, requires_grad=True)
        y = x
        for _ in range(n):
            y = y * 1.01
        y.sum().backward()

    with profile() as prof:
        threads = [threading.Thread(target=work, args=(n,)) for n in (5, 9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        work(3)
    by_thread = prof.events().by_thread()
    per_thread = sorted(names(events)["gradkit::mul"] for events in by_thread.values())
    assert per_thread == [3, 5, 9]
    assert sorted(names(events)["MulBackward0"] for events in by_thread.values()) == [3, 5, 9]
    path = tmp_path / "threads.json"
    prof.export_chrome_trace(str(path))
    data = validate_trace(path)
    tids = {e["tid"] for e in data["traceEvents"] if e["ph"] == "X"}
    named = {e["tid"] for e in data["traceEvents"] if e["name"] == "thread_name"}
    assert len(tids) == 3 and tids <= named


def test_threads_started_one_after_another_keep_their_own_ids():
    # a thread that ended leaves its ident (threading.get_ident) to the next one: each
    # thread's events still carry its own OS id
    def work(seen):
        seen.append(threading.get_native_id())
        y = gradkit.ones(3, requires_grad=True) * 2
        y.sum().backward()

    seen: list = []
    with profile(profile_memory=True) as prof:
        for _ in range(4):
            t = threading.Thread(target=work, args=(seen,))
            t.start()
            t.join()
    by_thread = prof.events().by_thread()
    assert sorted(by_thread) == sorted(seen)
    for tid in seen:
        assert {e.name for e in by_thread[tid]} >= {"gradkit::ones", "gradkit::mul",
                                                    "MulBackward0"}


def test_an_exception_still_leaves_a_loadable_trace(tmp_path):
    x = gradkit.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        with profile() as prof:
            with record_function("doomed"):
                y = x * 2
                gradkit.matmul(gradkit.randn(2, 3), gradkit.randn(2, 3))  # shape error
    assert not any(type(o).__name__ == "Recorder" for o in observers.active)
    counts = names(prof.events())
    assert counts["doomed"] == 1 and counts["gradkit::mul"] == 1
    assert counts["gradkit::matmul"] == 1  # the failing op is recorded too
    path = tmp_path / "crash.json"
    prof.export_chrome_trace(str(path))
    trace = validate_trace(path)["traceEvents"]
    assert Counter(e["name"] for e in trace if e["ph"] == "X")["doomed"] == 1
    del y


def test_fake_clock_makes_durations_exact():
    x = gradkit.randn(3, requires_grad=True)
    with profile(clock=fake_clock(1000)) as prof:
        with record_function("outer"):
            y = x * 2
        y.sum().backward()
    events = {e.name: e for e in prof.events()}
    # one read at op_enter, one at op_exit: each op lasts one tick
    assert events["gradkit::mul"].cpu_time_total == 1.0
    assert events["gradkit::sum"].cpu_time_total == 1.0
    assert events["outer"].cpu_time_total == 3.0
    assert events["outer"].self_cpu_time_total == 2.0
    # a node's wrapper spans its tick; the node sits 1 ns inside it on each side (for HTA)
    assert events["autograd::engine::evaluate_function: MulBackward0"].cpu_time_total == 1.0
    assert events["MulBackward0"].cpu_time_total == 0.998


def test_record_function_as_decorator_and_its_errors():
    @record_function("decorated")
    def f(x):
        return x * 3

    x = gradkit.ones(2, requires_grad=True)
    with profile() as prof:
        f(x)
        f(x)
    decorated = [e for e in prof.events() if e.name == "decorated"]
    assert len(decorated) == 2
    assert all(c.name == "gradkit::mul" for e in decorated for c in e.cpu_children)
    with pytest.raises(TypeError, match="record_function name must be a str, but got int"):
        record_function(3)


def test_record_shapes_and_flops():
    a = gradkit.randn(3, 4, requires_grad=True)
    b = gradkit.randn(4, 5)
    with profile(record_shapes=True, with_flops=True) as prof:
        (a @ b).sum()
        a.double() * 2
    mm = next(e for e in prof.events() if e.name == "gradkit::matmul")
    assert mm.input_shapes == [[3, 4], [4, 5]]
    assert mm.input_types == ["float", "float"]
    assert mm.flops == 2 * 3 * 4 * 5
    mul = next(e for e in prof.events() if e.name == "gradkit::mul")
    # as torch's: its Python binding makes the number a 0-d long tensor (mul has no Scalar form)
    assert mul.input_shapes == [[3, 4], []] and mul.input_types == ["double", "long int"]
    assert mul.concrete_inputs == [None, None]
    with profile() as plain:
        a * 2
    assert plain.events()[0].input_shapes is None


@pytest.mark.parametrize("requires_grad", [False, True])
def test_record_shapes_read_from_the_node_match_those_read_from_the_inputs(requires_grad):
    # an op that made a node takes its inputs' shapes from it; one that did not reads them
    a = gradkit.randn(3, 4, dtype=gradkit.float64, requires_grad=requires_grad)
    b = gradkit.randn(4, 2, dtype=gradkit.float32)
    with profile(record_shapes=True) as prof:
        (a @ b.double()).sin()
    shapes = {e.name: (e.input_shapes, e.input_types) for e in prof.events()}
    assert shapes["gradkit::matmul"] == ([[3, 4], [4, 2]], ["double", "double"])
    assert shapes["gradkit::sin"] == ([[3, 2]], ["double"])
    assert shapes["gradkit::astype"] == ([[4, 2], []], ["float", "Scalar"])  # and its dtype


def test_record_shapes_of_in_place_ops_and_custom_functions_are_what_went_in():
    class Flatten(gradkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.reshape(-1)

        @staticmethod
        def backward(ctx, g):
            return g.reshape(2, 3)

    x = gradkit.ones(2, 3, dtype=gradkit.float64)
    with profile(record_shapes=True) as prof:
        x.mul_(2)
        x[0] = 5.0
        Flatten.apply(x)
    shapes = {e.name: (e.input_shapes, e.input_types) for e in prof.events()}
    assert shapes["gradkit::mul_"] == ([[2, 3], []], ["double", "long int"])
    assert shapes["gradkit::index_put_"][0][0] == [2, 3]
    assert shapes["Flatten"] == ([[2, 3]], ["double"])


def test_with_stack_records_the_python_stack():
    x = gradkit.ones(2, requires_grad=True)

    def model(t):
        return t * 2

    with profile(with_stack=True) as prof:
        model(x)
    (event,) = [e for e in prof.events() if e.name == "gradkit::mul"]
    assert event.stack[0].startswith(f"{__file__}(") and event.stack[0].endswith(": model")
    assert event.stack[1].endswith(": test_with_stack_records_the_python_stack")


def test_events_while_recording_and_errors_before():
    prof = profile()
    with pytest.raises(RuntimeError, match="nothing was recorded yet"):
        prof.events()
    with prof:
        gradkit.ones(2) * 2
        assert names(prof.events())["gradkit::mul"] == 1
    with pytest.raises(ValueError, match="activities must be ProfilerActivity members"):
        profile(activities=["cpu"])


def test_profile_does_not_change_results():
    x = gradkit.tensor(np.linspace(-1, 1, 7), requires_grad=True)
    (x.sin() * x).sum().backward()
    expected = x.grad.numpy().copy()
    x.grad = None
    with profile(record_shapes=True, profile_memory=True, with_stack=True) as prof:
        (x.sin() * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    assert json.dumps([e.name for e in prof.events()])


def test_flops_of_linear_layers():
    """nn.functional.linear runs as torch's t and addmm(b, x, w.t()) / mm(x, w.t()) ops (the
    3-D input's rows folded into one mm), 2 * rows * in * out each."""
    import gradkit.nn.functional as F  # noqa: N812 - torch's spelling
    x, w, b = gradkit.randn(8, 3), gradkit.randn(5, 3), gradkit.randn(5)
    with profile(record_shapes=True, with_flops=True) as prof:
        F.linear(x, w, b)
        F.linear(x, w)
        F.linear(x.reshape(2, 4, 3), w)
    flops = {e.name: e.flops for e in prof.events() if e.name.startswith("gradkit::")
             and e.name != "gradkit::reshape"}
    # the bias add is not counted, as in torch
    assert flops == {"gradkit::addmm": 2 * 8 * 3 * 5, "gradkit::mm": 2 * 8 * 3 * 5,
                     "gradkit::t": 0}
    mms = [e.flops for e in prof.events() if e.name == "gradkit::mm"]
    assert mms == [2 * 8 * 3 * 5] * 2


def test_flops_of_a_linear_layer_match_torch():
    torch = pytest.importorskip("torch")
    import gradkit.nn.functional as F  # noqa: N812 - torch's spelling
    with torch.profiler.profile(with_flops=True, record_shapes=True) as theirs:
        torch.nn.functional.linear(torch.ones(8, 3), torch.ones(5, 3), torch.ones(5))
    with profile(record_shapes=True, with_flops=True) as ours:
        F.linear(gradkit.ones(8, 3), gradkit.ones(5, 3), gradkit.ones(5))
    expected = sum(e.flops for e in theirs.key_averages() if e.key == "aten::addmm")
    assert [e.flops for e in ours.events() if e.name == "gradkit::addmm"] == [expected]


def test_flops_of_addmm_match_torch():
    """addmm counts its product from (input, mat1, mat2), not from its input's shape."""
    torch = pytest.importorskip("torch")
    with torch.profiler.profile(with_flops=True, record_shapes=True) as theirs:
        torch.addmm(torch.ones(5), torch.ones(8, 3), torch.ones(3, 5))
    with profile(record_shapes=True, with_flops=True) as ours:
        gradkit.addmm(gradkit.ones(5), gradkit.ones(8, 3), gradkit.ones(3, 5))
    expected = [e.flops for e in theirs.events() if e.name == "aten::addmm"]
    assert [e.flops for e in ours.events() if e.name == "gradkit::addmm"] == expected == [240]


def test_flops_of_bmm_match_torch():
    """bmm is an op of its own (torch's aten::bmm): 2 * batch * m * k * n."""
    torch = pytest.importorskip("torch")
    with torch.profiler.profile(with_flops=True, record_shapes=True) as theirs:
        torch.bmm(torch.ones(2, 3, 4), torch.ones(2, 4, 5))
    with profile(record_shapes=True, with_flops=True) as ours:
        gradkit.bmm(gradkit.ones(2, 3, 4), gradkit.ones(2, 4, 5))
    expected = sum(e.flops for e in theirs.key_averages() if e.key == "aten::bmm")
    assert [e.flops for e in ours.events() if e.name == "gradkit::bmm"] == [expected]
