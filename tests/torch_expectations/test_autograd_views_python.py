"""torch's expectations of views and custom Functions (the newer test file): reprs, views of
no_grad / inference views, a Function returning a view it made, and Functions writing their
inputs in place with one or two outputs."""
import warnings

import pytest

import gradkit

from .functions import adder_and_sum, identity_function, view_as_function
from .test_autograd_views_functions import _adder
from .twin import like_torch, raises_like_torch, torch


def test_repr_of_tracked_tensors():
    # torch: test_autograd_print_tensor
    def program(lib):
        a = lib.ones(1, requires_grad=True)
        before = [repr(a), repr(a.clone())]
        with lib.no_grad():
            b = a[:]
            b *= 2

        # b: a view made under no_grad of a tensor that requires grad, written in place: its
        # grad_fn can't be read, so both print grad_fn=<Invalid>
        reprs = [*before, repr(identity_function(lib).apply(a))]
        return [r.replace(lib.__name__ + ".", "") for r in reprs], repr(b)

    reprs = program(gradkit)[0]
    if torch is not None:
        assert program(torch) == (reprs, "tensor([2.], grad_fn=<Invalid>)")
    assert reprs == ["tensor([1.], requires_grad=True)", "tensor([1.], grad_fn=<CloneBackward0>)",
                     "tensor([2.], grad_fn=<IdentityBackward>)"]
    assert program(gradkit)[1] == "tensor([2.], grad_fn=<Invalid>)"


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_in_place_on_a_view_of_a_view_made_without_grad(mode):
    # torch: test_autograd_inplace_view_of_view
    def program(lib):
        x = lib.zeros(2)
        with getattr(lib, mode)():
            y = x.view(2)
        y.requires_grad_(True)
        z = y.view(2)
        z /= 2

    raises_like_torch(program, RuntimeError,
                      f"a view of a view .* is being .* inside the {mode}")


def test_function_returning_a_view_it_made_of_its_input():
    # torch: test_autograd_multiple_views_python
    def program(lib):
        calls = []

        class SelectRow(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, idx):
                a.narrow(0, idx, 1)
                ctx.save_for_backward(a)
                ctx.idx = idx
                return a.select(0, idx)

            @staticmethod
            def backward(ctx, g):
                calls.append(1)
                a, = ctx.saved_tensors
                res = lib.zeros_like(a)
                res.select(0, ctx.idx).copy_(g)
                return res, None

        a = lib.ones(2, requires_grad=True)
        SelectRow.apply(a.clone(), 1).sum().backward()
        return len(calls), a.grad

    assert like_torch(program)[0] == 1

    def written(lib):
        class SelectRow(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, idx):
                return a.select(0, idx)

            @staticmethod
            def backward(ctx, g):
                return g, None

        out = SelectRow.apply(lib.ones(2, requires_grad=True).clone(), 1)
        out += 1

    raises_like_torch(written, RuntimeError,
                      # torch 2.13 names the Function (the newer test: SelectRowBackward)
                      "Output 0 of SelectRow is a view and is being modified inplace")


def _adders(lib, calls):
    return _adder(lib, calls), adder_and_sum(lib, calls)


@pytest.mark.parametrize("case", ["plain", "written after", "view input"])
def test_functions_writing_their_input_in_place(case):
    # torch: test_autograd_python_custom_function_inplace (I and II)
    def program(lib):
        calls = []
        adder, adder_and_sum = _adders(lib, calls)
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        first = a.clone().view_as(a) if case == "view input" else a.clone()
        c = adder.apply(first, b)
        if case == "written after":
            c += 2
        c.sum().backward()
        counts = [len(calls)]
        if case != "view input":
            c, d = adder_and_sum.apply(a.clone(), b)
            if case == "written after":
                c += 2
            (c * d).sum().backward()
            counts.append(len(calls))
        return counts, a.grad, b.grad

    counts, _, _ = like_torch(program)
    assert counts == ([1] if case == "view input" else [1, 2])


def test_marking_a_tensor_that_is_not_an_input_dirty_warns():
    # torch: test_autograd_python_custom_function_inplace (MyAdderBad; its view-input case of
    # II is test_autograd_views_functions.py::test_two_output_dirty_function_on_a_view_input_...)
    def non_input(lib):
        class DirtyProduct(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                c = 3 * a
                c.add_(b)
                ctx.mark_dirty(c)
                return c

            @staticmethod
            def backward(ctx, g):
                return 3 * g, 3 * g

        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            DirtyProduct.apply(a.clone(), b)
        return len(caught)

    assert like_torch(non_input) == 1


@pytest.mark.parametrize("write", ["add", "copy_"])
def test_writing_a_tracked_value_into_a_function_view_of_an_untracked_tensor(write):
    # torch: test_inplace_not_requires_grad
    def program(lib):
        view = view_as_function(lib).apply(lib.ones(1, 2))
        b = lib.ones(1, requires_grad=True)
        if write == "add":
            view += b
        else:
            view.copy_(b)

    raises_like_torch(program, RuntimeError, "This view was created inside a custom Function")


def test_writing_a_tracked_value_into_views_of_an_untracked_tensor():
    # torch: test_inplace_not_requires_grad (unbind refuses, select works)
    def unbound(lib):
        lib.ones(1, 2).unbind()[0].copy_(lib.ones(1, requires_grad=True))

    raises_like_torch(unbound, RuntimeError,
                      "This view is the output of a function that returns multiple views.")

    def selected(lib):
        a, b = lib.ones(1, 2), lib.tensor([3.0], requires_grad=True)
        a.select(1, 0).copy_(b)
        a.sum().backward()
        return a, b.grad

    like_torch(selected)
