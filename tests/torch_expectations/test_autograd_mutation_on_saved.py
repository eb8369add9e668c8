"""torch's TestAllowMutationOnSaved expectations: inside the block, writing a saved tensor (or a
view of it, or its base) leaves backward the values it saved; backward outside the block and
nested blocks are refused. (torch's tests also count the block's internal copies; gradkit's
bookkeeping is its own.)"""
import pytest

from .twin import data, like_torch, raises_like_torch


def _leaf(lib, seed=0):
    return lib.tensor(data(2, 3, seed=seed), dtype=lib.float64, requires_grad=True)


def _square_then_write(lib, write_view: bool):
    a = _leaf(lib)
    b = a.clone()
    c = b.view_as(b)
    out = (b ** 2).sum()
    (c if write_view else b).sin_()
    out.backward()
    return a.grad


@pytest.mark.parametrize("write_view", [False, True])
def test_a_saved_tensor_written_in_place_needs_the_block(write_view):
    # torch: TestAllowMutationOnSaved.test_basic, test_views
    raises_like_torch(lambda lib: _square_then_write(lib, write_view), RuntimeError,
                      "variables needed for gradient computation has been modified by an "
                      "inplace")

    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            grad = _square_then_write(lib, write_view)
        return grad, 2 * _leaf(lib).detach()

    grad, expected = like_torch(program)
    assert abs(grad.numpy() - expected.numpy()).max() < 1e-12


@pytest.mark.parametrize("case", ["save_base_modify_view", "save_view_modify_base",
                                  "double_backward", "saved_but_not_anymore",
                                  "saved_many_times", "saved_at_two_versions"])
def test_backward_sees_the_saved_values(case):
    # torch: test_save_base_and_modify_view, test_save_view_modify_base, test_double_backward,
    # test_saved_but_not_anymore, test_saved_same_tensor_many_times,
    # test_saved_same_tensor_different_versions
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = _leaf(lib)
            b = a.clone()
            if case == "save_base_modify_view":
                out = b ** 2
                b[:1].mul_(10)
                out.sum().backward()
                return a.grad
            if case == "save_view_modify_base":
                out = (b[:] ** 2).sum()
                b *= 2
                out.backward()
                return a.grad
            if case == "double_backward":
                out = (b ** 2).sum()
                b.sin_()
                da, = lib.autograd.grad(out, a, create_graph=True)
                d2a, = lib.autograd.grad(da.sum(), a)
                return da, d2a
            if case == "saved_but_not_anymore":
                (b ** 2).sum().backward()
                b.sin_()
                out = (b ** 2).sum()
                b.sin_()
                out.backward()
                return a.grad
            if case == "saved_many_times":
                first, second = b ** 2, b ** 3
                b.sin_()
                return lib.autograd.grad((first + second).sum(), a)
            first = b ** 2
            b.sin_()
            second = b ** 2
            b.sin_()
            return lib.autograd.grad((first + second).sum(), a)

    like_torch(program)


def test_conjugate_views_of_saved_tensors():
    # torch: test_with_math_views
    def program(lib):
        grads = []
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            for write_conjugate in (False, True):
                a = lib.tensor([1 + 1j], requires_grad=True)
                c = a.clone()
                b = c.conj()
                out = (b ** 2).sum()
                (b if write_conjugate else c).sin_()
                out.abs().backward()
                grads.append(a.grad.resolve_conj())
        return grads

    like_torch(program)


def test_backward_outside_its_block_or_in_another_is_refused():
    # torch: test_backward_out_of_context
    message = "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"

    def outside(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            out = (_leaf(lib) ** 2).sum()
        out.backward()

    def another(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            out = (_leaf(lib) ** 2).sum()
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            out.backward()

    raises_like_torch(outside, AssertionError, message)
    raises_like_torch(another, AssertionError, message)


def test_blocks_do_not_nest():
    # torch: test_disallow_nesting
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                pass

    raises_like_torch(program, RuntimeError,
                      "allow_mutation_on_saved_tensors contexts cannot be nested")
