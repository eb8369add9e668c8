"""Gradient clipping: scale gradients to a total norm, or clamp them to a value (torch's rules).

>>> w = gradkit.nn.Parameter(gradkit.tensor([3.0, 4.0]))
>>> w.grad = gradkit.tensor([3.0, 4.0])
>>> gradkit.nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> w.grad
tensor([0.6000, 0.8000])
"""
from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

from gradkit import ops
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.creation import tensor
from gradkit.ops.linalg_norms import vector_norm

TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(tensors: TensorOrTensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors: TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` seen as one vector (0-d tensor)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    with no_grad():
        norms = [vector_norm(t, norm_type) for t in tensors]
        total = vector_norm(ops.stack(norms), norm_type)
    if error_if_nonfinite and not bool(ops.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Multiply every ``.grad`` by ``min(max_norm / (total_norm + 1e-6), 1)``, in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        # always multiply (by 1 when under the limit), as torch does: a nan norm spreads
        coefficient = ops.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for grad in grads:
            grad.mul_(coefficient.to(grad.dtype))


def clip_grad_norm_(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients so that their total ``norm_type``-norm is at most ``max_norm``.

    Returns the total norm before clipping; ``norm_type`` may be ``float('inf')``.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator would be exhausted by the first pass
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters: TensorOrTensors, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every ``.grad`` into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """torch's deprecated spelling of clip_grad_norm_ (a FutureWarning, then the same)."""
    warnings.warn("`gradkit.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`gradkit.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
