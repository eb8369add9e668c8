"""Adafactor: Adam-like steps from factored second moments (row and column averages)."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from gradkit import ops
from gradkit.creation import tensor, zeros, zeros_like
from gradkit.optim.optimizer import Optimizer, check_one_element


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


class Adafactor(Optimizer):
    """torch.optim.Adafactor: a matrix keeps one variance per row and per column, not per entry.

    The step is relative to the parameter's root-mean-square size (at least ``eps[1]``) and
    clipped by ``d``; ``lr`` caps the relative step size ``1/sqrt(step)``.

    >>> opt = gradkit.optim.Adafactor([gradkit.zeros(2, 3, requires_grad=True)])
    >>> opt.defaults["beta2_decay"], opt.defaults["eps"]
    (-0.8, (None, 0.001))
    """

    _scalar_state_keys = ("step",)

    def __init__(self, params: Iterable, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        check_one_element("lr", lr)
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach))

    def _init_state(self, state: dict, grad) -> None:
        state["step"] = tensor(0.0)
        if grad.dim() > 1:  # factored: a column of row variances, a row of column variances
            state["row_var"] = zeros(*grad.shape[:-1], 1, dtype=grad.dtype, device=grad.device)
            state["col_var"] = zeros(*grad.shape[:-2], 1, grad.shape[-1], dtype=grad.dtype,
                                     device=grad.device)
        else:
            state["variance"] = zeros_like(grad)

    def _update_group(self, group: dict) -> None:
        lr, d, weight_decay = group["lr"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        with_grads = list(self._params_with_grads(group))
        if any(param.is_complex() for param, _ in with_grads):  # checked before any update
            raise RuntimeError("Adafactor does not support complex parameters")
        for param, grad in with_grads:
            state = self.state[param]
            if not state:
                self._init_state(state, grad)
            if eps1 is None:  # torch fixes it from the first parameter it sees, as here
                eps1 = float(np.finfo(param.dtype.np).eps)
            step = state["step"].add_(1).item()
            one_minus_beta2 = step ** group["beta2_decay"]
            rho = min(lr, 1 / (step ** 0.5))
            alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho
            if weight_decay != 0:
                param.mul_(1 - lr * weight_decay)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_var.lerp_(ops.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1)),
                              one_minus_beta2)
                col_var.lerp_(ops.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2)),
                              one_minus_beta2)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                var_estimate = state["variance"].lerp_(grad * grad, one_minus_beta2).clone()
            update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            param.add_(update, alpha=-alpha / denom)
