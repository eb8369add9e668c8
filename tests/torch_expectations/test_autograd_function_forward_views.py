"""torch's expectations of custom Functions under forward AD: jvps of dirty inputs and of
views, forward returning an input, save_for_forward, non-differentiable outputs; and dirty
views (split outputs, saved mutated views)."""
import gc
import weakref

import pytest

from .functions import add_one_in_place
from .twin import like_torch, raises_like_torch


def fw(lib):
    return lib.autograd.forward_ad


def _double(lib, x, requires_grad=True):
    return lib.tensor(x, dtype=lib.float64, requires_grad=requires_grad)


def _in_place_mul(lib, tangent_in_place: bool):
    class InplaceMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.mul_(2)
            ctx.mark_dirty(result)
            return result

        @staticmethod
        def backward(ctx, g):
            pass

        @staticmethod
        def jvp(ctx, x_t):
            return x_t.mul_(2) if tangent_in_place else x_t

    return InplaceMul


@pytest.mark.parametrize("requires_grad", [True, False])
def test_dirty_input_is_returned_as_is_and_its_tangent_too(requires_grad):
    # torch: test_custom_function_mark_dirty_not_differentiable (jvp modifies in place)
    def program(lib):
        z = _double(lib, 1.0, requires_grad)
        x = z.clone()
        y = _in_place_mul(lib, True).apply(x)
        identities = [y is x]
        with fw(lib).dual_level():
            tangent = lib.ones_like(x)
            dual = fw(lib).make_dual(x, tangent)
            out = _in_place_mul(lib, True).apply(dual)
            identities += [out is dual, fw(lib).unpack_dual(out).tangent is tangent]
            return identities, x, tangent

    identities, x, tangent = like_torch(program)
    assert identities == [True, True, True] and float(x) == 4 and float(tangent) == 2


@pytest.mark.parametrize("requires_grad", [True, False])
def test_jvp_of_a_dirty_input_must_change_its_tangent_in_place(requires_grad):
    # torch: test_custom_function_mark_dirty_not_differentiable (jvp returns a new tangent)
    def program(lib):
        x = _double(lib, 1.0, requires_grad).clone()
        with fw(lib).dual_level():
            _in_place_mul(lib, False).apply(fw(lib).make_dual(x, lib.ones_like(x)))

    raises_like_torch(program, RuntimeError,
                      "jvp function must modify the corresponding gradient inplace")


def test_gradcheck_catches_a_dirty_function_whose_jvp_is_not_in_place():
    # torch: test_custom_function_forward_mode_inplace_checks
    def program(lib, not_in_place):
        class InplaceFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, foo, flag):
                ctx.mark_dirty(foo)
                ctx.flag = flag
                foo.mul_(2)
                return foo

            @staticmethod
            def vjp(ctx, g):
                return 2 * g, None

            @staticmethod
            def jvp(ctx, t, _):
                if ctx.flag:
                    return 2 * t
                t.mul_(2)
                return t

        inp = lib.linspace(0.1, 0.9, 16, dtype=lib.float64).reshape(4, 4).requires_grad_()
        return lib.autograd.gradcheck(lambda x, flag: InplaceFn.apply(x.clone(), flag),
                                      (inp, not_in_place), check_forward_ad=True)

    assert like_torch(lambda lib: program(lib, False)) is True
    raises_like_torch(lambda lib: program(lib, True), RuntimeError,
                      "inplace custom Function is not modifying the forward mode gradients "
                      "inplace")


@pytest.mark.parametrize("flag,message", [
    ("ok", None), ("not_a_view", "jvp is not returning a view"),
    ("not_a_view_of_inp", "jvp is not returning a view of the given"),
    ("not_a_view_of_inp_base", "jvp is not returning a view of the same base")])
def test_jvp_of_a_function_returning_a_view_must_return_a_view(flag, message):
    # torch: test_custom_function_forward_mode_view_checks
    def program(lib):
        class Narrow(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, flag):
                ctx.flag, ctx.size = flag, x.size()
                return x.narrow(0, 0, 2)

            @staticmethod
            def vjp(ctx, g):
                gi = g.new_zeros(ctx.size)
                gi.narrow(0, 0, 2).copy_(g)
                return gi, None

            @staticmethod
            def jvp(ctx, t, _):
                result = t.narrow(0, 0, 2)
                if ctx.flag != "ok":
                    result = result.clone()  # the view is broken
                if ctx.flag in ("not_a_view_of_inp", "not_a_view_of_inp_base"):
                    result = result.view_as(result)  # a view, of the wrong tensor
                return result

        def narrowed(x):
            return Narrow.apply(x.view_as(x) if flag == "not_a_view_of_inp_base" else x, flag)

        inp = lib.linspace(0.1, 0.9, 16, dtype=lib.float64).reshape(4, 4).requires_grad_()
        return lib.autograd.gradcheck(narrowed, inp, check_forward_ad=True)

    if message is None:
        assert like_torch(program) is True
    else:
        raises_like_torch(program, RuntimeError, message)


@pytest.mark.parametrize("tangent_of_x", ["view_as", "self", "mul_by_2"])
def test_function_returning_an_input_needs_a_view_of_its_tangent(tangent_of_x):
    # torch: test_custom_function_forward_mode_forward_is_no_op
    changes = {"view_as": lambda t: t.view_as(t), "self": lambda t: t, "mul_by_2": lambda t: t * 2}

    def make(lib):
        class ReturnsX(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y, x

            @staticmethod
            def vjp(ctx, g1, g2):
                return g1 + g2, g1

            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t + y_t, changes[tangent_of_x](x_t)

        return ReturnsX

    def in_dual_level(lib):
        a, b = _double(lib, 1.0), _double(lib, 1.0)
        c, d = _double(lib, 1.0, False), _double(lib, 1.0, False)
        t, t2 = _double(lib, 1.0, False), _double(lib, 1.0, False)
        with fw(lib).dual_level():
            _, out = make(lib).apply(fw(lib).make_dual(a, t), b)
            _, out2 = make(lib).apply(fw(lib).make_dual(c, t2), d)
            return (fw(lib).unpack_dual(out).tangent._base is t,
                    fw(lib).unpack_dual(out2).tangent._base is t2)

    def by_gradcheck(lib):
        return lib.autograd.gradcheck(make(lib).apply, (_double(lib, 1.0), _double(lib, 1.0,
                                                                                   False)),
                                      check_forward_ad=True)

    message = r"A custom Function's forward is returning a view \(or an input as-is\)"
    if tangent_of_x == "view_as":
        assert like_torch(in_dual_level) == (True, True)
        assert like_torch(by_gradcheck) is True
    else:
        raises_like_torch(in_dual_level, RuntimeError, message)
        raises_like_torch(by_gradcheck, RuntimeError, message)


def test_jvp_reads_what_forward_saved_for_forward_only():
    # torch: test_custom_function_save_for_forward
    def program(lib):
        class Product(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                ctx.save_for_backward(x, y)
                ctx.save_for_forward(x, y)
                ctx.z = z
                return z * (x * y)

            @staticmethod
            def jvp(ctx, x_t, y_t, _):
                x, y = ctx.saved_tensors
                return ctx.z * (y * x_t + x * y_t)

            @staticmethod
            def vjp(ctx, g):
                x, y = ctx.saved_tensors
                return ctx.z * g * y, ctx.z * g * x, None

        class BackwardOnly(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clone()

            @staticmethod
            def jvp(ctx, t):
                seen.append(len(ctx.saved_tensors))
                return t

            @staticmethod
            def vjp(ctx, g):
                seen.append(len(ctx.saved_tensors))
                return g

        seen = []
        a, b, t = _double(lib, 1.0), _double(lib, 2.0), _double(lib, 1.0, False)
        with fw(lib).dual_level():
            out = Product.apply(fw(lib).make_dual(a, t), b, 4)
            tangent = fw(lib).unpack_dual(out).tangent
            out.backward()
            BackwardOnly.apply(fw(lib).make_dual(a, t)).backward()
        ok = (lib.autograd.gradcheck(Product.apply, (a, b, 4), check_forward_ad=True),
              lib.autograd.gradcheck(BackwardOnly.apply, (a,), check_forward_ad=True))
        return tangent, a.grad, b.grad, seen[:2], ok

    tangent, a_grad, b_grad, seen, ok = like_torch(program)
    assert float(tangent) == 8 and float(b_grad) == 4 and seen == [0, 1] and ok == (True, True)


def _marked_second_output(lib, with_tangent: bool):
    """(x, y) -> (x, y) copies, the second marked non-differentiable; its jvp gives the second
    a tangent only ``with_tangent`` (which torch refuses)."""

    class Marked(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, (x_t.clone() if with_tangent else None)

    return Marked


def test_non_differentiable_outputs_get_no_tangent():
    # torch: test_custom_function_forward_mode_non_differentiable
    def program(lib):
        Marked = _marked_second_output(lib, with_tangent=False)  # noqa: N806 - a class

        class IntegerOutput(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x.clone(), y.clone()

            @staticmethod
            def jvp(ctx, x_t, y_t):
                seen.append(y_t)
                return x_t, None

        class NonTensorOutput(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone(), "not a tensor", x.clone()

            @staticmethod
            def jvp(ctx, x_t):
                return x_t, None, x_t

        seen = []
        x, t = _double(lib, 2.0, False), _double(lib, 1.0, False)
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(x, t)
            _, marked = Marked.apply(dual, _double(lib, 3.0, False))
            _, integer = IntegerOutput.apply(dual, lib.tensor(3))
            first, _, last = NonTensorOutput.apply(dual)
            return (fw(lib).unpack_dual(marked).tangent, fw(lib).unpack_dual(integer).tangent,
                    seen, fw(lib).unpack_dual(first).tangent, fw(lib).unpack_dual(last).tangent)

    marked, integer, seen, first, last = like_torch(program)
    assert marked is None and integer is None and seen == [None] and float(first) == 1

    def wrong(lib):
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(_double(lib, 2.0, False), _double(lib, 1.0, False))
            _marked_second_output(lib, with_tangent=True).apply(dual, _double(lib, 3.0, False))

    raises_like_torch(wrong, RuntimeError, "You should return None at that position instead")


def test_dirty_output_of_split_is_refused():
    # torch: test_custom_function_inplace_on_non_default_view
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b, _ = a.clone().split([1, 1], dim=0)
        add_one_in_place(lib).apply(b)

    raises_like_torch(program, RuntimeError, "output of a function that returns multiple view")


def test_saving_a_dirty_view_keeps_nothing_alive():
    # torch: test_custom_function_saving_mutated_view_no_leak
    def program(lib):
        class SavesDirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, g):
                pass

        def scope():
            x = lib.tensor(1.0, requires_grad=True).clone()
            x = x.view_as(x)
            SavesDirty.apply(x)
            return weakref.ref(x)

        ref = scope()
        gc.collect()
        return ref() is None

    assert like_torch(program) is True
