"""torch's expectations of graph nodes: Node isinstance, saved tensors read from a node."""

from .twin import leaf, like_torch, raises_like_torch


def _saving_function(lib, save):
    class MyFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if save:
                ctx.save_for_backward(x, None)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return MyFn


def test_function_node_exposes_saved_tensors_until_backward_frees_them():
    # torch: test_custom_function_saved_tensors (the public part)
    def program(lib):
        a = leaf(lib, 5)
        y = _saving_function(lib, True).apply(a)
        saved = y.grad_fn.saved_tensors
        unsaved = _saving_function(lib, False).apply(a).grad_fn.saved_tensors
        return saved[0] is a, saved[1], unsaved

    assert like_torch(program) == (True, None, ())

    def after_backward(lib):
        y = _saving_function(lib, True).apply(leaf(lib, 5))
        y.sum().backward()
        y.grad_fn.saved_tensors  # noqa: B018 - the access is what raises

    raises_like_torch(after_backward, RuntimeError, "after they have already been freed")


def test_saved_result_of_a_node_is_its_output():
    # torch: test_autograd_saved_variables... (_saved_result of tanh)
    def program(lib):
        out = lib.tanh(leaf(lib, 2))
        return out.grad_fn._saved_result, out

    saved, out = like_torch(program)
    assert (saved.detach().numpy() == out.detach().numpy()).all()


def test_every_grad_fn_is_a_graph_node():
    # torch: test_autograd_node_isinstance (the public part)
    def program(lib):
        node_type = lib.autograd.graph.Node
        a = leaf(lib, 3, 3)
        b = a.exp()
        out = _saving_function(lib, False).apply(a)
        return (isinstance(b.grad_fn, node_type),
                isinstance(b.grad_fn.next_functions[0][0], node_type),
                isinstance(out.grad_fn, node_type), isinstance(None, node_type),
                isinstance(1, node_type))

    assert like_torch(program) == (True, True, True, False, False)


def test_function_ctx_is_a_graph_node():
    # torch: test_autograd_node_isinstance (the ctx part)
    def program(lib):
        seen = []

        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(isinstance(ctx, lib.autograd.graph.Node))
                return x * 1

            @staticmethod
            def backward(ctx, g):
                seen.append(isinstance(ctx, lib.autograd.graph.Node))
                return g

        Func.apply(leaf(lib, 3)).sum().backward()
        return seen

    assert like_torch(program) == [True, True]
