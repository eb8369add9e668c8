"""Flatten parameters into one vector and back (torch.nn.utils.parameters_to_vector)."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit import ops
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import no_grad


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor: every parameter flattened, concatenated in order."""
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of ``vec`` into the parameters' data (no autograd history)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for param in parameters:
        n = param.numel()
        with no_grad():
            param.copy_(vec[offset:offset + n].view_as(param))
        offset += n
