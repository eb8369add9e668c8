"""torch's expectations of views returned by ops and custom Functions, and in-place on them."""
import gc
import math

import pytest

import gradkit

from .functions import adder_and_sum
from .twin import leaf, like_torch, raises_like_torch, torch

MULTI_VIEW = "is a view and is being modified inplace. This view is the output of a function " \
             "that returns multiple views."
NO_GRAD_VIEW = "A view was created in no_grad mode and is being modified inplace"


@pytest.mark.parametrize("grad_mode,requires_grad", [(True, False), (False, False)])
def test_in_place_on_view_as_and_unbind_outputs_allowed(grad_mode, requires_grad):
    # torch: test_autograd_views_codegen (the cases that do not raise)
    def program(lib):
        flags = []
        for make in (lambda t: (t.view_as(t),), lambda t: t.unbind()):
            inp = leaf(lib, 2, requires_grad=requires_grad).clone()
            with lib.set_grad_enabled(grad_mode):
                outs = make(inp)
            flags.append([o._is_view() for o in outs])
            for o in outs:
                o.add_(1)
        return flags

    assert like_torch(program) == [[True], [True, True]]


def test_in_place_on_an_unbind_output_is_an_error():
    # torch: test_autograd_views_codegen (grad mode on, requires grad)
    def program(lib):
        inp = leaf(lib, 2).clone()
        inp.view_as(inp).add_(1)  # a single view: fine
        inp.unbind()[1].add_(1)

    # torch's own test says UnbindBackward0; torch 2.13 (the judge) names the op: Unbind
    raises_like_torch(program, RuntimeError, "Output 1 of Unbind " + MULTI_VIEW)


@pytest.mark.parametrize("make", ["view_as", "unbind"])
def test_in_place_on_a_no_grad_view_of_a_tracked_tensor_is_an_error(make):
    # torch: test_autograd_views_codegen (grad mode off, requires grad)
    def program(lib):
        inp = leaf(lib, 2).clone()
        with lib.no_grad():
            out = inp.view_as(inp) if make == "view_as" else inp.unbind()[0]
        out.add_(1)

    raises_like_torch(program, RuntimeError, NO_GRAD_VIEW)


def test_in_place_on_a_view_output_of_a_one_output_function_is_an_error():
    # torch: test_autograd_simple_views_python / IN_CUSTOM_FUNCTION (one output, a view)
    def program(lib):
        _alias(lib).apply(leaf(lib, 2).clone()).add_(1)

    raises_like_torch(program, RuntimeError, "Output 0 of Alias is a view and is being modified "
                      "inplace. This view was created inside a custom Function")


def _two_output(lib, make_view):
    class IdTwoOutput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a = a[0:2] if make_view else a.clone()
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, gab

    return IdTwoOutput


def test_in_place_on_a_view_output_of_a_two_output_function_is_an_error():
    # torch: test_autograd_simple_views_python (two_output, inplace, view)
    def program(lib):
        a, b = leaf(lib, 2), leaf(lib, 2, seed=1)
        tmp1, _ = _two_output(lib, True).apply(a.clone(), b.clone())
        tmp1 += 3

    raises_like_torch(program, RuntimeError, "Output 0 of IdTwoOutput " + MULTI_VIEW)


@pytest.mark.parametrize("make_view", [False, True])
def test_two_output_function_gradients_out_of_place(make_view):
    # torch: test_autograd_simple_views_python (two_output, not inplace)
    def program(lib):
        fn = _two_output(lib, make_view)

        def f(a, b):
            t1, t2 = fn.apply(a.clone(), b.clone())
            return ((t1 + 3) * (t2 + 3)).sum()

        return lib.autograd.gradcheck(f, (leaf(lib, 2), leaf(lib, 2, seed=1)))

    assert like_torch(program) is True


def _adder(lib, counter):
    class AddInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            counter.append(1)
            return g, g

    return AddInPlace


def test_dirty_input_function_backward_runs_once_in_each_setting():
    # torch: test_autograd_inplace_views_python (I: single output)
    def program(lib):
        counts = []
        for variant in ("plain", "extra in-place", "input is a view"):
            calls = []
            a, b = leaf(lib, 2), leaf(lib, 2, seed=1)
            first = a.clone().view_as(a) if variant == "input is a view" else a.clone()
            c = _adder(lib, calls).apply(first, b)
            if variant == "extra in-place":
                c += 2
            c.sum().backward()
            counts.append(len(calls))
        return counts

    assert like_torch(program) == [1, 1, 1]


def test_two_output_dirty_function_on_a_view_input_is_an_error():
    # torch: test_autograd_inplace_views_python (II: multiple outputs, input is a view)
    def program(lib):
        AddTwo = adder_and_sum(lib, [])  # noqa: N806 - a class

        a, b = leaf(lib, 2), leaf(lib, 2, seed=1)
        AddTwo.apply(a.clone().view_as(a), b)

    raises_like_torch(program, RuntimeError,
                      "your Function modifies inplace an input that is a view of another Tensor")


def test_dirty_input_not_returned_is_an_error():
    # torch: test_autograd_inplace_views_python (III: inplace + other op)
    def program(lib):
        class CloneAfterAdd(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a.clone(), a + b

            @staticmethod
            def backward(ctx, ga, gab):
                return ga + gab, ga + 2 * gab

        a, b = leaf(lib, 2), leaf(lib, 2, seed=1)
        CloneAfterAdd.apply(a.clone().view_as(a), b)

    raises_like_torch(program, RuntimeError, "Some elements marked as dirty during the forward "
                      "method were not returned as output.")


def test_function_returning_a_view_under_no_grad_acts_like_the_op():
    # torch: test_custom_function_return_view_in_nograd
    def program(lib):
        inp = leaf(lib, 2)
        with lib.no_grad():
            out, expected = _alias(lib).apply(inp), inp[:]
        return out.requires_grad, expected.requires_grad

    # A deliberate difference (docs/autograd.md, "Some views refuse in-place writes"): torch
    # says True for both, yet gradients through such a view silently go nowhere; gradkit says
    # False, so a backward through it raises. The Function still acts like the op.
    assert program(gradkit) == (False, False)
    if torch is not None:
        assert program(torch) == (True, True)

    def in_place(lib):
        inp = leaf(lib, 2)
        with lib.no_grad():
            out = _alias(lib).apply(inp)
        out.zero_()

    raises_like_torch(in_place, RuntimeError, NO_GRAD_VIEW)


def _alias(lib):
    class Alias(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:]

        @staticmethod
        def backward(ctx, g):
            return g

    return Alias


def test_grad_mode_inside_backward_follows_create_graph_and_is_restored():
    # torch: test_grad_mode_restored_reentrant
    def program(lib):
        seen = []

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                original = lib.is_grad_enabled()
                with lib.enable_grad():
                    foo = leaf(lib, *g.shape, seed=3)
                    grad, = lib.autograd.grad(foo ** 3, foo, grad_outputs=g)
                seen.append((original, lib.is_grad_enabled() == original))
                return grad

        inp = leaf(lib, 3)
        Cube.apply(inp).sum().backward()
        Cube.apply(inp).sum().backward(create_graph=True)
        return seen

    assert like_torch(program) == [(False, True), (True, True)]


@pytest.mark.parametrize("base", ["tensor", "scalar"])
def test_zero_to_a_tracked_power(base):
    # torch: test_power_function
    def program(lib):
        b = lib.tensor([-1., 0., 1.], dtype=lib.float64, requires_grad=True)
        a = lib.tensor([0., 0., 0.], dtype=lib.float64) if base == "tensor" else 0
        lib.sum(a ** b).backward()
        return b.grad

    grad = like_torch(program)
    assert grad.tolist() == [-math.inf, 0.0, 0.0]


def test_custom_function_without_forward_or_backward():
    # torch: test_custom_function_error
    def no_forward(lib):
        class BadFw(lib.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                return g

        BadFw.apply(leaf(lib, 1))

    def no_backward(lib):
        class BadBw(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

        BadBw.apply(leaf(lib, 1)).sum().backward()

    raises_like_torch(no_forward, NotImplementedError, "must implement the forward")
    raises_like_torch(no_backward, NotImplementedError, "must implement either the backward")


@pytest.mark.parametrize("in_place", [False, True])
def test_function_node_name_survives_a_local_in_place_view(in_place):
    # torch: test_custom_function_local_inplace
    def program(lib):
        class MyFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                view = x.clone()[:3]
                if in_place:
                    view += 2
                return view

            @staticmethod
            def backward(ctx, g):
                return g

        return MyFn.apply(leaf(lib, 10)).grad_fn.name()

    assert like_torch(program) == "MyFnBackward"


def test_index_outputs_are_integers_without_grad():
    # torch: test_integer_outputs (argmax, argmin)
    def program(lib):
        inp = leaf(lib, 4)
        return [(o.dtype.is_floating_point, o.requires_grad)
                for o in (inp.argmax(), inp.argmin())]

    assert like_torch(program) == [(False, False)] * 2


def test_in_place_relu_on_a_view_frees_the_graph():
    # torch: test_inplace_view_saved_output
    def program(lib):
        dealloc = []

        class OnDelete:
            def __call__(self, *args):
                return None

            def __del__(self):
                dealloc.append(1)

        def run():
            copy = leaf(lib, 3, 3).clone()
            copy.grad_fn.register_hook(OnDelete())
            lib.nn.functional.relu(copy.view(9), inplace=True)

        run()
        gc.collect()
        return len(dealloc)

    assert like_torch(program) == 1


def test_in_place_relu_on_a_view_of_a_temporary_keeps_its_grad_fn():
    # torch: test_inplace_view_weak_grad_fn
    def program(lib):
        a = lib.arange(10.0, dtype=lib.float64, requires_grad=True)
        b = a[0:2].clone().view(-1)
        b.relu_()
        c = b.clone()
        del b
        gc.collect()
        s = c.sum()
        s.backward()
        return s, a.grad

    assert float(like_torch(program)[0]) == 1.0

    def view_of_leaf(lib):  # torch 2.x refuses at relu_ (the old test expected it at backward)
        leaf(lib, 10)[0:10].relu_()

    raises_like_torch(view_of_leaf, RuntimeError, "a view of a leaf Variable that requires grad")


def test_real_and_imag_gradients_of_a_complex_leaf():
    # torch: TestAutogradComplex.test_real, test_imag (torch 2.x: the imag grad is +1j)
    def program(lib):
        x = lib.tensor(leaf(lib, 3, 4, requires_grad=False).numpy() * (1 + 2j),
                       dtype=lib.complex128, requires_grad=True)
        x.real.sum().backward()
        real_grad = x.grad.clone()
        x.grad = None
        x.imag.sum().backward()
        return real_grad, x.grad

    real_grad, imag_grad = like_torch(program)
    assert (real_grad.numpy() == 1).all() and (imag_grad.numpy() == 1j).all()


def test_sum_with_dtype_returns_grad_in_the_input_dtype():
    # torch: test_nansum_dtype (with sum), test_reduce_dtype
    def program(lib):
        a = leaf(lib, 2, 2).to(lib.float32).detach().requires_grad_(True)
        b = lib.sum(a, dtype=lib.float64)
        b.backward()
        return str(b.dtype).split(".")[-1], str(a.grad.dtype).split(".")[-1]

    assert like_torch(program) == ("float64", "float32")
