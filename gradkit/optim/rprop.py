"""Rprop: move by a per-coordinate step size that grows or shrinks with the gradient's sign."""
from __future__ import annotations

from collections.abc import Iterable

from gradkit import ops
from gradkit.creation import full_like, tensor, zeros_like
from gradkit.optim.optimizer import Optimizer, check_nonnegative, real_views, saved_copy


class Rprop(Optimizer):
    """torch.optim.Rprop: only the sign of the gradient counts, the step size adapts.

    Where the sign flips, the step size shrinks by ``etas[0]`` and that coordinate rests for a
    step; where it holds, the step size grows by ``etas[1]`` (clamped to ``step_sizes``).

    >>> w = gradkit.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = gradkit.optim.Rprop([w], lr=0.25)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([ 0.7500, -0.7500], requires_grad=True)
    """

    _scalar_state_keys = ("step",)
    _capturable_foreach_xla = True

    def __init__(self, params: Iterable, lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(
            lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize,
            foreach=foreach, differentiable=differentiable, capturable=capturable))

    def _update_group(self, group: dict) -> None:
        eta_minus, eta_plus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        lr = group["lr"]
        for param, grad in self._params_with_grads(group):
            state = self.state[param]
            if not state:
                # a complex coordinate is two reals: both parts start at lr
                start = complex(lr, lr) if param.is_complex() else lr
                state.update(step=tensor(0.0), prev=zeros_like(param),
                             step_size=full_like(grad, start))
            if self._step_refused(group):
                continue
            state["step"].add_(1)
            param_r, grad, prev, step_size = real_views(param, param, grad, state["prev"],
                                                        state["step_size"])
            sign = grad.mul(saved_copy(prev, group)).sign()
            flipped = sign.lt(0)
            # factors in the gradient's dtype, as torch's; a NaN sign stays NaN
            factor = ops.where(sign.gt(0), eta_plus,
                               ops.where(flipped, eta_minus, ops.where(sign.eq(0), 1.0, sign)))
            step_size.mul_(factor).clamp_(step_size_min, step_size_max)
            # after a sign flip the gradient counts as zero: no move, and no flip next time
            grad = ops.where(flipped, 0.0, grad)
            param_r.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)
