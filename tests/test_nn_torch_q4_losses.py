"""torch's test/test_nn.py (480k-640k): the NLL, cross-entropy, CTC and smooth-L1 tests.

Each program runs on gradkit and on torch 2.13 (``same_as_torch``) from the same NumPy data;
torch's own asserts (closed forms) are kept where they say more than the comparison.
"""
import itertools

import numpy as np
import gradkit
import pytest

from tensor_twins import data, ints, same_as_torch

REDUCTIONS = ("none", "mean", "sum")
EMPTY_SHAPES = ([0, 3], [0, 3, 5, 7], [2, 3, 0, 7], [2, 3, 5, 0], [2, 3, 5, 7, 0])


def _leaf(m, array, dtype=None):
    return m.tensor(array, dtype=dtype or m.float64, requires_grad=True)


def test_nll_loss_mismatched_batch():
    def program(m):
        x = _leaf(m, data(10, 3))
        return m.nn.functional.nll_loss(x, m.zeros(3, dtype=m.int64))
    assert same_as_torch(program)[0] == "raises"


def test_nll_loss_invalid_target_dim():
    def program(m):
        return m.nn.functional.nll_loss(m.tensor(data(10, 3)), m.zeros((10, 2), dtype=m.int64))
    assert same_as_torch(program)[0] == "raises"


@pytest.mark.parametrize("shape", [(4,), (1, 3)])
def test_nll_loss_invalid_weights(shape):
    def program(m):
        target = m.tensor(ints(10, low=0, high=3))
        weight = m.tensor(data(*shape))
        return m.nn.functional.nll_loss(m.tensor(data(10, 3)), target, weight=weight)
    result = same_as_torch(program)
    assert "defined either for all 3 classes or no classes" in result[2]


@pytest.mark.parametrize("reduction", ("mean", "none"))
def test_nll_loss_out_of_bounds_ignore_index(reduction):
    def program(m):
        x = _leaf(m, data(6, 3))
        t = m.tensor([0, 1, 255, 0, 1, 2])
        loss = m.nn.functional.nll_loss(x, t, ignore_index=255, reduction=reduction)
        loss.sum().backward()
        return loss, x.grad
    same_as_torch(program)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", EMPTY_SHAPES)
def test_nll_loss_empty_tensor(reduction, shape):
    def program(m):
        x = _leaf(m, np.random.default_rng(0).random(shape), m.float32)
        target = m.zeros((shape[0], *shape[2:]), dtype=m.int64)
        out = m.nn.functional.nll_loss(x, target, reduction=reduction)
        out.sum().backward()
        return out, x.grad
    same_as_torch(program)


@pytest.mark.parametrize("shape", ([2, 3], [2, 3, 5, 7], [2, 3, 5, 7, 9]))
def test_nll_loss_total_weight_zero_and_all_ignored(shape):
    def program(m):
        x = m.ones(shape)
        target = m.zeros((shape[0], *shape[2:]), dtype=m.int64)
        weight = m.zeros(shape[1])
        f = m.nn.functional.nll_loss
        return ([f(x, target, weight, reduction=r) for r in REDUCTIONS],
                [f(x, target, ignore_index=0, reduction=r) for r in REDUCTIONS])
    weighted, ignored = same_as_torch(program)
    for losses in (weighted, ignored):  # torch's closed forms: 0, nan, zeros
        assert losses[2][3] == 0 and np.isnan(losses[1][3]) and not losses[0][3].any()


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_byte_target_matches_long(reduction):
    def program(m):
        outs = []
        for target_dtype in (m.int64, m.uint8):
            x = _leaf(m, data(10, 4), m.float32)
            target = m.tensor(ints(10, low=0, high=4), dtype=target_dtype)
            result = m.nn.NLLLoss(reduction=reduction)(m.nn.functional.log_softmax(x, -1), target)
            result.sum().backward()
            outs.append((result, x.grad))
        return outs
    long, byte = same_as_torch(program, rtol=1e-5)
    np.testing.assert_array_equal(long[0][3], byte[0][3])


def _k_dims(k):
    return [2 + (3 * i) % 3 for i in range(k)]


@pytest.mark.parametrize("k", range(5))
def test_cross_entropy_prob_target_weights(k):
    def program(m):
        dims = _k_dims(k)
        x = _leaf(m, data(5, 4, *dims))
        target = m.tensor(data(5, 4, *dims, seed=1))
        weight = m.tensor(np.abs(data(4, seed=2)))
        outs = []
        weights = (None, weight, m.ones(4, dtype=m.float64))
        for reduction, w in itertools.product(REDUCTIONS, weights):
            outs.append(m.nn.CrossEntropyLoss(weight=w, reduction=reduction)(x, target))
        return outs
    outs = same_as_torch(program)
    for i in range(0, len(outs), 3):  # torch: unit weights give the unweighted loss
        np.testing.assert_allclose(outs[i][3], outs[i + 2][3])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", (False, True))
def test_cross_entropy_prob_target_no_batch_dim(reduction, weighted):
    def program(m):
        x = m.tensor(data(5)).log_softmax(-1)
        target = m.tensor(data(5, seed=1)).softmax(-1)
        loss = m.nn.CrossEntropyLoss(reduction=reduction,
                                     weight=m.tensor(data(5, seed=2)) if weighted else None)
        return loss(x, target), loss(x.unsqueeze(0), target.unsqueeze(0))
    same_as_torch(program)


@pytest.mark.parametrize("k", range(5))
def test_cross_entropy_index_unit_weights_and_one_hot(k):
    def program(m):
        dims = _k_dims(k)
        x = _leaf(m, data(5, 4, *dims))
        target = m.tensor(ints(5, *dims, low=0, high=4))
        one_hot = m.nn.functional.one_hot(target, num_classes=4).to(x.dtype)
        one_hot = one_hot.permute(0, -1, *range(1, one_hot.dim() - 1))
        weight = m.tensor(np.abs(data(4, seed=2)))
        outs = []
        weights = (None, weight, m.ones(4, dtype=m.float64))
        for reduction, w in itertools.product(REDUCTIONS, weights):
            loss = m.nn.CrossEntropyLoss(weight=w, reduction=reduction)
            outs.append((loss(x, target), loss(x, one_hot)))
        return outs
    outs = same_as_torch(program)
    for i, (index, probs) in enumerate(outs):
        if i // 3 != 1 or i % 3 != 1:  # (torch skips mean with weights: issue #61309)
            np.testing.assert_allclose(index[3], probs[3], rtol=1e-12)


@pytest.mark.parametrize("probs", (False, True))
def test_cross_entropy_label_smoothing_errors(probs):
    def program(m):
        target = m.tensor(data(3, 4, seed=1)) if probs else m.arange(0, 4)
        x = m.tensor(data(3, 4))
        return m.nn.CrossEntropyLoss(label_smoothing=1.2)(x, target)
    assert "label_smoothing must be between 0.0" in same_as_torch(program)[2]


@pytest.mark.parametrize("k", range(5))
@pytest.mark.parametrize("label_smoothing", (0.05, 0.15))
def test_cross_entropy_label_smoothing_index_and_probs(k, label_smoothing):
    def program(m):
        dims = _k_dims(k)
        x = _leaf(m, data(10, 4, *dims))
        target = m.tensor(ints(10, *dims, low=0, high=4))
        proba = m.nn.functional.one_hot(target, num_classes=4)
        proba = proba.permute(0, -1, *range(1, proba.dim() - 1))
        mask = proba == 1
        proba = proba.to(x.dtype)
        proba.masked_fill_(mask, 1 - label_smoothing + label_smoothing / 4)
        proba.masked_fill_(~mask, label_smoothing / 4)
        soft = m.tensor(data(10, 4, *dims, seed=3)).log_softmax(1)
        outs = []
        for reduction in REDUCTIONS:
            smooth = m.nn.CrossEntropyLoss(reduction=reduction, label_smoothing=label_smoothing)
            plain = m.nn.CrossEntropyLoss(reduction=reduction)
            manual = soft * (1 - label_smoothing) + label_smoothing / 4
            outs.append((plain(x, proba), smooth(x, target), smooth(x, soft), plain(x, manual)))
        return outs
    for by_probs, by_index, smoothed, manual in same_as_torch(program):
        np.testing.assert_allclose(by_probs[3], by_index[3], rtol=1e-7, atol=1e-5)
        np.testing.assert_allclose(smoothed[3], manual[3], rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("label_smoothing", (0.05, 0.15))
@pytest.mark.parametrize("weighted", (False, True))
def test_cross_entropy_label_smoothing_weight_ignore_indices(reduction, label_smoothing, weighted):
    def program(m):
        weight = m.tensor([0.3, 0.6]) if weighted else None
        inp1 = m.tensor([[0.3, 0.4], [1, 2]])
        inp2 = m.tensor([[0.3, 0.6], [1, 2]])
        outs = []
        for ignore, first in ((-100, -100), (-2, -2), (2, 2)):
            loss = m.nn.CrossEntropyLoss(reduction=reduction, label_smoothing=label_smoothing,
                                         ignore_index=ignore, weight=weight)
            target = m.tensor([first, 1])
            outs.append((loss(inp1, target), loss(inp2, target), loss(inp2[1:], target[1:])))
        return outs
    for l1, l2, l3 in same_as_torch(program):
        np.testing.assert_allclose(l1[3], l2[3], rtol=1.3e-6)
        if reduction != "none":  # the ignored row is not counted in the mean
            np.testing.assert_allclose(l1[3], l3[3], rtol=1.3e-6)


def test_smoothl1loss_backward_zero_beta():
    def program(m):
        x = _leaf(m, data(30, 25), m.float32)
        m.nn.functional.smooth_l1_loss(x, x.detach(), beta=0.0, reduction="sum").backward()
        return x.grad
    assert np.abs(same_as_torch(program)[3]).max() <= 1.0


def test_ctc_loss_error_on_empty_log_probs():
    def program(m):
        empty = m.tensor([], dtype=m.int64)
        return m.nn.functional.ctc_loss(m.rand(0, 0, 4), empty, empty, empty, reduction="none")
    assert "log_probs tensor must not be empty" in same_as_torch(program)[2]


def test_ctc_loss_empty_target():
    def program(m):
        f = m.nn.functional.ctc_loss
        log_probs = m.tensor(data(50, 3, 15)).log_softmax(2)
        empty = f(log_probs, m.zeros(0, dtype=m.int64), [50] * 3, [0, 0, 0], reduction="none")
        targets = m.tensor(ints(9, low=1, high=15))
        some = f(log_probs, targets, [50] * 3, [0, 9, 0], reduction="none")
        return empty, some, -log_probs.sum(0)[:, 0]
    empty, some, closed = same_as_torch(program)
    np.testing.assert_allclose(empty[3], closed[3])
    np.testing.assert_allclose(some[3][[0, 2]], closed[3][[0, 2]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("module_form", (True, False))
def test_ctc_loss_no_batch_dim(reduction, module_form):
    def program(m):
        log_probs = m.tensor(data(40, 1, 3)).float().log_softmax(2)
        targets = m.tensor(ints(1, 12, low=1, high=2), dtype=m.int32)
        if module_form:
            ctc = m.nn.CTCLoss(reduction=reduction, zero_infinity=True)
        else:
            def ctc(*args):
                return m.nn.functional.ctc_loss(*args, reduction=reduction, zero_infinity=True)
        leaves = [log_probs.detach().clone().requires_grad_() for _ in range(2)]
        no_bd = log_probs.squeeze(1).detach().clone().requires_grad_()
        losses = [ctc(leaves[0], targets, [40], [12]),
                  ctc(leaves[1], targets.squeeze(0), [40], [12]),
                  ctc(no_bd, targets.squeeze(0), m.tensor(40), m.tensor(12))]
        for loss in losses:
            loss.backward(m.ones_like(loss))
        return losses, [leaf.grad for leaf in leaves], no_bd.grad
    same_as_torch(program, rtol=1e-5, atol=1e-5)  # float32 (torch: atol=1e-4)


@pytest.mark.parametrize("shape", [(0, 2, 4), (3, 0, 4), (0, 4)])
@pytest.mark.parametrize("blank", (0, 7))
def test_ctc_loss_empty_log_probs_checked_before_the_rest(shape, blank):
    def program(m):
        lengths = m.zeros(shape[1] if len(shape) == 3 else (), dtype=m.int64)
        return m.nn.functional.ctc_loss(m.rand(*shape), m.zeros(0, dtype=m.int64), lengths,
                                        lengths, blank=blank)
    assert same_as_torch(program)[2] == "log_probs tensor must not be empty"


@pytest.mark.parametrize("input_shape, target_shape", [((10, 3), (10, 2)), ((3,), (3, 2)),
                                                       ((10, 3), (10, 2, 3))])
def test_nll_loss_multi_target_message(input_shape, target_shape):
    def program(m):
        f = m.nn.functional
        target = m.zeros(target_shape, dtype=m.int64)
        return [f.nll_loss(m.tensor(data(*input_shape)), target),
                f.cross_entropy(m.tensor(data(*input_shape)), target)]
    message = "0D or 1D target tensor expected, multi-target not supported"
    assert same_as_torch(program)[2] == message


@pytest.mark.parametrize("target_shape, message", [
    ((10, 2), "0D or 1D target tensor expected, multi-target not supported"),
    ((4, 2), r"Expected input batch_size \(10\) to match target batch_size \(4\)"),
    ((10,), "expected target dtype to be Long or Byte, but got Int")])
@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_class_target_checks_come_before_the_dtype_check(name, target_shape, message):
    """torch checks an int32 (or float) target's shape first: the merge of two lanes' checks."""
    def program(m):
        target = m.zeros(target_shape, dtype=m.int32)
        return getattr(m.nn.functional, name)(m.tensor(data(10, 3)), target)
    same_as_torch(program)
    with pytest.raises((RuntimeError, ValueError), match=message):
        program(gradkit)


@pytest.mark.parametrize("input_shape", [(3,), (10, 3), (10, 3, 2), (4, 3, 2, 2, 2)])
@pytest.mark.parametrize("weight_shape", [(3,), (1, 3), (3, 1), (4,)])
def test_nll_loss_weight_shape(input_shape, weight_shape):
    def program(m):
        x = _leaf(m, data(*input_shape))
        shape = input_shape[:1] + input_shape[2:] if len(input_shape) > 1 else ()
        target = m.tensor(ints(*shape, low=0, high=3))
        loss = m.nn.functional.nll_loss(x, target, weight=m.tensor(np.abs(data(*weight_shape))))
        loss.backward()
        return loss, x.grad
    same_as_torch(program)


@pytest.mark.parametrize("shape", [(10, 3), (10, 3, 2)])
@pytest.mark.parametrize("weight_shape", [(3,), (1, 3), (4,)])
def test_cross_entropy_prob_target_weight_shape(shape, weight_shape):
    def program(m):
        x = _leaf(m, data(*shape))
        loss = m.nn.functional.cross_entropy(x, m.tensor(data(*shape, seed=1)),
                                             weight=m.tensor(data(*weight_shape, seed=2)))
        loss.backward()
        return loss, x.grad
    same_as_torch(program)


@pytest.mark.parametrize("input_length, vary, zero", [(150, False, "none"), (150, True, "none"),
                                                      (50, True, "some"), (50, True, "all")])
def test_ctc_loss_gradcheck_after_log_softmax(input_length, vary, zero):
    # torch's test_ctc_loss (batch 64 there; 16 here for time), varied and zero lengths
    def program(m):
        rng = np.random.default_rng(0)
        batch, labels, target_length = 16, 101, 15
        targets = m.tensor(rng.integers(1, labels, (batch, target_length)))
        x = m.tensor(rng.standard_normal(10), requires_grad=True)
        tile = m.tensor(rng.standard_normal(input_length * batch * labels // 10 + 1),
                        dtype=m.float32)
        input_lengths = [int(rng.integers(input_length // 2, input_length + 1))
                         if vary or i == 0 else input_length for i in range(batch)]
        target_lengths = [0 if zero == "all" else
                          int(rng.integers(target_length // 2, target_length + 1)) if vary
                          else target_length for _ in range(batch)]
        if zero == "some":
            for i in rng.integers(0, batch, 4):
                target_lengths[i] = 0

        def ctc_after_softmax(x):
            full = (x[:, None] * tile[None, :]).view(-1)[:input_length * batch * labels]
            log_probs = m.log_softmax(full.view(input_length, batch, labels), 2)
            return m.nn.functional.ctc_loss(log_probs, targets, input_lengths, target_lengths)
        return m.autograd.gradcheck(ctc_after_softmax, [x]), ctc_after_softmax(x)
    assert same_as_torch(program, rtol=1e-10)[0] is True


@pytest.mark.parametrize("shape", [(10, 3), (10, 3, 2), (4, 3, 2, 2)])
@pytest.mark.parametrize("weight_shape", [(3,), (1, 3), (3, 1)])
@pytest.mark.parametrize("label_smoothing", (0.0, 0.1))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_index_target_weight_shapes(shape, weight_shape, label_smoothing,
                                                   reduction):
    # torch's spatial kernel takes a weight of any shape; its smoothing term views it as
    # (1, weight.size(0), 1, ...) and gathers from it for "mean"
    def program(m):
        x = _leaf(m, data(*shape))
        target = m.tensor(ints(*shape[:1], *shape[2:], low=0, high=3))
        loss = m.nn.functional.cross_entropy(x, target, weight=m.tensor(np.abs(data(
            *weight_shape, seed=2))), label_smoothing=label_smoothing, reduction=reduction)
        loss.sum().backward()
        return loss, x.grad
    same_as_torch(program)
