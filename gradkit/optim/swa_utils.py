"""Stochastic weight averaging and EMA: AveragedModel, SWALR, update_bn (torch.optim.swa_utils).

The averaging arithmetic is torch's: on the CPU the default update is
``averaged + (current - averaged) / (n_averaged + 1)`` per tensor, on a GPU a ``lerp_``
with weight ``1 / (n_averaged + 1)``, as torch's foreach path.
"""
from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from gradkit.autograd.grad_mode import no_grad
from gradkit.backend import int64
from gradkit.creation import tensor
from gradkit.nn.layers_more import _BatchNorm
from gradkit.nn.module import Module
from gradkit.optim.lr_scheduler._base import LRScheduler, attributes_except, format_param
from gradkit.optim.optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """In-place exponential moving average of lists of tensors: ema += (1-decay)(p - ema)."""
    _check_decay(decay)

    def ema_update(ema_params: list, current_params: list, _num_averaged: Any) -> None:
        with no_grad():
            for ema, current in zip(ema_params, current_params, strict=True):
                if ema.is_floating_point() or ema.is_complex():
                    ema.lerp_(current, 1 - decay)
                else:
                    ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """In-place running mean of lists of tensors (torch's foreach form)."""
    def swa_update(averaged_params: list, current_params: list, num_averaged: Any) -> None:
        with no_grad():
            # torch's weight is a default-dtype tensor when num_averaged is one
            weight = 1 / (num_averaged + 1)
            weight = weight.item() if hasattr(weight, "item") else weight
            for averaged, current in zip(averaged_params, current_params, strict=True):
                if averaged.is_floating_point() or averaged.is_complex():
                    averaged.lerp_(current, weight)
                else:
                    averaged.add_((current - averaged) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """``decay * ema + (1 - decay) * current``, one tensor at a time."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> Callable:
    """The running mean ``averaged + (current - averaged) / (n + 1)``, one tensor at a time."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are a running average (SWA, or EMA through
    ``avg_fn``/``multi_avg_fn``) of the model's, updated by :meth:`update_parameters`."""

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> Iterable:
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average (the first call copies them)."""
        with no_grad():
            ours = [p.detach() for p in (self._tensors(self.module) if self.use_buffers
                                         else self.parameters())]
            theirs = [p.detach().to(a.device) for a, p in zip(ours, self._tensors(model),
                                                                strict=False)]
            ours = ours[:len(theirs)]
            if self.n_averaged.item() == 0:
                for averaged, current in zip(ours, theirs, strict=True):
                    averaged.copy_(current)
            else:
                self._average(ours, theirs)
            if not self.use_buffers:  # buffers follow the model rather than being averaged
                for mine, source in zip(self.module.buffers(), model.buffers(), strict=True):
                    mine.detach().copy_(source.detach().to(mine.device))
            self.n_averaged += 1

    def _average(self, ours: list, theirs: list) -> None:
        if self.avg_fn is not None:
            for averaged, current in zip(ours, theirs, strict=True):
                averaged.copy_(self.avg_fn(averaged, current,
                                           self.n_averaged.to(averaged.device)))
            return
        groups: dict[tuple, tuple[list, list]] = {}  # torch groups by device and dtype
        for averaged, current in zip(ours, theirs, strict=True):
            mine, others = groups.setdefault((str(averaged.device), averaged.dtype), ([], []))
            mine.append(averaged)
            others.append(current)
        for mine, others in groups.values():
            n_averaged = self.n_averaged.to(mine[0].device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, others, n_averaged)
            elif mine[0].device.type == "cuda":  # torch's foreach kernels: a lerp
                get_swa_multi_avg_fn()(mine, others, n_averaged)
            else:
                average = get_swa_avg_fn()
                for averaged, current in zip(mine, others, strict=True):
                    averaged.copy_(average(averaged, current, n_averaged))


def update_bn(loader: Iterable, model: Module, device: Any = None) -> None:
    """Recompute the BatchNorm running statistics of ``model`` over one pass of ``loader``
    (cumulative averages, ``momentum=None``); the first item of tuple batches is the input."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            batch = batch[0] if isinstance(batch, (list, tuple)) else batch
            model(batch if device is None else batch.to(device))
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` (cos or linear), then hold."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        for lr, group in zip(format_param("swa_lr", optimizer, swa_lr),
                             optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def get_lr(self) -> list[float]:
        """Undo last step's blend to recover the lr before annealing, then blend anew."""
        self._warn_if_called_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(groups, prev_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """The attributes but the optimizer and the anneal function (torch's)."""
        return attributes_except(self, "anneal_func")

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes and the anneal function they name."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
