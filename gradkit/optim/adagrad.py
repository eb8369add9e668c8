"""Adagrad and Adadelta: per-coordinate step sizes from the history of squared gradients."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit.creation import full_like, tensor, zeros_like
from gradkit.ops.complex_views import view_as_complex
from gradkit.optim.optimizer import (
    Optimizer,
    check_nonnegative,
    real_views,
    saved_copy,
)


class Adagrad(Optimizer):
    """torch.optim.Adagrad: divide by the root of the summed squared gradients.

    The first step on a fresh accumulator is ``lr * g / (|g| + eps)``, about ``lr``:

    >>> w = gradkit.tensor([2.0], requires_grad=True)
    >>> opt = gradkit.optim.Adagrad([w], lr=0.5)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([1.5000], requires_grad=True)
    """

    _scalar_state_keys = ("step",)

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_nonnegative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                          initial_accumulator_value=initial_accumulator_value, eps=eps)
        super().__init__(params, dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, maximize=maximize,
            foreach=foreach, differentiable=differentiable, fused=fused))
        # torch fills the state of the constructor's parameters at once (not at first step)
        for group in self.param_groups:
            for param in group["params"]:
                self._init_state(param, initial_accumulator_value)

    def _init_state(self, param, initial_accumulator_value: float) -> None:
        value = initial_accumulator_value
        self.state[param].update(
            step=tensor(0.0),
            sum=full_like(param, complex(value, value) if param.is_complex() else value))

    def _update_group(self, group: dict) -> None:
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        self._check_fused(group, once=True, new_states=True)
        if group["fused"] and any(p.is_complex() for p in group["params"] if p.grad is not None):
            raise RuntimeError("`fused` does not support sparse grad or complex param")
        for param, grad in self._params_with_grads(group):
            state = self.state[param]
            if not state:  # a parameter added later: torch reads the constructor's default
                self._init_state(param, self.defaults["initial_accumulator_value"])
            if self._step_refused(group):
                continue
            step = state["step"].add_(1).item()
            if group["weight_decay"] != 0:
                grad = grad.add(param, alpha=group["weight_decay"])
            step_lr = lr / (1 + (step - 1) * lr_decay)
            param_r, grad, state_sum = real_views(param, param, grad, state["sum"])
            state_sum.addcmul_(grad, grad, value=1)
            # out of place: a differentiable step saves the root
            param_r.addcdiv_(grad, state_sum.sqrt().add(eps), value=-step_lr)


class Adadelta(Optimizer):
    """torch.optim.Adadelta: step sizes from running averages of squared gradients and steps.

    >>> opt = gradkit.optim.Adadelta([gradkit.zeros(2, requires_grad=True)])
    >>> opt.defaults["rho"], opt.defaults["lr"]
    (0.9, 1.0)
    """

    _scalar_state_keys = ("step",)
    _capturable_devices = ("cuda", "xpu", "hpu", "privateuseone")  # no xla

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_nonnegative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
            capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for param, grad in self._params_with_grads(group):
            state = self.state[param]
            if not state:
                state.update(step=tensor(0.0), square_avg=zeros_like(param),
                             acc_delta=zeros_like(param))
            if self._step_refused(group):
                continue
            state["step"].add_(1)
            if group["weight_decay"] != 0:
                grad = grad.add(param, alpha=group["weight_decay"])
            grad, square_avg, acc_delta = real_views(param, grad, state["square_avg"],
                                                     state["acc_delta"])
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = saved_copy(acc_delta.add(eps).sqrt_(), group).div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            if param.is_complex():
                delta = view_as_complex(delta)
            param.add_(delta, alpha=-lr)
