"""torch's functorch tests of custom autograd.Functions under the transforms
(test/functorch/test_eager_transforms.py: TestAutogradFunction, and the values of
TestAutogradFunctionVmapAPI), re-checked on gradkit.func against torch 2.13."""
import pytest
from torch_expectations.functions import setup_context_function
from torch_expectations.twin import leaf, like_torch, plain, raises_like_torch


def test_set_materialize_grads_and_needs_input_grad_under_grad():
    # test_set_materialize_grads, test_needs_input_grads
    def program(lib):
        seen = []

        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x, y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.set_materialize_grads(False)

            @staticmethod
            def backward(ctx, gx, gy):
                seen.append((gx is None, gy is None))
                return gx, gy

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                return

            @staticmethod
            def backward(ctx, grad_output):
                seen.append(tuple(ctx.needs_input_grad))
                return None, None

        def f(y, x):
            x, y = Pair.apply(x, y)
            return x ** 2
        x, y = lib.tensor(2.0), lib.tensor(3.0)
        g = lib.func.grad
        return g(f)(y, x), g(g(f))(y, x), g(Mul.apply)(x, y), g(g(Mul.apply))(x, y), seen
    like_torch(program)


@pytest.mark.parametrize("mark_dirty", [True, False])
@pytest.mark.parametrize("save_tensors", ["input", "output", "neither"])
@pytest.mark.parametrize("save_for", ["jvp", "vjp"])
@pytest.mark.parametrize("inner_requires_grad", [True, False])
def test_function_returning_its_input(inner_requires_grad, save_for, save_tensors, mark_dirty):
    # test_function_returns_input: saving an input returned as-is is refused unless it is
    # marked dirty, under grad and jvp and outside them
    def make(lib):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                save = ctx.save_for_forward if save_for == "jvp" else ctx.save_for_backward
                if mark_dirty:
                    ctx.mark_dirty(inputs[0])
                if save_tensors != "neither":
                    save(inputs[0] if save_tensors == "input" else output)

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output

            @staticmethod
            def jvp(ctx, x_t):
                return x_t.add_(0) if mark_dirty else x_t.view_as(x_t)
        return Identity

    def scalar(lib):
        return lib.tensor(2.0, requires_grad=inner_requires_grad)

    def under_grad(lib):
        return lib.func.grad(lambda x: make(lib).apply(x.clone()))(scalar(lib))

    def under_jvp(lib):
        return lib.func.jvp(lambda x: make(lib).apply(x.clone()), (scalar(lib),),
                            (scalar(lib),))

    def outside(lib):
        a = scalar(lib).clone()
        b = make(lib).apply(a)
        return b is a if mark_dirty else b
    refused = save_tensors != "neither" and not mark_dirty
    for program in (under_grad, under_jvp, outside):
        if refused:
            raises_like_torch(program, RuntimeError, "An input that has been returned as-is")
        else:
            like_torch(program)


def test_once_differentiable_backward_is_refused_a_second_time():
    # test_once_differentiable_autograd_vjp (test_once_differentiable_grad_vjp is an
    # expected failure in torch itself)
    def program(lib):
        class NumpyCube(lib.autograd.Function):
            @staticmethod
            def forward(x):
                x_np = x.numpy()
                return lib.tensor(x_np ** 3), x_np

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.x_np = output[1]

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, grad_output, grad_saved):
                return lib.tensor(3 * ctx.x_np ** 2) * grad_output

        x = leaf(lib)
        _, vjp_fn = lib.func.vjp(lambda t: NumpyCube.apply(t)[0], x)
        (gx,) = vjp_fn(lib.randn_like(x, requires_grad=True))
        gx.backward()
    raises_like_torch(program, RuntimeError, "marked with @once_differentiable")


def test_a_function_s_node_name_under_grad():
    # test_grad_fn_name
    def program(lib):
        names = []

        FooBar = setup_context_function(lib, "FooBar", forward=lambda x: x.clone(),
                                        backward=lambda ctx, grad_output: grad_output)

        def f(x):
            y = FooBar.apply(x)
            names.extend([type(y.grad_fn).__name__, y.grad_fn.name()])
            return y
        lib.func.grad(f)(lib.tensor(1.0))
        f(leaf(lib))
        return names
    assert like_torch(program) == ["FooBarGeneratedBackward"] * 2 + ["FooBarBackward"] * 2


def test_functions_with_a_vmap_rule_give_the_same_values():
    # test_skips_empty_layer, test_none_returns (gradkit runs forward per sample; the rule's
    # own results are not compared)
    def program(lib):
        class Zeros(lib.autograd.Function):
            @staticmethod
            def forward(x):
                r = lib.zeros(x.shape, dtype=x.dtype)
                return r, r

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def vmap(info, in_dims, x):
                r = lib.zeros(x.shape[1:], dtype=x.dtype)
                return (r, r), None

        def vmap_not_called(info, in_dims, x):
            raise RuntimeError("expected to not be called")
        Id = setup_context_function(lib, "Id", forward=lambda x: x, vmap=vmap_not_called)

        def f(x):
            Id.apply(lib.tensor(1.0))
            return x * 1
        return lib.func.vmap(Zeros.apply)(plain(lib, 2, 3)), lib.func.vmap(f)(plain(lib, 2, 3))
    like_torch(program)


def test_a_function_s_errors_under_grad_name_its_generated_node():
    # test_grad_fn_name: torch's messages name the generated node too
    def program(lib):
        TwoGrads = setup_context_function(
            lib, "TwoGrads", forward=lambda x: x.clone(),
            backward=lambda ctx, grad_output: (grad_output, grad_output))
        lib.func.grad(TwoGrads.apply)(lib.tensor(1.0))
    raises_like_torch(program, RuntimeError, "function TwoGradsGeneratedBackward returned an "
                      r"incorrect number of gradients \(expected 1, got 2\)")
