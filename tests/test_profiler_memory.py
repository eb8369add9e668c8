"""profile_memory: allocations/frees, live bytes, and bytes held for backward over time."""
import itertools

import pytest
from test_profiler_rules import validate_trace

import gradkit
from gradkit.profiler import profile
from gradkit.profiler.recorder import MEM, SAVED
from gradkit.profiler.trace_export import LIVE_BYTES, SAVED_BYTES
from torch_expectations.functions import square_function


def mlp_loss(x, w1, w2):
    return ((x @ w1).relu() @ w2).sin().sum()


def _params():
    x = gradkit.randn(8, 16, dtype=gradkit.float64)
    w1 = gradkit.randn(16, 32, dtype=gradkit.float64, requires_grad=True)
    w2 = gradkit.randn(32, 4, dtype=gradkit.float64, requires_grad=True)
    return x, w1, w2


def _running(series):
    return list(itertools.accumulate(n for _, n, *_ in series))


def test_saved_bytes_rise_in_forward_and_return_to_zero_after_backward():
    x, w1, w2 = _params()
    with profile(profile_memory=True) as prof:
        loss = mlp_loss(x, w1, w2)
        nodes, node = [], loss.grad_fn
        while node is not None and node.name() != "AccumulateGrad":  # a chain: walk it
            nodes.append(node)
            node = next((n for n, _ in node.next_functions
                         if n is not None and n.name() != "AccumulateGrad"), None)
        held = sum(n.saved_tensors_info()[1] for n in nodes)
        loss.backward()
    timeline = prof._session()
    running = _running(timeline.saved)
    assert held > 0
    assert max(running) == held  # everything saved is held at the end of forward
    assert running[-1] == 0      # and released by backward


@pytest.mark.parametrize("drop", ["del", "retain_graph then del", "custom Function"])
def test_saved_bytes_return_to_zero_when_a_graph_is_dropped_without_backward(tmp_path, drop):
    """Deleting the last reference to an unrun graph frees what it saved: the counter says so."""
    Square = square_function(gradkit)
    x, w1, w2 = _params()
    with profile(profile_memory=True) as prof:
        loss = Square.apply(mlp_loss(x, w1, w2)) if drop == "custom Function" else \
            mlp_loss(x, w1, w2)
        if drop == "retain_graph then del":
            loss.backward(retain_graph=True)
        del loss
    running = _running(prof._session().saved)
    assert max(running) > 0 and running[-1] == 0
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    counter = [e["args"] for e in validate_trace(path)["traceEvents"]
               if e["ph"] == "C" and e["name"] == SAVED_BYTES]
    assert list(counter[-1].values()) == [0]


def test_live_bytes_return_to_the_start_once_the_graph_is_freed(tmp_path):
    x, w1, w2 = _params()
    with profile(profile_memory=True) as prof:
        loss = mlp_loss(x, w1, w2)
        loss.backward()
        del loss  # the last reference to the forward's arrays
        after_backward = sum(r[2] for r in prof._recorder.records if r[0] == MEM)
        live = {w.addr: w.nbytes for w in prof._recorder._live.values()}
        grads = {id(w.grad._data): w.grad._data.nbytes for w in (w1, w2)}
        w1.grad = w2.grad = None
    timeline = prof._session()
    running = _running(timeline.memory)
    assert max(running) >= (8 * 32 + 8 * 4) * 8  # the hidden activations at least
    # only the leaves' gradients may remain (when the engine hands its buffers to .grad)
    assert set(live) <= set(grads) and after_backward == sum(live.values())
    assert running[-1] == 0
    path = tmp_path / "memory.json"
    prof.export_chrome_trace(str(path))
    events = validate_trace(path)["traceEvents"]
    memory = [e for e in events if e["name"] == "[memory]"]
    assert len(memory) == len(timeline.memory)
    assert all(e["cat"] == "cpu_instant_event" and e["s"] == "t" for e in memory)
    assert memory[-1]["args"]["Total Allocated"] == 0
    assert sum(e["args"]["Bytes"] for e in memory) == 0
    live = [e["args"]["Allocated"] for e in events if e["name"] == LIVE_BYTES]
    saved = [e["args"]["Saved"] for e in events if e["name"] == SAVED_BYTES]
    assert live[-1] == 0 and saved[-1] == 0 and max(saved) > 0


def test_per_op_memory_columns():
    a = gradkit.randn(10, 10, dtype=gradkit.float64, requires_grad=True)
    with profile(profile_memory=True) as prof:
        b = a * 2          # 800 bytes
        c = b.reshape(100)  # a view: allocates nothing
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["gradkit::mul"].self_cpu_memory_usage == 800
    assert averages["gradkit::reshape"].self_cpu_memory_usage == 0
    table = prof.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "800 B" in table
    del b, c


def test_memory_is_not_tracked_when_off():
    a = gradkit.randn(4, requires_grad=True)
    with profile() as prof:
        (a * 2).sum().backward()
    recorder = prof._finished
    assert not any(r[0] in (MEM, SAVED) for r in recorder.records)
    assert not recorder._live
    assert "CPU Mem" not in prof.key_averages().table()


def test_frees_after_the_profile_are_not_recorded():
    a = gradkit.randn(4, requires_grad=True)
    with profile(profile_memory=True) as prof:
        b = a * 2
    count = len(prof._finished.records)
    del b
    assert len(prof._finished.records) == count


@pytest.mark.parametrize("inplace", [True, False])
def test_inplace_results_are_not_new_allocations(inplace):
    a = gradkit.randn(5, dtype=gradkit.float64)
    with profile(profile_memory=True) as prof:
        b = a.mul_(2) if inplace else a.mul(2)
    allocated = sum(r[2] for r in prof._finished.records if r[0] == MEM)
    assert allocated == (0 if inplace else 40)
    del b
