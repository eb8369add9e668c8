"""Grad modes, decorators and inference tensors: the same programs under torch and gradkit.

Each program takes the library as its argument and returns what it observed;
torch 2.13 is the oracle. Error messages are compared with ``torch`` spelled
``gradkit``.
"""
import warnings

import pytest

import gradkit
from torch_oracle import outcome, same_as_torch

torch = pytest.importorskip("torch")


# -- decorators ---------------------------------------------------------------------

def set_grad_enabled_decorator(lib):
    seen = [lib.is_grad_enabled()]

    @lib.set_grad_enabled(False)
    def inside():
        return lib.is_grad_enabled()

    seen.append(lib.is_grad_enabled())  # decorating must not switch grad off here
    seen.append(inside())
    seen.append(lib.is_grad_enabled())
    return seen


def decorated_generator(lib):
    @lib.no_grad()
    def gen():
        received = yield lib.is_grad_enabled()
        received = yield (received, lib.is_grad_enabled())
        return received

    seen = []
    g = gen()
    seen.append((next(g), lib.is_grad_enabled()))  # the caller keeps its mode between steps
    seen.append((g.send("a"), lib.is_grad_enabled()))
    try:
        g.send("b")
    except StopIteration as stop:
        seen.append(("returned", stop.value, lib.is_grad_enabled()))
    return seen


def generator_throw_and_close(lib):
    @lib.no_grad()
    def gen():
        try:
            yield 1
        except ValueError:
            yield ("handled", lib.is_grad_enabled())
        finally:
            seen.append(("finally", lib.is_grad_enabled()))

    seen = []
    g = gen()
    next(g)
    seen.append(g.throw(ValueError("x")))
    seen.append(lib.is_grad_enabled())
    g.close()
    seen.append(lib.is_grad_enabled())
    return seen


def bare_and_called_decorators(lib):
    @lib.no_grad
    def bare():
        return lib.is_grad_enabled()

    @lib.enable_grad()
    def enabled():
        return lib.is_grad_enabled()

    @lib.enable_grad
    def enabled_bare():
        return lib.is_grad_enabled()

    @lib.inference_mode
    def inference_bare():
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

    @lib.inference_mode(mode=False)
    def not_inference():
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

    with lib.no_grad():
        seen = [bare(), enabled(), enabled_bare(), inference_bare(), not_inference()]
    with lib.inference_mode():
        seen.append(not_inference())  # mode=False: out of inference mode, grad on
    seen.append(lib.is_grad_enabled())
    return seen


def decorated_function_keeps_its_name(lib):
    @lib.no_grad()
    def scale(a, b=2):
        """Doc."""
        return a * b

    return scale.__name__, scale.__doc__, scale(3)


@pytest.mark.parametrize("program", [
    set_grad_enabled_decorator, decorated_generator, generator_throw_and_close,
    bare_and_called_decorators, decorated_function_keeps_its_name])
def test_decorators_match_torch(program):
    same_as_torch(program)


@pytest.mark.parametrize("decorate", [
    lambda lib: lib.no_grad(), lambda lib: lib.no_grad, lambda lib: lib.enable_grad(),
    lambda lib: lib.set_grad_enabled(False), lambda lib: lib.inference_mode()],
    ids=["no_grad()", "no_grad", "enable_grad()", "set_grad_enabled", "inference_mode()"])
def test_decorating_a_class_warns_and_runs_the_constructor_in_the_mode(decorate):
    def program(lib):
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated") as record:
            class Probe:
                def __init__(self, value):
                    self.seen = (value, lib.is_grad_enabled(), lib.is_inference_mode_enabled())
            made = decorate(lib)(Probe)
        if lib is gradkit:  # torch's warning sometimes points into torch itself
            assert record[0].filename == __file__
        return made(7).seen, isinstance(made, type), lib.is_grad_enabled()

    expected = outcome(program, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning, checked above
        assert outcome(program, gradkit) == expected


def test_set_grad_enabled_type_error_and_immediate_effect():
    def program(lib):
        seen = []
        lib.set_grad_enabled(False)
        seen.append(lib.is_grad_enabled())
        lib.set_grad_enabled(True)
        with lib.no_grad():
            lib.set_grad_enabled(True)  # a call inside a block lasts until the block exits
            seen.append(lib.is_grad_enabled())
        seen.append(lib.is_grad_enabled())
        return seen

    same_as_torch(program)
    same_as_torch(lambda lib: lib.set_grad_enabled(1))
    same_as_torch(lambda lib: lib.set_grad_enabled(None))


def test_grad_modes_do_not_decorate_non_callables():
    # torch returns a wrapper that fails only when called; gradkit says so at once
    with pytest.raises(TypeError, match="can only decorate a function, got int"):
        gradkit.no_grad(5)
    with pytest.raises(TypeError, match="can only decorate a function, got int"):
        gradkit.inference_mode(1)


# -- inference mode -------------------------------------------------------------------

def inference_tensors(lib):
    normal = lib.ones(3)
    w = lib.ones(3, requires_grad=True)
    with lib.inference_mode():
        made = lib.ones(3)
        from_normal = normal * 2
        from_leaf = w * 2
        view_of_normal = normal[1:]
        view_of_inference = made[1:]
        with lib.enable_grad():  # grad mode on, yet nothing is recorded in inference mode
            recorded = w * 2
            grad_mode = lib.is_grad_enabled()
        made.add_(1)            # in-place inside the mode is fine
        normal.add_(1)
        normal_version = normal._version
        with lib.inference_mode(False):
            not_inference = lib.ones(1)
    outside = (made * 2, made + normal, made.clone(), made.detach())
    return dict(
        flags=[t.is_inference() for t in (made, from_normal, from_leaf, view_of_normal,
                                          view_of_inference, not_inference)],
        functional=(lib.is_inference(made), lib.is_inference(normal)),
        from_leaf=(from_leaf.requires_grad, from_leaf.grad_fn),
        recorded=(recorded.requires_grad, recorded.grad_fn, recorded.is_inference(), grad_mode),
        values=made.tolist(), normal_version=normal_version,
        outside=[t.is_inference() for t in outside])


@pytest.mark.parametrize("write", [
    lambda t: t.add_(1), lambda t: t.__setitem__(0, 5.0), lambda t: t.zero_(),
    lambda t: t[1:].mul_(2)],
    ids=["add_", "setitem", "zero_", "view mul_"])
def test_inplace_on_an_inference_tensor_outside_the_mode_is_refused(write):
    def program(lib):
        with lib.inference_mode():
            made = lib.ones(3)
        write(made)

    assert same_as_torch(program)[1] == "RuntimeError"
    # torch has already written when it raises; gradkit refuses before writing
    with gradkit.inference_mode():
        made = gradkit.ones(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
        write(made)
    assert made.tolist() == [1.0, 1.0, 1.0]


def test_inplace_through_detach_of_an_inference_tensor_is_refused_too():
    # torch lets ``a.detach().add_(1)`` write into the inference tensor ``a`` (its check
    # misses detach()); gradkit refuses writes through every alias alike
    with gradkit.inference_mode():
        made = gradkit.ones(3)
    assert made.detach().is_inference()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
        made.detach().copy_(made * 0)
    assert made.tolist() == [1.0, 1.0, 1.0]


def test_inference_mode_false_inside_the_mode_still_refuses_writes():
    def program(lib):
        with lib.inference_mode():
            made = lib.ones(2)
            with lib.inference_mode(False):
                return (made * 2).is_inference(), made.add_(1)

    same_as_torch(program)


@pytest.mark.parametrize("use", [
    lambda lib, a, w: a * w, lambda lib, a, w: w * a, lambda lib, a, w: w @ a,
    lambda lib, a, w: (a + w).sum().backward() or w.grad.tolist(),
    lambda lib, a, w: (w * 3).exp().tolist()],
    ids=["mul", "rmul", "matmul", "add saves nothing", "exp of a normal tensor"])
def test_inference_tensors_cannot_be_saved_for_backward(use):
    def program(lib):
        with lib.inference_mode():
            a = lib.ones(3)
        out = use(lib, a, lib.ones(3, requires_grad=True))
        return out.tolist() if isinstance(out, lib.Tensor) else out

    same_as_torch(program)


def test_custom_function_cannot_save_an_inference_tensor():
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, factor):
                ctx.save_for_backward(factor)
                return x * factor

            @staticmethod
            def backward(ctx, g):
                return g * ctx.saved_tensors[0], None

        with lib.inference_mode():
            factor = lib.ones(2)
        return Scale.apply(lib.ones(2, requires_grad=True), factor)

    assert same_as_torch(program)[1] == "RuntimeError"


@pytest.mark.parametrize("program", [
    lambda lib: lib.inference_mode()(lambda: lib.ones(2))()._version,
    lambda lib: lib.inference_mode()(lambda: lib.ones(2))().requires_grad_(),
    lambda lib: lib.inference_mode()(lambda: lib.ones(2))().requires_grad_(False).requires_grad,
    lambda lib: lib.inference_mode()(lambda: lib.ones(2).requires_grad_())().requires_grad,
    lambda lib: lib.is_inference(3),
    lambda lib: lib.inference_mode()(lambda: lib.ones(2))()[0:1].is_inference(),
], ids=["version", "requires_grad_ outside", "requires_grad_(False)", "requires_grad_ inside",
        "is_inference of a number", "view outside"])
def test_inference_tensor_attributes(program):
    same_as_torch(program)


def test_inference_mode_programs_match_torch():
    same_as_torch(inference_tensors)


def test_inference_mode_turns_forward_ad_off():
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor([1.0, 2.0]), lib.ones(2))
            with lib.inference_mode():
                in_mode = fw.unpack_dual(dual * 3).tangent
            with lib.no_grad():
                in_no_grad = fw.unpack_dual(dual * 3).tangent.tolist()
        return in_mode, in_no_grad

    same_as_torch(program)
