"""Tensor hooks, retain_grad, Node hooks and prehooks (compared with PyTorch's behaviour)."""
import numpy as np
import pytest

import gradkit


def leaf(v):
    return gradkit.tensor(v, dtype=gradkit.float64, requires_grad=True)


def test_leaf_hook_sees_and_can_replace_the_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])


def test_non_leaf_hook_changes_what_flows_upstream():
    x = leaf([1.0, 2.0])
    h = x * 3
    h.register_hook(lambda g: g * 0.5)
    (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 0.5 * 2 * 3 * 3 * np.array([1.0, 2.0]))


def test_removed_hook_does_not_run():
    x = leaf([1.0])
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    (x * 2).sum().backward()
    assert x.grad.item() == 2.0


def test_retain_grad_keeps_non_leaf_grad_after_hooks():
    x = leaf([1.0, 2.0])
    h = x * 3
    h.register_hook(lambda g: g * 10)
    h.retain_grad()
    assert h.retains_grad
    h.sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [10.0, 10.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])


def test_retain_grad_accumulates_like_torch():
    x = leaf([1.0])
    h = x * 2
    h.retain_grad()
    h.sum().backward(retain_graph=True)
    h.sum().backward()
    assert h.grad.item() == 2.0


def test_hook_on_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        gradkit.tensor([1.0]).register_hook(lambda g: g)


def test_retain_grad_on_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has "
                                           "requires_grad=False"):
        gradkit.tensor([1.0]).retain_grad()


def test_hook_returning_wrong_shape_is_an_error():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        (x * 2).sum().backward()


def test_node_prehook_and_posthook():
    x = leaf([1.0, 2.0])
    y = x * 4
    calls = []
    y.grad_fn.register_prehook(lambda grad_outputs: calls.append("pre") or
                               tuple(g * 2 for g in grad_outputs))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append("post") or
                            tuple(None if g is None else g + 1 for g in grad_inputs))
    y.sum().backward()
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(x.grad.numpy(), [2 * 4 + 1, 2 * 4 + 1])


def test_post_accumulate_grad_hook_sees_the_final_grad():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (x * 5).sum().backward()
    np.testing.assert_allclose(seen[0], [5.0, 5.0])


def test_hooks_match_torch():
    torch = pytest.importorskip("torch")

    def program(lib, x):
        h = x * x
        h.register_hook(lambda g: g * 3)
        h.retain_grad()
        y = (h.exp() * x).sum()
        y.backward()
        return x.grad.numpy(), h.grad.numpy()

    values = np.array([0.5, -0.2, 0.1])
    ours = program(gradkit, gradkit.tensor(values, requires_grad=True))
    theirs = program(torch, torch.tensor(values, requires_grad=True))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_leaf_hooks_run_for_autograd_grad_too():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (g,) = gradkit.autograd.grad((x * 3).sum(), x)
    np.testing.assert_allclose(g.numpy(), [30.0, 30.0])
    assert x.grad is None


def test_post_hook_returning_wrong_count_names_the_hook():
    x = leaf([1.0])
    y = x * 2

    def too_many(grad_inputs, grad_outputs):
        return grad_inputs + grad_inputs

    y.grad_fn.register_hook(too_many)
    with pytest.raises(RuntimeError, match="hook 'too_many' has returned an incorrect number of "
                                           "values \\(got 4, but expected 2\\)"):
        y.sum().backward()
