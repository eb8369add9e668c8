"""torch's top-level spellings of nn.functional's losses, samplers and recurrent cells
(``torch.kl_div``, ``torch.grid_sampler``, ``torch.lstm_cell`` ...), with ATen's signatures.

ATen takes a loss's reduction as an int (0 none, 1 mean, 2 sum; any other int reduces nothing,
as torch's), grid_sampler's modes as ints, and a recurrent cell's weights as arguments. Each
function is a thin adapter over gradkit.nn.functional or the recurrent layers' steps.

>>> gradkit.margin_ranking_loss(gradkit.tensor([1.0]), gradkit.tensor([3.0]),
...                             gradkit.tensor([1.0]), 0.0, 2).item()
2.0
"""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.nn import functional as F  # noqa: N812 - torch's convention
from gradkit.nn.rnn import _STEPS
from gradkit.ops.reduction import mean, sum as sum_
from gradkit.tensor_arguments import tensor_parameters

__all__ = ["binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
           "kl_div", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
           "ctc_loss", "grid_sampler", "affine_grid_generator", "rnn_tanh_cell",
           "rnn_relu_cell", "lstm_cell", "gru_cell"]


def _reduction(reduction: int) -> str:
    """ATen's Reduction enum as nn.functional's name."""
    return {1: "mean", 2: "sum"}.get(reduction, "none")


@tensor_parameters("target", "weight", "pos_weight")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 0) -> Tensor:
    """torch.binary_cross_entropy_with_logits: the F form, reduction as an int."""
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(
        reduction), pos_weight=pos_weight)


@tensor_parameters("input2", "target")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """torch.cosine_embedding_loss: the F form, reduction as an int."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


@tensor_parameters("target")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """torch.hinge_embedding_loss: the F form, reduction as an int."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


@tensor_parameters("target")
def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """torch.kl_div: the pointwise F.kl_div, reduced by ATen's int; its mean is over every
    element (F's "batchmean" has no int, and ATen's mean does not warn as F's does)."""
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    return {"mean": mean, "sum": sum_}.get(_reduction(reduction), lambda x: x)(loss)


@tensor_parameters("input2", "target")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """torch.margin_ranking_loss: the F form, reduction as an int."""
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """torch.poisson_nll_loss: the F form, every argument given, reduction as an int."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


@tensor_parameters("positive", "negative")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: int = 0) -> Tensor:
    """torch.triplet_margin_loss: the F form, reduction as an int."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """torch.ctc_loss: the F form, reduction as an int."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """torch.grid_sampler: F.grid_sample with the modes as ints (interpolation 0 bilinear,
    1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    if interpolation_mode not in range(3):
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode}")
    if padding_mode not in range(3):
        raise RuntimeError(f"grid_sampler(): unknown padding mode {padding_mode}")
    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                         _PADDING[padding_mode], align_corners)


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """torch.affine_grid_generator: F.affine_grid."""
    return F.affine_grid(theta, size, align_corners)


# -- recurrent cells: (input, hx, w_ih, w_hh, b_ih, b_hh), batched, torch's checks ----------

def _cell(mode: str, gates: int, input, states: tuple, w_ih, w_hh, b_ih, b_hh):
    hidden_size = w_hh.size(1)
    for name, weight in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if weight.size(0) != gates * hidden_size:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden_size}, but got {weight.size(0)}")
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{w_ih.size(1)}")
    for i, state in enumerate(states):
        if input.size(0) != state.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                               f"batch size {state.size(0)}")
        if state.size(1) != hidden_size:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {state.size(1)}, "
                               f"expected {hidden_size}")
    c = states[1] if len(states) > 1 else None
    return _STEPS[mode](F.linear(input, w_ih, b_ih), states[0], c, w_hh, b_hh, None)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """torch.rnn_tanh_cell: tanh(input w_ihᵀ + b_ih + hx w_hhᵀ + b_hh)."""
    return _cell("RNN_TANH", 1, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """torch.rnn_relu_cell: relu(input w_ihᵀ + b_ih + hx w_hhᵀ + b_hh)."""
    return _cell("RNN_RELU", 1, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """torch.lstm_cell: (h', c') from ``hx`` = (h, c), gates in torch's order i, f, g, o."""
    if not isinstance(hx, (tuple, list)):
        raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                        f"{type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    return _cell("LSTM", 4, input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """torch.gru_cell: one GRU step, gates in torch's order r, z, n."""
    return _cell("GRU", 3, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]
