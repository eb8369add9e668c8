"""RMSprop: divide the gradient by a running root mean square of its recent values."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit.creation import tensor, zeros_like
from gradkit.optim.optimizer import (
    Optimizer,
    check_nonnegative,
    real_views,
)


class RMSprop(Optimizer):
    """torch.optim.RMSprop (with momentum, centering and weight decay).

    >>> w = gradkit.tensor([1.0], requires_grad=True)
    >>> opt = gradkit.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    """

    _scalar_state_keys = ("step",)
    _capturable_foreach_xla = True

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                          alpha=alpha)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize,
                                      capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        for param, grad in self._params_with_grads(group):
            if group["weight_decay"] != 0:
                grad = grad.add(param, alpha=group["weight_decay"])
            state = self.state[param]
            if not state:
                state["step"] = tensor(0.0)
                state["square_avg"] = zeros_like(param)
                if momentum > 0:
                    state["momentum_buffer"] = zeros_like(param)
                if group["centered"]:
                    state["grad_avg"] = zeros_like(param)
            if self._step_refused(group):
                continue
            state["step"].add_(1)
            # torch's order of operations; a complex parameter is updated as pairs of reals
            param_r, grad, square_avg = real_views(param, param, grad, state["square_avg"])
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if group["centered"]:
                (grad_avg,) = real_views(param, state["grad_avg"])
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add(eps)  # out of place: a differentiable step saves the root
            if momentum > 0:
                (buf,) = real_views(param, state["momentum_buffer"])
                buf.mul_(momentum).addcdiv_(grad, avg)
                param_r.add_(buf, alpha=-lr)
            else:
                param_r.addcdiv_(grad, avg, value=-lr)
