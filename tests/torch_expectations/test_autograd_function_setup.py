"""torch's expectations of Function.setup_context, non-tensor arguments, and small leftovers."""
import pytest

from .twin import data, leaf, like_torch, raises_like_torch


def test_setup_context_saves_for_backward():
    # torch: test_custom_function_setup_context_simple
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, = inputs
                ctx.save_for_backward(x)

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 2 * x

        x = leaf(lib)
        return lib.autograd.grad(Square.apply(x), x)

    (gx,) = like_torch(program)
    assert abs(float(gx) - 2 * float(data())) < 1e-12


def test_setup_context_sees_non_tensor_outputs():
    # torch: test_custom_function_setup_context_multi_output
    def program(lib):
        class SquareAndTwice(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 2, x.item() * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.two_x = output[1]

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g, _):
                return g * ctx.two_x

        x = leaf(lib)
        y, two_x = SquareAndTwice.apply(x)
        return lib.autograd.grad(y, x), two_x

    like_torch(program)


@pytest.mark.parametrize("shape,new_shape,scale_fwd,scale_bwd", [((24,), (3, 8), 7, 11),
                                                                  ((2, 3, 4), (6, 4), -1, 2)])
def test_setup_context_with_non_tensor_inputs_matches_the_ctx_forward(shape, new_shape,
                                                                       scale_fwd, scale_bwd):
    # torch: test_custom_function_setup_context_multi_input
    def program(lib):
        class Reshape(lib.autograd.Function):
            @staticmethod
            def forward(x, shape, scale_forward, scale_backward):
                return x.reshape(shape) * scale_forward

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, _, _, scale_backward = inputs
                ctx.scale_backward, ctx.x_shape = scale_backward, x.shape

            @staticmethod
            def backward(ctx, g):
                return g.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        class ReshapeRef(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, shape, scale_forward, scale_backward):
                ctx.scale_backward, ctx.x_shape = scale_backward, x.shape
                return x.reshape(shape) * scale_forward

            @staticmethod
            def backward(ctx, g):
                return g.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        x = leaf(lib, *shape)
        results = []
        for fn in (Reshape, ReshapeRef):
            y = fn.apply(x, new_shape, scale_fwd, scale_bwd).sum()
            results.append((y, lib.autograd.grad(y, x)))
        return results

    (y, g), (y_ref, g_ref) = like_torch(program)
    assert float(y) == float(y_ref) and (g[0].numpy() == g_ref[0].numpy()).all()


def _mixed_outputs(lib):
    class Mixed(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = (t1 + t2 * t3) * scale
            t5 = (t1 * t2 + t3) * scale
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, *grads):
            assert len(grads) == 7 and grads[0] is None and grads[2] is None
            assert grads[3] is None and grads[5] is None
            s = ctx.scale
            t1, t2, t3 = ctx.saved_tensors
            return (grads[1] * s + grads[4] * t2 * s + grads[6],
                    grads[1] * t3 * s + grads[4] * t1 * s, None,
                    grads[1] * t2 * s + grads[4] * s)

    return Mixed


def test_function_with_non_tensor_inputs_and_outputs():
    # torch: test_custom_function_non_tensor_inputs_outputs
    def program(lib):
        t1, t2 = leaf(lib, 10), leaf(lib, 10, seed=1)
        t3 = leaf(lib, 10, seed=2, requires_grad=False)
        res = _mixed_outputs(lib).apply(t1, t2, 3, t3)
        lib.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])

        def fn(a, b, c):
            out = _mixed_outputs(lib).apply(a, b, 3, c)
            return out[1], out[4], out[6]

        return (res[0], res[2], res[3], res[5], t1.grad, t2.grad, t3.grad,
                lib.autograd.gradcheck(fn, (t1, t2, t3)))

    result = like_torch(program)
    assert result[:4] == (3, None, True, "bar") and result[6] is None and result[7] is True


def test_function_without_any_tensor():
    # torch: test_custom_function_no_tensors
    def program(lib):
        class Plain(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                return scale, (t1 + t2 * t3) * scale, None, True, (t1 * t2 + t3) * scale, "bar", t1

            @staticmethod
            def backward(ctx, *grads):
                return grads[0], grads[1], None, grads[2]

        return Plain.apply(0.5, 0.25, 4, 2.0)

    assert like_torch(program) == (4, 4.0, None, True, 8.5, "bar", 0.5)


def test_gradcheck_with_an_unrelated_input():
    # torch: test_unrelated_inputs
    def program(lib):
        x, y = leaf(lib, 10), leaf(lib, 10, seed=1)
        return (lib.autograd.gradcheck(lambda a, b: a * a, (x, y)),
                lib.autograd.gradgradcheck(lambda a, b: a * a, (x, y)))

    assert like_torch(program) == (True, True)


@pytest.mark.parametrize("reduce", ["min", "max"])
def test_full_min_max_share_the_gradient_among_ties(reduce):
    # torch: test_min_max_median_backprops_to_all_values (min, max)
    def program(lib):
        x = lib.tensor([1., 0., 1., 0., 1., 0.], dtype=lib.float64, requires_grad=True)
        getattr(lib, reduce)(x).backward()
        return x.grad

    grad = like_torch(program)
    assert float(grad.sum()) == 1.0 and int((grad.numpy() == 1 / 3).sum()) == 3


@pytest.mark.parametrize("how", ["requires_grad_", "attribute", "constructor"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_only_floating_tensors_can_require_grad(how, dtype):
    # torch: test_set_requires_grad_only_for_floats
    def program(lib):
        dt = getattr(lib, dtype)
        if how == "constructor":
            lib.ones(1, dtype=dt, requires_grad=True)
        a = lib.ones(1, dtype=dt)
        a.requires_grad = False  # always allowed
        a.requires_grad_(False)
        if how == "requires_grad_":
            a.requires_grad_()
        else:
            a.requires_grad = True

    raises_like_torch(program, RuntimeError, "floating point")


def test_deep_chain_with_skip_connections_is_freed():
    # torch: test_free_deep_graph_complicated (depth reduced)
    def program(lib):
        y = leaf(lib, 1).clone()
        previous = [None, None]
        for i in range(20000):
            earlier = [t for t in previous[:-1] if t is not None]
            previous = previous[1:] + [y]
            y = y + y * 0.000001
            if len(earlier) == 1 and i % 2:
                y = y + lib.cat(earlier).sum()
        return True

    assert like_torch(program) is True
