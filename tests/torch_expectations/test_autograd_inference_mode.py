"""torch's TestAutogradInferenceMode expectations: the mode as context and decorator, which
tensors are inference tensors, and what in-place, view and out-of-place ops may do with them
inside and outside the mode."""
import pytest

import gradkit

from .twin import like_torch, raises_like_torch, torch

REQUIRES_GRAD = pytest.mark.parametrize("requires_grad", [True, False])
# torch's tests also use transpose_, an in-place view op gradkit does not have
IN_PLACE = {"add_": lambda x: x.add_(2), "mul_": lambda x: x.mul_(2)}


def _ones(lib, requires_grad=False):
    return lib.ones(1, 2, 3, requires_grad=requires_grad)


def test_inference_mode_nests_as_a_context_manager():
    # torch: test_inference_mode_context_manager
    def program(lib):
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen.append(lib.is_inference_mode_enabled())
            with lib.inference_mode(False):
                seen.append(lib.is_inference_mode_enabled())
            seen.append(lib.is_inference_mode_enabled())
        return seen + [lib.is_inference_mode_enabled()]

    assert like_torch(program) == [False, True, False, True, False]


@pytest.mark.parametrize("mode", [True, False, None])
@pytest.mark.parametrize("use_kwarg", [True, False])
def test_inference_mode_as_a_decorator(mode, use_kwarg):
    # torch: test_inference_mode_decorator
    def program(lib):
        seen = []

        def square(x):
            seen.append(lib.is_inference_mode_enabled())
            return x * x

        if mode is None:
            decorated = lib.inference_mode(mode=square) if use_kwarg else \
                lib.inference_mode(square)
        else:
            decorated = (lib.inference_mode(mode=mode) if use_kwarg else
                         lib.inference_mode(mode))(square)
        results = []
        for requires_grad in (True, False):
            d = decorated(_ones(lib, requires_grad))
            results.append((lib.is_inference(d), d.requires_grad))
        return seen, results

    seen, results = like_torch(program)
    active = mode is not False
    assert seen == [active, active]
    assert results == [(active, not active), (active, False)]


def test_tensors_made_in_inference_mode_are_inference_tensors():
    # torch: test_inference_mode_tensor_creation
    def program(lib):
        with lib.inference_mode():
            made = [_ones(lib), _ones(lib, True), _ones(lib).requires_grad_(False)]
            return [(lib.is_inference(t), t.requires_grad) for t in made]

    assert like_torch(program) == [(True, False), (True, True), (True, False)]


def test_in_place_in_inference_mode_on_a_saved_normal_tensor_breaks_its_backward():
    # torch: test_inference_mode_existing_autograd_session
    def program(lib):
        a = _ones(lib, True).clone()
        out = a * a
        with lib.inference_mode():
            a.add_(2)
        flags = lib.is_inference(a)
        out.backward(lib.ones_like(out))
        return flags

    raises_like_torch(program, RuntimeError, "one of the variables needed for gradient "
                                             "computation has been modified by an inplace "
                                             "operation")


@REQUIRES_GRAD
def test_ops_on_inference_tensors_inside_the_mode(requires_grad):
    # torch: test_inference_mode_inf_tensor_in_inf_mode_{functional,inplace,view}_op
    def program(lib):
        seen = []
        with lib.inference_mode():
            c = _ones(lib, requires_grad)
            for out in (c * c, c.view(-1)):
                seen.append((lib.is_inference(out), out.requires_grad))
            for write in (*IN_PLACE.values(), lambda x: x.copy_(_ones(lib) * 2)):
                c = _ones(lib, requires_grad)
                write(c)
                seen.append((lib.is_inference(c), c.requires_grad))
        return seen

    assert like_torch(program) == [(True, False)] * 2 + [(True, requires_grad)] * 3


@REQUIRES_GRAD
def test_inference_tensors_outside_the_mode(requires_grad):
    # torch: test_inference_mode_inf_tensor_in_normal_mode_{functional,view}_op
    def program(lib):
        with lib.inference_mode():
            c = _ones(lib, requires_grad)
            plain = _ones(lib)
        product, view = plain * plain, c.view(-1)
        return [(lib.is_inference(product), product.requires_grad, product.is_leaf),
                (lib.is_inference(view), view.requires_grad, view._is_view(), view.is_leaf)]

    assert like_torch(program) == [(False, False, True), (True, False, False, True)]


@pytest.mark.parametrize("write", IN_PLACE)
def test_in_place_on_an_inference_tensor_outside_the_mode_is_refused(write):
    # torch: test_inference_mode_inf_tensor_in_normal_mode_inplace_op
    def program(lib):
        with lib.inference_mode():
            c = _ones(lib)
        IN_PLACE[write](c)

    raises_like_torch(program, RuntimeError,
                      "Inplace update to inference tensor outside InferenceMode")


@REQUIRES_GRAD
@pytest.mark.parametrize("write", IN_PLACE)
@pytest.mark.parametrize("back_in_normal_mode", [False, True])
def test_in_place_on_a_normal_tensor_in_inference_mode_keeps_it_normal(requires_grad, write,
                                                                        back_in_normal_mode):
    # torch: test_normal_tensor_inplace_output_in_{inference,normal}_mode
    def program(lib):
        a = _ones(lib, requires_grad).clone()
        seen = []
        with lib.inference_mode():
            IN_PLACE[write](a)
            seen.append((lib.is_inference(a), a.requires_grad))
        with lib.inference_mode(not back_in_normal_mode):
            IN_PLACE[write](a)
            seen.append((lib.is_inference(a), a.requires_grad))
            view = a.view(-1)
            # a view made in inference mode: requires_grad is a documented difference (below)
            seen.append((lib.is_inference(view), view.requires_grad or not back_in_normal_mode))
        return seen

    assert like_torch(program) == [(False, requires_grad)] * 2 + [
        (False, requires_grad or not back_in_normal_mode)]


@REQUIRES_GRAD
def test_views_of_normal_tensors_made_in_inference_mode(requires_grad):
    # torch: test_normal_tensor_view_output_in_inference_mode
    def program(lib):
        a = _ones(lib, requires_grad).clone()
        seen = []
        with lib.inference_mode():  # (their requires_grad: a documented difference, below)
            out = a.view(-1)
            seen.append((lib.is_inference(out), out._is_view()))
            tmp = out.view(-1)
            seen.append((lib.is_inference(tmp), tmp._is_view(), tmp.is_leaf))
            tmp.add_(2)
            seen.append((lib.is_inference(tmp), a._version == tmp._version))
        return seen

    assert like_torch(program) == [(False, True), (False, True, True), (False, True)]


@REQUIRES_GRAD
def test_a_view_made_in_inference_mode_used_in_normal_mode(requires_grad):
    # torch: test_normal_tensor_view_output_in_normal_mode
    def program(lib):
        a = _ones(lib, requires_grad).clone()
        with lib.inference_mode():  # (their requires_grad: a documented difference, below)
            out = a.view(-1)
            seen = [(lib.is_inference(out), out._is_view(), out.is_leaf)]
        product = out * out
        seen.append(lib.is_inference(product))
        if not requires_grad:
            out.add_(2)
        tmp = out.view(2, 3)
        return seen + [lib.is_inference(tmp)]

    assert like_torch(program) == [(False, True, True), False, False]

    def written(lib):
        a = _ones(lib, True).clone()
        with lib.inference_mode():
            out = a.view(-1)
        out.add_(2)

    raises_like_torch(written, RuntimeError,
                      "A view was created in inference mode and is being modified inplace")


@REQUIRES_GRAD
def test_mixing_inference_and_normal_tensors_out_of_place(requires_grad):
    # torch: test_mix_inference_and_normal_tensor_functional_op
    def program(lib):
        s = _ones(lib, requires_grad)
        with lib.inference_mode():
            c = _ones(lib, requires_grad)
        out = c.add(s)
        seen = (lib.is_inference(out), out.requires_grad)
        if requires_grad:
            out.backward(lib.ones_like(out))
        return seen, c.grad

    seen, grad = like_torch(program)
    assert seen == (False, requires_grad) and (grad is None) != requires_grad

    def saving(lib):
        s = _ones(lib, True)
        with lib.inference_mode():
            c = _ones(lib, True)
        c * s

    raises_like_torch(saving, RuntimeError, "Inference tensors cannot be saved for backward")


@REQUIRES_GRAD
def test_mixing_inference_and_normal_tensors_in_place_and_in_views(requires_grad):
    # torch: test_mix_inference_and_normal_tensor_inplace_op, ..._view_op (without out=)
    def program(lib):
        s = _ones(lib, requires_grad)
        with lib.inference_mode():
            c = _ones(lib)
        tmp1, tmp2 = c.view_as(s), s.view_as(c)
        seen = [(lib.is_inference(tmp1), tmp1.requires_grad),
                (lib.is_inference(tmp2), tmp2.requires_grad)]
        if not requires_grad:
            s.clone().mul_(c)
        return seen

    assert like_torch(program) == [(True, False), (False, requires_grad)]

    def saving(lib):
        a = _ones(lib, True).clone()
        with lib.inference_mode():
            c = _ones(lib)
        a.mul_(c)

    raises_like_torch(saving, RuntimeError, "Inference tensors cannot be saved for backward")


@pytest.mark.parametrize("write", IN_PLACE)
def test_views_made_in_inference_mode_refuse_recorded_writes(write):
    # torch: test_inference_mode_handle_direct_view_on_rebase,
    # test_inference_mode_handle_indirect_view_on_rebase
    def program(lib, requires_grad, through_base):
        a = _ones(lib, requires_grad).clone()
        with lib.inference_mode():
            view = a.view_as(a) if not through_base else a.view(-1)
        if through_base:
            IN_PLACE[write](a)
            return view.grad_fn is None
        IN_PLACE[write](view)
        return view.requires_grad

    assert like_torch(lambda lib: program(lib, False, False)) is False
    assert like_torch(lambda lib: program(lib, False, True)) is True
    raises_like_torch(lambda lib: program(lib, True, False), RuntimeError,
                      "A view was created in inference mode and is being modified inplace")
    raises_like_torch(lambda lib: program(lib, True, True), RuntimeError,
                      "A view was created in inference mode and its base or another view ")


def test_a_view_made_in_inference_mode_of_a_tensor_that_requires_grad_does_not():
    # torch: test_normal_tensor_view_output_in_{inference,normal}_mode (requires_grad).
    # Deliberate difference, as for views made under no_grad (docs/autograd.md): torch says
    # requires_grad=True for such a view, yet it carries no history; gradkit says False, so
    # a backward through it raises instead of silently giving no gradient.
    def program(lib):
        a = _ones(lib, True).clone()
        with lib.inference_mode():
            out = a.view(-1)
        return out.requires_grad, out.grad_fn is None, (out * out).requires_grad

    assert program(gradkit) == (False, True, False)
    if torch is not None:
        assert program(torch) == (True, True, True)
