"""Saved-tensor hooks: pack/unpack, nesting, threads, save_on_cpu, disabling, introspection."""
import threading

import numpy as np
import pytest

import gradkit
from gradkit.autograd.graph import (
    disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks)
from torch_expectations.functions import square_function


def f64(values, requires_grad=True):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=requires_grad)


def test_pack_and_unpack_are_called_once_per_saved_tensor():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t.shape)
        return t.detach().numpy().copy()

    def unpack(array):
        unpacked.append(array.shape)
        return gradkit.from_numpy(array)

    x = f64([1.0, 2.0])
    with saved_tensors_hooks(pack, unpack):
        y = x.exp() * x          # exp saves its result; mul saves both inputs
    assert len(packed) == 3 and not unpacked
    y.sum().backward()
    assert len(unpacked) == 3
    e = np.exp([1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), e * [1.0, 2.0] + e)


def test_hooks_outside_the_block_are_not_used():
    calls = []
    with saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        pass
    (f64([1.0]) * f64([2.0])).sum().backward()
    assert calls == []


def test_innermost_hooks_win_and_nesting_restores():
    log = []

    def tagging(tag):
        return (lambda t: log.append(tag) or t), (lambda t: t)

    x = f64([1.0])
    with saved_tensors_hooks(*tagging("outer")):
        x * x
        with saved_tensors_hooks(*tagging("inner")):
            x * x
        x * x
    assert log == ["outer"] * 2 + ["inner"] * 2 + ["outer"] * 2


def test_unpack_must_return_a_tensor():
    x = f64([1.0, 2.0])
    with saved_tensors_hooks(lambda t: t, lambda t: t.detach().numpy()):
        y = x * x
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a "
                       "Tensor but got result of type ndarray"):
        y.sum().backward()


def test_hooks_are_per_thread():
    log = []
    started, release = threading.Event(), threading.Event()

    def other_thread():
        started.wait()
        a = f64([1.0])
        a * a          # must not see the main thread's hooks
        release.set()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with saved_tensors_hooks(lambda t: log.append("main") or t, lambda t: t):
        started.set()
        release.wait(10)
        f64([2.0]) * f64([3.0])
    worker.join()
    assert log == ["main", "main"]


def test_save_on_cpu_gives_the_same_gradients():
    x = f64(np.linspace(-1, 1, 6).reshape(2, 3))
    w = f64(np.linspace(0, 1, 9).reshape(3, 3))
    (x @ w).tanh().sum().backward()
    expected = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    with save_on_cpu(pin_memory=True):
        y = (x @ w).tanh().sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected[0])
    np.testing.assert_array_equal(w.grad.numpy(), expected[1])


def test_save_on_cpu_stores_copies():
    stored = []
    x = f64([1.0, 2.0])
    with save_on_cpu():
        y = x * 2 * x
    node = y.grad_fn
    for s in node.saved:
        stored.append(s.packed)
    device, copy = stored[0]
    assert str(device) == "cpu" and copy._data is not x._data


def test_disable_saved_tensors_hooks_raises_with_the_callers_message():
    with disable_saved_tensors_hooks("hooks are not allowed in this region"):
        with pytest.raises(RuntimeError, match="hooks are not allowed in this region"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with pytest.raises(RuntimeError, match="hooks are not allowed in this region"):
            with save_on_cpu():
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again afterwards
        pass


def test_disabling_while_hooks_are_active_raises():
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="not now"):
            with disable_saved_tensors_hooks("not now"):
                pass


def test_saved_tensors_info_counts_and_bytes():
    x = f64([1.0, 2.0, 3.0])
    y = x * x.exp()
    assert y.grad_fn.saved_tensors_info() == (2, 48)
    y.sum().backward()
    assert y.grad_fn.saved_tensors_info() == (0, 0)


def test_saved_tensors_introspection_and_freed_error():
    x = f64([1.0, 2.0])
    y = x.exp()
    saved, = y.grad_fn._saved_tensors
    np.testing.assert_allclose(saved.detach().numpy(), np.exp([1.0, 2.0]))
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y.grad_fn._saved_tensors


def test_same_pack_count_as_torch():
    torch = pytest.importorskip("torch")

    def count(lib, hooks):
        n = []
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        with hooks(lambda t: n.append(1) or t, lambda t: t):
            y = (x.sin() * x).exp().sum()
        y.backward()
        return len(n), x.grad.numpy()

    ours = count(gradkit, saved_tensors_hooks)
    theirs = count(torch, torch.autograd.graph.saved_tensors_hooks)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_saved_attributes_like_torch():
    torch = pytest.importorskip("torch")
    ours_x = f64([1.0, 2.0])
    theirs_x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    ours, theirs = ours_x * ours_x.exp(), theirs_x * theirs_x.exp()
    np.testing.assert_array_equal(ours.grad_fn._saved_self.detach().numpy(),
                                  theirs.grad_fn._saved_self.detach().numpy())
    assert ours.grad_fn._saved_self is ours_x and theirs.grad_fn._saved_self is theirs_x
    exp_node = ours.grad_fn.next_functions[1][0]
    np.testing.assert_allclose(exp_node._saved_result.detach().numpy(), np.exp([1.0, 2.0]))
    for node in (ours.grad_fn, theirs.grad_fn):  # a name other ops save, not this one
        with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute "
                           "'_saved_result'"):
            _ = node._saved_result
    with pytest.raises(AttributeError, match="object has no attribute '_saved_nothing'"):
        _ = ours.grad_fn._saved_nothing  # a name no op saves
    ours.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = ours.grad_fn._saved_self


def test_function_saves_go_through_the_hooks():
    Square = square_function(gradkit)

    log = []
    x = f64([1.0, 3.0])
    with saved_tensors_hooks(lambda t: log.append("pack") or t.detach() * 1,
                             lambda t: log.append("unpack") or t):
        y = Square.apply(x)
    y.sum().backward()
    assert log == ["pack", "unpack"]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 6.0])


def test_checkpoint_inside_a_disabled_region_reports_the_message():
    from gradkit.utils.checkpoint import checkpoint
    with disable_saved_tensors_hooks("checkpoint is not allowed here"):
        with pytest.raises(RuntimeError, match="checkpoint is not allowed here"):
            checkpoint(lambda a: a * a, f64([1.0]))
