"""torch's expectations of custom Function outputs: non-differentiable, duplicated, dirty."""
from .functions import add_one_in_place
from .twin import leaf, like_torch, raises_like_torch

def test_mark_non_differentiable_output():
    # torch: test_mark_non_differentiable
    def program(lib):
        class Positive(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x > 0
                ctx.mark_non_differentiable(out)
                return out

            @staticmethod
            def backward(ctx, g):
                return (g * 0).to(lib.float64)

        x = leaf(lib, 5, 5)
        mask = Positive.apply(x)
        x.masked_fill(mask, 0).sum().backward()
        return mask.requires_grad, x.grad

    assert like_torch(program)[0] is False


def test_mark_non_differentiable_mixed_outputs_get_zero_grad():
    # torch: test_mark_non_differentiable_mixed
    def program(lib):
        seen = []

        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x + 1, x + 2
                ctx.mark_non_differentiable(a)
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append((bool((ga == 0).all()), bool((gb == 1).all())))
                return gb

        x = leaf(lib, 5, 5)
        a, b = Mixed.apply(x)
        b.sum().backward()
        return a.requires_grad, b.requires_grad, seen, x.grad

    a_req, b_req, seen, grad = like_torch(program)
    assert (a_req, b_req, seen) == (False, True, [(True, True)])
    assert (grad == 1).all()


def test_mark_non_differentiable_with_backward_returning_none():
    # torch: test_mark_non_differentiable_none
    def program(lib):
        class Frozen(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.clone()
                ctx.mark_non_differentiable(out)
                return out

            @staticmethod
            def backward(ctx, g):
                return None

        x = leaf(lib, 5, 5)
        (Frozen.apply(x * x) * x).sum().backward()
        return x.grad

    like_torch(program)


def test_returning_the_same_tensor_twice():
    # torch: test_return_duplicate
    def program(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x * 2
                return out, out

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2

        def fn(x):
            a, b = Twice.apply(x)
            assert a is b
            return a + b

        x = leaf(lib, 5, 5)
        return lib.autograd.gradcheck(fn, [x]), lib.autograd.gradgradcheck(fn, [x])

    assert like_torch(program) == (True, True)


def test_returning_a_dirty_input_twice():
    # torch: test_return_duplicate_inplace
    def program(lib):
        class DoubleInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2

        def fn(x):
            a, b = DoubleInPlace.apply(x.clone())
            assert a is b
            return a + b

        x = leaf(lib, 5, 5)
        return lib.autograd.gradcheck(fn, [x]), lib.autograd.gradgradcheck(fn, [x])

    assert like_torch(program) == (True, True)


def test_mark_dirty_on_a_leaf_that_requires_grad_is_an_error():
    # torch: test_return_duplicate_inplace (the InplaceFunction-on-leaf part)
    def program(lib):
        add_one_in_place(lib).apply(leaf(lib, 3))

    raises_like_torch(program, RuntimeError, "a leaf Variable that requires grad")
