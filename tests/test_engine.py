"""The backward engine: backward/grad arguments, ordering, freeing, errors (PyTorch's words)."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import grad


def leaf(values, dtype=gradkit.float64):
    return gradkit.tensor(values, dtype=dtype, requires_grad=True)


def test_closed_form_gradients_of_a_small_program():
    x = leaf([0.5, -1.0, 2.0])
    w = leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = (x @ w).tanh().sum()
    y.backward()
    xn, wn = x.detach().numpy(), w.detach().numpy()
    dz = 1 - np.tanh(xn @ wn) ** 2
    np.testing.assert_allclose(x.grad.numpy(), wn @ dz)
    np.testing.assert_allclose(w.grad.numpy(), np.outer(xn, dz))


def test_gradients_accumulate_over_repeated_backward():
    x = leaf([1.0, 2.0])
    for _ in range(3):
        (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * 2 * np.array([1.0, 2.0]))


def test_grad_tensor_identity_is_kept_when_accumulating():
    x = leaf([1.0])
    (x * 2).sum().backward()
    first = x.grad
    (x * 2).sum().backward()
    assert x.grad is first and first.item() == 4.0


def test_retain_graph_allows_a_second_backward_and_default_frees():
    x = leaf([1.0, 2.0])
    y = (x.exp() * 3).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_saved_tensors_are_released_after_backward_unless_retained():
    x = leaf([1.0, 2.0])
    y = x * x
    node = y.grad_fn
    assert node.saved_tensors_info()[0] == 2
    y.sum().backward(retain_graph=True)
    assert node.saved is not None
    y.sum().backward()
    assert node.saved is None and node.saved_tensors_info() == (0, 0)


def test_create_graph_gives_higher_derivatives():
    x = leaf(1.5)
    y = x ** 3
    (dy,) = grad(y, x, create_graph=True)
    (d2y,) = grad(dy, x, create_graph=True)
    (d3y,) = grad(d2y, x)
    assert dy.item() == pytest.approx(3 * 1.5 ** 2)
    assert d2y.item() == pytest.approx(6 * 1.5)
    assert d3y.item() == pytest.approx(6.0)


def test_backward_with_create_graph_leaves_differentiable_grad():
    x = leaf([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (gg,) = grad(x.grad.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * np.array([1.0, 2.0]))


def test_grad_returns_without_touching_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = grad((x * x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert x.grad is None


def test_grad_with_respect_to_intermediate_tensor():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    gh, gx = grad(y, [h, x])
    np.testing.assert_allclose(gh.numpy(), 2 * 3 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(gx.numpy(), 18 * np.array([1.0, 2.0]))


def test_backward_inputs_restricts_accumulation():
    a, b = leaf(2.0), leaf(3.0)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 3.0 and b.grad is None


def test_backward_inputs_accepts_non_leaf():
    a = leaf(2.0)
    h = a * 5
    (h * h).backward(inputs=[h])
    assert h.grad.item() == pytest.approx(20.0)
    assert a.grad is None


def test_allow_unused_and_materialize_grads():
    a, unused = leaf(2.0), leaf(1.0)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        grad(a * 2, [a, unused])
    ga, gu = grad(a * 2, [a, unused], allow_unused=True)
    assert ga.item() == 2.0 and gu is None
    ga, gu = grad(a * 2, [a, unused], materialize_grads=True)
    assert gu.item() == 0.0


def test_grad_outputs_weights_the_vector_jacobian_product():
    x = leaf([1.0, 2.0, 3.0])
    v = gradkit.tensor([1.0, 0.0, -1.0], dtype=gradkit.float64)
    (g,) = grad(x * x, x, grad_outputs=v)
    np.testing.assert_allclose(g.numpy(), [2.0, 0.0, -6.0])


def test_is_grads_batched_computes_jacobian_rows():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    eye = gradkit.eye(3, dtype=gradkit.float64)
    (jac,) = grad(y, x, eye, is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))


def test_multiple_roots_sum_their_gradients():
    x = leaf([1.0, 2.0])
    gradkit.autograd.backward([x.sum(), (x * x).sum()])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 5.0])


def test_nodes_run_in_decreasing_sequence_number():
    x = leaf([1.0])
    a = x * 2        # created first
    b = x * 3
    c = a + b        # diamond: a and b both feed c
    ran = []
    for t, name in ((a, "a"), (b, "b"), (c, "c")):
        t.grad_fn.register_prehook(lambda g, name=name: ran.append(name))
    c.sum().backward()
    assert ran == ["c", "b", "a"]


def _node_order(lib):
    """The names of the nodes in the order backward runs them (node pre-hooks), for a graph
    with chains (a node that alone becomes ready runs next, without the engine's heap),
    diamonds (two nodes ready at once) and a chain run while another branch waits."""
    x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
    a = x * 2
    long_branch = a.sin().cos().exp()       # a chain
    short_branch = a * w                     # waits in the heap while the chain runs
    diamond = long_branch + short_branch     # two nodes ready at once
    out = (diamond * diamond.tanh()).sum()   # the same tensor twice into one node
    ran = []
    seen, stack = set(), [out.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        fn.register_prehook(lambda g, fn=fn: ran.append(fn.name()))
        stack.extend(child for child, _ in fn.next_functions)
    out.backward()
    return ran, x.grad, w.grad


def test_nodes_run_in_torch_order_on_chains_and_diamonds():
    torch = pytest.importorskip("torch")
    ran, gx, gw = _node_order(gradkit)
    torch_ran, tgx, tgw = _node_order(torch)
    # gradkit accumulates leaves after every other node (an error midway leaves .grad alone);
    # torch runs a leaf's AccumulateGrad once it is ready: compare the other nodes' order
    assert [n for n in ran if "AccumulateGrad" not in n] == \
        [n for n in torch_ran if "AccumulateGrad" not in n]
    assert len(ran) == len(torch_ran) == 11 and ran[-2:] == ["AccumulateGrad"] * 2
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-14)
    np.testing.assert_allclose(gw.numpy(), tgw.numpy(), rtol=1e-14)


def test_million_node_chain_backward_is_iterative():
    x = leaf([1.0], dtype=gradkit.float32)
    y = x
    with gradkit.no_grad():
        pass
    for _ in range(10 ** 6):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


def test_error_midway_leaves_leaf_gradients_untouched():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    e = w.exp()                 # saves its output
    y = (x * 2).sum() + e.sum()
    with gradkit.no_grad():
        e.add_(1)               # invalidates the saved output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert x.grad is None and w.grad is None


# -- error messages ------------------------------------------------------------------

def test_implicit_grad_needs_scalar():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError,
                       match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_implicit_grad_needs_real_output():
    z = gradkit.tensor(1 + 1j, dtype=gradkit.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        (z * z).backward()


def test_grad_output_shape_mismatch():
    x = leaf([1.0, 2.0, 3.0])
    bad = gradkit.ones(2, dtype=gradkit.float64)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"gradkit.Size\(\[2\]\) and output\[0\] has a shape of "
                                           r"gradkit.Size\(\[3\]\)"):
        (x * 2).backward(bad)


def test_batched_grad_output_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first"):
        grad(x * 2, x, gradkit.ones(4, 3, dtype=gradkit.float64), is_grads_batched=True)


def test_complex_real_grad_output_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Mismatch in dtype: grad_output\\[0\\] has a dtype of "
                                           "gradkit.complex128 and output\\[0\\] has a dtype of "
                                           "gradkit.float64"):
        (x * 2).backward(gradkit.ones(2, dtype=gradkit.complex128))


def test_grad_tensors_of_wrong_type():
    x = leaf([1.0, 2.0])
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got list"):
        gradkit.autograd.backward(x * 2, grad_tensors=[[1.0, 1.0]])


def test_grad_tensors_and_grad_variables_together():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="'grad_tensors' and 'grad_variables' \\(deprecated\\)"):
        gradkit.autograd.backward(x * 2, grad_tensors=[None], grad_variables=[None])


def test_empty_inputs():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty"):
        (x * 2).backward(inputs=[])
    with pytest.raises(RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty"):
        grad(x * 2, [])


def test_output_that_does_not_require_grad():
    x = gradkit.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does "
                                           "not have a grad_fn"):
        x.sum().backward()


def test_input_that_does_not_require_grad():
    x, c = leaf(1.0), gradkit.tensor(2.0)
    with pytest.raises(RuntimeError,
                       match="One of the differentiated Tensors does not require grad"):
        grad(x * c, [x, c])


def test_wrong_number_of_grad_tensors():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        gradkit.autograd.backward([x.sum(), x.sum()], grad_tensors=[gradkit.tensor(1.0)])


def test_against_torch_on_the_same_program():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    xv, wv, bv = rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal(5)

    def program(lib, x, w, b):
        h = (x @ w + b).tanh()
        return (h * h.sigmoid()).sum() / (1 + (x ** 2).mean())

    ours = [gradkit.tensor(v, requires_grad=True) for v in (xv, wv, bv)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (xv, wv, bv)]
    program(gradkit, *ours).backward()
    program(torch, *theirs).backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)
