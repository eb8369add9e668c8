"""torch's expectations of detach, reentrant backward, ctx lifetime and small graph stories."""
import gc


import gradkit

from .functions import failing_function, identity_function
from .twin import data, leaf, like_torch, raises_like_torch


def _stash_ctx_then_drop_the_graph(lib, retain_graph: bool):
    """Back through a Function whose backward stashes its ctx; drop the graph; the saved."""
    stash = []

    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            stash.append(ctx)
            return ctx.saved_tensors

    loss = Identity.apply(lib.zeros(1, dtype=lib.float64, requires_grad=True))
    loss.backward(retain_graph=retain_graph)
    del loss
    gc.collect()
    return stash[0].saved_tensors


def test_ctx_stashed_past_its_graph_still_gives_its_saved_tensors():
    # torch: test_naughty_autograd_function_stashing_ctx (torch 2.x: the ctx keeps them alive;
    # the old test expected an error)
    assert len(like_torch(lambda lib: _stash_ctx_then_drop_the_graph(lib, True))) == 1


def test_ctx_stashed_past_a_freed_graph_refuses_its_saved_tensors():
    # the same without retain_graph: torch's freed-graph error, never a silent empty tuple
    raises_like_torch(lambda lib: _stash_ctx_then_drop_the_graph(lib, False), RuntimeError,
                      "Trying to backward through the graph a second time")


def test_repeated_double_backward_of_custom_function_agrees():
    # torch: test_custom_autograd_repeated_grad_grad
    def program(lib):
        class Prod(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.prod(dim=-1).prod(dim=-1)
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return (g * y)[:, None, None] / x

        results = []
        for fn in (lambda x: x.prod(dim=-1).prod(dim=-1), Prod.apply):
            x = leaf(lib, 2, 3, 3, positive=True)
            y = fn(x)
            pair = []
            for _ in range(2):
                gy, = lib.autograd.grad(y[0], x, create_graph=True)
                pair.append(lib.autograd.grad(gy[0, 0, 0], x, retain_graph=True)[0])
            results.append(pair)
        return results

    (a1, a2), (b1, b2) = like_torch(program)
    assert (a1.numpy() == a2.numpy()).all() and (b1.numpy() == b2.numpy()).all()


def test_custom_function_saving_its_output_supports_grad_after_create_graph():
    # torch: test_custom_autograd_no_early_free
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x ** 2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * 2 * y / x

        x = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        checks = (lib.autograd.gradcheck(Square.apply, x),
                  lib.autograd.gradgradcheck(Square.apply, x))
        y = Square.apply(x)
        lib.autograd.grad(y, x, create_graph=True)
        return checks, lib.autograd.grad(y, x)

    checks, (g,) = like_torch(program)
    assert checks == (True, True) and float(g) == 4.0


def test_detach_cuts_the_graph_and_detach_in_place_too():
    # torch: test_detach
    def program(lib):
        x = leaf(lib, 4, 4)
        y = (x + 2).detach()
        z = y * 4 + 2
        flags = [y.requires_grad, z.requires_grad, y.grad_fn]
        (x + (x * 2).detach()).sum().backward()
        first = x.grad
        x, y = leaf(lib, 4, 4), leaf(lib, 4, 4, seed=1)
        a = x * 2
        (y + a).sum().backward(retain_graph=True)
        a.detach_()
        flags.append(a.requires_grad)
        (y + a).sum().backward()
        return flags, first, x.grad, y.grad

    flags, first, x_grad, y_grad = like_torch(program)
    assert flags == [False, False, None, False]
    assert (first.numpy() == 1).all()
    assert (x_grad.numpy() == 2).all() and (y_grad.numpy() == 2).all()


def test_detach_in_place_on_a_view_is_an_error():
    # torch: test_detach (the view part)
    raises_like_torch(lambda lib: leaf(lib, 4, 4)[1:3].detach_(), RuntimeError, "view")


def test_detaching_the_base_leaves_its_view_tracked():
    # torch: test_detach_base
    def program(lib):
        x = leaf(lib, 4, 4)
        view = x[1:3]
        x.detach_()
        return x.requires_grad, view.requires_grad, view.grad_fn is not None, view._base is x

    assert like_torch(program) == (False, True, True, True)


def test_integer_branch_of_the_graph_is_isolated():
    # torch: test_isolated_node
    def program(lib):
        x, y = leaf(lib, 5, 5), leaf(lib, 5, 5, seed=1)
        a = x + y
        b = lib.max(a, 1, True)[1].repeat(1, 5).double()
        (b + a).sum().backward()
        return x.grad, y.grad

    like_torch(program)


def test_function_returning_its_input_as_output_hooks_see_only_its_use():
    # torch: test_return_leaf
    def program(lib):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga + gb, gb

        x, y = leaf(lib, 5, 5), leaf(lib, 5, 5, seed=1)
        q, p = Identity.apply(x, y)
        seen = []
        q.register_hook(seen.append)
        (q + p + x).sum().backward()
        return seen, x.grad, y.grad

    seen, x_grad, y_grad = like_torch(program)
    assert len(seen) == 1 and (seen[0].numpy() == 1).all() and (x_grad.numpy() == 3).all()


def add_in_place_function(base):
    """torch's test_return_leaf_inplace Function over ``base``: writes b into a (dirty) and
    returns (a, b + 2)."""
    class AddInPlace(base):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            return a.add_(b), b + 2

        @staticmethod
        def backward(ctx, ga, gb):
            return ga, ga + gb

    return AddInPlace


def test_dirty_input_that_does_not_require_grad_becomes_tracked():
    # torch: test_return_leaf_inplace
    def program(lib):
        x, y = leaf(lib, 5, 5, requires_grad=False), leaf(lib, 5, 5, seed=1)
        q, p = add_in_place_function(lib.autograd.Function).apply(x, y)
        q.sum().backward()
        return q is x, q.requires_grad, y.grad

    same, requires, _ = like_torch(program)
    assert same and requires


def test_assigning_tracked_rows_into_a_constant():
    # torch: test_leaf_assignment
    def program(lib):
        x = leaf(lib, 5, 5, requires_grad=False)
        y, z = leaf(lib, 5, seed=1), leaf(lib, 5, seed=2)
        x[0] = y
        x[1] = 2 * z
        tracked = x.requires_grad, x.grad_fn is not None
        x.sum().backward()
        return tracked, y.grad, z.grad

    assert like_torch(program)[0] == (True, True)


def test_assignment_under_no_grad_keeps_the_leaf_a_leaf():
    # torch: test_no_grad_assignment
    def program(lib):
        x = leaf(lib, 5, 5)
        with lib.no_grad():
            x[0] = lib.tensor(data(5, seed=1), dtype=lib.float64)
        return x.requires_grad, x.grad_fn

    assert like_torch(program) == (True, None)


def test_in_place_under_no_grad_still_bumps_the_version():
    # torch: test_no_grad_modifies_version
    def program(lib):
        x, y = leaf(lib, 5), leaf(lib, 5, seed=1)
        z = (x * y).sum()
        with lib.no_grad():
            x *= 2
        z.backward()

    raises_like_torch(program, RuntimeError, "modified by an inplace operation")


def test_function_under_no_grad_keeps_its_input_tracked():
    # torch: test_no_grad_input
    def program(lib):
        Identity = identity_function(lib)

        x = leaf(lib, 5)
        with lib.no_grad():
            y = Identity.apply(x)
        return x.requires_grad, y.grad_fn

    assert like_torch(program) == (True, None)


def test_a_gradient_buffered_in_three_places_is_not_summed_in_place():
    # torch: test_backward_copy
    def program(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        y = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        a, b, c = x + 2, y + 2, x + 2
        add2 = a + b + c
        for _ in range(4):
            a, b, c = a * 2, b * 2, c * 2
        (add2 + (a + b + c)).backward(lib.ones(5, 5, dtype=lib.float64))
        return x.grad, y.grad

    x_grad, y_grad = like_torch(program)
    assert (x_grad.numpy() == 34).all() and (y_grad.numpy() == 17).all()


def test_save_for_backward_accepts_none():
    # torch: test_save_none_for_backward
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(None, x, None)
                return x * x

            @staticmethod
            def backward(ctx, g):
                n1, x, n2 = ctx.saved_tensors
                assert n1 is None and n2 is None
                return 2 * x * g

        x = leaf(lib, 5, 5)
        Square.apply(x).sum().backward()
        return x.grad

    like_torch(program)


def test_extra_none_grads_from_backward_are_ignored():
    # torch: test_too_many_grads
    def program(lib):
        Identity = identity_function(lib, (None, None))

        x = leaf(lib, 5, 5)
        Identity.apply(x).sum().backward()
        return x.grad

    assert (like_torch(program).numpy() == 1).all()


def test_non_differentiable_output_feeding_another_function():
    # torch: test_dep_nograd
    def program(lib):
        class WithNoise(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                noise = lib.zeros(x.shape, dtype=lib.float64)
                ctx.mark_non_differentiable(noise)
                return x, noise

            @staticmethod
            def backward(ctx, g, ignored):
                return g

        class First(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, ignored):
                return x

            @staticmethod
            def backward(ctx, g):
                return g, None

        x = leaf(lib, 5)
        a, b = WithNoise.apply(x)
        b = b + 1
        flags = a.requires_grad, b.requires_grad
        c = First.apply(a, b)
        c.backward(lib.ones(5, dtype=lib.float64))
        return flags, x.grad

    flags, x_grad = like_torch(program)
    assert flags == (True, False) and (x_grad.numpy() == 1).all()


def test_backward_inside_a_function_backward():
    # torch: test_simple_reentrant
    def program(lib):
        y_data = data(2, 2, seed=1)

        class Reenter(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with lib.enable_grad():
                    ctx.x = x.detach().requires_grad_(True)
                    ctx.y = lib.tensor(y_data, dtype=lib.float64, requires_grad=True)
                    ctx.out = ctx.x * ctx.y
                return ctx.out.detach()

            @staticmethod
            def backward(ctx, g):
                with lib.enable_grad():
                    ctx.out.sum().backward()
                return ctx.x.grad * g

        x = leaf(lib, 2, 2)
        Reenter.apply(x).sum().backward()
        return x.grad

    assert (like_torch(program).numpy() == data(2, 2, seed=1)).all()


def test_error_in_a_reentrant_child_backward_reaches_the_caller():
    # torch: test_reentrant_child_error
    def program(lib):
        Fails = failing_function(lib)
        b = leaf(lib, 3, 3, seed=1)
        child_root = Fails.apply(b * b).sum()

        class Reentrant(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                child_root.backward()
                return g

        a = leaf(lib, 3, 3)
        Reentrant.apply(a * a).sum().backward()

    raises_like_torch(program, RuntimeError, "Simulate error")


def test_unreferenced_cycle_holding_an_intermediate_does_not_break_backward():
    # torch: test_variable_traverse
    def make():
        inp = gradkit.randn(10, requires_grad=True)
        tmp = inp.view(10, 1)
        cycle = [tmp]
        cycle.append(cycle)
        return tmp.view(10)

    out = make()
    gc.collect()
    out.backward(gradkit.randn(10))
