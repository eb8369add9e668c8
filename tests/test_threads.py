"""Threads: independent forward+backward in 8 threads and accumulation into shared leaves from 4
threads give exactly the single-threaded results; grad mode is per thread; profiler events of
each thread land on that thread's track."""
import json
import os
import sys
import threading

import numpy as np
import pytest

import gradkit
from gradkit.profiler import profile

# the full size is 1,000 per thread: GRADKIT_THREAD_ITERATIONS=1000 pytest tests/test_threads.py
ITERATIONS = int(os.environ.get("GRADKIT_THREAD_ITERATIONS", "100"))


@pytest.fixture(autouse=True)
def _switch_often():
    """Switch threads every few microseconds so that their ops really interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run_threads(target, count: int) -> None:
    barrier = threading.Barrier(count)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _mlp_grads(seed: int, iteration: int) -> list:
    """Forward + backward of a small MLP on data fixed by (seed, iteration)."""
    rng = np.random.default_rng(seed * 10_000 + iteration)
    w1 = gradkit.tensor(rng.standard_normal((6, 8)), requires_grad=True)
    w2 = gradkit.tensor(rng.standard_normal((8, 1)), requires_grad=True)
    x = gradkit.tensor(rng.standard_normal((5, 6)))
    h = (x @ w1).tanh()
    loss = gradkit.nn.functional.mse_loss(h @ w2, gradkit.zeros(5, 1, dtype=gradkit.float64))
    loss.backward()
    return [loss.detach().numpy(), w1.grad.numpy(), w2.grad.numpy()]


def test_independent_backward_in_8_threads_matches_single_thread():
    expected = {(s, i): _mlp_grads(s, i) for s in range(8) for i in range(ITERATIONS)}
    got = {}

    def worker(seed):
        for i in range(ITERATIONS):
            got[seed, i] = _mlp_grads(seed, i)
    _run_threads(worker, 8)
    assert got.keys() == expected.keys()
    for key, arrays in expected.items():
        for a, b in zip(got[key], arrays):
            np.testing.assert_array_equal(a, b)  # bitwise: nothing is shared between threads


def test_4_threads_accumulating_into_shared_leaves_give_the_exact_sum():
    # integer-valued gradients: every order of summation is exact, so the result is unique
    w = gradkit.zeros(3, 4, dtype=gradkit.float64, requires_grad=True)
    b = gradkit.zeros(4, dtype=gradkit.float64, requires_grad=True)
    coefficient = [gradkit.tensor(np.full((3, 4), k + 1.0)) for k in range(4)]

    def worker(k):
        for _ in range(ITERATIONS):
            ((w * coefficient[k]).sum() + (b * (k + 1)).sum() * 2).backward()
    _run_threads(worker, 4)
    per_round = sum(k + 1.0 for k in range(4))
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 4), per_round * ITERATIONS))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(4, 2 * per_round * ITERATIONS))


def test_shared_leaf_accumulation_is_checked():
    """The check can fail: one missing backward changes the sum."""
    w = gradkit.zeros(2, dtype=gradkit.float64, requires_grad=True)
    for _ in range(ITERATIONS - 1):
        (w * 3).sum().backward()
    assert not np.array_equal(w.grad.numpy(), np.full(2, 3.0 * ITERATIONS))


def test_grad_mode_is_per_thread():
    recorded = {}

    def worker(i):
        x = gradkit.ones(3, requires_grad=True)
        for _ in range(ITERATIONS):
            if i % 2:
                with gradkit.no_grad():
                    y = x * 2
            else:
                y = x * 2
            recorded.setdefault(i, set()).add(y.requires_grad)
    _run_threads(worker, 4)
    assert recorded == {0: {True}, 1: {False}, 2: {True}, 3: {False}}


def test_profiler_events_of_each_thread_land_on_its_own_track(tmp_path):
    tids = {}

    def worker(i):
        tids[i] = threading.get_native_id()
        x = gradkit.ones(4, requires_grad=True)
        for _ in range(5):
            (x * (i + 1)).exp().sum().backward()
    with profile() as prof:
        _run_threads(worker, 4)
    path = tmp_path / "threads.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    ops = [e for e in events if e.get("ph") == "X" and e["name"] == "gradkit::exp"]
    by_tid = {}
    for e in ops:
        by_tid.setdefault(e["tid"], []).append(e)
    assert set(by_tid) == set(tids.values())
    assert all(len(v) == 5 for v in by_tid.values())
    named = {e["tid"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert set(tids.values()) <= named
    for track in by_tid.values():  # events on one track never overlap partially
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in track)
        assert all(end <= nxt for (_, end), (nxt, _) in zip(spans, spans[1:]))


def test_a_worker_that_ended_before_export_keeps_its_name_on_its_track(tmp_path):
    """Its Python name is read when it first records, not looked up at export."""
    def worker():
        (gradkit.ones(2, requires_grad=True) * 2).sum().backward()
    thread = threading.Thread(target=worker, name="data-loader-3")
    with profile() as prof:
        thread.start()
        thread.join()
    path = tmp_path / "threads.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert f"thread {thread.native_id} (data-loader-3)" in names.values()
