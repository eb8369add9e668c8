"""torch.nn.functional.ctc_loss: the connectionist temporal classification loss.

One op for the per-sample negative log likelihoods (torch's ``CtcLossBackward0``), computed
with the forward (alpha) recursion in log space; its backward is torch's formula
``exp(log_probs) - occupancy``, which is the derivative w.r.t. the logits behind a
log_softmax (torch's kernel assumes one, and so does this op), and cannot be differentiated
again, with torch's error. The reductions around it are composed as torch composes them.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import CPU, get_array_module, to_device
from gradkit.ops._op import op
from gradkit.ops.grad_edges import no_derivative, no_forward_ad
from gradkit.ops.losses import check_reduction
from gradkit.ops.piecewise import where
from gradkit.ops.unary_helpers import require_real_floating

_NEG_INF = -np.inf


def _extended(labels, blank: int) -> np.ndarray:
    """The label sequence with a blank before, between and after its labels."""
    ext = np.full(2 * len(labels) + 1, blank, dtype=np.int64)
    ext[1::2] = labels
    return ext


def _skips(ext) -> np.ndarray:
    """Where the recursion may skip a blank: at a label unlike the label before it (torch's
    test, which reads labels, not blanks: a label equal to ``blank`` is a label here)."""
    allowed = np.zeros(len(ext), dtype=bool)
    allowed[3::2] = ext[3::2] != ext[1:-2:2]
    return allowed


def _log_add(*terms) -> np.ndarray:
    """log(sum(exp(terms))) as torch's kernel: shifted by the largest (0 if all are -inf), so
    a +inf term gives NaN (inf - inf) where NumPy's logaddexp gives inf."""
    top = np.maximum.reduce(terms)
    top = np.where(top == _NEG_INF, 0.0, top)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.log(sum(np.exp(term - top) for term in terms)) + top


def _alphas(lp, ext, skips) -> np.ndarray:
    """log alpha (T, S): the log probability of the prefixes ending at each position."""
    alpha = np.full((len(lp), len(ext)), _NEG_INF)
    if len(lp) == 0:
        return alpha
    alpha[0, :2] = lp[0, ext[:2]]
    for t in range(1, len(lp)):
        previous = alpha[t - 1]
        skipped = np.where(skips, np.concatenate(([_NEG_INF] * 2, previous[:-2]))[:len(ext)],
                           _NEG_INF)
        alpha[t] = _log_add(previous, np.concatenate(([_NEG_INF], previous[:-1])),
                            skipped) + lp[t, ext]
    return alpha


def _betas(lp, ext, skips) -> np.ndarray:
    """log beta (T, S): the log probability of the suffixes starting at each position."""
    beta = np.full((len(lp), len(ext)), _NEG_INF)
    beta[-1, -2:] = lp[-1, ext[-2:]]
    size = len(ext)  # the padded shifts are cut to it (an empty target has one state)
    ahead_skips = np.concatenate((skips[2:], [False, False]))[:size]  # s may skip to s + 2
    for t in range(len(lp) - 2, -1, -1):
        following = beta[t + 1]
        skipped = np.where(ahead_skips,
                           np.concatenate((following[2:], [_NEG_INF] * 2))[:size], _NEG_INF)
        beta[t] = _log_add(following, np.concatenate((following[1:], [_NEG_INF])),
                           skipped) + lp[t, ext]
    return beta


def _nll(alpha, length: int, ext) -> float:
    if length == 0:
        return 0.0 if len(ext) == 1 else np.inf
    # the last label or the blank after it; an empty target's one state counted once
    return -_log_add(*alpha[length - 1, -2:])


def _samples(log_probs, targets, input_lengths, target_lengths):
    """Per sample: its log-probs (T_n, C) on the CPU and its extended label sequence."""
    lp = np.asarray(to_device(log_probs, CPU), dtype=np.float64)
    flat, start = targets.ndim == 1, 0
    for n, (length, size) in enumerate(zip(input_lengths, target_lengths)):
        labels = targets[start:start + size] if flat else targets[n, :size]
        start += size
        yield n, lp[:length, n], np.asarray(to_device(labels, CPU)).astype(np.int64)


@op(save=("log_probs", "targets", "result"), node_name="CtcLossBackward0")
def ctc_nll(xp, log_probs, targets, *, input_lengths=(), target_lengths=(), blank=0,
            zero_infinity=False):
    """Each sample's -log p(target | log_probs) (N,), from (T, N, C) log probabilities."""
    nll = np.zeros(log_probs.shape[1])
    for n, lp, labels in _samples(log_probs, targets, input_lengths, target_lengths):
        ext = _extended(labels, blank)
        nll[n] = _nll(_alphas(lp, ext, _skips(ext)), len(lp), ext)
    return xp.asarray(nll.astype(log_probs.dtype))


def log_alphas(log_probs, targets, input_lengths, target_lengths, blank: int) -> np.ndarray:
    """torch's log_alpha (N, T, 2 max(target_lengths) + 1): each sample's alpha recursion,
    -inf past its lengths (``node._saved_result1``; gradkit's backward recomputes it)."""
    width = 2 * max(target_lengths, default=0) + 1
    out = np.full((log_probs.shape[1], log_probs.shape[0], width), _NEG_INF)
    for n, lp, labels in _samples(log_probs, targets, input_lengths, target_lengths):
        ext = _extended(labels, blank)
        out[n, :len(lp), :len(ext)] = _alphas(lp, ext, _skips(ext))
    return out.astype(log_probs.dtype)


@op(save=("log_probs", "targets", "nll"), node_name="NotImplemented")
def _ctc_grad(xp, g, log_probs, targets, nll, *, input_lengths=(), target_lengths=(), blank=0,
              zero_infinity=False):
    """torch's ctc_loss_backward: exp(log_probs) - occupancy per (t, n, c), 0 past a
    sample's input length (and for an infinite loss with zero_infinity)."""
    grad = np.zeros(log_probs.shape)
    g_host, nll_host = (np.asarray(to_device(v, CPU), dtype=np.float64) for v in (g, nll))
    for n, lp, labels in _samples(log_probs, targets, input_lengths, target_lengths):
        if len(lp) == 0 or (zero_infinity and np.isinf(nll_host[n])):
            continue
        ext = _extended(labels, blank)
        skips = _skips(ext)
        both = _alphas(lp, ext, skips) + _betas(lp, ext, skips)
        occupancy = np.full(lp.shape, _NEG_INF)
        for s, label in enumerate(ext):
            occupancy[:, label] = _log_add(occupancy[:, label], both[:, s])
        grad[:len(lp), n] = (np.exp(lp) - np.exp(occupancy + nll_host[n] - lp)) * g_host[n]
    return xp.asarray(grad.astype(log_probs.dtype))


_ctc_grad.defvjp(*[no_derivative("_ctc_loss_backward")] * 4)
_ctc_grad.defjvp(*[no_derivative("_ctc_loss_backward")] * 4)
ctc_nll.defvjp(lambda g, log_probs, targets, result, **params:
               _ctc_grad(g, log_probs, targets, result, **params), None)
ctc_nll.defjvp(no_forward_ad("_ctc_loss"), None)


def _lengths(value, name: str) -> tuple:
    """Lengths given as a tensor or a tuple of ints, as Python ints."""
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point or value.is_complex():
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(v) for v in np.asarray(to_device(value._data, CPU)).reshape(-1))
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, not "
                    f"{type(value).__name__}")


def _check_ctc(log_probs, targets, input_lengths, target_lengths, blank: int) -> None:
    """torch's checks of ctc_loss's arguments, in its order: target lengths, the targets'
    size, input lengths."""
    if not 0 <= blank < log_probs.shape[-1]:
        raise RuntimeError("blank must be in label range")
    for length in target_lengths:
        _check_length(length, "target_lengths", "at least", 0)
    longest = max(target_lengths, default=0)
    if targets.ndim == 2 and targets.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                           f"but got size {targets.shape[1]} for argument #2 'targets' (while "
                           "checking arguments for ctc_loss_allocate_outputs)")
    for length in input_lengths:
        _check_length(length, "input_lengths", "at least", 0)
        _check_length(length, "input_lengths", "at most", log_probs.shape[0])


def _check_length(length: int, name: str, bound: str, limit: int) -> None:
    if length < limit if bound == "at least" else length > limit:
        raise RuntimeError(f"Expected {name} to have value {bound} {limit}, but got value "
                           f"{length} (while checking arguments for ctc_loss_allocate_outputs)")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (T, N, C), log_softmax outputs, against ``targets``
    (N, S) padded or 1-D concatenated; ``"mean"`` divides each loss by its target length
    before averaging (torch's); ``zero_infinity`` turns impossible alignments into 0."""
    check_reduction(reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__
                        for v in (log_probs, targets, input_lengths, target_lengths))
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}, "
                        "int, int, bool), but expected one of: (Tensor log_probs, Tensor "
                        "targets, tuple of ints input_lengths, tuple of ints target_lengths, "
                        "...) or the lengths as two Tensors")
    input_lengths = _lengths(input_lengths, "input_lengths")
    target_lengths = _lengths(target_lengths, "target_lengths")
    require_real_floating("ctc_loss_cpu", log_probs._data, half=False)  # before its checks
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    _check_ctc(log_probs, targets, input_lengths, target_lengths, blank)
    loss = ctc_nll(log_probs, targets, input_lengths=input_lengths,
                   target_lengths=target_lengths, blank=blank, zero_infinity=zero_infinity)
    if zero_infinity:
        loss = where(loss == np.inf, loss.new_zeros(()), loss)
    if reduction == "mean":
        xp = get_array_module(log_probs._data)
        divisor = xp.maximum(xp.asarray(target_lengths, dtype=log_probs._data.dtype), 1)
        return (loss / Tensor._make(divisor)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
