"""torch's expectations of torch.autograd.graph.GradientEdge, get_gradient_edge and
increment_version (torch: test_autograd.py test_gradient_edge_output, test_grad_to_node,
test_gradient_edge_graph_ownership), written for gradkit."""
import warnings

import pytest

from .twin import assert_same, leaf, like_torch, raises_like_torch


def _two_step_program(reduce: bool):
    def fn(lib, x):
        tmp = x.sin().cos()
        if reduce:
            tmp = tmp.sum()
        out = tmp.exp().clone().sin().sum()
        return out, lib.autograd.graph.get_gradient_edge(tmp)
    return fn


def test_gradient_edge_as_output_splits_backward_in_two_steps():
    # torch: test_gradient_edge_output
    def program(lib):
        x = leaf(lib, 2)
        fn = _two_step_program(True)
        out, tmp_edge = fn(lib, x)
        (tmp_grad,) = lib.autograd.grad(out, (tmp_edge,))
        (x_grad,) = lib.autograd.grad(tmp_edge, (x,), grad_outputs=(tmp_grad,))
        out, _ = fn(lib, x)
        (reference,) = lib.autograd.grad(out, (x,))
        return x_grad, reference, tmp_grad.shape == ()
    x_grad, reference, scalar = like_torch(program)
    assert scalar
    assert (x_grad == reference).all()


@pytest.mark.parametrize("case,exception,match", [
    ("no seed, not a scalar", RuntimeError, "grad can be implicitly created only for scalar"),
    ("wrong shape", RuntimeError, "Mismatch in shape: grad_output"),
    ("wrong dtype", RuntimeError, "required to have the same dtype"),
    ("backward, wrong shape", RuntimeError, "Mismatch in shape"),
    ("edge past the outputs", IndexError, "tuple index out of range"),
    ("no grad", RuntimeError, "not possible to get the gradient edge for a Tensor that does "
                              "not require gradients"),
    ("increment a number", RuntimeError, "increment_version expect a Iterable"),
    ("materialize an edge", RuntimeError, "materialize_grads cannot be used when the given "
                                          "input is a GradientEdge"),
])
def test_gradient_edge_errors(case, exception, match):
    def program(lib):
        x = leaf(lib, 2)
        graph = lib.autograd.graph
        out, tmp_edge = _two_step_program(True)(lib, x)
        if case == "no seed, not a scalar":
            _, edge = _two_step_program(False)(lib, x)
            lib.autograd.grad(edge, (x,))
        elif case == "wrong shape":
            lib.autograd.grad(tmp_edge, (x,), grad_outputs=lib.ones(4, dtype=lib.float64))
        elif case == "wrong dtype":
            lib.autograd.grad(tmp_edge, (x,), grad_outputs=lib.ones(1, dtype=lib.complex128)[0])
        elif case == "backward, wrong shape":
            lib.autograd.backward(tmp_edge, inputs=(x,), grad_tensors=lib.ones(4))
        elif case == "edge past the outputs":
            a, b = x.split(1)
            graph.get_gradient_edge(a)
            lib.autograd.grad(graph.GradientEdge(a.grad_fn, 2), (x,), grad_outputs=lib.ones(1))
        elif case == "materialize an edge":
            unused = graph.get_gradient_edge(x * 1)
            lib.autograd.grad(out, [unused, x], materialize_grads=True)
        elif case == "no grad":
            graph.get_gradient_edge(lib.zeros(2))
        else:
            graph.increment_version(5)
    raises_like_torch(program, exception, match)


def test_gradient_edge_backward_matches_grad_and_mixes_with_tensors():
    # torch: test_gradient_edge_output, the .backward() half
    def program(lib):
        x = leaf(lib, 2)
        fn = _two_step_program(True)
        out, tmp_edge = fn(lib, x)
        lib.autograd.backward(tmp_edge, retain_graph=True)
        (reference,) = lib.autograd.grad(tmp_edge, (x,), retain_graph=True)
        first = x.grad.clone()
        x.grad = None
        lib.autograd.backward((tmp_edge,), retain_graph=True)
        as_tuple = x.grad.clone()
        _, edge1 = fn(lib, x)
        out2, _ = fn(lib, x)
        (mixed,) = lib.autograd.grad((edge1, out2), (x,), retain_graph=True)
        x.grad = None
        lib.autograd.backward((edge1, out2), retain_graph=True)
        return first, reference, as_tuple, mixed, x.grad
    first, reference, as_tuple, mixed, accumulated = like_torch(program)
    assert (first == reference).all() and (as_tuple == reference).all()
    assert (mixed == accumulated).all()


def test_grad_to_node_equals_grad_to_tensor():
    # torch: test_grad_to_node (a leaf, a non-leaf, one output of a multi-output node)
    def program(lib):
        results = []
        x = leaf(lib, 2)
        chain = [x, x.clone(), lib.var_mean(x.clone())[1]]
        for inp in chain:
            out = inp.clone() * 3
            ref = lib.autograd.grad(out.sum(), inp, retain_graph=True)
            edge = lib.autograd.graph.get_gradient_edge(inp)
            results.append((ref, lib.autograd.grad(out.sum(), edge)))
        return results
    for ref, new in like_torch(program):
        assert (ref[0] == new[0]).all()


def test_gradient_edge_names_the_node_and_output_and_outlives_its_tensor():
    # torch: test_gradient_edge_graph_ownership
    def program(lib):
        graph = lib.autograd.graph
        inp = lib.rand(1, requires_grad=True).clone()
        out = inp.clone()
        edge = graph.get_gradient_edge(out)
        lib.autograd.backward(edge)
        del out
        lib.autograd.backward(edge)
        a, b = lib.ones(4, requires_grad=True).clone().split(2)
        edge_b = graph.get_gradient_edge(b)
        leaf_edge = graph.get_gradient_edge(lib.ones(1, requires_grad=True))
        manual = graph.GradientEdge(b.grad_fn, b.output_nr)
        return (edge.node.name(), edge_b.node.name(), edge_b.output_nr,
                type(leaf_edge.node).__name__, leaf_edge.ownership_token, manual == edge_b,
                isinstance(edge_b, tuple), len(edge_b), edge_b.node is b.grad_fn)
    like_torch(program)


def test_gradient_edge_inputs_with_allow_unused_and_batched_seeds():
    def program(lib):
        graph = lib.autograd.graph
        x = leaf(lib, 3)
        h = x * 2
        m = h.sin()
        unused = graph.get_gradient_edge(leaf(lib, 3, seed=1) * 1)
        return (lib.autograd.grad(m.sum(), [graph.get_gradient_edge(h), x], retain_graph=True),
                lib.autograd.grad(m.sum(), [unused], retain_graph=True, allow_unused=True),
                lib.autograd.grad([graph.get_gradient_edge(h)], [x],
                                  grad_outputs=[lib.ones(2, 3, dtype=lib.float64)],
                                  is_grads_batched=True, retain_graph=True),
                lib.autograd.grad(graph.GradientEdge(h.grad_fn, 0), x,
                                  grad_outputs=lib.ones(3, dtype=lib.float64)))
    like_torch(program)


def test_backward_with_an_edge_input_fills_the_leaf_only():
    def program(lib):
        x = leaf(lib, 2)
        h = x * 2
        m = h.sin().sum()
        edge = lib.autograd.graph.get_gradient_edge(x)
        lib.autograd.backward(m, inputs=[edge], retain_graph=True)
        lib.autograd.backward(m, inputs=[lib.autograd.graph.get_gradient_edge(h)])
        return x.grad, h.retains_grad
    like_torch(program)


def test_increment_version_bumps_each_tensor_and_trips_saved_tensor_checks():
    def program(lib):
        graph = lib.autograd.graph
        x = leaf(lib, 2)
        h = x * 1
        view = h[:1]
        graph.increment_version(h)
        graph.increment_version([h, x])
        graph.increment_version(t for t in (x,))
        versions = (h._version, view._version, x._version)
        y = h.sin()
        graph.increment_version(h)
        try:
            y.sum().backward()
            error = None
        except RuntimeError as e:
            error = "modified by an inplace operation" in str(e)
        return versions, error
    assert like_torch(program) == ((2, 2, 2), True)


def test_an_edge_taken_before_an_in_place_op_gets_the_old_versions_gradient():
    # torch: test_grad_to_node_inplace
    def program(lib):
        x = leaf(lib, 2).clone()
        old_edge = lib.autograd.graph.get_gradient_edge(x)
        x *= 2
        return lib.autograd.grad(x.sum(), (old_edge, x))
    g_old, g_new = like_torch(program)
    assert (g_old.numpy() == 2).all() and (g_new.numpy() == 1).all()


def test_edges_built_by_hand_give_the_same_gradients_as_their_tensors():
    # torch: test_grad_to_node_multi
    def program(lib):
        x, y = leaf(lib, 2).clone(), leaf(lib, 2, seed=1).clone()
        out = x + y
        by_tensor = lib.autograd.grad(out.sum(), (x, y), retain_graph=True)
        edges = tuple(lib.autograd.graph.GradientEdge(t.grad_fn, t.output_nr) for t in (x, y))
        return by_tensor, lib.autograd.grad(out.sum(), edges)
    by_tensor, by_edge = like_torch(program)
    assert_same(by_edge, by_tensor)


def test_materialize_grads_fills_unused_tensors_but_refuses_an_unused_edge():
    # torch: test_grad_to_node_materialize
    def setup(lib):
        x, y = leaf(lib, 2).clone(), leaf(lib, 2, seed=1).clone()
        edge = lib.autograd.graph.GradientEdge
        return x, edge(x.grad_fn, x.output_nr), y, edge(y.grad_fn, y.output_nr), x.clone()

    def allowed(lib):
        x, edge_x, y, edge_y, out = setup(lib)
        grad = lib.autograd.grad
        return (grad(out.sum(), (edge_x, y), allow_unused=True, materialize_grads=True,
                     retain_graph=True),
                grad(out.sum(), (x, y), allow_unused=True, materialize_grads=True,
                     retain_graph=True),
                grad(out.sum(), (x, edge_y), allow_unused=True))

    def refused(lib):
        x, _, _, edge_y, out = setup(lib)
        lib.autograd.grad(out.sum(), (x, edge_y), allow_unused=True, materialize_grads=True)

    with_edge, with_tensors, unused_edge = like_torch(allowed)
    assert (with_edge[1].numpy() == 0).all() and unused_edge[1] is None
    assert_same(with_edge, with_tensors)
    raises_like_torch(refused, RuntimeError,
                      "materialize_grads cannot be used when the given input is a GradientEdge")


def test_backward_accepts_edges_and_tensors_as_inputs_in_any_mix():
    # torch: test_backward_to_node. An edge input does not fill the tensor's .grad unless the
    # tensor retains its grad (it does after a backward with the tensor itself as input).
    def program(lib):
        x, y = leaf(lib, 2).clone(), leaf(lib, 2, seed=1).clone()
        edge = lib.autograd.graph.GradientEdge
        edge_x, edge_y = edge(x.grad_fn, x.output_nr), edge(y.grad_fn, y.output_nr)
        out = x.clone()
        seen = []
        for inputs in [(edge_x, y), (x, y), (x, edge_y), (edge_x, edge_y)]:
            lib.autograd.backward(out.sum(), inputs=inputs, retain_graph=True)
            seen.append((x.retains_grad, y.retains_grad, _grad_or_none(x), _grad_or_none(y)))
        return seen
    seen = like_torch(program)
    assert seen[0][2] is None and seen[-1][2] is not None


def _grad_or_none(t):
    """``t.grad`` without the non-leaf warning (a copy, so later accumulation cannot alter it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return None if t.grad is None else t.grad.clone()


def test_edges_to_a_custom_function_node():
    # torch: test_grad_to_node (the custom Function case) and test_gradient_edge_graph_ownership
    # (the python-node case: the edge keeps the node alive after its tensor is gone)
    def program(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = leaf(lib, 2)
        mid = Double.apply(x)
        out = mid.clone() * 3
        by_tensor = lib.autograd.grad(out.sum(), mid, retain_graph=True)
        edge = lib.autograd.graph.get_gradient_edge(mid)
        by_edge = lib.autograd.grad(out.sum(), edge)
        w = leaf(lib, 1)
        owned = Double.apply(w)
        node_edge = lib.autograd.graph.get_gradient_edge(owned)
        lib.autograd.backward(node_edge)
        del owned
        lib.autograd.backward(node_edge)
        return by_tensor, by_edge, type(node_edge.node).__name__, node_edge.output_nr, w.grad
    by_tensor, by_edge, *_, w_grad = like_torch(program)
    assert_same(by_edge, by_tensor)
    assert (w_grad.numpy() == 4).all()
