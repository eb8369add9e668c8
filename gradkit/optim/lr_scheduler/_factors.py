"""Schedules whose lr follows a closed form of the epoch: constant, linear, exponential and
polynomial factors."""
from __future__ import annotations

from gradkit.optim.lr_scheduler._base import LRScheduler
from gradkit.optim.optimizer import Optimizer


class ConstantLR(LRScheduler):
    """Scale the lr by ``factor`` until epoch ``total_iters``, then restore it."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """factor at epoch 0, 1/factor at total_iters, unchanged otherwise."""
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return self._scaled_lrs(self.factor)
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return self._scaled_lrs(1.0 / self.factor)

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters)
                           * (1 - self.factor)) for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lr times the ratio of this epoch's factor to the last one's."""
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return self._scaled_lrs(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        change = self.end_factor - self.start_factor
        return self._scaled_lrs(1.0 + change / (self.total_iters * self.start_factor
                                                + (self.last_epoch - 1) * change))

    def _get_closed_form_lr(self) -> list[float]:
        change = self.end_factor - self.start_factor
        return [base_lr * (self.start_factor + change * min(self.total_iters, self.last_epoch)
                           / self.total_iters) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lr times gamma (unchanged at construction)."""
        self._warn_if_called_outside_step()
        if self._is_initial:
            return self._current_lrs()
        return self._scaled_lrs(self.gamma)

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr to 0 over ``total_iters`` epochs as ``(1 - t/total_iters) ** power``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lr times the ratio of this epoch's decay to the last one's."""
        self._warn_if_called_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return self._scaled_lrs(decay)

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]

