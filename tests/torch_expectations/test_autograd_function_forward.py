"""torch's expectations of custom Functions under forward-mode AD and of mark_dirty misuse."""

from .functions import add_one_in_place
from .twin import leaf, like_torch, raises_like_torch


def _scale_function(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, wrong):
            ctx.wrong = wrong
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 2 * g, None

        @staticmethod
        def jvp(ctx, t, _):
            return (3 if ctx.wrong else 2) * t

    return Scale


def test_gradcheck_checks_a_function_jvp():
    # torch: test_custom_function_forward_mode_wrong_formula
    def right(lib):
        return lib.autograd.gradcheck(_scale_function(lib).apply, (leaf(lib, 10), False),
                                      check_forward_ad=True)

    assert like_torch(right) is True


def test_gradcheck_catches_a_wrong_function_jvp():
    # torch: test_custom_function_forward_mode_wrong_formula (the failing half)
    def wrong(lib):
        lib.autograd.gradcheck(_scale_function(lib).apply, (leaf(lib, 10), True),
                               check_forward_ad=True)

    raises_like_torch(wrong, RuntimeError, "Jacobian computed with forward mode mismatch for "
                      "output 0")


def test_function_without_jvp_under_forward_ad_is_an_error():
    # torch: test_custom_function_error (BadJvp)
    def program(lib):
        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            NoJvp.apply(fwad.make_dual(leaf(lib, 1), leaf(lib, 1, seed=1, requires_grad=False)))

    raises_like_torch(program, RuntimeError, "must implement the jvp function")


def test_jvp_gets_none_tangents_for_non_tensor_arguments():
    # torch: test_custom_function_forward_mode_non_tensor_before_tensor_args
    def program(lib):
        seen = []

        class Mix(lib.autograd.Function):
            @staticmethod
            def forward(ctx, nt, x, nt2, y):
                return x * 2 + y * 3

            @staticmethod
            def jvp(ctx, nt, x_t, nt2, y_t):
                seen.append((nt is None, nt2 is None))
                return x_t * 2 + y_t * 3

        fwad = lib.autograd.forward_ad
        x, y = leaf(lib, requires_grad=False), leaf(lib, seed=1, requires_grad=False)
        with fwad.dual_level():
            out = Mix.apply(1, fwad.make_dual(x, lib.ones((), dtype=lib.float64)), 1, y)
            tangent = fwad.unpack_dual(out).tangent
        return seen, tangent

    seen, tangent = like_torch(program)
    assert seen == [(True, True)] and float(tangent) == 2.0


def test_dirty_view_of_a_leaf_is_refused():
    # torch: test_custom_function_inplace_on_view_of_leaf
    def program(lib):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        add_one_in_place(lib).apply(a.view_as(a))

    raises_like_torch(program, RuntimeError, "a view of a leaf Variable that requires grad")


def test_marking_a_non_input_dirty_is_refused():
    # torch: test_custom_function_mark_output_view_of_intermediate
    def program(lib):
        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.clone().view_as(x)
                ctx.mark_dirty(out)
                return out

            @staticmethod
            def backward(ctx, g):
                return g

        Func.apply(lib.tensor([1.0], dtype=lib.float64, requires_grad=True).clone())

    raises_like_torch(program, RuntimeError, "received a tensor that was not an input.")
