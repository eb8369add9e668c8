"""Adam's relatives: Adamax (infinity norm), NAdam (Nesterov momentum), RAdam (rectified)."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit import ops
from gradkit.creation import tensor, zeros_like
from gradkit.optim.optimizer import (
    Optimizer,
    check_betas,
    check_nonnegative,
    real_views,
)


def _check_adam_arguments(lr: float, betas: tuple[float, float], eps: float,
                          weight_decay: float) -> None:
    """The checks torch makes, in its order (so the first bad value is the one named)."""
    check_nonnegative(lr=lr, eps=eps)
    check_betas(betas)
    check_nonnegative(weight_decay=weight_decay)


class _AdamFamily(Optimizer):
    """Shared by the three: moment state, decayed gradient, and the group's betas."""

    _scalar_state_keys = ("step",)

    def _moments(self, param, group: dict, extra: dict) -> dict:
        state = self.state[param]
        if not state:
            state.update(step=tensor(0.0), **extra)
        return state

    @staticmethod
    def _decayed(group: dict, param, grad, decoupled: bool):
        """Weight decay: L2 added to the gradient, or (decoupled) the parameter shrunk."""
        weight_decay = group["weight_decay"]
        if weight_decay == 0:
            return grad
        if decoupled:
            param.mul_(1 - group["lr"] * weight_decay)
            return grad
        return grad.add(param, alpha=weight_decay)

    def _moved_moments(self, param, grad, group: dict, state: dict) -> tuple:
        """NAdam's and RAdam's common start of a step: count it, decay the gradient and move
        both moments by it. The real views ``param, grad, exp_avg, exp_avg_sq`` and the step."""
        beta1, beta2 = group["betas"]
        param_r, grad, exp_avg, exp_avg_sq = real_views(
            param, param, grad, state["exp_avg"], state["exp_avg_sq"])
        step = state["step"].add_(1).item()
        grad = self._decayed(group, param_r, grad, group["decoupled_weight_decay"])
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        return param_r, grad, exp_avg, exp_avg_sq, step


class Adamax(_AdamFamily):
    """torch.optim.Adamax: Adam with the infinity norm of past gradients as denominator.

    Its first step moves every coordinate by ``lr``, whatever the gradient's size:

    >>> w = gradkit.tensor([1.0, -3.0], requires_grad=True)
    >>> opt = gradkit.optim.Adamax([w], lr=0.1)
    >>> (w ** 3).sum().backward(); opt.step()
    >>> opt.state[w]["exp_inf"], w
    (tensor([ 3., 27.]), tensor([ 0.9000, -3.1000], requires_grad=True))
    """

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_adam_arguments(lr, betas, eps, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
            foreach=foreach, differentiable=differentiable, capturable=capturable))

    def _update_group(self, group: dict) -> None:
        beta1, beta2 = group["betas"]
        for param, grad in self._params_with_grads(group):
            state = self._moments(param, group, dict(exp_avg=zeros_like(param),
                                                     exp_inf=zeros_like(param)))
            if self._step_refused(group):
                continue
            step = state["step"].add_(1).item()
            grad = self._decayed(group, param, grad, decoupled=False)
            param_r, grad, exp_avg, exp_inf = real_views(param, param, grad,
                                                         state["exp_avg"], state["exp_inf"])
            exp_avg.lerp_(grad, 1 - beta1)
            if group["differentiable"]:  # torch's: amax of a stack, not maximum in place
                norm_buf = ops.cat([exp_inf.mul_(beta2).unsqueeze(0),
                                    grad.abs().add_(group["eps"]).unsqueeze_(0)], 0)
                exp_inf.copy_(ops.amax(norm_buf, 0, keepdim=False))
            else:
                exp_inf.copy_(ops.maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"])))
            param_r.addcdiv_(exp_avg, exp_inf, value=-group["lr"] / (1 - beta1 ** step))


class NAdam(_AdamFamily):
    """torch.optim.NAdam: Adam with Nesterov momentum and a decaying momentum schedule.

    >>> opt = gradkit.optim.NAdam([gradkit.zeros(2, requires_grad=True)])
    >>> opt.defaults["momentum_decay"]
    0.004
    """

    _scalar_state_keys = ("step", "mu_product")
    _capturable_names = "params, mu_products and state_steps"

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_arguments(lr, betas, eps, weight_decay)
        check_nonnegative(momentum_decay=momentum_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, eps, momentum_decay = group["lr"], group["eps"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        for param, grad in self._params_with_grads(group):
            # mu_product is a default-dtype scalar tensor, as torch's (its rounding shows)
            state = self._moments(param, group, dict(mu_product=tensor(1.0),
                                                     exp_avg=zeros_like(param),
                                                     exp_avg_sq=zeros_like(param)))
            if self._step_refused(group):
                continue
            param_r, grad, exp_avg, exp_avg_sq, step = self._moved_moments(param, grad, group,
                                                                            state)
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            mu_product = state["mu_product"].mul_(mu)
            denom = exp_avg_sq.div(1 - beta2 ** step).sqrt().add(eps)  # the root is saved
            if group["differentiable"]:  # torch's: through mu_product, a tensor
                param_r.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
                param_r.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - mu_product * mu_next)),
                                 denom)
                continue
            mu_product = mu_product.item()
            param_r.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
            param_r.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))


class RAdam(_AdamFamily):
    """torch.optim.RAdam: Adam whose adaptive step is switched on once its variance is tame.

    For the first steps (while the rectifier's rho_t <= 5) the update is bias-corrected
    momentum alone: ``lr * g`` on the first step.

    >>> w = gradkit.tensor([1.0, 0.5], requires_grad=True)
    >>> opt = gradkit.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w  # moved by lr * 2w: unlike Adam's, the first step scales with the gradient
    tensor([0.8000, 0.4000], requires_grad=True)
    """

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam_arguments(lr, betas, eps, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay, foreach=foreach,
            capturable=capturable, differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        rho_inf = 2 / (1 - beta2) - 1  # the longest the approximated SMA gets
        for param, grad in self._params_with_grads(group):
            state = self._moments(param, group, dict(exp_avg=zeros_like(param),
                                                     exp_avg_sq=zeros_like(param)))
            if self._step_refused(group):
                continue
            param_r, grad, exp_avg, exp_avg_sq, step = self._moved_moments(param, grad, group,
                                                                            state)
            bias_correction2 = 1 - beta2 ** step
            update = exp_avg / (1 - beta1 ** step) * lr
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive_lr = bias_correction2 ** 0.5 / exp_avg_sq.sqrt().add(eps)
                update = update * adaptive_lr * rect
            param_r.add_(update, alpha=-1.0)
