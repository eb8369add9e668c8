"""F.ctc_loss against torch: losses, torch's gradient (through log_softmax and w.r.t. the log
probabilities themselves), reductions, zero_infinity, unbatched inputs, errors, and torch's
refusals of a second derivative and of forward AD."""
import numpy as np
import pytest

import gradkit
import gradkit.autograd.forward_ad as gradkit_fwd

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as torch_fwd  # noqa: E402
from torch_expectations.twin import assert_same  # noqa: E402

RNG = np.random.default_rng(9)
LOGITS = RNG.standard_normal((6, 3, 5))
PADDED = np.array([[1, 2, 2, 4], [3, 1, 0, 0], [2, 2, 2, 0]])
FLAT = np.array([1, 2, 2, 4, 3, 1, 2, 2, 2])
WEIGHTS = RNG.standard_normal(3)


def _run(program, lib):
    try:
        return program(lib)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error).split("\n")[0]


def _same(program):
    assert_same(_run(program, gradkit), _run(program, torch), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("targets,target_lengths,blank", [
    (PADDED, [4, 2, 3], 0), (FLAT, [4, 2, 3], 0), (PADDED, [4, 2, 4], 0),
    (PADDED % 4 + 1, [4, 2, 3], 0), (PADDED % 4, [4, 2, 3], 4)])
def test_losses_and_gradients_match_torch(reduction, zero_infinity, targets, target_lengths,
                                          blank):
    def program(lib):
        logits = lib.tensor(LOGITS, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(
            logits.log_softmax(2), lib.tensor(targets), lib.tensor([6, 5, 6]),
            lib.tensor(target_lengths), blank=blank, reduction=reduction,
            zero_infinity=zero_infinity)
        weights = lib.tensor(WEIGHTS[:1].reshape(()) if loss.ndim == 0 else WEIGHTS)
        (grad,) = lib.autograd.grad((loss * weights).sum(), logits)
        return loss, grad, loss.grad_fn.name()
    _same(program)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments_are_infinite_or_zeroed_as_torch(zero_infinity):
    def program(lib):
        log_probs = lib.tensor(LOGITS[:, :2]).log_softmax(2).requires_grad_()
        loss = lib.nn.functional.ctc_loss(log_probs, lib.tensor([[1, 1, 1], [3, 1, 0]]),
                                          (3, 4), (3, 2), reduction="none",
                                          zero_infinity=zero_infinity)
        (grad,) = lib.autograd.grad(loss.sum(), log_probs)
        return loss, grad
    _same(program)


def test_gradient_with_respect_to_log_probs_is_torchs_formula():
    """torch's ctc backward gives exp(log_probs) - occupancy (the logits' gradient behind a
    log_softmax), not the derivative w.r.t. log_probs: gradkit gives the same."""
    def program(lib):
        log_probs = lib.tensor(LOGITS).log_softmax(2).requires_grad_()
        loss = lib.nn.functional.ctc_loss(log_probs, lib.tensor(PADDED), [6, 4, 5], [4, 2, 3])
        return lib.autograd.grad(loss, log_probs)
    _same(program)


def test_unbatched_inputs_match_torch():
    def program(lib):
        log_probs = lib.tensor(LOGITS[:, 0]).log_softmax(1).requires_grad_()
        losses = [lib.nn.functional.ctc_loss(log_probs, lib.tensor(PADDED[0]), lib.tensor(6),
                                             lib.tensor(4), reduction=reduction)
                  for reduction in ("none", "mean", "sum")]
        return losses, lib.autograd.grad(sum(losses), log_probs)
    _same(program)


ERRORS = [
    lambda ctc, lp, lib: ctc(lp, lib.tensor(PADDED), lib.tensor([6, 5, 6]), lib.tensor([4, 5, 3])),
    lambda ctc, lp, lib: ctc(lp, lib.tensor(PADDED), lib.tensor([7, 5, 6]), lib.tensor([4, 2, 3])),
    lambda ctc, lp, lib: ctc(lp, lib.tensor(PADDED), (6, 5, 6), (4, 2, 3), blank=5),
    lambda ctc, lp, lib: ctc(lp, lib.tensor(PADDED), lib.tensor([6.0, 5, 6]),
                             lib.tensor([4, 2, 3])),
    lambda ctc, lp, lib: ctc(lp, lib.tensor(PADDED), lib.tensor([6, 5, 6]),
                             lib.tensor([4.0, 2, 3])),
    lambda ctc, lp, lib: ctc(lp, lib.tensor(PADDED), (6, 5, 6), (4, 2, 3), reduction="avg"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index):
    _same(lambda lib: ERRORS[index](lib.nn.functional.ctc_loss,
                                    lib.tensor(LOGITS).log_softmax(2), lib))


def test_lengths_as_a_tensor_and_a_tuple_are_refused_as_torch():
    def program(lib):
        lengths = _run(lambda lib: lib.nn.functional.ctc_loss(
            lib.tensor(LOGITS).log_softmax(2), lib.tensor(PADDED), lib.tensor([6, 5, 6]),
            (4, 2, 3)), lib)
        return lengths[0], lengths[1].split(" - got ")[0]
    _same(program)


def test_second_derivative_and_forward_ad_are_refused_as_torch():
    def second(lib):
        log_probs = lib.tensor(LOGITS).log_softmax(2).requires_grad_()
        loss = lib.nn.functional.ctc_loss(log_probs, lib.tensor(PADDED), (6, 5, 6), (4, 2, 3))
        (grad,) = lib.autograd.grad(loss, log_probs, create_graph=True)
        return lib.autograd.grad(grad.sum(), log_probs)
    _same(second)

    def forward(lib):
        fwd = gradkit_fwd if lib is gradkit else torch_fwd
        with fwd.dual_level():
            log_probs = lib.tensor(LOGITS).log_softmax(2)
            dual = fwd.make_dual(log_probs, lib.ones_like(log_probs))
            return lib.nn.functional.ctc_loss(dual, lib.tensor(PADDED), (6, 5, 6), (4, 2, 3))
    _same(forward)
