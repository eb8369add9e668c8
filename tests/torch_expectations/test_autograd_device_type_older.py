"""The tests of torch's older test/autograd/test_device_type.py not met elsewhere (CPU): in-place
activations with zero or negative slopes, copysign's subgradient at zeros, in-place ops on
unsafe multi-output views, pdist's backward, gradchecks of logcumsumexp, atleast_Nd, xlogy,
LSTM, GRU and CTC loss, and an LSTM cell's backward from one output."""
import numpy as np
import pytest

from .twin import data, like_torch, raises_like_torch


def test_leaky_relu_inplace_with_zero_slope():
    # torch: test_leaky_relu_inplace_with_zero_slope
    def program(lib):
        a = lib.tensor([-2., 0., 2.], requires_grad=True)
        lib.nn.functional.leaky_relu_(a.clone(), 0.0).backward(lib.ones(3))
        return a.grad

    np.testing.assert_array_equal(like_torch(program).numpy(), [0., 0., 1.])


@pytest.mark.parametrize("name", ["elu_", "celu_"])
def test_elu_inplace_with_negative_alpha_refuses_backward(name):
    # torch: test_elu_inplace_with_neg_alpha
    def program(lib):
        a = lib.tensor([-1., 1.], requires_grad=True)
        getattr(lib.nn.functional, name)(a.clone(), alpha=-2).backward(lib.ones(2))

    raises_like_torch(program, RuntimeError, "call out-of-place version")


def test_copysign_subgradient_at_signed_zeros():
    # torch: test_copysign_subgradient
    def program(lib):
        grads = []
        for x, y in [([0.] * 3, [-1., 0., 1.]), ([-0.] * 3, [-1., 0., 1.]),
                     ([-1., 0., 1.], [0.] * 3), ([-1., 0., 1.], [-0.] * 3)]:
            x, y = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
            lib.copysign(x, y).sum().backward()
            grads += [x.grad, y.grad]
        return grads

    grads = [g.numpy().tolist() for g in like_torch(program)]
    assert grads[4::2] == [[-1., 0., 1.], [1., 0., -1.]] and grads[1::2] == [[0.] * 3] * 4


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_in_place_on_an_unsafe_multi_output_view_is_allowed(split):
    # torch: test_inplace_on_view_multi_output_unsafe
    def program(lib):
        a = lib.tensor(data(3, 3), requires_grad=True)
        arg = (1, 1, 1) if split == "unsafe_split_with_sizes" else 3 if "chunk" in split else 1
        s1, s2, _ = getattr(a + a, split)(arg)
        s1.mul_(s2)
        s1.sum().backward()
        return a.grad

    like_torch(program)


def test_pdist_backward_of_a_long_input():
    # torch: test_pdist_large (1000 rows)
    def program(lib):
        x = lib.tensor(data(1000, 1)).requires_grad_()
        lib.pdist(x, p=2).sum().backward()
        return x.grad

    like_torch(program)


@pytest.mark.parametrize("check", [
    # torch: test_logcumsumexp_large_value
    ("logcumsumexp", lambda lib, x: [lambda t, d=d: t.logcumsumexp(d) for d in range(3)]),
    # torch: test_atleast
    ("atleast", lambda lib, x: [getattr(lib, f"atleast_{n}d") for n in (1, 2, 3)]),
    # torch: test_xlogy (one broadcast pair, zeros in x, numbers on either side)
    ("xlogy", lambda lib, x: [lambda y: lib.xlogy(x, y), lambda y: lib.xlogy(0, y),
                              lambda y: lib.xlogy(2, y), lambda y: lib.xlogy(y, 2)]),
], ids=lambda c: c[0])
def test_gradcheck_and_gradgradcheck_pass(check):
    name, functions = check

    def program(lib):
        x = lib.tensor(data(1, 4, positive=True))
        x[0, ::2] = 0
        big = lib.tensor(data(4, 4, 4, positive=True), requires_grad=True)
        with lib.no_grad():
            big[0] = 10000
        inputs = {"logcumsumexp": [(big,)],
                  "atleast": [(lib.tensor(0.5, dtype=lib.float64, requires_grad=True),),
                              (lib.tensor(data(4, 3, 2, 1), requires_grad=True),)],
                  "xlogy": [(lib.tensor(data(4, positive=True), requires_grad=True),)]}[name]
        gradcheck, gradgradcheck = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        return [gradcheck(f, args) and gradgradcheck(f, args)
                for f in functions(lib, x) for args in inputs]

    assert all(like_torch(program))


def test_lstm_and_gru_pass_gradcheck_and_gradgradcheck():
    # torch: test_LSTM_grad_and_gradgrad, test_GRU_grad_and_gradgrad (outputs and states
    # flattened as torch's _test_rnn_mod does)
    def program(lib):
        lib.manual_seed(0)
        x = lib.tensor(data(1, 3, 4, positive=True), requires_grad=True)
        passed = []
        for layer in (lib.nn.LSTM, lib.nn.GRU):
            for bias in (True, False):
                module = layer(4, 4, bias=bias).double()

                def flat(x, module=module):
                    return tuple(t if isinstance(t, lib.Tensor) else s
                                 for t in module(x) for s in t)

                passed.append(lib.autograd.gradcheck(flat, (x,), check_batched_grad=False) and
                              lib.autograd.gradgradcheck(flat, (x,), check_batched_grad=False))
        return passed

    assert like_torch(program) == [True] * 4


def test_an_lstm_cell_backpropagates_from_either_output_alone():
    # torch: test_lstmcell_backward_only_one_output_grad (CUDA-only there; on the CPU here)
    def program(lib):
        cell = lib.nn.LSTMCell(2, 3).double()
        with lib.no_grad():
            for seed, p in enumerate(cell.parameters()):
                p.copy_(lib.tensor(data(*p.shape, seed=seed)))
        s = lib.tensor(data(1, 2), requires_grad=True)
        grads = []
        for i in range(2):
            cell(s)[i].sum().backward()
            grads.append(s.grad.clone())
        return grads

    assert all(g.abs().sum() > 0 for g in like_torch(program))


@pytest.mark.parametrize("lengths", ["equal", "varying", "some_zero_targets",
                                     "all_zero_targets"])
def test_ctc_loss_after_log_softmax_passes_gradcheck(lengths):
    # torch: TestAutogradDeviceType.test_ctc_loss (at batch 4, 6 labels, 12 steps)
    def program(lib):
        batch, labels, steps, target_length = 4, 6, 12, 3
        targets = lib.tensor(np.random.default_rng(5).integers(1, labels, (batch, 5)))
        inputs = [steps] + [steps - 2 * (lengths != "equal")] * (batch - 1)
        targets_lengths = {"equal": [target_length] * batch, "varying": [3, 2, 3, 1],
                           "some_zero_targets": [3, 0, 2, 0], "all_zero_targets": [0] * 4}
        tile = lib.tensor(data(steps * batch * labels // 10 + 1, seed=6))

        def loss(x):
            full = (x[:, None] * tile[None, :]).view(-1)[:steps * batch * labels]
            log_probs = lib.log_softmax(full.view(steps, batch, labels), 2)
            return lib.nn.functional.ctc_loss(log_probs, targets, inputs,
                                              targets_lengths[lengths])

        return lib.autograd.gradcheck(loss, (lib.tensor(data(10), requires_grad=True),))

    assert like_torch(program) is True
