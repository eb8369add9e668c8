"""AdaptiveLogSoftmaxWithLoss (torch.nn's, from Grave et al., "Efficient softmax approximation
for GPUs"): a head over the frequent classes and one cluster token per tail, each tail a
low-rank projection; forward gives each target's log-probability and the mean loss."""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from itertools import pairwise

from gradkit import ops
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.container import ModuleList, Sequential
from gradkit.nn.layers import Linear
from gradkit.nn.module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """``AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=4.0,
    head_bias=False)``: ``module(input, target)`` is ``(output, loss)`` (a namedtuple),
    ``log_prob(input)`` the full (N, n_classes) log-distribution, ``predict(input)`` its argmax.

    >>> asm = gradkit.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4])
    >>> asm(gradkit.ones(3, 8), gradkit.tensor([0, 5, 9])).output.shape
    gradkit.Size([3])
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Re-draw the head and every tail projection as at construction."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_) -> _ASMoutput:
        """``(output, loss)``: each target's log-probability and their negated mean."""
        _check_shapes(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        used_rows = 0
        output = input.new_zeros(target.size(0))
        gather_inds = target.new_empty(target.size(0))
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(pairwise(bounds)):
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                gather_inds.index_copy_(0, rows, target[mask])
            else:
                cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)),
                                                dim=1)
                gather_inds.index_fill_(0, rows, self.shortlist_size + i - 1)
                local = cluster_logprob.gather(1, (target[mask] - low).unsqueeze(1))
                output.index_copy_(0, rows, local.squeeze(1))
            used_rows += rows.numel()
        if used_rows != target.size(0):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        """The (N, n_classes) log-distribution from ``input`` and the head's output."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(pairwise(self.cutoffs)):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster_logprob + head_logprob[
                :, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Log-probabilities of every class, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row (the full distribution only where the head's
        best is a cluster token)."""
        head_output = self.head(input)
        output = ops.argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return ops.argmax(self._get_full_log_prob(input, head_output), dim=1)
        log_prob = self._get_full_log_prob(input[outside], head_output[outside])
        output[outside] = ops.argmax(log_prob, dim=1)
        return output


def _check_shapes(input, target) -> None:
    if target.dim() == 1:
        if input.size(0) != target.size(0):
            raise RuntimeError("Input and target should have the same size in the batch "
                               "dimension.")
        if input.dim() != 2:
            raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs "
                               f"with size {input.size()}")
    elif target.dim() == 0:
        if input.dim() != 1:
            raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs "
                               f"with size {input.size()}")
    else:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
