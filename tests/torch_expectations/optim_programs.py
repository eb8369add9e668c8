"""Helpers of the optimizer and scheduler programs compared with torch
(tests/test_optim_torch_expectations*.py): each program takes the library module ``m``."""
import numpy as np

import gradkit
from torch_expectations.outcome import assert_same_outcome, outcome

try:
    import torch
except ImportError:  # the files using these helpers skip without torch
    torch = None

OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
              "RAdam", "ASGD", "Rprop"]


def assert_program_matches_torch(program) -> None:
    """``program``'s outcome under gradkit is torch's (values to rounding, types exactly)."""
    assert_same_outcome(outcome(program, gradkit), outcome(program, torch),
                        rtol=1e-7, atol=1e-12)


def param(m, *values):
    """A float64 parameter holding ``values``."""
    return m.nn.Parameter(m.tensor(np.array(values, dtype=np.float64)))


def sgd(m, **options):
    """An SGD optimizer over one parameter (what the scheduler programs drive)."""
    return m.optim.SGD([param(m, 1.0)], **{"lr": 0.1, **options})


def lrs_over(optimizer, scheduler, steps, *, pair_with=None):
    """The last learning rate (and ``pair_with`` group value) after each of ``steps`` steps."""
    values = []
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
        lr = scheduler.get_last_lr()[0]
        values.append(lr if pair_with is None else (lr, optimizer.param_groups[0][pair_with]))
    return values


def messages(caught):
    """The text of recorded warnings."""
    return [str(w.message) for w in caught]
