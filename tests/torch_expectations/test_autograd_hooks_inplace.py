"""torch's expectations of node hooks and tensor hooks across in-place ops, backward(inputs=)."""
import pytest

from .functions import mul2
from .twin import data, leaf, like_torch, raises_like_torch


@pytest.mark.parametrize("custom", [False, True])
def test_prehooks_returning_none_keep_the_gradient(custom):
    # torch: test_grad_fn_prehooks (counts, None and identity returns)
    def program(lib):
        counts = {"pre": 0, "post": 0}
        a = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        b = mul2(lib, custom)(a)

        def posthook(grad_input, grad_output):
            counts["post"] += 1
            return grad_input

        def prehook(grad_output):
            counts["pre"] += 1
            return (grad_output[0] * 2,)

        b.grad_fn.register_hook(posthook)
        b.grad_fn.register_hook(posthook)
        for hook in (prehook, lambda g: None, prehook, prehook, lambda g: g, lambda g: None):
            b.grad_fn.register_prehook(hook)
        b.sum().backward()
        first = a.grad
        c = leaf(lib, 3, 3)
        d = mul2(lib, custom)(c)
        d.grad_fn.register_prehook(lambda g: None)
        d.sum().backward()
        return counts, first, c.grad

    counts, first, second = like_torch(program)
    assert counts == {"pre": 3, "post": 2} and float(first) == 16 and (second.numpy() == 2).all()


def test_prehook_of_a_multi_output_function_sees_all_its_grads():
    # torch: test_grad_fn_prehooks_multiple_outputs (the custom Function part)
    def program(lib):
        seen = []

        class DoubleMul2(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                ctx.k = k
                return k * x * 2, k, k * y * 2

            @staticmethod
            def backward(ctx, g1, _k, g2):
                return ctx.k * g1 * 2, None, ctx.k * g2 * 2

        def prehook(grad_output):
            g1, gk, g2 = grad_output
            seen.append(gk is None)
            return (g1 * 2, None, g2 * 2)

        a, b = leaf(lib, 3, 3), leaf(lib, 3, 3, seed=1)
        c, _, d = DoubleMul2.apply(a, 3, b)
        c.grad_fn.register_prehook(prehook)
        (c + d).sum().backward()
        return seen, a.grad, b.grad

    seen, a_grad, b_grad = like_torch(program)
    assert seen == [True] and (a_grad.numpy() == 12).all() and (b_grad.numpy() == 12).all()


def test_var_mean_prehook_doubles_both_grads():
    # torch: test_grad_fn_prehooks_multiple_outputs (the var_mean part)
    def program(lib):
        b = leaf(lib, 3, 3)
        var, mean = lib.var_mean(b, dim=0)
        (var + mean).sum().backward()
        a = b.detach().requires_grad_()
        var, mean = lib.var_mean(a, dim=0)
        mean.grad_fn.register_prehook(lambda gs: (gs[0] * 2, gs[1] * 2))
        (var + mean).sum().backward()
        return a.grad, b.grad

    a_grad, b_grad = like_torch(program)
    assert abs(a_grad.numpy() - 2 * b_grad.numpy()).max() < 1e-12


@pytest.mark.parametrize("custom", [False, True])
def test_removing_prehooks_before_and_during_backward(custom):
    # torch: test_grad_fn_prehooks_remove_hooks
    def program(lib):
        counter = [0]

        def count(g):
            counter[0] += 1

        a = leaf(lib, 3, 3)
        b = mul2(lib, custom)(a)
        handle = b.grad_fn.register_prehook(count)
        b.grad_fn.register_prehook(count)
        handle.remove()
        b.sum().backward()
        counts = [counter[0]]
        counter[0] = 0
        c = leaf(lib, 3, 3, seed=1)
        d = mul2(lib, custom)(c)
        handles = {}

        def remover(g):
            handles["second"].remove()
            handles["third"].remove()  # removing twice is fine

        d.grad_fn.register_prehook(remover)
        handles["second"] = d.grad_fn.register_prehook(count)
        handles["third"] = d.grad_fn.register_prehook(count)
        handles["third"].remove()
        d.sum().backward()
        counts.append(counter[0])
        return counts, a.grad, c.grad

    assert like_torch(program)[0] == [1, 1]


def test_retain_grad_follows_in_place_updates():
    # torch: test_retain_grad_inplace, test_retain_grad_inplace_over_view
    def program(lib):
        grads = []
        for times in (1, 2):
            a = lib.tensor([1.0], dtype=lib.float64, requires_grad=True).clone()
            a.retain_grad()
            for _ in range(times):
                a.mul_(2)
            a.sum().backward()
            grads.append(a.grad)
        base = lib.tensor([1.0], dtype=lib.float64, requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2).sum().backward()
        grads += [view.grad, view2.grad]
        x = lib.zeros(4, dtype=lib.float64)
        x.view(2, 2).add_(leaf(lib, 2, 2))  # a base without grad: nothing to move
        return grads

    assert [float(g) for g in like_torch(program)] == [1.0, 1.0, 1.0, 1.0]


def _double_mul(lib):
    class DoubleMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    return DoubleMul.apply


@pytest.mark.parametrize("fn", ["custom", "var_mean"])
def test_retain_grad_of_multi_output_node_after_in_place(fn):
    # torch: test_retains_grad_inplace_multiple_outputs
    def program(lib):
        op = _double_mul(lib) if fn == "custom" else (lambda t: lib.var_mean(t, dim=0))
        b = leaf(lib, 3, 3)
        var, mean = op(b)
        var.retain_grad()
        mean.retain_grad()
        var.mul_(2)
        (var + mean).sum().backward()
        a = b.detach().requires_grad_(True)
        v2, m2 = op(a)
        v2.mul_(2)
        expected = lib.autograd.grad((v2 + m2).sum(), inputs=(v2, m2))
        return (var.grad, mean.grad), expected

    (gvar, gmean), (evar, emean) = like_torch(program)
    assert (gvar.numpy() == evar.numpy()).all() and (gmean.numpy() == emean.numpy()).all()


def test_tensor_hooks_registered_before_and_after_in_place():
    # torch: test_tensor_hooks_inplace
    def program(lib):
        seen = []
        a = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        b = a.clone()
        b.register_hook(lambda g: (seen.append(("old", float(g))), g * 2)[1])
        b.mul_(2)
        b.register_hook(lambda g: (seen.append(("new", float(g))), g * 2)[1])
        b.sum().backward()
        first = a.grad
        c = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        d = c.clone()
        d.register_hook(lambda g: (seen.append(("twice", float(g))), g * 2)[1])
        d.mul_(2)
        d.mul_(2)
        d.sum().backward()
        return seen, first, c.grad

    seen, first, second = like_torch(program)
    assert seen == [("new", 1.0), ("old", 4.0), ("twice", 4.0)]
    assert float(first) == 8.0 == float(second)


@pytest.mark.parametrize("fn", ["custom", "var_mean"])
def test_tensor_hooks_on_multi_output_node_after_in_place(fn):
    # torch: test_tensor_hooks_inplace_multiple_outputs
    def program(lib):
        op = _double_mul(lib) if fn == "custom" else (lambda t: lib.var_mean(t, dim=0))
        seen = []
        b = leaf(lib, 3, 3)
        out1, out2 = op(b)
        out1.register_hook(lambda g: seen.append(("out1 old", g.detach().clone())))
        out2.register_hook(lambda g: seen.append(("out2", g.detach().clone())))
        out1.mul_(2)
        out1.register_hook(lambda g: seen.append(("out1 new", g.detach().clone())))
        (out1 + out2 * 3).sum().backward()
        return sorted(seen, key=lambda p: p[0])

    seen = like_torch(program)
    assert [name for name, _ in seen] == ["out1 new", "out1 old", "out2"]


def test_tensor_hooks_on_views_after_in_place_on_a_sibling_view():
    # torch: test_tensor_hooks_inplace_over_view
    def program(lib):
        seen = []
        base = lib.tensor([1.0], dtype=lib.float64, requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.register_hook(lambda g: seen.append("view old"))
        view2.register_hook(lambda g: seen.append("view2 old"))
        view.mul_(2)
        view2.grad_fn  # noqa: B018 - torch needs the access to refresh view2's grad_fn
        view2.register_hook(lambda g: seen.append(("view2 new", float(g))))
        (view + view2).sum().backward()
        return seen

    assert like_torch(program) == [("view2 new", 1.0)]


def test_backward_with_inputs_accumulates_only_into_them():
    # torch: test_backward_with_inputs, test_backward_with_scalar_input
    def program(lib):
        x, y = leaf(lib, 2, 2), leaf(lib, 2, 2, seed=1)
        seed = lib.ones(2, 2, dtype=lib.float64)
        results = []
        for inputs in ([x, y], [x], [y], y):
            x.grad = y.grad = None
            lib.autograd.backward(x ** 2 + y * x + y ** 2, seed, inputs=inputs)
            results.append((x.grad, y.grad))
        s = leaf(lib, seed=2)
        (s ** 2).backward(inputs=s)
        return results, s.grad

    like_torch(program)
    raises_like_torch(lambda lib: lib.autograd.backward(
        leaf(lib, 2).sum(), inputs=[]), RuntimeError, "cannot be empty")


def test_backward_with_non_leaf_inputs_and_an_unused_one():
    # torch: test_backward_with_nonleaf_inputs
    def program(lib):
        x, y, z = leaf(lib, 2, 2), leaf(lib, 2, 2, seed=1), leaf(lib, 2, 2, seed=2)
        xn = x * 1
        out = xn ** 2 + y * xn + y ** 2
        seed = lib.ones(2, 2, dtype=lib.float64)
        out.backward(seed, create_graph=True, inputs=[x, y, xn])
        grads = [g.detach().clone() for g in (x.grad, y.grad, xn.grad)]
        out.backward(seed, create_graph=True, inputs=[z])
        return grads, z.grad

    grads, z_grad = like_torch(program)
    assert z_grad is None
    x, y = data(2, 2), data(2, 2, seed=1)
    assert abs(grads[0].numpy() - (2 * x + y)).max() < 1e-12


def test_saved_variables_is_deprecated():
    # torch: test_saved_variables_deprecated
    def program(lib):
        class Add(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a + b

            @staticmethod
            def backward(ctx, g):
                ctx.saved_variables  # noqa: B018 - the deprecated spelling is the subject
                return g, g

        with pytest.warns(Warning, match="saved_variables"):
            Add.apply(leaf(lib, 3), leaf(lib, 3, seed=1)).sum().backward()

    like_torch(program)
