"""torch's legacy CrossMapLRN2d Function (torch.nn.modules._functions), reproduced as torch
computes it: its forward's running channel sum never drops channel 0 (so it differs from
local_response_norm once the window has moved past it), and its backward is torch's formula
for the symmetric window, not the derivative of that forward (torch's own gradcheck fails)."""
from __future__ import annotations

from gradkit import creation
from gradkit.autograd.function import Function
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.ops.joining import cat
from gradkit.ops.reduction import cumsum


def _prefix_sums(values):
    """(N, C+1, H, W): entry j is the sum of the channels before j."""
    shape = tuple(values.shape)
    zero = creation.zeros(shape[0], 1, *shape[2:], dtype=values.dtype, device=values.device)
    return cat([zero, cumsum(values, dim=1)], 1)


def _channels(values, indices: list):
    return values.index_select(1, creation.tensor(indices, device=values.device))


class CrossMapLRN2d(Function):
    """``apply(input, size, alpha, beta, k)`` over (N, C, H, W): ``input * scale**-beta`` with
    ``scale = k + alpha/size * (sum of squares over torch's channel window)``."""

    @staticmethod
    def forward(ctx, input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        channels = input.size(1)
        pre_pad = int((size - 1) / 2 + 1)
        sums = _prefix_sums(input * input)
        # channel c sums squares [0, c + pre_pad) less [1, c - pre_pad + 1): torch's running
        # sum adds the channel entering the window but only drops those after channel 0
        upper = _channels(sums, [min(c + pre_pad, channels) for c in range(channels)])
        lower = _channels(sums, [max(c - pre_pad + 1, 1) for c in range(channels)])
        scale = (upper - lower + sums[:, 1:2]) * (alpha / size) + k
        output = scale ** -beta * input
        ctx.scale = scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        if is_grad_enabled():  # torch's backward writes with out=, which autograd refuses
            raise RuntimeError("mul(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        inverse_pre_pad = int(size - (size - 1) / 2)
        if inverse_pre_pad + channels > channels + size - 1:  # torch's narrow of its padding
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds "
                               f"dimension size ({channels + size - 1}).")
        sums = _prefix_sums(grad_output * output / ctx.scale)
        clip = [min(max(c, 0), channels) for c in range(-inverse_pre_pad, channels + size)]
        # channel c gathers the ratios of channels [c - inverse_pre_pad, c + size - inverse_pre_pad)
        window = _channels(sums, clip[size:size + channels]) - _channels(sums, clip[:channels])
        grad_input = ctx.scale ** -ctx.beta * grad_output \
            - (2 * ctx.alpha * ctx.beta / size) * input * window
        return grad_input, None, None, None, None
