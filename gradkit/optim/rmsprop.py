"""RMSprop: divide the gradient by a running root mean square of its recent values."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit.creation import tensor, zeros_like
from gradkit.optim.optimizer import Optimizer, check_nonnegative, implementation_flags


class RMSprop(Optimizer):
    """torch.optim.RMSprop (with momentum, centering and weight decay).

    >>> w = gradkit.tensor([1.0], requires_grad=True)
    >>> opt = gradkit.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                          alpha=alpha)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize,
                                      **implementation_flags(capturable=capturable,
                                                             foreach=foreach,
                                                             differentiable=differentiable)))

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
            state["step"].add_(1)
            square_avg = state["square_avg"].mul_(alpha).add_(grad * grad.conj(), alpha=1 - alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"].mul_(alpha).add_(grad, alpha=1 - alpha)
                avg = (square_avg - grad_avg * grad_avg.conj()).sqrt().add_(eps)
            else:
                avg = square_avg.sqrt().add_(eps)
            if momentum > 0:
                buf = state["momentum_buffer"].mul_(momentum).add_(grad / avg)
                param.add_(buf, alpha=-lr)
            else:
                param.sub_(grad / avg, alpha=lr)
