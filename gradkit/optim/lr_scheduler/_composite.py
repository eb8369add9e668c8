"""Schedulers made of schedulers (ChainedScheduler, SequentialLR) and ReduceLROnPlateau."""
from __future__ import annotations

import math
import warnings
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, SupportsFloat

from gradkit.optim.lr_scheduler._base import (
    EPOCH_DEPRECATION_WARNING,
    LRScheduler,
    attributes_except,
    check_optimizer,
    group_values,
    set_group_lr,
    restore_attributes_except,
)
from gradkit.optim.optimizer import Optimizer


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` once the metric passed to ``step`` stops improving.

    ``patience`` epochs without improvement (by ``threshold``, relative or absolute) are
    allowed; after a reduction, ``cooldown`` epochs pass before counting again.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: list[float] | float = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, "
                                 f"got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """True while epochs after a reduction are still being skipped."""
        return self.cooldown_counter > 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric; reduce the lr if it has stalled for too long."""
        current = float(metrics)  # a 0-d tensor works too
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = group_values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:  # changes smaller than eps are skipped
                set_group_lr(group, new_lr)

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return (a < best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                    else a < best - self.threshold)
        return (a > best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                else a > best + self.threshold)

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes (and recheck mode and threshold_mode)."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


def _check_schedulers(owner: str, schedulers: Sequence[LRScheduler], optimizer: Optimizer,
                      empty_message: str) -> None:
    """torch's checks on the schedulers a ChainedScheduler or SequentialLR combines."""
    if len(schedulers) < 1:
        raise ValueError(f"{owner} expects {empty_message}, but got no scheduler.")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from {type(optimizer).__name__}.")


class _SchedulerList(LRScheduler):
    """State dicts that nest the state dict of each inner scheduler."""

    _schedulers: Sequence[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """Own attributes, and ``_schedulers``: the inner schedulers' state dicts."""
        return {**attributes_except(self, "_schedulers"),
                "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore own attributes and each inner scheduler's."""
        inner = restore_attributes_except(self, state_dict, "_schedulers")
        for scheduler, saved in zip(self._schedulers, inner, strict=False):
            scheduler.load_state_dict(saved)


class ChainedScheduler(_SchedulerList):
    """Step every scheduler in turn: their effects on the lr multiply."""

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        owner = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{owner} expects at least one scheduler to be chained, but got "
                             "no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(owner, schedulers, optimizer, "at least one scheduler to be chained")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = group_values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")


class SequentialLR(_SchedulerList):
    """Run ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``."""

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        owner = type(self).__name__
        _check_schedulers(owner, schedulers, optimizer, "at least one scheduler")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # back to the initial rates ...
            set_group_lr(group, group["initial_lr"])
        self.recursive_undo()  # ... and the epochs before the inner schedulers' first steps
        first = bisect_right(milestones, 0)
        schedulers[first]._initial_step()
        self._last_lr = schedulers[first].get_last_lr()

    def recursive_undo(self, sched: LRScheduler | None = None) -> None:
        """Take back one epoch from every (nested) inner scheduler."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for inner in scheds._schedulers:
                self.recursive_undo(inner)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the scheduler of this epoch (restarted at its milestone)."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()
