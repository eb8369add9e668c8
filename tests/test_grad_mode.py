"""Grad modes: context managers and decorators, thread-local."""
import threading

import pytest

import gradkit
from gradkit.autograd import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled)


def x():
    return gradkit.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_context_records_nothing_and_restores():
    t = x()
    with no_grad():
        y = t * 2
        assert not is_grad_enabled()
    assert is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_enable_grad_inside_no_grad():
    t = x()
    with no_grad():
        with enable_grad():
            y = t * 2
        z = t * 2
    assert y.requires_grad and not z.requires_grad


def test_decorators_with_and_without_parentheses():
    t = x()

    @no_grad()
    def f(a):
        return a * 2

    @no_grad
    def g(a):
        return a * 3

    assert not f(t).requires_grad and not g(t).requires_grad
    assert is_grad_enabled()


def test_decorated_generator_keeps_mode_per_step():
    @no_grad()
    def gen():
        for _ in range(2):
            yield is_grad_enabled()

    assert list(gen()) == [False, False]
    assert is_grad_enabled()


def test_set_grad_enabled_as_function_and_context():
    set_grad_enabled(False)
    try:
        assert not is_grad_enabled()
    finally:
        set_grad_enabled(True)
    with set_grad_enabled(False):
        assert not is_grad_enabled()
    assert is_grad_enabled()
    with pytest.raises(TypeError, match="must be bool, not str"):
        set_grad_enabled("yes")


def test_inference_mode():
    t = x()
    with inference_mode():
        assert is_inference_mode_enabled() and not is_grad_enabled()
        y = t * 2
    assert not y.requires_grad
    assert not is_inference_mode_enabled()
    with inference_mode(False):
        assert is_grad_enabled()


def test_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with no_grad():
            raise ValueError
    assert is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = {}
    started = threading.Event()
    release = threading.Event()

    def worker():
        seen["start"] = is_grad_enabled()
        started.set()
        release.wait(5)
        seen["later"] = is_grad_enabled()

    with no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        started.wait(5)
        release.set()
        thread.join(5)
    assert seen == {"start": True, "later": True}


def test_concurrent_backward_on_independent_graphs():
    results = {}

    def worker(k):
        t = gradkit.tensor([float(k)] * 3, dtype=gradkit.float64, requires_grad=True)
        for _ in range(200):
            (t * t * k).sum().backward()
        results[k] = t.grad.numpy().copy()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(1, 5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for k in range(1, 5):
        assert results[k].tolist() == [200 * 2 * k * k] * 3


def test_shared_leaf_accumulation_is_locked():
    shared = gradkit.tensor([0.0, 0.0], dtype=gradkit.float64, requires_grad=True)

    def worker():
        for _ in range(300):
            (shared * 1.0).sum().backward()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert shared.grad.tolist() == [1200.0, 1200.0]


def test_set_multithreading_enabled_restores_previous_value():
    from gradkit.autograd.grad_mode import is_multithreading_enabled
    with gradkit.autograd.set_multithreading_enabled(False):
        assert not is_multithreading_enabled()
        with gradkit.autograd.set_multithreading_enabled(True):
            assert is_multithreading_enabled()
        assert not is_multithreading_enabled()
    assert is_multithreading_enabled()
