"""torch's expectations from the split `test/autograd/test_autograd.py` (d1810646) that the
ledger did not name: subgradients at ties, gradchecks of special ops, a gradient given to two
leaves, gradcheck of outputs whose shape or dtype depend on the inputs' values."""
import math

import numpy as np
import pytest

import gradkit

from .test_autograd_graph_misc import add_in_place_function
from .twin import data, leaf, like_torch, raises_like_torch


def test_a_diagonal_gradient_from_an_expanded_grad_output():
    # torch: test_diagonal_expanded_v (the grad_output is a 0-stride expand of one number)
    def program(lib):
        a = leaf(lib, 4, 4)
        v = lib.tensor(0.7, dtype=lib.float64).expand(4)
        g, = lib.autograd.grad(a.diagonal(), a, v)
        return g, g.is_contiguous()

    g, contiguous = like_torch(program)
    np.testing.assert_allclose(g.numpy(), np.eye(4) * 0.7)
    assert contiguous


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_share_the_gradient_of_a_tie(name):
    # torch: test_maximum_and_minimum_subgradient
    def program(lib):
        a = lib.tensor([0., 1., 2.], requires_grad=True)
        b = lib.tensor([1., 1., 1.], requires_grad=True)
        getattr(lib, name)(a, b).sum().backward()
        return a.grad, b.grad

    ga, gb = like_torch(program)
    wins = [0., 0.5, 1.] if name == "maximum" else [1., 0.5, 0.]
    assert ga.tolist() == wins and gb.tolist() == wins[::-1]


@pytest.mark.parametrize("values, dim, expected", [
    ([0., 0., 0.], None, [0., 0., 0.]),
    ([1., 0., 1.], None, [0.5, 0., 0.5]),
    ([[1., 0., 1.], [0., 1., 1.]], None, [[0.25, 0., 0.25], [0., 0.25, 0.25]]),
    ([[1., 0., 1.], [0., 1., 0.]], (1,), [[0.5, 0., 0.5], [0., 1., 0.]]),
    (np.ones((2, 2, 2)).tolist(), (0, 2), np.full((2, 2, 2), 0.25).tolist()),
])
def test_the_infinity_norm_shares_its_gradient_among_ties(values, dim, expected):
    # torch: test_norm_inf_subgradient
    def program(lib):
        x = lib.tensor(values, requires_grad=True)
        out = x.norm(math.inf, dim=dim, keepdim=True)
        out.backward(lib.ones(out.size()))
        return x.grad

    assert like_torch(program).tolist() == expected


def test_sinc_gradients_at_zero_and_at_the_smallest_normal():
    # torch: test_sinc (the derivative at 0 is special-cased; tiny**2 underflows to 0)
    def program(lib):
        a = lib.tensor([0.0, lib.finfo(lib.float64).tiny, 1.0], dtype=lib.float64,
                       requires_grad=True)
        g, = lib.autograd.grad(lib.sinc(a).sum(), a)
        return lib.autograd.gradcheck(lib.sinc, a), g

    ok, g = like_torch(program)
    assert ok and g.tolist() == [0.0, 0.0, -1.0]


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_gradchecks_in_x_and_refuses_a_gradient_for_s(name):
    # torch: test_igamma, test_igammac (the derivative in s is not implemented)
    def program(lib):
        s = lib.tensor(np.abs(data(20)) + 1e-3)
        x = lib.tensor(np.abs(data(20, seed=1)) + 1e-3, requires_grad=True)
        fn = getattr(lib, name)
        return lib.autograd.gradcheck(fn, (s, x)), lib.autograd.gradgradcheck(fn, (s, x))

    assert like_torch(program) == (True, True)

    def s_grad(lib):
        s = lib.tensor(np.abs(data(3)) + 1e-3, requires_grad=True)
        getattr(lib, name)(s, lib.ones(3, dtype=lib.float64)).sum().backward()

    raises_like_torch(s_grad, NotImplementedError,
                      f"the derivative for '{name}: input' is not implemented")


@pytest.mark.parametrize("write", ["view_as_add_", "narrow_relu_"])
def test_an_in_place_write_into_a_view_of_a_leaf_fails_at_the_op(write):
    # torch: test_inplace_on_view_leaf_errors, the second half of
    # test_inplace_on_view_weak_grad_fn
    def program(lib):
        if write == "view_as_add_":
            x = lib.zeros(1, requires_grad=True)
            x.view_as(x).add_(1)
        else:
            lib.rand(10, requires_grad=True).narrow(0, 0, 10).relu_()

    raises_like_torch(program, RuntimeError, "a view of a leaf Variable that requires grad is "
                      "being used in an in-place operation.")


@pytest.mark.parametrize("kwargs", [{}, {"nan": 1.2}, {"nan": 1.2, "posinf": 2.0},
                                    {"nan": 1.2, "posinf": 2.0, "neginf": -2.0},
                                    {"posinf": 2.0, "neginf": -2.0}, {"neginf": -2.0}])
def test_nan_to_num_gradients_are_zero_where_it_replaced(kwargs):
    # torch: test_nan_to_num
    values = data(3, 3, 3)
    pick = np.random.default_rng(1).random((3,) + values.shape)
    values[pick[0] < 0.2], values[pick[1] < 0.2], values[pick[2] < 0.2] = np.nan, np.inf, -np.inf

    def program(lib):
        a = lib.tensor(values, requires_grad=True)
        fn = lambda x: x.nan_to_num(**kwargs)  # noqa: E731
        g, = lib.autograd.grad(fn(a).sum(), a)
        return lib.autograd.gradcheck(fn, a), lib.autograd.gradgradcheck(fn, a), g

    ok, okok, g = like_torch(program)
    assert ok and okok
    np.testing.assert_array_equal(g.numpy(), np.isfinite(values).astype(float))


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("changes, match", [
    ("shape", "return outputs with the same shape when inputs are perturbed"),
    ("dtype", "return outputs with the same dtype when inputs are perturbed")])
def test_gradcheck_refuses_outputs_whose_shape_or_dtype_depend_on_values(changes, match,
                                                                         fast_mode):
    # torch: test_gradcheck_output_shape_or_dtype_depend_on_values (an AssertionError, even
    # with raise_exception=False)
    def program(lib):
        def fn(x):
            if not lib.all(x >= 1):
                return x
            return lib.cat([x, x]) if changes == "shape" else x.to(lib.float32)

        a = lib.ones(1, dtype=lib.float64, requires_grad=True)
        lib.autograd.gradcheck(fn, (a,), fast_mode=fast_mode, raise_exception=False)

    where = "by 1e-06" if fast_mode else "on index \\(0,\\) by 1e-06"
    raises_like_torch(program, AssertionError, f"{match} {where}, but got: {changes}s ")


def _shared_gradient(lib, leaves: int):
    """``leaves`` leaves given one gradient array by a Function: which .grad is that array."""

    class Shared(lib.autograd.Function):
        pointer = None

        @staticmethod
        def forward(ctx, *xs):
            return sum(xs[1:], xs[0])

        @staticmethod
        def backward(ctx, g):
            Shared.pointer = g.data_ptr()
            return (g,) * leaves

    xs = [leaf(lib, 5, 6, seed=i) for i in range(leaves)]
    Shared.apply(*xs)[1][0].backward()
    return [x.grad.data_ptr() == Shared.pointer for x in xs], xs


@pytest.mark.parametrize("leaves", [2, 3])
def test_one_gradient_given_to_several_leaves_is_stolen_by_the_last(leaves):
    # torch: test_no_grad_copy. The earlier leaves copy it while a later buffer still holds it
    # (fixed in gradkit: every leaf copied, none stole it)
    stolen = like_torch(lambda lib: _shared_gradient(lib, leaves)[0])
    assert stolen == [False] * (leaves - 1) + [True]
    _, xs = _shared_gradient(gradkit, leaves)
    xs[-1].grad.add_(1)  # the stolen array is the last leaf's alone
    assert [float(x.grad.sum()) for x in xs] == [1.0] * (leaves - 1) + [31.0]


def test_a_non_contiguous_gradient_is_copied_into_both_leaves():
    # torch: test_no_grad_copy (its first half)
    def program(lib):
        class Sum(lib.autograd.Function):
            pointer = None

            @staticmethod
            def forward(ctx, a, b):
                return a + b

            @staticmethod
            def backward(ctx, g):
                Sum.pointer = g.data_ptr()
                return g, g

        class Expanded(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.size = x.size()
                return lib.tensor([1.])

            @staticmethod
            def backward(ctx, g):
                return lib.ones(1, dtype=lib.float64).expand(ctx.size)

        a, b = leaf(lib, 5, 6), leaf(lib, 5, 6, seed=1)
        Expanded.apply(Sum.apply(a, b)).backward()
        return [t.grad.data_ptr() == Sum.pointer for t in (a, b)], a.grad.is_contiguous()

    assert like_torch(program) == ([False, False], True)


def test_an_inplace_function_writing_into_a_plain_input_returns_it_tracked():
    # torch: test_return_leaf_inplace, with torch.autograd.function.InplaceFunction (missing
    # in gradkit before) and its inplace flag; test_return_duplicate_inplace's
    # InplaceFunction.apply (torch 2.13: no forward is a NotImplementedError)
    def program(lib):
        AddInto = add_in_place_function(lib.autograd.function.InplaceFunction)  # noqa: N806
        x, y = leaf(lib, 5, 5, requires_grad=False), leaf(lib, 5, 5, seed=1)
        q, _ = AddInto.apply(x, y)
        q.sum().backward()
        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            flag = AddInto(inplace=True).inplace
        return q is x, type(q.grad_fn) is AddInto._backward_cls, q.requires_grad, y.grad, flag

    same, node, tracked, grad, flag = like_torch(program)
    assert same and node and tracked and flag and grad.tolist() == np.ones((5, 5)).tolist()
    raises_like_torch(lambda lib: lib.autograd.function.InplaceFunction.apply(leaf(lib, 2)),
                      NotImplementedError, "You must implement the forward function")
