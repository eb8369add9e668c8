"""Adam and AdamW (decoupled weight decay), with optional AMSGrad."""
from __future__ import annotations

import math
from collections.abc import Iterable

from gradkit import ops
from gradkit.creation import tensor, zeros_like
from gradkit.optim.optimizer import (
    Optimizer,
    check_betas,
    check_nonnegative,
    implementation_flags,
)


class Adam(Optimizer):
    """torch.optim.Adam: bias-corrected moment estimates; weight decay added to the gradient.

    >>> w = gradkit.tensor([1.0], requires_grad=True)
    >>> opt = gradkit.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, decoupled_weight_decay=decoupled_weight_decay,
            **implementation_flags(foreach=foreach, capturable=capturable,
                                   differentiable=differentiable, fused=fused)))

    def _update_group(self, group: dict) -> None:
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        for param, grad in self._params_with_grads(group):
            state = self.state[param]
            if not state:
                state["step"] = tensor(0.0)
                state["exp_avg"] = zeros_like(param)
                state["exp_avg_sq"] = zeros_like(param)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(param)
            step = state["step"].add_(1).item()
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
            exp_avg_sq.mul_(beta2).add_(grad * ops.conj(grad), alpha=1 - beta2)
            if group["amsgrad"]:
                second_moment = state["max_exp_avg_sq"].copy_(
                    ops.maximum(state["max_exp_avg_sq"], exp_avg_sq))
            else:
                second_moment = exp_avg_sq
            bias_correction1 = 1 - beta1 ** step
            bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
            denom = second_moment.sqrt().div_(bias_correction2_sqrt).add_(eps)
            param.sub_(exp_avg / denom, alpha=lr / bias_correction1)


class AdamW(Adam):
    """torch.optim.AdamW: Adam whose weight decay shrinks the parameters directly.

    >>> opt = gradkit.optim.AdamW([gradkit.zeros(2, requires_grad=True)], lr=1e-3)
    >>> opt.defaults["weight_decay"]
    0.01
    """

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
