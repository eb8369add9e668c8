"""torch's expectations of multi-grad hooks ("all" and "any"), a module's full backward hook in
double backward, and gradients handed to backward staying untouched."""
import copy
import functools

import pytest

from .twin import data, like_torch, raises_like_torch


def _leaf(lib, *shape, seed=0):
    return lib.tensor(data(*shape, seed=seed), dtype=lib.float64, requires_grad=True)


def test_all_mode_hook_runs_when_any_of_its_tensors_is_reached():
    # torch: test_multi_grad_all_hooks (built-in and custom Function nodes; the C++ ones are
    # torch's own)
    def program(lib):
        class Copy(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        class Fails(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("error message")

        t1, t2, t3, t4 = (_leaf(lib, 2, seed=i) for i in range(4))
        t1, t2, t3, t4 = t1.mul(2), Copy.apply(t2), t3 * 1, t4.clone()
        calls = []
        handle = lib.autograd.graph.register_multi_grad_hook(
            (t1, t2, t3, t4), lambda grads: calls.append([g is not None for g in grads]))
        out = t2 * t3
        out.sum().backward(inputs=(t2, t3), retain_graph=True)
        out.sum().backward(inputs=(t1, t4), retain_graph=True)
        out.sum().backward(inputs=(t1, t3), retain_graph=True)
        failing = Fails.apply(t2) * t3
        try:
            failing.sum().backward(inputs=(t2, t3), retain_graph=True)
        except RuntimeError as error:
            calls.append(str(error))
        handle.remove()
        out.sum().backward(inputs=(t1, t3), retain_graph=True)
        return calls

    assert like_torch(program) == [[False, True, True, False], [False, False, True, False],
                                   "error message"]


def test_any_mode_hook_runs_once_before_the_tensor_hooks():
    # torch: test_multi_grad_any_hooks (our blocks are functions, not nn.Modules)
    def program(lib):
        order, handles = [], []
        weights = [_leaf(lib, 3, 3, seed=i) for i in range(2)]

        def hook(hook_id, *unused):
            order.append(hook_id)

        def block(x, weight, first_id):
            z = x @ weight
            out = lib.sin(z), lib.cos(z)
            z.register_hook(functools.partial(hook, first_id))
            handles.append(lib.autograd.graph.register_multi_grad_hook(
                out, functools.partial(hook, first_id + 1), mode="any"))
            return out

        def model(x):
            y = block(x, weights[0], 0)
            return block(y[0] + y[1], weights[1], 2)

        inp = lib.tensor(data(2, 3, seed=5), dtype=lib.float64)
        out = model(inp)
        (out[0] + out[1]).sum().backward()
        first = list(order)
        order.clear()
        out = model(inp)
        for handle in handles[2:]:
            handle.remove()
        (out[0] + out[1]).sum().backward()
        return first, order

    assert like_torch(program) == ([3, 2, 1, 0], [2, 0])


def test_unknown_multi_grad_hook_mode_is_refused():
    # torch: test_multi_grad_hooks_invalid_mode
    raises_like_torch(lambda lib: lib.autograd.graph.register_multi_grad_hook(
        (_leaf(lib, 2), _leaf(lib, 2, seed=1)), lambda _: None, mode="foo"), ValueError,
        r"Expects mode to be one of \('all', 'any'\) but got foo")


def test_full_backward_hook_runs_in_backward_not_in_double_backward():
    # torch: test_full_backward_hook_double_backward
    def program(lib):
        x, y = _leaf(lib, 1), lib.tensor(data(1, seed=1), dtype=lib.float64)
        loss = lib.nn.MSELoss()
        calls = []
        loss.register_full_backward_hook(lambda module, grad_in, grad_out: calls.append(1))
        gx, = lib.autograd.grad(loss(x, y), x, create_graph=True)
        after_first = len(calls)
        lib.autograd.grad(gx, x)
        return after_first, len(calls)

    assert like_torch(program) == (1, 1)


@pytest.mark.parametrize("second", ["gather", "select"])
def test_gradients_given_to_backward_are_not_written(second):
    # torch: test_input_buffer_accum (dense: gradkit has no sparse gradients)
    def program(lib):
        leaf = _leaf(lib, 2, 2)
        out2 = leaf.gather(0, lib.tensor([[0, 0]])) if second == "gather" else leaf[0]
        out1 = leaf.clone()
        grad1 = lib.tensor(data(2, 2, seed=1), dtype=lib.float64)
        original = grad1.clone()
        lib.autograd.backward((out1, out2), (grad1, lib.ones_like(out2)))
        return grad1 - original, leaf.grad

    change, _ = like_torch(program)
    assert not change.numpy().any()


def test_optimizer_steps_in_post_accumulate_grad_hooks_match_a_plain_loop():
    # torch: test_post_accumulate_grad_hook_e2e
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        twin_model = copy.deepcopy(model)
        optims = {}
        def step_in_backward(param):
            optims[param].step()
            optims[param].zero_grad()

        for p in model.parameters():
            optims[p] = lib.optim.Adam([p])
            p.register_post_accumulate_grad_hook(step_in_backward)
        plain = lib.optim.Adam(twin_model.parameters())
        inp = lib.tensor(data(2, 3, seed=4), dtype=lib.float32)
        for _ in range(5):
            model(inp).sum().backward()
            twin_model(inp).sum().backward()
            plain.step()
            plain.zero_grad()
        return [p.detach() - q.detach()
                for p, q in zip(model.parameters(), twin_model.parameters())]

    assert all(not d.numpy().any() for d in like_torch(program))


def test_an_empty_leaf_gets_an_empty_zero_gradient():
    # torch: test_accumulate_grad_with_zero_numel_grad
    def program(lib):
        a, b = lib.zeros(4, 0, requires_grad=True), lib.ones(4, 1, requires_grad=True)
        c = a + b
        c.sum().backward()
        return tuple(c.shape), a.grad, b.grad

    shape, a_grad, b_grad = like_torch(program)
    assert shape == (4, 0) and a_grad.shape == (4, 0) and not b_grad.numpy().any()
