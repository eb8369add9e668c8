"""graph.Node API: name, next_functions, metadata, hooks and handles, multi-grad hooks."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd.graph import Node, register_multi_grad_hook

def f64(values, requires_grad=True):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=requires_grad)


def _torch():
    return pytest.importorskip("torch")


def _walk_names(node):
    """Names along the graph, depth first, as a nested tuple (comparable across libraries)."""
    if node is None:
        return None
    name = node.name().removeprefix("torch::autograd::")  # torch's AccumulateGrad
    return (name, tuple(_walk_names(n) for n, _ in node.next_functions))


def _program(lib):
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.5, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
    return x, w, ((x * w).exp() + x).sum()


def test_grad_fn_is_a_node_with_torch_names_and_edges():
    t = _torch()
    x, w, y = _program(gradkit)
    assert isinstance(y.grad_fn, Node)
    assert _walk_names(y.grad_fn) == _walk_names(_program(t)[2].grad_fn)
    assert x.grad_fn is None
    accumulate = y.grad_fn.next_functions[0][0].next_functions[1][0]
    assert accumulate.name() == "AccumulateGrad" and accumulate.variable is x


def test_next_functions_of_constant_inputs():
    x = f64([1.0])
    y = x * f64([2.0], requires_grad=False)
    assert y.grad_fn.next_functions[1] == (None, 0)


def test_metadata_is_a_persistent_dict():
    _, _, y = _program(gradkit)
    y.grad_fn.metadata["tag"] = 7
    assert y.grad_fn.metadata == {"tag": 7}


def _hook_program(lib, use_hooks):
    x, w, _ = _program(lib)
    z = x * w
    out = (z.exp() * 2).sum()
    log = []
    if use_hooks:
        mul = z.grad_fn
        mul.register_prehook(lambda grad_outputs: log.append("pre") or (grad_outputs[0] * 10,))
        mul.register_hook(lambda grad_inputs, grad_outputs: log.append("post") or
                          (grad_inputs[0], grad_inputs[1] * 0))
    out.backward()
    return log, x.grad.numpy().copy(), w.grad.numpy().copy()


def test_pre_and_post_hooks_change_gradients_like_torch():
    t = _torch()
    ours, theirs = _hook_program(gradkit, True), _hook_program(t, True)
    assert ours[0] == theirs[0] == ["pre", "post"]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    assert not ours[2].any()


def test_hook_handles_remove():
    x = f64([1.0, 2.0])
    y = x * 3
    calls = []
    handles = [y.grad_fn.register_prehook(lambda g: calls.append("pre")),
               y.grad_fn.register_hook(lambda gi, go: calls.append("post"))]
    for h in handles:
        h.remove()
    h.remove()  # removing twice is harmless
    y.sum().backward()
    assert calls == []
    with y.grad_fn.register_prehook(lambda g: calls.append("scoped")):
        pass
    (x * 3).sum().backward()
    assert calls == []


def test_post_hook_returning_wrong_count():
    x = f64([1.0])
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0],) * 3)  # mul has 2 inputs (the 2 is one)
    with pytest.raises(RuntimeError, match=r"incorrect number of .*(expected 2, got 3|got 3, "
                       r"but expected 2)"):
        y.sum().backward()


def test_post_hook_receives_grad_outputs():
    x = f64([1.0, 2.0])
    y = x.exp()
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].numpy(), go[0].numpy())))
    (y * f64([3.0, 4.0], requires_grad=False)).sum().backward()
    gi, go = seen[0]
    np.testing.assert_array_equal(go, [3.0, 4.0])
    np.testing.assert_allclose(gi, np.exp([1.0, 2.0]) * [3.0, 4.0])


# -- register_multi_grad_hook ------------------------------------------------------------

def _multi(lib, mode, use_c):
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    c = lib.tensor([5.0, 6.0], dtype=lib.float64, requires_grad=True)
    calls = []

    def record(grads):
        if mode == "all":
            calls.append(tuple(None if g is None else g.numpy().tolist() for g in grads))
        else:
            calls.append(grads.numpy().tolist())

    hook = (lib.autograd.graph.register_multi_grad_hook((a, b, c), record, mode=mode))
    out = (a * b).sum() + ((c * 2).sum() if use_c else 0)
    out.backward()
    (a * 5).sum().backward()
    hook.remove()
    (a * b).sum().backward()
    return calls


@pytest.mark.parametrize("mode", ["all", "any"])
@pytest.mark.parametrize("use_c", [True, False])
def test_multi_grad_hook_matches_torch(mode, use_c):
    t = _torch()
    ours = _multi(gradkit, mode, use_c)
    assert ours == _multi(t, mode, use_c)
    assert len(ours) == 2


def test_multi_grad_hook_bad_mode():
    x = f64([1.0])
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        register_multi_grad_hook((x,), print, mode="some")


def test_multi_grad_hook_with_non_leaf_tensors():
    x = f64([1.0, 2.0])
    h1, h2 = x * 2, x * 3
    got = []
    register_multi_grad_hook((h1, h2), lambda grads: got.append(grads))
    (h1 * h2).sum().backward()
    g1, g2 = got[0]
    np.testing.assert_array_equal(g1.numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(g2.numpy(), [2.0, 4.0])


def test_multi_grad_hook_recovers_after_a_failed_backward():
    x = f64([1.0, 2.0])
    h1, h2 = x * 2, x * 3
    calls = []
    register_multi_grad_hook((h1, h2), lambda grads: calls.append(grads))
    failing = h1.grad_fn.register_hook(lambda gi, go: 1 / 0)  # after h1's own hook has fired
    with pytest.raises(ZeroDivisionError):
        (h1 * h2).sum().backward(retain_graph=True)
    assert calls == []
    failing.remove()
    (h1 * h2).sum().backward()
    assert len(calls) == 1 and all(g is not None for g in calls[0])
