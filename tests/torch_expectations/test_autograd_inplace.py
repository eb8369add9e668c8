"""torch's expectations of in-place ops, version counters, setitem and indexing gradients."""
import numpy as np
import pytest

from .twin import data, leaf, like_torch, raises_like_torch


def _ones(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


def test_in_place_on_a_saved_tensor_breaks_only_its_users():
    # torch: test_inplace
    def program(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        y = (_ones(lib, 5, 5) * 4).requires_grad_(True)
        z = x * y
        q, w = z + y, z * y
        z.add_(2)
        q.backward(_ones(lib, 5, 5), retain_graph=True)  # add saves nothing: fine
        try:
            w.backward(_ones(lib, 5, 5))  # mul saved z: modified
            w_ok = True
        except RuntimeError as e:
            w_ok = "modified by an inplace operation" in str(e)
        z = x * y
        q, r = z * y, z + y
        w = z.add_(y)
        w.backward(_ones(lib, 5, 5), retain_graph=True)
        r.backward(_ones(lib, 5, 5), retain_graph=True)
        try:
            q.backward(_ones(lib, 5, 5))
            q_ok = True
        except RuntimeError as e:
            q_ok = "modified by an inplace operation" in str(e)
        return w_ok, q_ok, x.grad, y.grad

    w_failed, q_failed, _, _ = like_torch(program)
    assert w_failed is True and q_failed is True


def test_exp_in_place_bumps_version_and_backward_uses_its_output():
    # torch: test_inplace (the exp_ part)
    def program(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        y = (_ones(lib, 5, 5) * 4).requires_grad_(True)
        z = x / 2 + y / 8
        r = z + y
        before = z._version
        w = z.exp_()
        r.backward(_ones(lib, 5, 5), retain_graph=True)
        after_r = x.grad.clone()
        w.backward(_ones(lib, 5, 5), retain_graph=True)
        return w is z, z._version != before, after_r, x.grad

    same, bumped, after_r, x_grad = like_torch(program)
    assert same and bumped
    np.testing.assert_allclose(x_grad.numpy(), (1 + np.e) / 2)
    raises_like_torch(_backward_through_stale_mul, RuntimeError,
                      "modified by an inplace operation")


def _backward_through_stale_mul(lib):
    x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
    z = x / 2
    q = z * z
    z.exp_()
    q.backward(_ones(lib, 5, 5))


def test_clone_of_leaf_stays_usable_after_in_place():
    # torch: test_inplace (the clone part)
    def program(lib):
        leaf_ = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        x = leaf_.clone()
        x.add_(10)
        (x + 2).backward(_ones(lib, 5, 5))
        return x, leaf_.grad

    x, grad = like_torch(program)
    assert (x.detach().numpy() == 11).all() and (grad.numpy() == 1).all()

    def stale(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True).clone()
        z = x * (x + 2)
        x.add_(2)
        z.backward(_ones(lib, 5, 5))

    raises_like_torch(stale, RuntimeError, "modified by an inplace operation")


def test_next_functions_of_add():
    # torch: test_next_functions
    def program(lib):
        x, y = leaf(lib, 5, 5), leaf(lib, 5, 5, seed=1)
        a = x + y
        nf = a.grad_fn.next_functions
        b = a + 5
        nb = b.grad_fn.next_functions
        return (len(nf), type(nf[0][0]).__name__, nf[0][1], type(nf[1][0]).__name__, nf[1][1],
                len(nb), nb[0][0] is a.grad_fn, nb[1][0])

    assert like_torch(program) == (2, "AccumulateGrad", 0, "AccumulateGrad", 0, 2, True, None)


SETITEM_INDEXES = [((5, 5), 1), ((5,), 1), ((1,), 0), ((10,), [[0, 4, 2]]),
                   ((5, 5), [[0, 4], [2, 2]]),
                   ((5, 5, 5), (slice(None), slice(None), [1, 3])),
                   ((5, 5, 5), (slice(None), [1, 3], slice(None))),
                   ((5, 5, 5), ([1, 3], slice(None), slice(None))),
                   ((5, 5, 5), (slice(None), [2, 4], [1, 3])),
                   ((5, 5, 5), ([1, 3], [2, 4], slice(None))),
                   ((5, 5), "mask"), ((5,), "mask")]


def _index(lib, shape, index):
    if index == "mask":
        return lib.tensor(data(*shape, seed=9) > 0)
    return index


@pytest.mark.parametrize("shape,index", SETITEM_INDEXES, ids=str)
def test_setitem_of_a_constant_blocks_its_gradient(shape, index):
    # torch: test_setitem, test_setitem_mask (_test_setitem)
    def program(lib):
        x = lib.ones(*shape, dtype=lib.float64, requires_grad=True)
        y = x + 2
        before = y._version
        y[_index(lib, shape, index)] = 2
        y.backward(_ones(lib, *shape))
        return y._version != before, x.grad

    assert like_torch(program)[0]


@pytest.mark.parametrize("shape,index", SETITEM_INDEXES[:3] + SETITEM_INDEXES[4:]
                         + [((5, 5), 3), ((5,), [[0, 1, 2, 3]])],
                         ids=str)
def test_setitem_of_a_tracked_value_sends_it_the_gradient(shape, index):
    # torch: test_setitem, test_setitem_mask (_test_setitem_tensor)
    def program(lib):
        x = lib.ones(*shape, dtype=lib.float64, requires_grad=True)
        y = x + 2
        idx = _index(lib, shape, index)
        value = (lib.zeros(x[idx].shape, dtype=lib.float64) + 7).requires_grad_(True)
        y[idx] = value
        y.backward(_ones(lib, *shape))
        return x.grad, value.grad

    like_torch(program)


def test_setitem_broadcasts_the_value():
    # torch: test_setitem (the broadcast case of _test_setitem_tensor)
    def program(lib):
        x = leaf(lib, 4)
        y = lib.zeros(2, 3, 4, dtype=lib.float64)
        y[1] = x
        y.backward(lib.tensor(data(2, 3, 4, seed=2)))
        return x.grad

    assert like_torch(program).shape == (4,)


INDEXES_2D = [1, (1, 1), slice(1, None), slice(None, 2), (slice(None, 2), 2),
              (slice(1, 2), 2), (1, slice(2, None)), (slice(None), slice(2, None)),
              "long", "mask", (Ellipsis, slice(2, None)), ([0], [0]), ([1, 2, 3], [0]),
              ([1, 2], [2, 1]), ([[1, 2], [3, 0]], [[0, 1], [2, 3]]),
              (slice(None), [2, 3]), ([2, 3], slice(None)), [0], ([0],),
              [1, 1, 3, 2, 1, 2], ([1, 1, 3, 2, 1, 2], [0]),
              ([[1, 2], [0, 0]], [[0, 1], [1, 1]])]
INDEXES_3D = [(slice(None), [0], [0]), ([0], [0], slice(None)), (slice(None), [0, 1, 2], [0]),
              ([0, 1, 2], [0], slice(None)), (slice(None), [1, 2], [2, 1]),
              ([1, 2], [2, 1], slice(None)), (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]),
              ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)), (slice(None), slice(None), [2, 1]),
              (slice(None), [2, 1], slice(None)), ([2, 1], slice(None), slice(None)),
              ([0], slice(None)), ([0], Ellipsis), ([1, 2], [0, 1]), ([1, 2], [0, 1], Ellipsis),
              (Ellipsis, [1, 2], [0, 1]), ([1, 1, 1], slice(None), slice(None))]


@pytest.mark.parametrize("shape,index", [((4, 4), i) for i in INDEXES_2D]
                         + [((4, 3, 4), i) for i in INDEXES_3D], ids=str)
def test_indexing_gradient_scatters_ones_with_duplicates_summed(shape, index):
    # torch: test_indexing, test_indexing_duplicates
    def program(lib):
        y = lib.arange(1., 1 + np.prod(shape), dtype=lib.float64).reshape(shape)
        y.requires_grad_(True)
        if index == "long":
            idx = lib.tensor([0, 2])
        elif index == "mask":
            idx = lib.tensor(data(*shape, seed=4) > 0)
        else:
            idx = index
        picked = y[idx]
        picked.sum().backward()
        return picked, y.grad

    like_torch(program)


def test_setitem_with_its_own_masked_values_saves_nothing_stale():
    # torch: test_index_backward_does_not_save_tensor
    def program(lib):
        a = lib.tensor([1., 0, 0], dtype=lib.float64)
        b = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        t = b + 0
        t[a != 0] = t[a != 0]
        t.backward(lib.zeros_like(t))
        return b.grad

    like_torch(program)


def test_fill_in_place_gradcheck():
    # torch: test_fill
    def program(lib):
        def fill(root):
            x = root.clone()
            x.fill_(2)
            return x

        root = leaf(lib, 4, 5)
        return (lib.autograd.gradcheck(fill, [root]), lib.autograd.gradgradcheck(fill, [root]))

    assert like_torch(program) == (True, True)


def test_stack_and_unbind_route_slices_of_the_gradient():
    # torch: test_stack, test_unbind
    def program(lib):
        x, y, z = (leaf(lib, 4, 4, seed=i) for i in range(3))
        lib.stack([x, y, z], 0).backward(lib.tensor(data(3, 4, 4, seed=5)))
        stacked = leaf(lib, 3, 4, 4, seed=6)
        grad = lib.tensor(data(3, 4, 4, seed=7))
        lib.autograd.backward(list(stacked.unbind()), list(grad.unbind()))
        singles = []
        for i in range(3):
            s = leaf(lib, 3, 4, 4, seed=8)
            singles.append(lib.autograd.grad(s.unbind()[i], s, grad.unbind()[i])[0])
        return x.grad, y.grad, z.grad, stacked.grad, singles

    like_torch(program)


def test_select_then_sum_gradcheck():
    # torch: test_select_sum
    def program(lib):
        def fn(x):
            return x.select(0, 1).sum()

        x = leaf(lib, 10)
        return lib.autograd.gradcheck(fn, [x]), lib.autograd.gradgradcheck(fn, [x])

    assert like_torch(program) == (True, True)
