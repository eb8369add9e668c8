"""torch's expectations of gradcheck's input validation and failure reports (both modes)."""
import warnings

import pytest

from .twin import leaf, like_torch, raises_like_torch

MODES = pytest.mark.parametrize("fast_mode", [False, True])


def _ones(lib, *shape, dtype="float64", requires_grad=True):
    return lib.ones(*shape, dtype=getattr(lib, dtype), requires_grad=requires_grad)


def _shifted_clone(x):
    """A clone whose gradient is off by 1e-2: backward not multiplied by grad_output."""
    y = x.clone()
    y.register_hook(lambda g: g + 1e-2)
    return y


@MODES
def test_gradcheck_needs_an_input_that_requires_grad(fast_mode):
    # torch: test_gradcheck_validates_inputs (no input requires grad)
    raises_like_torch(lambda lib: lib.autograd.gradcheck(
        lambda x: x, (_ones(lib, 10, requires_grad=False),), raise_exception=False,
        fast_mode=fast_mode), ValueError, "at least one input tensor to require gradient, but "
        "none of them have requires_grad=True")


@MODES
def test_gradcheck_warns_for_single_precision_inputs(fast_mode):
    # torch: test_gradcheck_validates_inputs (not double precision)
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok = lib.autograd.gradcheck(lambda x: x, (_ones(lib, 1, dtype="float32"),),
                                        atol=1e-1, fast_mode=fast_mode)
        return ok, any("Input #0 requires gradient and is not a double precision"
                       in str(w.message) for w in caught)

    assert like_torch(program) == (True, True)


@MODES
def test_gradcheck_of_a_function_without_outputs_succeeds(fast_mode):
    # torch: test_gradcheck_check_no_differentiable_outputs (no outputs at all)
    assert like_torch(lambda lib: lib.autograd.gradcheck(
        lambda x: (), (_ones(lib, 1),), fast_mode=fast_mode)) is True


@MODES
def test_gradcheck_reports_a_backward_not_multiplied_by_grad_output(fast_mode):
    # torch: test_gradcheck_backward_mul_by_grad_output (the dense case)
    def failing(lib):
        lib.autograd.gradcheck(_shifted_clone, (_ones(lib, 1),), atol=1e-1, fast_mode=fast_mode)

    raises_like_torch(failing, RuntimeError, "backward not multiplied by grad_output")
    assert like_torch(lambda lib: lib.autograd.gradcheck(
        _shifted_clone, (_ones(lib, 1),), atol=1e-1, raise_exception=False,
        fast_mode=fast_mode)) is False


@MODES
def test_gradcheck_reports_a_jacobian_mismatch(fast_mode):
    # torch: test_gradcheck_jacobian_mismatch (real case)
    def failing(lib):
        lib.autograd.gradcheck(_shifted_clone, (_ones(lib, 2, 2),), fast_mode=fast_mode)

    raises_like_torch(failing, RuntimeError, "Jacobian mismatch for output 0 with respect to "
                      "input 0")
    assert like_torch(lambda lib: lib.autograd.gradcheck(
        _shifted_clone, (_ones(lib, 2, 2),), raise_exception=False,
        fast_mode=fast_mode)) is False


def test_gradcheck_names_the_imaginary_part_for_complex_outputs():
    # torch: test_gradcheck_jacobian_mismatch (complex case)
    raises_like_torch(lambda lib: lib.autograd.gradcheck(
        _shifted_clone, (_ones(lib, 2, 2, dtype="complex128"),), fast_mode=False),
        RuntimeError, "While considering the imaginary part of complex outputs only")


@MODES
def test_gradcheck_checks_that_backward_handles_undefined_grads(fast_mode):
    # torch: test_gradcheck_undefined_grad
    def program(lib):
        def fn(x):
            def hook(g):
                if g is None:
                    raise RuntimeError("x is undefined")

            y = x.clone()
            y.register_hook(hook)
            return y

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.gradcheck(fn, (_ones(lib, 1),), fast_mode=fast_mode)

    raises_like_torch(program, RuntimeError,
                      "Expected backward function to handle undefined output grads")


@MODES
def test_func_runs_in_grad_mode_at_points_one_element_away_from_the_inputs(fast_mode):
    # Found by torch's test_{hvp,vhp}_create_graph (test_functional.py): the numerical
    # Jacobian moved each element back by eps but left it there, so later columns were taken
    # at a shifted point; and torch calls func with grad mode on, where gradkit had it off.
    def program(lib):
        x = leaf(lib, 2, 3)
        y = leaf(lib, 4, seed=1)
        start = [x.detach().clone(), y.detach().clone()]
        moved, grad_modes = [], []

        def func(a, b):
            grad_modes.append(lib.is_grad_enabled())
            moved.append(sum(int((t.detach() != s).sum()) for t, s in zip((a, b), start)))
            return (a.sin() * b[:3]).sum() * b

        ok = lib.autograd.gradcheck(func, (x, y), fast_mode=fast_mode)
        untouched = bool((x.detach() == start[0]).all() and (y.detach() == start[1]).all())
        return ok, untouched, set(grad_modes), max(moved) <= 1

    # fast mode moves all elements at once, along a random direction
    assert like_torch(program) == (True, True, {True}, not fast_mode)
