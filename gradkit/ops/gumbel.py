"""gumbel_softmax: a softmax over logits plus Gumbel noise (torch.nn.functional's)."""
from __future__ import annotations

import warnings

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.ops.random_sampling import exponential_


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau) along ``dim``; ``hard``: the one-hot argmax in
    the forward with the soft sample's gradient (straight through), as torch computes it."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning,
                      stacklevel=2)
    noise = exponential_(Tensor._make(get_array_module(logits._data).zeros_like(logits._data)))
    gumbels = -noise.log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = Tensor._make(get_array_module(logits._data).zeros_like(logits._data))
    return y_hard.scatter_(dim, index, 1.0) - y_soft.detach() + y_soft
