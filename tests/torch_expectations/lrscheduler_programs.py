"""Helpers of the TestLRScheduler programs (tests/test_optim_torch_expectations_lrscheduler*.py):
torch's setUp optimizer and its ways of driving schedulers. Each program takes the library
module ``m``."""
import warnings

from torch_expectations.optim_programs import messages, param


def setup_optimizer(m, cls="SGD", second_lr=None):
    """setUp's optimizer (test_cycle_lr_with_adam & co. swap Adam in, float second lr)."""
    lr = m.tensor(0.5) if second_lr is None else second_lr
    return getattr(m.optim, cls)([{"params": [param(m, 1.0), param(m, 2.0)]},
                                  {"params": [param(m, 3.0), param(m, 4.0)], "lr": lr}],
                                 lr=0.05)


def lrs_now(opt, key="lr"):
    """The groups' rates now (a tensor rate is filled in place later: copied)."""
    return [group[key].clone() if hasattr(group[key], "clone") else group[key]
            for group in opt.param_groups]


def momenta(opt):
    return [group["betas"][0] if "betas" in group else group.get("momentum")
            for group in opt.param_groups]


def _each_epoch(schedulers, opt, epochs, now, optimizer_step=True):
    """Per epoch: ``now()`` recorded, an optimizer step (unless not), a step of each scheduler."""
    seen = []
    for _ in range(epochs):
        seen.append(now())
        if optimizer_step:
            opt.step()
        for scheduler in schedulers:
            scheduler.step()
    return seen


def _each_epoch_warned(opt, epochs, step):
    """Per epoch: an optimizer step, then ``step(epoch)``; the rates and the warnings it gave."""
    seen = []
    for epoch in range(epochs):
        opt.step()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            step(epoch)
        seen.append((lrs_now(opt), messages(caught)))
    return seen


def run_plain(schedulers, opt, epochs):
    """torch's ``run_plain``: the rates, then a step of each scheduler (no optimizer step)."""
    return _each_epoch(schedulers, opt, epochs, lambda: lrs_now(opt), optimizer_step=False)


def run_with_epoch(schedulers, opt, epochs):
    """torch's ``_test_with_epoch``: each scheduler's ``step(epoch)``."""
    def step(epoch):
        for scheduler in schedulers:
            scheduler.step(epoch)
    return _each_epoch_warned(opt, epochs, step)


def run_constant_epoch(schedulers, opt, epochs):
    """torch's ``_test_lr_is_constant_forrun_constant_epoch``: step(2) over and over."""
    return _each_epoch_warned(opt, epochs, lambda _: schedulers[0].step(2))


def run_get_last_lr(schedulers, opt, epochs):
    return _each_epoch(schedulers, opt, epochs, lambda: [s.get_last_lr() for s in schedulers])


def run_cycle(schedulers, opt, epochs):
    return _each_epoch(schedulers, opt, epochs, lambda: (lrs_now(opt), momenta(opt)))


def drive(runner, make, epochs, cls="SGD", second_lr=None, lrs=None):
    """A program: ``make(lr_scheduler, opt)`` gives a scheduler or a list, ``runner`` drives
    it for ``epochs``; ``lrs`` sets the groups' rates first (test_lambda_lr, plateau tests)."""
    def run(m):
        opt = setup_optimizer(m, cls, second_lr)
        for group, lr in zip(opt.param_groups, lrs or [], strict=False):
            group["lr"] = lr
        made = make(Schedulers(m), opt)
        return runner(made if isinstance(made, list) else [made], opt, epochs)
    return run


class Schedulers:
    """lr_scheduler's classes with SWALR, for the ``make`` lambdas."""

    def __init__(self, m):
        self.__dict__.update(vars(m.optim.lr_scheduler))
        self.SWALR = m.optim.swa_utils.SWALR


def plateau_run(make, metrics, epochs, lr=0.5):
    def run(m):
        opt = setup_optimizer(m)
        for group in opt.param_groups:
            group["lr"] = lr
        schedulers = make(Schedulers(m), opt)
        seen = []
        for epoch in range(epochs):
            opt.step()
            for s in schedulers:
                s.step(metrics[epoch]) if type(s).__name__ == "ReduceLROnPlateau" else s.step()
            seen.append(lrs_now(opt))
        return seen
    return run
