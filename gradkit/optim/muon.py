"""Muon: momentum whose update is orthogonalized by a Newton-Schulz iteration (torch 2.13)."""
from __future__ import annotations

import math
from collections.abc import Iterable

from gradkit import ops
from gradkit.backend import float32, float64, int32
from gradkit.creation import zeros_like
from gradkit.optim.optimizer import Optimizer, check_one_element

_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _float32_to_bfloat16(single):
    """float32 ``single`` rounded to bfloat16 (to nearest, ties to even), as float64."""
    bits = single.view(int32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & -65536).view(float32).to(float64)


def _cast_to_bfloat16(t):
    """``t.bfloat16()`` as torch casts a tensor, via float32 (so rounding twice for a double)."""
    return _float32_to_bfloat16(t.to(float32))


def _bfloat16(t):
    """float64 ``t`` rounded once to bfloat16, as float64: torch's bfloat16 kernels compute a
    result in float32 with fused multiply-adds, nearly exact, then round it; computing in
    float64 and rounding once gives its bfloat16 (a plain float32 result can land on a
    bfloat16 tie the fused one misses, and so round the other way)."""
    single = t.to(float32)
    # round to odd in float32 (an inexact result made odd by one step towards t): rounding
    # that to bfloat16 is then the correct rounding of t
    bits = single.view(int32)
    inexact_even = (single.to(float64) != t) & ((bits & 1) == 0)
    step = ops.where(inexact_even, ops.where(single.abs() > t.abs(), -1, 1), 0)
    return _float32_to_bfloat16((bits + step.to(int32)).view(float32))


def _zeropower_via_newtonschulz(grad, coefficients, ns_steps: int, eps: float):
    """torch's quintic Newton-Schulz iteration towards the orthogonal factor of ``grad``."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = grad.size(0) > grad.size(1)
    x = _cast_to_bfloat16(grad)
    x = x.T if tall else x
    x = _bfloat16(x / _bfloat16(_bfloat16(x.norm()).clamp(min=eps)))
    for _ in range(ns_steps):
        gram = _bfloat16(x @ x.T)
        gram_update = _bfloat16(ops.addmm(gram, gram, gram, beta=b, alpha=c))
        x = _bfloat16(ops.addmm(x, gram_update, x, beta=a))
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """torch.optim.Muon, for 2-D parameters: momentum (Nesterov's by default), its update
    orthogonalized by ``ns_steps`` Newton-Schulz iterations, decoupled weight decay, and a
    learning rate scaled by the matrix's shape.

    torch iterates in bfloat16; gradkit rounds every intermediate result to bfloat16 as torch
    stores it, so updates agree with torch's to about bfloat16's precision (3 digits).

    >>> w = gradkit.ones(2, 2, requires_grad=True)
    >>> opt = gradkit.optim.Muon([w], lr=0.1, weight_decay=0)
    >>> opt.param_groups[0]["momentum"], opt.param_groups[0]["nesterov"]
    (0.95, True)
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = _NS_COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5,
                 adjust_lr_fn: str | None = None) -> None:
        check_one_element("lr", lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(
            lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
            ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for param in group["params"]:
                if param.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {param.size()}")

    def _update_group(self, group: dict) -> None:
        lr, momentum = group["lr"], group["momentum"]
        with_grads = [p for p in group["params"] if p.grad is not None]
        for param in with_grads:  # torch checks them all before updating any
            if param.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            state = self.state[param]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = zeros_like(param.grad)
        for param in with_grads:
            grad, buf = param.grad, self.state[param]["momentum_buffer"]
            if grad.ndim != 2:  # a parameter of a group added later (add_param_group)
                raise ValueError("Param gradient must be a 2D matrix")
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                 group["ns_steps"], group["eps"])
            param.mul_(1 - lr * group["weight_decay"])
            param.add_(update.to(param.dtype), alpha=-_adjusted_lr(lr, group["adjust_lr_fn"],
                                                                   param.shape))
