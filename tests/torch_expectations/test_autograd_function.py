"""torch's expectations of custom autograd.Function (test_autograd.py), checked on gradkit."""
import pytest

import gradkit

from .functions import failing_function, identity_function, no_grad_function
from .twin import leaf, like_torch, raises_like_torch


def _x_plus_scalar_y_plus_xy(lib):
    """x + s*y + x*y, with a hand-written backward that is itself differentiable."""

    class XPlusScalarY(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scalar, y):
            ctx.scalar = scalar
            ctx.save_for_backward(x, y)
            return x + scalar * y + x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g + g * y, None, g * ctx.scalar + g * x

    return XPlusScalarY


def test_function_backward_with_create_graph_gives_differentiable_grads():
    # torch: test_function
    def program(lib):
        x, y = leaf(lib, 3, 3), leaf(lib, 3, 3, seed=1)
        out = _x_plus_scalar_y_plus_xy(lib).apply(x, 2, y)
        out.sum().backward(lib.ones((), dtype=lib.float64, requires_grad=True), create_graph=True)
        return x.grad, y.grad, x.grad.grad_fn is not None, y.grad.grad_fn is not None

    gx, gy, x_has_fn, y_has_fn = like_torch(program)
    assert x_has_fn and y_has_fn


def test_once_differentiable_runs_backward_without_grad_and_errors_on_double_backward():
    # torch: test_once_differentiable
    def program(lib):
        seen = []

        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scalar, y):
                ctx.save_for_backward(x, y)
                return x + scalar * y + x * y

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                seen.append(lib.is_grad_enabled())
                x, y = ctx.saved_tensors
                return g + g * y, None, 2 * g + g * x

        x, y = leaf(lib, 2, 2), leaf(lib, 2, 2, seed=1)
        seed = lib.ones((), dtype=lib.float64, requires_grad=True)
        Fn.apply(x, 2, y).sum().backward(seed, create_graph=True)
        # the grads have a graph, but differentiating through it is an error
        assert x.grad.requires_grad
        try:
            x.grad.sum().backward()
        except RuntimeError as e:
            error = "trying to differentiate twice" in str(e)
        return seen, x.grad, y.grad, error

    seen, *_ , error = like_torch(program)
    assert seen == [False] and error


@pytest.mark.parametrize("shape", [(1,), ()])
def test_function_returning_its_input_unchanged(shape):
    # torch: test_function_returns_input
    def program(lib):
        Identity = identity_function(lib, scale=2)

        v = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        Identity.apply(v).backward()
        first = v.grad.clone()
        v.grad = None
        Identity.apply(v.clone()).backward()
        return first, v.grad

    first, second = like_torch(program)
    assert (first == 2).all() and (second == 2).all()


def test_backward_returning_none_leaves_grad_undefined():
    # torch: test_function_returns_undefined_tensor
    def program(lib):
        NoGrad = no_grad_function(lib)  # noqa: N806 - a class
        x = lib.ones(1, dtype=lib.float64, requires_grad=True)
        NoGrad.apply(x).backward()
        NoGrad.apply(x ** 2).backward()
        NoGrad.apply(x).sum().backward()
        unused, = lib.autograd.grad(NoGrad.apply(x), x, allow_unused=True)
        return x.grad, unused

    assert like_torch(program) == (None, None)


def _two_outputs_one_unused(lib, materialize):
    """Backward of a two-output Function where only the first output is used."""
    received = []

    class Split(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 1, x * 1

        @staticmethod
        def backward(ctx, ga, gb):
            received.append(gb)
            return ga

    x = lib.ones(2, dtype=lib.float64, requires_grad=True)
    a, _ = Split.apply(x)
    a.sum().backward()
    return received[0]


def test_materialized_grad_of_unused_output_is_zeros():
    # torch: test_materialize_grads (our program: an unused output, not UndefinedGrad)
    got = like_torch(lambda lib: _two_outputs_one_unused(lib, True))
    assert (got.numpy() == 0).all()


def test_dont_materialize_grads_passes_none():
    # torch: test_dont_materialize_grads
    assert like_torch(lambda lib: _two_outputs_one_unused(lib, False)) is None


def test_error_raised_in_backward_propagates():
    # torch: test_custom_function_exception
    def program(lib):
        Fails = failing_function(lib)
        t1, t2 = leaf(lib, 3, 3), leaf(lib, 3, 3, seed=1)
        Fails.apply((t1 + t2) * (t1 + t2)).sum().backward()

    raises_like_torch(program, RuntimeError, "Simulate error on backward pass")


def test_backward_returning_wrong_shape_is_an_error():
    # torch: test_invalid_gradients
    def program(lib):
        class WrongShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return lib.zeros(10, dtype=lib.float64)

        WrongShape.apply(leaf(lib, 5, 5)).sum().backward()

    raises_like_torch(program, RuntimeError, "expected shape")


def test_needs_input_grad_and_none_grad_for_input_without_grad():
    # torch: test_hook_none
    def program(lib):
        flags, called = [], []

        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                flags.append(tuple(ctx.needs_input_grad))
                return x * 1, y * 1

            @staticmethod
            def backward(ctx, gx, gy):
                return gx, None

        x, y = leaf(lib, 5, 5), leaf(lib, 5, 5, seed=1, requires_grad=False)
        rx, ry = Pair.apply(x, y)
        rx.register_hook(lambda g: called.append(g is not None))
        (rx + ry).sum().backward()
        return flags, called, ry.requires_grad, x.grad

    flags, called, ry_requires_grad, _ = like_torch(program)
    assert ry_requires_grad  # every output of a Function tracks, even one made from y
    assert flags == [(True, False)] and called == [True]


def test_multi_output_function_saves_its_second_output():
    # torch: test_save_output_nr (output_nr is C++ internals; the saved output is not)
    def program(lib):
        class Halves(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:5] * 1, x[5:] * 1

            @staticmethod
            def backward(ctx, ga, gb):
                return lib.cat([ga, gb])

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, b):
                ctx.save_for_backward(b)
                return b * 2

            @staticmethod
            def backward(ctx, g):
                b, = ctx.saved_tensors
                return g * 2 + 0 * b

        x = leaf(lib, 10)
        _, b = Halves.apply(x)
        Double.apply(b).sum().backward()
        return x.grad

    like_torch(program)


def test_no_grad_function_output_does_not_require_grad():
    # torch: test_no_grad_python_function
    def program(lib):
        class PlusOne(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x + 1

            @staticmethod
            def backward(ctx, g):
                return g

        with lib.no_grad():
            y = PlusOne.apply(leaf(lib, 5, 5))
        return y.requires_grad, y.grad_fn is None

    assert like_torch(program) == (False, True)


def test_deep_chain_of_functions_is_freed_without_recursion():
    # torch: test_free_deep_graph_pyfunction
    class Add(gradkit.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    def scope():
        y = gradkit.randn(1, requires_grad=True).clone()
        for _ in range(30000):
            y = Add.apply(y, y)

    scope()  # dropping the chain must not overflow the C stack


def test_legacy_non_static_forward_is_rejected():
    # torch: test_legacy_function_deprecation_exception
    def program(lib):
        class Legacy(lib.autograd.Function):
            def forward(self, x):
                return x

            def backward(self, g):
                return g

        Legacy()(leaf(lib, 3))

    raises_like_torch(program, RuntimeError, "Legacy autograd function with non-static forward")
