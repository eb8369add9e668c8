"""No leaks: training holds memory flat (profiler off/on, anomaly mode), graphs die without
the cyclic GC, and hooks, saved tensors and the profiler create no reference cycles.

The 2,000-step version with figures is tests/benchmarks/bench_leaks.py.
"""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import gradkit
from gradkit import nn
from gradkit.nn import functional as F  # noqa: N812 - torch's spelling
from gradkit.autograd import detect_anomaly
from gradkit.autograd.graph import saved_tensors_hooks
from gradkit.profiler import profile, record_function, schedule


def make_training(seed: int = 0, width: int = 16):
    """A tiny MLP and one SGD training step on fixed data: ``step()`` returns the loss."""
    gradkit.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, width), nn.Tanh(), nn.Linear(width, 1))
    opt = gradkit.optim.SGD(model.parameters(), lr=0.01)
    rng = np.random.default_rng(seed)
    x = gradkit.tensor(rng.standard_normal((32, 8)), dtype=gradkit.float32)
    y = gradkit.tensor(rng.standard_normal((32, 1)), dtype=gradkit.float32)

    def step() -> float:
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()
    return step


def traced_growth(step, steps: int, warmup: int) -> int:
    """Bytes still allocated (tracemalloc) after ``steps`` more steps than after warm-up."""
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(warmup):
            step()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(steps):
            step()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


_BOUND = 64 * 1024  # bytes; a leak of one small array per step exceeds it within 300 steps


def test_training_memory_is_flat_without_observers():
    growth = traced_growth(make_training(), steps=300, warmup=200)
    assert growth < _BOUND, f"grew {growth} bytes over 300 steps"


def test_training_memory_is_flat_with_the_profiler_cycling():
    # a schedule keeps the profiler recording for the whole run; every finished cycle is
    # handed to on_trace_ready and must then be released
    ready = []
    step = make_training()
    prof = profile(schedule=schedule(wait=1, warmup=1, active=2),
                   on_trace_ready=lambda p: ready.append(len(p.events())))
    with prof:
        def profiled_step():
            with record_function("train_step"):
                step()
            prof.step()
        growth = traced_growth(profiled_step, steps=300, warmup=200)
    assert len(ready) > 50 and all(n == ready[0] for n in ready[1:])
    assert growth < 4 * _BOUND, f"grew {growth} bytes over 300 profiled steps"


def test_training_memory_is_flat_with_anomaly_mode():
    step = make_training()
    with detect_anomaly():
        growth = traced_growth(step, steps=300, warmup=200)
    assert growth < _BOUND, f"grew {growth} bytes over 300 steps in anomaly mode"


def test_a_leak_is_detected():
    """The measurement can fail: a step that keeps its loss tensor is caught."""
    kept = []
    step = make_training()

    def leaky_step():
        step()
        kept.append(np.ones(64))
    assert traced_growth(leaky_step, steps=300, warmup=200) > _BOUND


def _graph_refs():
    """Run forward+backward with hooks; return weakrefs to every tensor and node of the graph."""
    x = gradkit.randn(4, 3, requires_grad=True)
    w = gradkit.randn(3, 2, requires_grad=True)
    h = (x @ w).tanh()
    h.register_hook(lambda g: g * 1.0)
    h.retain_grad()
    loss = (h * h).sum()
    loss.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
    refs = [weakref.ref(t) for t in (h, loss)]
    node = loss.grad_fn
    while node is not None:  # walk the chain of first inputs
        refs.append(weakref.ref(node))
        nxt = [fn for fn, _ in node.next_functions if fn is not None]
        node = nxt[0] if nxt else None
    loss.backward()
    return refs, (x, w)


@pytest.mark.parametrize("observer", ["none", "profiler", "anomaly", "saved_hooks"])
def test_graphs_are_freed_without_the_cyclic_gc(observer):
    contexts = {"none": None, "profiler": profile(profile_memory=True, with_stack=True),
                "anomaly": detect_anomaly(),
                "saved_hooks": saved_tensors_hooks(lambda t: t.detach() * 1.0, lambda t: t)}
    ctx = contexts[observer]
    gc.collect()
    gc.disable()
    try:
        if ctx is None:
            refs, leaves = _graph_refs()
        else:
            with ctx:
                refs, leaves = _graph_refs()
        assert leaves[0].grad is not None
        alive = [r() for r in refs if r() is not None]
        assert not alive, f"alive without gc: {alive}"
    finally:
        gc.enable()


def test_no_reference_cycles_with_debug_saveall():
    """gc finds no garbage at all: hooks, saved tensors and the profiler make no cycles."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.garbage.clear()
        with profile(record_shapes=True, profile_memory=True) as prof, detect_anomaly(), \
                saved_tensors_hooks(lambda t: t, lambda t: t):
            step = make_training()
            for _ in range(3):
                step()
            _graph_refs()
        del prof, step
        found = gc.collect()
        cycles = [type(o).__name__ for o in gc.garbage]
        assert found == 0 and not gc.garbage, f"cyclic garbage: {sorted(set(cycles))}"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_profiler_events_make_no_cycles():
    """Events hold their parent weakly: key_averages() leaves no garbage for the cyclic GC."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.garbage.clear()
        with profile() as prof:
            make_training()()
        prof.key_averages()
        del prof
        assert gc.collect() == 0
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_cycle_detection_works():
    """The check can fail: a deliberate cycle through a hook is reported."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.garbage.clear()
        x = gradkit.randn(3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g, y=y: g)  # the hook holds the tensor that holds the hook
        del x, y
        assert gc.collect() > 0
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def _views_of_every_kind() -> None:
    base = gradkit.randn(4, 6, requires_grad=True).clone()
    plain = gradkit.randn(4, 6)
    for source in (base, plain):
        chain = source
        for _ in range(5):
            chain = chain.unsqueeze(0).squeeze(0)
        v = source[1:3].t()
        v.transpose_(0, 1)  # an in-place view op renames the view (ViewInfo.named)
        source.view(6, 4).select(0, 2).mul_(2)  # in place through a view: CopySlices
        with gradkit.no_grad():
            source.view(24)[0:2]
    base.sum().backward()


def _multi_dot() -> None:
    a, b, c = (gradkit.randn(3, 3, requires_grad=True) for _ in range(3))
    gradkit.linalg.multi_dot([a, b, c]).sum().backward()


def _conv_transpose() -> None:
    for dtype in (gradkit.float32, gradkit.float16):
        x = gradkit.randn(1, 2, 4, dtype=dtype, requires_grad=True)
        w = gradkit.randn(2, 3, 2, dtype=dtype, requires_grad=True)
        F.conv_transpose1d(x, w, gradkit.randn(3, dtype=dtype)).float().sum().backward()


@pytest.mark.parametrize("program", [_views_of_every_kind, _multi_dot, _conv_transpose])
def test_programs_make_no_cycles(program):
    """What a program drops is freed by reference counting. A view's ViewInfo used to name
    itself, and multi_dot's and conv_transpose's nested functions called themselves: each a
    cycle that kept tensors (a view's base, the matrices) alive until the cyclic GC ran."""
    program()  # warm-up: node classes and caches made once
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.garbage.clear()
        program()
        found = gc.collect()
        cycles = sorted({type(o).__name__ for o in gc.garbage})
        assert found == 0 and not gc.garbage, f"cyclic garbage: {cycles}"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
