"""Stochastic gradient descent (momentum, dampening, Nesterov) and its averaged form, ASGD."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit._tensor import Tensor
from gradkit.creation import tensor, zeros_like
from gradkit.ops.promotion import SCALAR_TYPE_NAMES
from gradkit.optim.optimizer import (
    Optimizer,
    check_nonnegative,
    decayed_gradient,
    real_views,
)


class SGD(Optimizer):
    """torch.optim.SGD: ``p -= lr * (g + momentum terms)``, in place.

    With momentum the second step (0.8 -> 0.46) is longer than the first (1 -> 0.8): the
    buffer keeps 0.9 of the first gradient, 2.0, on top of the second, 1.6.

    >>> w = gradkit.tensor([1.0], requires_grad=True)
    >>> opt = gradkit.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.4600], requires_grad=True)
    """

    _foreach_supports_autograd = True

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_nonnegative(True, lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update_group(self, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay = group["weight_decay"]
        self._check_fused(group, once=True, new_states=False)
        complex_dtypes = list(dict.fromkeys(
            p.dtype.name for p in group["params"] if p.grad is not None and p.is_complex()))
        if group["fused"] and complex_dtypes:  # past torch's check of the first parameter:
            # its kernel, run per dtype in the reverse order of their first appearance
            raise NotImplementedError('"fused_sgd_kernel" not implemented for '
                                      f"'{SCALAR_TYPE_NAMES[complex_dtypes[-1]]}'")
        if group["fused"] and momentum != 0:
            self._refuse_a_missing_buffer(group)
        if isinstance(lr, Tensor) and lr.dim() != 0:
            lr = lr.squeeze()
        for param, grad in self._params_with_grads(group):
            if weight_decay != 0:
                grad = decayed_gradient(grad, param, weight_decay)
            if momentum != 0:
                state = self.state[param]
                buf = state.get("momentum_buffer")
                if buf is None:  # detached, as torch's: the first buffer starts a new history
                    buf = state["momentum_buffer"] = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
            if isinstance(lr, Tensor) and lr.requires_grad:  # alpha= would drop lr's gradient
                param.addcmul_(grad, lr, value=-1)
            else:
                param.add_(grad, alpha=-lr)


    def _refuse_a_missing_buffer(self, group: dict) -> None:
        """torch's fused SGD makes the momentum buffers only at a first step where none has
        one: a parameter stepped first later (no gradient before) hands its kernel a None,
        refused (here before any group's update; torch may have run another dtype's)."""
        lists: dict = {}
        for param in group["params"]:
            if param.grad is not None:
                buf = self.state[param].get("momentum_buffer")
                lists.setdefault((param.device, param.dtype), []).append(buf)
        buffers = [buf for group_buffers in lists.values() for buf in group_buffers]
        if all(buf is None for buf in buffers):
            return
        for group_buffers in lists.values():
            missing = [k for k, buf in enumerate(group_buffers) if buf is None]
            if missing:
                raise TypeError(f"expected Tensor as element {missing[0]} in argument 2, but "
                                "got NoneType")


class ASGD(Optimizer):
    """torch.optim.ASGD: SGD with a decaying step size that keeps a running average ``ax``.

    The step size ``eta`` and the averaging weight ``mu`` are default-dtype scalar tensors
    as torch's, so their rounding is torch's too. Averaging starts after ``t0`` steps.

    >>> w = gradkit.tensor([1.0], requires_grad=True)
    >>> opt = gradkit.optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8000], requires_grad=True)
    """

    _scalar_state_keys = ("step", "eta", "mu")
    _capturable_names = "params, mus, etas, and state_steps"

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
            maximize=maximize, foreach=foreach, differentiable=differentiable,
            capturable=capturable))

    def _update_group(self, group: dict) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        for param, grad in self._params_with_grads(group):
            state = self.state[param]
            if not state:
                state.update(step=tensor(0.0), eta=tensor(float(lr)), mu=tensor(1.0),
                             ax=zeros_like(param))
            if self._step_refused(group):
                continue
            step = state["step"].add_(1).item()
            if group["weight_decay"] != 0:
                grad = grad.add(param, alpha=group["weight_decay"])
            param_r, grad, ax = real_views(param, param, grad, state["ax"])
            if group["foreach"]:
                # torch's multi-tensor algorithm (foreach=True) orders the update otherwise
                # and computes eta in float32 from the step tensor: a correctly rounded
                # powf (NumPy's float32 power may be an ulp off), and lr / t as torch's
                # reciprocal times lr
                param_r.addcmul_(grad.add(param_r, alpha=lambd), state["eta"], value=-1)
                ax.addcmul_(param_r.sub(ax), state["mu"])
                base = 1 + lambd * lr * state["step"]
                state["eta"].copy_((base.double() ** alpha).to(base.dtype).reciprocal() * lr)
            else:
                eta = state["eta"].item()
                param_r.mul_(1 - lambd * eta).add_(grad, alpha=-eta)
                if state["mu"].item() != 1:
                    # by the tensor, as torch: a differentiable step saves it (and refuses a
                    # backward after the next step changes it)
                    ax.add_(param_r.sub(ax).mul_(state["mu"]))
                else:
                    ax.copy_(param_r)
                # rounded through a default-dtype tensor first, as torch's as_tensor does
                state["eta"].copy_(tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            state["mu"].copy_(tensor(1 / max(1, step - t0)))
