"""torch's expectations of forward_ad: levels, make_dual/unpack_dual, views and in-place."""
import pytest

import gradkit

from .twin import data, leaf, like_torch, raises_like_torch, torch


def fw(lib):
    return lib.autograd.forward_ad


def _plain(lib, *shape, seed=0):
    return leaf(lib, *shape, seed=seed, requires_grad=False)


def test_levels_are_zero_and_do_not_nest():
    # torch: test_nested_level
    def program(lib):
        with fw(lib).dual_level() as level:
            return level

    assert like_torch(program) == 0

    def nested(lib):
        with fw(lib).dual_level():
            fw(lib).enter_dual_level()

    raises_like_torch(nested, RuntimeError, "Nested forward mode AD is not supported at the moment")


def test_a_dual_tensor_cannot_be_a_tangent():
    # torch: test_set_fw_grad_having_own_fw_grad_at_same_level
    def program(lib):
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(_plain(lib, 2), _plain(lib, 2, seed=1))
            fw(lib).make_dual(_plain(lib, 2, seed=2), dual)

    raises_like_torch(program, RuntimeError, "has a forward gradient at the same level")


@pytest.mark.parametrize("primal,tangent,which", [("float64", "int64", "tangent"),
                                                  ("int64", "int64", "primal"),
                                                  ("int64", "float64", "primal")])
def test_make_dual_refuses_integer_tensors(primal, tangent, which):
    # torch: test_make_dual_forbid_integral_dtype
    def program(lib):
        with fw(lib).dual_level():
            fw(lib).make_dual(lib.ones(2, 2, dtype=getattr(lib, primal)),
                              lib.ones(2, 2, dtype=getattr(lib, tangent)))

    raises_like_torch(program, ValueError, f"Expected {which} to be floating point or complex")


def test_only_dual_tensors_print_their_tangent():
    # torch: test_print
    def program(lib):
        with fw(lib).dual_level():
            a = _plain(lib, 3)
            b = fw(lib).make_dual(a, _plain(lib, 3, seed=1))
            p, t = fw(lib).unpack_dual(b)
            return ["tangent=" in str(x) for x in (a, b, p, t)]

    assert like_torch(program) == [False, True, False, False]


def test_unpack_dual_gives_the_tangent_itself_and_a_fresh_primal_view():
    # torch: test_basic_packing_unpacking
    def program(lib):
        foo, bar = _plain(lib, 2), _plain(lib, 2, seed=1)
        with fw(lib).dual_level():
            baz = fw(lib).make_dual(foo, bar)
            primal, tangent = fw(lib).unpack_dual(baz)
            again = fw(lib).unpack_dual(baz)
            foo_unpacked = fw(lib).unpack_dual(foo)
            return (tangent is bar, again.primal is not primal, again.tangent is bar, primal,
                    foo_unpacked.tangent)

    assert like_torch(program)[:3] == (True, True, True)


def test_dual_shares_version_counter_and_memory_with_its_primal_and_tangent():
    # torch: test_advanced_packing_unpacking (memory and version counter)
    def program(lib):
        foo, bar = _plain(lib, 2), lib.ones(2, dtype=lib.float64)
        checks = []
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(foo, bar)
            checks.append(foo._version == dual._version)
            foo.add_(1)
            checks.append(foo._version == dual._version)
            p, t = fw(lib).unpack_dual(dual)
            checks.append(t is bar)
            foo.add_(1)
            checks.append(foo._version == p._version)
            bar.add_(1)
            checks.append(bar._version == t._version)
            return checks, p

    checks, p = like_torch(program)
    assert all(checks) and abs(p.numpy() - (data(2) + 2)).max() < 1e-12


def test_backward_through_make_dual_and_unpack_dual():
    # torch: test_advanced_packing_unpacking (backward mode check)
    def program(lib):
        foo, bar = leaf(lib, 2), leaf(lib, 2, seed=1)
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(foo, bar)
            p, t = fw(lib).unpack_dual(dual)
            through_primal = lib.autograd.grad(p.sum(), (foo, bar), retain_graph=True,
                                               allow_unused=True)
            through_tangent = lib.autograd.grad(t.sum(), (foo, bar), retain_graph=True,
                                                allow_unused=True)
        return through_primal, through_tangent

    (gp_foo, gp_bar), (gt_foo, gt_bar) = like_torch(program)
    assert gp_bar is None and gt_foo is None


def test_detach_drops_the_tangent_and_no_grad_keeps_it():
    # torch: test_advanced_packing_unpacking (detach, no_grad, detach_)
    def program(lib):
        foo, bar = leaf(lib, 2), leaf(lib, 2, seed=1)
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(foo, bar)
            detached = fw(lib).unpack_dual(dual.detach() * 2)
            with lib.no_grad():
                kept = fw(lib).unpack_dual(dual * 3)
            in_place = dual.clone()
            in_place.detach_()
            dropped = fw(lib).unpack_dual(in_place * 2)
            return (detached.tangent, kept.primal.requires_grad, kept.tangent.requires_grad,
                    kept.tangent, dropped.tangent)

    detached, p_req, t_req, kept, dropped = like_torch(program)
    assert detached is None and dropped is None and (p_req, t_req) == (False, False)


def test_in_place_on_a_view_of_a_dual_updates_the_tangent():
    # torch: test_view_inplace_differentiable_views
    def program(lib):
        foo, bar = _plain(lib, 2), lib.ones(2, dtype=lib.float64)
        with fw(lib).dual_level():
            dual = fw(lib).make_dual(foo, bar)
            view = dual[0:1]
            view *= 2
            results = [fw(lib).unpack_dual(foo).tangent, fw(lib).unpack_dual(dual).tangent,
                       fw(lib).unpack_dual(view).tangent]
            baz = _plain(lib, 2, seed=2)
            baz += dual
            results.append(fw(lib).unpack_dual(baz).tangent)
            qux = _plain(lib, 2, seed=3)
            qux[0] = dual[0]
            results.append(fw(lib).unpack_dual(qux).tangent)
            blocked = _plain(lib, 2, seed=4)
            detached_view = blocked.detach()
            detached_view += dual
            results.append(fw(lib).unpack_dual(blocked).tangent)
            return results

    foo_t, dual_t, view_t, baz_t, qux_t, blocked_t = like_torch(program)
    assert foo_t is None and blocked_t is None
    assert dual_t.tolist() == [2.0, 1.0] and qux_t.tolist() == [2.0, 0.0]


def _dual_after_its_level(lib):
    foo, bar = _plain(lib, 2), _plain(lib, 2, seed=1)
    with fw(lib).dual_level():
        dual = fw(lib).make_dual(foo, bar)
        inside = (fw(lib).unpack_dual(foo).tangent is None,
                  fw(lib).unpack_dual(dual).tangent is bar)
    return inside, dual


def test_tangents_are_gone_after_the_level_exits():
    # torch: test_grad_cleanup. Beyond torch (documented in forward_ad.unpack_dual): reading
    # the tangent of a dual whose level has exited raises instead of returning None.
    inside, dual = _dual_after_its_level(gradkit)
    assert inside == (True, True)
    with pytest.raises(RuntimeError, match="which has already exited, so its tangent is gone"):
        gradkit.autograd.forward_ad.unpack_dual(dual)
    if torch is not None:
        inside, dual = _dual_after_its_level(torch)
        assert inside == (True, True) and torch.autograd.forward_ad.unpack_dual(dual)[1] is None


def test_comparisons_of_duals_are_not_differentiable():
    # torch: test_non_differentiable
    def program(lib):
        with fw(lib).dual_level():
            foo = fw(lib).make_dual(_plain(lib, 2), _plain(lib, 2, seed=1))
            eq = foo == _plain(lib, 2, seed=2)
            return eq, fw(lib).unpack_dual(eq).tangent

    like_torch(program)
