"""torch's per-op autograd tests (test_autograd.py) for ops gradkit has gained since the first
reading: joining (cat, hstack, vstack, dstack, block_diag, broadcast_tensors), trapz,
var_mean, put_, lerp, diagonal, nansum, cdist, and two graph tests through nn layers
(BatchNorm1d with a hook, InstanceNorm2d and an in-place threshold under double backward).

torch's ``run_functional_checks`` runs gradcheck, gradgradcheck and compares the values; each
test here does the same in float64 and compares the program's outputs and gradients with
torch's."""
import numpy as np
import pytest

from .twin import data, leaf, like_torch

S = 5


def _checks(lib, fn, inputs, gradgrad: bool = True):
    """gradcheck (and gradgradcheck) of ``fn`` at ``inputs``; then its value and the gradient
    of the sum of its outputs, for comparing with torch."""
    assert lib.autograd.gradcheck(fn, inputs)
    if gradgrad:
        assert lib.autograd.gradgradcheck(fn, inputs)
    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    grads = lib.autograd.grad(sum(o.sum() for o in outs), inputs, allow_unused=True)
    return [o.detach() for o in outs], list(grads)


def _leaves(lib, *shapes):
    """float64 leaves of these shapes; empty ones made by ``zeros`` because torch gives a
    tensor built from an empty NumPy array zero strides, which its gradcheck refuses."""
    return tuple(lib.zeros(shape, dtype=lib.float64, requires_grad=True) if 0 in shape
                 else leaf(lib, *shape, seed=i) for i, shape in enumerate(shapes))


def test_broadcast_tensors_gradients():
    # torch: test_broadcast_tensors
    def program(lib):
        inputs = _leaves(lib, (3,), (1, 2, 1), (1, 1), (5, 1, 1))
        return _checks(lib, lambda a, b, c, d: lib.broadcast_tensors(a, b, c, d), inputs)

    outs, _ = like_torch(program)
    assert all(o.shape == (5, 2, 3) for o in outs)


def test_block_diag_gradients():
    # torch: test_block_diag
    def program(lib):
        inputs = _leaves(lib, (1, S), (2, S), (3, S))
        return _checks(lib, lambda a, b, c: lib.block_diag(a, b, c), inputs)

    (out,), _ = like_torch(program)
    assert out.shape == (6, 3 * S)


@pytest.mark.parametrize("shapes, dim", [
    (((1, S, S), (2, S, S), (3, S, S)), 0),   # test_cat
    (((S, S, 1), (S, S, 2), (S, S, 3)), -1),  # test_cat_negdim_1
    (((S, 1, S), (S, 2, S), (S, 3, S)), -2),  # test_cat_negdim_2
])
def test_cat_gradients(shapes, dim):
    # torch: test_cat, test_cat_negdim_1, test_cat_negdim_2
    def program(lib):
        return _checks(lib, lambda a, b, c: lib.cat((a, b, c), dim), _leaves(lib, *shapes))

    (out,), _ = like_torch(program)
    assert out.shape[dim] == 6


def test_cat_with_an_empty_tensor():
    # torch: test_cat_empty (a (0, S) block), test_cat_empty_legacy (a 1-D empty tensor,
    # which cat skips whatever the other shapes; torch runs no gradgradcheck on that one)
    def program(lib):
        empty_block = _checks(lib, lambda a, b: lib.cat((a, b)), _leaves(lib, (0, S), (S, S)))
        legacy = _checks(lib, lambda a, b: lib.cat((a, b)), _leaves(lib, (0,), (S, S)), False)
        return empty_block, legacy

    (_, (empty_grad, _)), (_, (legacy_grad, _)) = like_torch(program)
    assert empty_grad.shape == (0, S) and legacy_grad.shape == (0,)


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack"])
def test_stack_family_gradients(name):
    # torch: test_hstack, test_vstack, test_dstack
    def program(lib):
        stack = getattr(lib, name)
        vectors = _checks(lib, lambda a, b: stack((a, b)), _leaves(lib, (S,), (S,)))
        matrices = _checks(lib, lambda a, b, c: stack((a, b, c)), _leaves(lib, (S, S),) * 3)
        return vectors, matrices

    like_torch(program)


def test_trapz_gradients():
    # torch: test_trapz (y and sample points x, both differentiable)
    def program(lib):
        y = leaf(lib, 2, 3)
        x = lib.tensor([[1.0, 2.0, 5.5], [2.3, 0.5, 6.2]], dtype=lib.float64, requires_grad=True)
        return _checks(lib, lambda y, x: lib.trapz(y, x), (y, x))

    like_torch(program)


def test_var_mean_differentiates_as_var_and_mean():
    # torch: test_var_mean_differentiable
    def program(lib):
        first, second = leaf(lib, 3, 4, 5, 6, 2, 3), leaf(lib, 3, 4, 5, 6, 2, 3)
        grad = lib.tensor(data(3, 4, 6, 3, seed=1))
        var1, mean1 = lib.var_mean(first, dim=[2, 4], keepdim=False)
        var2, mean2 = second.var(dim=[2, 4], keepdim=False), second.mean(dim=[2, 4])
        r1, r2 = var1 * var1 * mean1 * mean1, var2 * var2 * mean2 * mean2
        lib.autograd.backward(r1, grad)
        lib.autograd.backward(r2, grad)
        return r1.detach(), r2.detach(), first.grad, second.grad

    r1, r2, g1, g2 = like_torch(program)
    np.testing.assert_allclose(r1.numpy(), r2.numpy())
    np.testing.assert_allclose(g1.numpy(), g2.numpy())


@pytest.mark.parametrize("index, accumulate", [
    ([1, 2, 3, -1, -2, -3], False),  # test_put
    ([1, 2, 3, 1, 2, 3], True),      # test_put_accumulate
])
def test_put_gradients(index, accumulate):
    # torch: test_put, test_put_accumulate
    def program(lib):
        idx = lib.tensor(index)

        def func(root, values):
            x = root.clone()
            x.put_(idx, values, accumulate=accumulate)
            return x

        return _checks(lib, func, (leaf(lib, 4, 5), leaf(lib, 6, seed=1)))

    like_torch(program)


@pytest.mark.parametrize("shapes", [
    ((3, 3, 3), (3, 3, 3), (3, 3, 3)), ((3,), (3, 3, 3), (3, 3, 3)),
    ((3, 3, 3), (3,), (3, 3, 3)), ((3, 3, 3), (3, 3, 3), (3,)),
    ((), (3, 3, 3), (3, 3, 3)), ((3, 3, 3), (), (3, 3, 3)),
    ((3, 3, 3), (3, 3, 3), ()), ((3, 3), (3, 3, 3), (3,)),
])
def test_lerp_with_tensor_weights(shapes):
    # torch: test_lerp_tensor_weights (every input broadcast in turn)
    like_torch(lambda lib: _checks(lib, lib.lerp, _leaves(lib, *shapes)))


def test_diagonal_backward_is_differentiable():
    # torch: test_diagonal_derivative_requires_grad
    def program(lib):
        a = leaf(lib, 5, 6)
        (d,) = lib.autograd.grad((lib.diagonal(a) ** 2).sum(), a, create_graph=True)
        return d.requires_grad, d

    requires_grad, d = like_torch(program)
    assert requires_grad


def test_nansum_with_nans_gradients():
    # torch: test_nansum_with_nans (a NaN entry gets a zero gradient)
    def program(lib):
        values = data(2, 2, 2, 2)
        values[values < 0.2] = np.nan
        a = lib.tensor(values, requires_grad=True)
        reductions = [lambda x: x.nansum(), lambda x: x.nansum(0), lambda x: x.nansum((0, 2)),
                      lambda x: x.nansum((0, -1)), lambda x: x.nansum((0, -1), True)]
        return [_checks(lib, fn, (a,)) for fn in reductions]

    results = like_torch(program)
    (grad,) = results[0][1]  # of the full nansum: 0 where a NaN was, 1 elsewhere
    np.testing.assert_array_equal(grad.numpy(), (data(2, 2, 2, 2) >= 0.2).astype(float))


def test_cdist_gradients_stay_finite():
    # torch: test_cdist (a large backward), test_cdist_grad_p_lt_1_no_nan,
    # test_cdist_same_inputs (zero distances give finite gradients for every p)
    def program(lib):
        x, y = lib.tensor(data(200, 5)), lib.tensor(data(200, 5, seed=1))
        x, y = x.requires_grad_(), y.requires_grad_()
        lib.cdist(x, y, p=2).sum().backward()
        large = (x.grad, y.grad)
        small_p = []
        for p in [0.99, 0.7, 0.5, 0.1, 0.01]:
            a = leaf(lib, 1, 2)
            b = (a.detach() + lib.tensor([[1.0, 0.0]], dtype=lib.float64)).requires_grad_()
            result = lib.cdist(a, b, p=p)
            result.backward(lib.ones_like(result))
            small_p.append((a.grad, b.grad))
        same = []
        for p in [0, 1, 2, 3, 1.5, 2.5, float("inf")]:
            a = leaf(lib, 1, 27, 32)
            lib.cdist(a, a.detach().clone(), p=p).backward(lib.tensor(data(1, 27, 27, seed=2)))
            same.append(a.grad)
        return large, small_p, same

    # zero distances come from a matrix product (27 rows > 25), whose rounding differs in the
    # last bits between NumPy and torch's BLAS: gradients agree to 1e-6, not to the last bit
    large, small_p, same = like_torch(program, rtol=1e-6, atol=1e-6)
    for grad in [*large, *(g for pair in small_p for g in pair), *same]:
        assert np.isfinite(grad.numpy()).all()


def test_hook_on_the_output_of_batch_norm():
    # torch: test_hooks_cpp (a hook doubling the gradient of an eval-mode BatchNorm1d)
    def program(lib):
        bn = lib.nn.BatchNorm1d(5, affine=False).double()
        bn.eval()
        calls = []

        def hook(grad):
            calls.append(1)
            return grad * 2

        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        z = bn(x)
        z.register_hook(hook)
        z.sum().backward()
        return len(calls), x.grad

    calls, grad = like_torch(program, rtol=0, atol=1e-5)
    assert calls == 1
    np.testing.assert_allclose(grad.numpy(), 2 * np.ones((5, 5)) / np.sqrt(1 + 1e-5))


@pytest.mark.filterwarnings("ignore:input's size at dim=1")  # both warn: 1 channel, not 2
def test_double_backward_through_in_place_layers():
    # torch: test_inplace_view_backward (InstanceNorm2d then an in-place ReLU under double
    # backward; an in-place threshold on a view, its grad_fn chain after double backward)
    def program(lib):
        net = lib.nn.Sequential(lib.nn.InstanceNorm2d(2), lib.nn.ReLU(True))
        x = lib.tensor([[[[1.0, 1.0]]]], requires_grad=True)
        (g,) = lib.autograd.grad(net(x).pow(2), [x], grad_outputs=lib.ones_like(x),
                                 create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), [x])

        inputs = lib.ones((1, 3, 8, 8), requires_grad=True)
        tmp = lib.nn.functional.threshold((inputs + 1).view_as(inputs), 0.0, 0.0, True)
        prob = lib.sigmoid(tmp)
        (gradients,) = lib.autograd.grad(prob, inputs, grad_outputs=lib.ones(prob.size()),
                                         create_graph=True, retain_graph=True)
        penalty = gradients.sum()
        penalty.backward()
        return x.detach(), g, gg, inputs.grad, "ThresholdBackwardBackward0" in _names(penalty)

    x, *_, has_threshold_double_backward = like_torch(program)
    np.testing.assert_array_equal(x.numpy(), [[[[1.0, 1.0]]]])
    assert has_threshold_double_backward


def _names(tensor) -> set:
    """Names of the nodes of ``tensor``'s graph. torch's test reads the node at a fixed place
    (``next_functions[0][0].next_functions[1][0]``); the nodes around it are how each library
    records the double backward of an in-place op on a view (torch: CopySlices; gradkit: an
    add of the view's part), so we look for it anywhere in the graph."""
    seen, stack, names = set(), [tensor.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.add(fn.name())
        stack.extend(f for f, _ in fn.next_functions)
    return names

