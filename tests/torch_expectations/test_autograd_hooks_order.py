"""torch's expectations of hook order (tensor, node, post-accumulate) and grad()'s newer options."""
import gc
import warnings
import weakref

import pytest

from .functions import mul2
from .twin import data, leaf, like_torch, raises_like_torch


def test_post_accumulate_grad_hook_on_a_non_leaf_is_refused():
    # torch: test_post_accumulate_grad_hook_on_non_leaf
    raises_like_torch(lambda lib: (2.0 * leaf(lib, 3)).register_post_accumulate_grad_hook(
        lambda t: None), RuntimeError,
        "post accumulate grad hooks cannot be registered on non-leaf tensors")


def test_post_accumulate_grad_hooks_run_in_order_on_each_tensor():
    # torch: test_post_accumulate_grad_hook_multiple_hooks, ..._multiple_tensors
    def program(lib):
        t, u = leaf(lib, 3), leaf(lib, 5, seed=1)

        def step(tensor):
            with lib.no_grad():
                tensor.sub_(tensor.grad)

        def scale(tensor):
            with lib.no_grad():
                tensor.mul_(4.0)

        t.register_post_accumulate_grad_hook(step)
        t.register_post_accumulate_grad_hook(scale)
        u.register_post_accumulate_grad_hook(step)
        t.sum().backward()
        u.sum().backward()
        return t, u

    t, u = like_torch(program)
    assert abs(t.detach().numpy() - 4 * (data(3) - 1)).max() < 1e-12


def test_post_accumulate_grad_hook_returning_a_value_is_an_error():
    # torch: test_post_accumulate_grad_hook_returns_not_None
    def program(lib):
        t = leaf(lib, 2, 3)
        t.register_post_accumulate_grad_hook(lambda tensor: tensor.grad)
        t.sum().backward()

    raises_like_torch(program, RuntimeError, "hooks should return None.")


def test_post_accumulate_grad_hook_lives_as_long_as_its_tensor():
    # torch: test_post_accumulate_grad_hook_gets_cleaned_up
    def make(lib):
        captured = lib.ones(3, dtype=lib.float64)

        def hook(tensor):
            with lib.no_grad():
                tensor.add_(captured)

        t = leaf(lib, 3)
        t.register_post_accumulate_grad_hook(hook)
        t.sum().backward()
        return t, weakref.ref(captured)

    def program(lib):
        t, ref = make(lib)
        gc.collect()
        alive = ref() is not None
        del t
        gc.collect()
        return alive, ref() is None

    assert like_torch(program) == (True, True)


def test_hooks_around_accumulate_grad_run_in_torch_order():
    # torch: test_post_accumulate_grad_hook_ordering
    def program(lib):
        t = leaf(lib, 3)
        acc = t.view_as(t).grad_fn.next_functions[0][0]
        t.register_hook(lambda g: g.sub(2.0))
        acc.register_prehook(lambda gs: (gs[0].div(5.0),))

        def post_acc(tensor):
            with lib.no_grad():
                tensor.grad.add_(0.5)

        def node_post(grad_in, grad_out):
            t.grad = grad_out[0].mul(10)

        t.register_post_accumulate_grad_hook(post_acc)
        acc.register_hook(node_post)
        t.sum().backward()
        return t.grad

    assert (like_torch(program).numpy() == 3.0).all()  # ((1 - 2) / 5 + 0.5) * 10


def test_tensor_hooks_run_before_node_prehooks():
    # torch: test_prehook_ordering
    def program(lib):
        log = []

        def tensor_hook(g):
            log.append(1)
            return g * 3

        def node_prehook(gs):
            log.append(2)
            return tuple(g * 2 for g in gs)

        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(node_prehook)
        b.register_hook(tensor_hook)
        b.grad_fn.register_prehook(node_prehook)
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(tensor_hook)
        acc.register_prehook(node_prehook)
        a.register_hook(tensor_hook)
        logs = []
        b.sum().backward(retain_graph=True)
        logs.append(list(log))
        log.clear()
        lib.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
        logs.append(list(log))
        log.clear()
        b.retain_grad()
        b.sum().backward(inputs=(b,))
        logs.append(list(log))
        return logs, a.grad, b.grad

    logs, a_grad, b_grad = like_torch(program)
    assert logs == [[1, 2, 2, 1, 1, 2], [1, 2, 2, 1, 1], [1, 2, 2]]


@pytest.mark.parametrize("hook_before_retain", [True, False])
def test_retained_grad_sees_tensor_hooks_registered_before_and_after(hook_before_retain):
    # torch: test_retains_grad_can_always_observe_tensor_prehook
    def program(lib):
        b = lib.tensor(1.0, dtype=lib.float64, requires_grad=True).clone()
        if hook_before_retain:
            b.register_hook(lambda g: g * 2)
        b.retain_grad()
        b.register_hook(lambda g: g * 2)
        b.clone().backward()
        return b.grad

    assert float(like_torch(program)) == (4.0 if hook_before_retain else 2.0)


def test_accumulate_grad_node_hooks_see_the_tensor_hook_result():
    # torch: test_accumulate_grad_posthooks_can_observe_tensor_prehook
    def program(lib):
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        seen = []
        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(lambda grad_in, grad_out: seen.append(
            ("post", len(grad_in), float(grad_out[0]))))
        acc.register_prehook(lambda grad_out: seen.append(("pre", len(grad_out),
                                                           float(grad_out[0]))))
        a.register_hook(lambda g: g * 2)
        b.backward()
        return seen

    assert like_torch(program) == [("pre", 1, 2.0), ("post", 0, 2.0)]


def test_hooks_of_a_leaf_outside_inputs_do_not_run():
    # torch: test_accumulate_grad_posthooks_should_not_execute
    def program(lib):
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        a.register_hook(lambda g: 1 / 0)
        c = a.clone()
        c.grad_fn.next_functions[0][0].register_hook(lambda gi, go: 1 / 0)
        (a + b + c).sum().backward(inputs=[b])
        return b.grad, a.grad

    like_torch(program)


@pytest.mark.parametrize("call,counts", [
    ("grad b", (1, 0, 0)), ("grad a b", (2, 1, 1)), ("backward", (2, 2, 2)),
    ("backward a b", (2, 2, 2))])
def test_which_hooks_grad_and_backward_run(call, counts):
    # torch: test_hook_edge_case_when_called_with_grad
    def program(lib):
        n = {"tensor": 0, "pre": 0, "post": 0}
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        b = a * 2
        c = b * 2
        bump = lambda key: (lambda *args: n.__setitem__(key, n[key] + 1))  # noqa: E731
        a.register_hook(bump("tensor"))
        b.register_hook(bump("tensor"))
        acc = b.grad_fn.next_functions[0][0]
        for node in (acc, b.grad_fn):
            node.register_hook(bump("post"))
            node.register_prehook(bump("pre"))
        if call == "grad b":
            lib.autograd.grad(c, inputs=(b,), retain_graph=True)
        elif call == "grad a b":
            lib.autograd.grad(c, inputs=(a, b), retain_graph=True)
        elif call == "backward":
            c.backward(retain_graph=True)
        else:
            c.backward(inputs=(a, b), retain_graph=True)
        return n["tensor"], n["post"], n["pre"]

    assert like_torch(program) == counts


@pytest.mark.parametrize("custom", [False, True])
def test_node_prehooks_and_posthooks_see_and_change_gradients(custom):
    # torch: test_grad_fn_prehooks
    def program(lib):
        a = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        b = mul2(lib, custom)(a)
        seen = []

        def prehook(grad_output):
            seen.append(("pre", float(grad_output[0])))
            return (grad_output[0] * 2,)

        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_hook(lambda gi, go: seen.append(("post", float(gi[0]), float(go[0]))))
        b.sum().backward()
        return seen, a.grad

    seen, grad = like_torch(program)
    assert seen[-1] == ("post", 16.0, 8.0) and float(grad) == 16.0


def test_grad_with_materialize_grads_gives_zeros_for_unused():
    # torch: test_grad_materialize_grads, test_unused_grad_requires_grad_with_materialize
    def program(lib):
        x = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        dydx = lib.autograd.grad(x * a, x, create_graph=True)
        none = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
        zero = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True,
                                 materialize_grads=True)
        third = lib.autograd.grad(zero, x, materialize_grads=True)
        u, v = leaf(lib, 10), leaf(lib, 10, seed=1)
        g = lib.autograd.grad((u ** 2).sum(), (u, v), allow_unused=True, materialize_grads=True)
        return none[0], float(zero[0]), float(third[0]), [t.requires_grad for t in g], g[1]

    none, zero, third, requires, unused = like_torch(program)
    assert none is None and zero == 0 == third and requires == [False, False]
    raises_like_torch(lambda lib: lib.autograd.grad(
        leaf(lib, 2).sum(), leaf(lib, 2), allow_unused=False, materialize_grads=True),
        ValueError, "Expected allow_unused to be True or not passed when")


def test_grad_with_empty_inputs_is_refused():
    # torch: test_grad_empty_inputs (torch 2.13's words; newer torch says ValueError
    # "grad requires non-empty inputs.")
    raises_like_torch(lambda lib: lib.autograd.grad(2 * leaf(lib, 1), [],
                                                    grad_outputs=lib.ones(1, dtype=lib.float64)),
                      RuntimeError, r"`inputs` argument to `grad\(\)` cannot be empty\.")


def test_unreachable_inputs_do_not_run_unrelated_nodes():
    # torch: test_grad_unreachable_discovery
    def program(lib):
        class MustNotRun(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                raise AssertionError("This node should not be executed!")

        x = MustNotRun.apply(leaf(lib, 1) * 2)
        y, z = leaf(lib, 1, seed=1), leaf(lib, 1, seed=2)
        g_only_y = lib.autograd.grad(x, (y,), allow_unused=True)
        gy, gz = lib.autograd.grad(MustNotRun.apply(leaf(lib, 1) * 2) + z, (y, z),
                                   allow_unused=True)
        lib.autograd.backward(MustNotRun.apply(leaf(lib, 1) * 2), inputs=(y,))
        return g_only_y, gy, gz, y.grad

    g_only_y, gy, gz, y_grad = like_torch(program)
    assert g_only_y == (None,) and gy is None and gz is not None and y_grad is None


def test_batched_grad_outputs():
    # torch: test_grad_batched_grad
    def program(lib):
        x = leaf(lib, 2, 2)
        batched = lib.arange(3, dtype=lib.float64).reshape(3, 1, 1).expand(3, 2, 2)
        g1, = lib.autograd.grad(x.clone(), (x,), (batched,), is_grads_batched=True)
        g2, = lib.autograd.grad(x.sum(), (x,), (lib.arange(3, dtype=lib.float64),),
                                is_grads_batched=True)
        return g1, g2

    like_torch(program)

    def mismatch(lib):
        x = leaf(lib, 2, 2)
        lib.autograd.grad(x.clone(), (x,), (lib.ones(2, 2, dtype=lib.float64),),
                          is_grads_batched=True)

    raises_like_torch(mismatch, RuntimeError, "If `is_grads_batched=True`, we interpret the first")


def test_grad_of_a_non_leaf_warns_unless_retained():
    # torch: test_tensor_grad_warnings
    def program(lib):
        counts = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = lib.empty(1, dtype=lib.float64).requires_grad_()
            _ = t.grad
            counts.append(len(caught))
            t = t.clone()
            _ = t.grad
            counts.append(len(caught))
            t.retain_grad()
            _ = t.grad
            counts.append(len(caught))
        return counts

    assert like_torch(program) == [0, 1, 1]


def test_grad_mode_decorating_a_class_is_deprecated():
    # torch: test_grad_mode_class_decoration
    def program(lib):
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            @lib.no_grad()
            class Foo:
                def __init__(self):
                    self.enabled_in_init = lib.is_grad_enabled()

                def method(self):
                    return lib.is_grad_enabled()

            foo = Foo()
        return foo.enabled_in_init, foo.method()

    assert like_torch(program) == (False, True)
