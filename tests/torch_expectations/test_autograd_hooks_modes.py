"""torch's expectations of tensor hooks, retain_grad, requires_grad and grad modes."""
import gc
import weakref


import gradkit

from .twin import leaf, like_torch, raises_like_torch


def test_tensor_hooks_count_remove_and_modify():
    # torch: test_hooks
    def program(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        y = (lib.ones(5, 5, dtype=lib.float64) * 4).requires_grad_(True)
        counter = [0]

        def counting(inc):
            def hook(grad):
                assert isinstance(grad, lib.Tensor)
                counter[0] += inc
            return hook

        z = x ** 2 + x * 2 + x * y + y
        x.register_hook(counting(0))
        first = z.register_hook(counting(1))
        seed = lib.ones(5, 5, dtype=lib.float64)
        counts = []
        z.backward(seed, retain_graph=True)
        counts.append(counter[0])
        second = z.register_hook(counting(2))
        z.backward(seed, retain_graph=True)
        counts.append(counter[0])
        second.remove()
        z.backward(seed, retain_graph=True)
        counts.append(counter[0])
        first.remove()
        z.register_hook(lambda g: g.mul(2))
        y.grad = None
        z.backward(seed, retain_graph=True)
        doubled = y.grad.clone()
        y.register_hook(lambda g: g.mul(2))
        y.grad = None
        z.backward(seed)
        return counts, doubled, y.grad

    counts, doubled, quadrupled = like_torch(program)
    assert counts == [1, 4, 5]
    assert (doubled.numpy() == 4).all() and (quadrupled.numpy() == 8).all()  # (x + 1) * 2, * 4


def test_retain_grad_twice_accumulates_and_is_a_no_op_on_leaves():
    # torch: test_retain_grad
    def program(lib):
        x = leaf(lib, 1, 3)
        h = x * 3
        out = (h * h).sum()
        h.retain_grad()
        h.retain_grad()
        out.backward(retain_graph=True)
        once = h.grad.clone()
        out.backward(retain_graph=True)
        twice = h.grad.clone()
        x.grad = None
        x.retain_grad()
        x.retain_grad()
        out.backward()
        return h.retains_grad, x.retains_grad, once, twice, x.grad

    h_retains, x_retains, once, twice, x_grad = like_torch(program)
    assert h_retains and not x_retains
    assert abs(twice.numpy() - 2 * once.numpy()).max() < 1e-12


def test_retain_grad_does_not_keep_the_tensor_alive():
    # torch: test_retain_grad_cycle
    x = gradkit.ones(5, 5, requires_grad=True)
    collected = []

    def make():
        y = x * 2
        y.retain_grad()
        weakref.finalize(y, collected.append, True)
        return y / 2

    z = make()
    gc.collect()
    assert collected == [True]
    z.sum().backward()


def test_no_grad_context_and_decorator():
    # torch: test_no_grad
    def program(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        y = lib.ones(5, 5, dtype=lib.float64) * 4
        with lib.no_grad():
            w = x + y

        @lib.no_grad()
        def adder(a, b):
            return a + b

        z = adder(x, y)
        with lib.no_grad():
            inside = lib.is_grad_enabled()
            adder(x, y)
            still_inside = lib.is_grad_enabled()
        return w.requires_grad, w.grad_fn, z.requires_grad, z.grad_fn, inside, still_inside

    assert like_torch(program) == (False, None, False, None, False, False)


def test_requires_grad_propagates_and_backward_skips_constants():
    # torch: test_requires_grad
    def program(lib):
        x, y, z = leaf(lib, 5, 5, requires_grad=False), leaf(lib, 5, 5, seed=1,
                                                             requires_grad=False), leaf(lib, 5, 5)
        a = x + y
        b = a + z
        b.backward(lib.ones(5, 5, dtype=lib.float64))
        return a.requires_grad, b.requires_grad, z.grad, x.grad

    a_req, b_req, _, x_grad = like_torch(program)
    assert (a_req, b_req, x_grad) == (False, True, None)


def test_requires_grad_method_returns_self_and_refuses_non_leaves():
    # torch: test_requires_grad_
    def program(lib):
        x, y = leaf(lib, 5, 5, requires_grad=False), leaf(lib, 5, 5)
        same = [x.requires_grad_() is x, y.requires_grad_() is y,
                x.requires_grad_(True) is x, y.requires_grad_(True) is y]
        z = x * y
        same += [z.requires_grad_() is z, z.requires_grad_(True) is z]
        same += [x.requires_grad_(False) is x, y.requires_grad_(False) is y]
        return same, x.requires_grad, y.requires_grad, z.requires_grad

    same, x_req, y_req, z_req = like_torch(program)
    assert all(same) and (x_req, y_req, z_req) == (False, False, True)
    raises_like_torch(lambda lib: (leaf(lib, 2) * 2).requires_grad_(False), RuntimeError,
                      "you can only change requires_grad flags of leaf variables")


def test_in_place_add_of_a_tracked_tensor_makes_the_target_track():
    # torch: test_requires_grad_inplace
    def program(lib):
        a = leaf(lib, 5, 5, requires_grad=False)
        a += leaf(lib, 5, 5, seed=1)
        b = leaf(lib, 5, 5, requires_grad=False) + 0
        b += leaf(lib, 5, 5, seed=1)
        return a.requires_grad, b.requires_grad

    assert like_torch(program) == (True, True)


def test_in_place_before_requires_grad_is_fine_after_is_an_error():
    # torch: test_no_requires_grad_inplace
    def program(lib):
        a = leaf(lib, 2, 3, requires_grad=False)
        a.add_(5)
        a.requires_grad = True
        a.sum().backward()
        b = leaf(lib, 2, 3, requires_grad=False)
        b[:].add_(5)
        b.requires_grad = True
        b.sum().backward()
        return a.grad, b.grad

    like_torch(program)

    def leaf_in_place(lib):
        a = leaf(lib, 2, 3, requires_grad=False)
        a.requires_grad = True
        a.add_(5)

    raises_like_torch(leaf_in_place, RuntimeError, "a leaf Variable that requires grad")


def test_in_place_on_an_older_view_of_a_leaf_that_requires_grad_is_an_error():
    # torch: test_no_requires_grad_inplace (the view part)
    def view_of_leaf_in_place(lib):
        a = leaf(lib, 2, 3, requires_grad=False)
        b = a[:]
        a.requires_grad = True
        b.add_(5)

    raises_like_torch(view_of_leaf_in_place, RuntimeError, "a view of a leaf Variable")


def test_deleting_grad_resets_it():
    # torch: test_attribute_deletion
    def program(lib):
        x = leaf(lib, 5, 5)
        x.grad = lib.ones(5, 5, dtype=lib.float64)
        del x.grad
        return x.grad

    assert like_torch(program) is None


def test_deleting_data_or_requires_grad_is_refused():
    # torch: test_attribute_deletion (the refusals)
    def delete(name):
        def program(lib):
            delattr(leaf(lib, 5, 5), name)
        return program

    raises_like_torch(delete("requires_grad"), RuntimeError, "requires_grad must be a bool")
    raises_like_torch(delete("data"), RuntimeError, "Deleting tensor data is not allowed")
