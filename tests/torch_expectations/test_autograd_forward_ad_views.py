"""torch's expectations of forward AD with in-place ops and views: which aliases of a dual
share its tangent, in-place writes of a dual into a view, duals of inference tensors."""
import pytest

from .twin import data, like_torch


def fw(lib):
    return lib.autograd.forward_ad


def _values(lib, *shape, seed=0):
    return lib.tensor(data(*shape, seed=seed), dtype=lib.float64)


def test_in_place_on_a_dual_leaves_its_primal_and_tangent_without_tangents():
    # torch: test_view_inplace_non_differentiable_views
    def program(lib):
        original_foo, original_bar = _values(lib, 2), lib.ones(2, dtype=lib.float64)
        foo, bar = original_foo.clone(), original_bar.clone()
        seen = []
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(foo, bar)
            dual *= 2
            seen += [fw(lib).unpack_dual(foo).tangent, bar.clone(), foo.clone(),
                     *(t.clone() for t in fw(lib).unpack_dual(dual))]
            primal, tangent = fw(lib).unpack_dual(dual)
            seen += [fw(lib).unpack_dual(primal).tangent, fw(lib).unpack_dual(tangent).tangent]
            primal *= 2
            seen += [t.clone() for t in fw(lib).unpack_dual(dual)]
            tangent *= 2
            seen += [t.clone() for t in fw(lib).unpack_dual(dual)]
        return seen

    seen = like_torch(program)
    assert seen[0] is None and seen[5] is None and seen[6] is None
    assert (seen[1].numpy() == 2).all() and (seen[-1].numpy() == 4).all()


@pytest.mark.parametrize("op", ["add_", "mul_", "copy_"])
def test_writing_a_dual_into_a_view_makes_the_base_tangent_a_view_too(op):
    # torch: test_view_inplace_always_creates_a_view
    def program(lib):
        base = _values(lib, 2, 2)
        view = base.transpose(0, 1)
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(_values(lib, 2, 2, seed=1), _values(lib, 2, 2, seed=2))
            getattr(view, op)(dual)
            p, t = fw(lib).unpack_dual(base)
            p_before, t_before = p.clone(), t.clone()
            view *= 2
            p, t = fw(lib).unpack_dual(base)
            return p_before, t_before, p.clone(), t.clone()

    p_before, t_before, p, t = like_torch(program)
    assert abs(p.numpy() - 2 * p_before.numpy()).max() < 1e-12
    assert abs(t.numpy() - 2 * t_before.numpy()).max() < 1e-12


def test_dual_of_an_inference_tensor_in_inference_mode_is_no_view_and_writes_through():
    # torch: test_make_dual_inference_tensor_in_inference_mode
    def program(lib):
        with lib.inference_mode():
            foo, bar = _values(lib, 2), _values(lib, 2, seed=1)
            foo_copy = foo.clone()
            with fw(lib).dual_level():
                dual = fw(lib).make_dual(foo, bar)
                is_view = dual._is_view()
                dual += 1
                return is_view, bool(lib.allclose(foo, foo_copy)), foo - foo_copy

    is_view, unchanged, moved = like_torch(program)
    assert is_view is False and unchanged is False and (moved.numpy() == 1).all()
