"""Adam and AdamW (decoupled weight decay), with optional AMSGrad."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit import ops
from gradkit._tensor import Tensor
from gradkit.creation import tensor, zeros_like
from gradkit.optim.optimizer import (
    Optimizer,
    check_betas,
    check_nonnegative,
    check_one_element,
    decayed_gradient,
    real_views,
    saved_copy,
)


def refuse_tensor_with_foreach(name: str, value: object, foreach: bool | None,
                               capturable: bool) -> None:
    """torch's foreach kernels take no tensor hyperparameters unless capturable."""
    if isinstance(value, Tensor) and foreach and not capturable:
        raise ValueError(f"{name} as a Tensor is not supported for capturable=False and "
                         "foreach=True")


def _tensor_or_float_betas(betas: tuple, foreach: bool | None, capturable: bool) -> tuple:
    """torch's checks of Adam's betas: both floats or both tensors of one element; tensors
    come back 0-d."""
    if not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        refuse_tensor_with_foreach(f"betas[{i}]", beta, foreach, capturable)
        check_one_element(f"betas[{i}]", beta)
    return tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b for b in betas)


class Adam(Optimizer):
    """torch.optim.Adam: bias-corrected moment estimates; weight decay added to the gradient.

    >>> w = gradkit.tensor([1.0], requires_grad=True)
    >>> opt = gradkit.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
    """

    _scalar_state_keys = ("step",)
    _capturable_checked_first = True

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        refuse_tensor_with_foreach("lr", lr, foreach, capturable)
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        betas = _tensor_or_float_betas(betas, foreach, capturable)
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, decoupled_weight_decay=decoupled_weight_decay,
            foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused))

    def _update_group(self, group: dict) -> None:
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        self._check_fused(group, once=False, new_states=True)
        with_grads = list(self._params_with_grads(group))
        for param, _ in with_grads:  # torch makes every state (and checks it) before a step
            self._init_state(param, group)
        for param, grad in with_grads:
            state = self.state[param]
            if self._step_refused(group):
                continue
            step = state["step"].add_(1).item()
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * weight_decay)
                elif group["differentiable"]:
                    grad = decayed_gradient(grad, param, weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            # torch's order of operations, so the rounding is torch's too; a complex
            # parameter is updated as pairs of reals
            param_r, grad, exp_avg, exp_avg_sq = real_views(
                param, param, grad, state["exp_avg"], state["exp_avg_sq"])
            exp_avg.lerp_(grad, 1 - beta1)
            if group["differentiable"] and _requires_grad(beta2):  # lerp: addcmul_ would
                exp_avg_sq.lerp_(grad.square(), 1 - beta2)  # drop beta2's gradient
            else:
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            second_moment = exp_avg_sq
            if group["amsgrad"]:
                (second_moment,) = real_views(param, state["max_exp_avg_sq"])
                second_moment.copy_(ops.maximum(saved_copy(second_moment, group), exp_avg_sq))
            if group["differentiable"]:
                # torch's differentiable formula: bias corrections as tensors of the step's
                # dtype (so they round as torch's), the step folded into the denominator
                step_t = state["step"].clone()
                step_size_neg = (lr / (1 - beta1 ** step_t)).neg()
                bias_correction2_sqrt = (1 - beta2 ** step_t).sqrt()
                denom = (second_moment.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                    eps / step_size_neg)
                param_r.addcdiv_(exp_avg.clone(), denom)
                continue
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            denom = (second_moment.sqrt() / bias_correction2_sqrt).add_(eps)
            param_r.addcdiv_(exp_avg, denom, value=-(lr / (1 - beta1 ** step)))

    def _init_state(self, param: Tensor, group: dict) -> None:
        state = self.state[param]
        if not state:
            state["step"] = tensor(0.0)
            state["exp_avg"] = zeros_like(param)
            state["exp_avg_sq"] = zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(param)
        if group["differentiable"] and state["step"].requires_grad:
            raise RuntimeError("`requires_grad` is not supported for `step` in differentiable "
                               "mode")


def _requires_grad(value: object) -> bool:
    return isinstance(value, Tensor) and value.requires_grad


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
