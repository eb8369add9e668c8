"""torch's TestLRScheduler (test/optim/test_lrscheduler.py) as programs run under gradkit and
torch 2.13: its checks of warnings, errors, state dicts, resumed schedulers, tensors given
for the rates and momenta, and reference cycles. The schedules driven step by step are in
test_optim_torch_expectations_lrscheduler.py."""
import copy
import gc
import pickle
import types
import warnings
import weakref

import pytest

from torch_expectations.lrscheduler_programs import (
    Schedulers,
    lrs_now,
    run_plain,
    setup_optimizer,
)
from torch_expectations.optim_programs import assert_program_matches_torch, messages, param

pytest.importorskip("torch")

PROGRAMS = {}


def program(function):
    PROGRAMS[function.__name__] = function
    return function


@program
def error_when_getlr_has_epoch(m):
    class MultiStep(m.optim.lr_scheduler.LRScheduler):
        def get_lr(self, step):
            return [1.0]
    MultiStep(m.optim.SGD([param(m, 1.0)], lr=1))


@program
def old_pattern_warnings(m):
    """test_old_pattern_warning*, test_new_pattern_no_warning*: scheduler.step() before
    optimizer.step() warns; an overridden optimizer.step warns the other words."""
    seen = []
    for resume, override, new in [(False, False, False), (True, False, False),
                                  (True, True, False), (False, False, True),
                                  (False, True, True)]:
        opt = setup_optimizer(m)
        if resume:
            for group in opt.param_groups:
                group["initial_lr"] = 0.01
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scheduler = m.optim.lr_scheduler.StepLR(opt, gamma=0.1, step_size=3,
                                                   last_epoch=10 if resume else -1)
            if override:
                opt.step = types.MethodType(
                    lambda o, *a, old=opt.step, **k: old(*a, **k), opt)
            for _ in range(35):
                first, second = (opt.step, scheduler.step) if new else (scheduler.step, opt.step)
                first()
                second()
        seen.append(sorted(set(messages(caught))))
    return seen


@program
def last_epoch_without_initial_lr(m):
    try:
        m.optim.lr_scheduler.StepLR(m.optim.SGD([param(m, 1.0)], 0.1), 3, last_epoch=1)
    except KeyError as error:  # outcome() passes KeyError on
        return str(error)


@program
def cos_anneal_lr_continue(m):
    opt = setup_optimizer(m)
    scheduler = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5, eta_min=0.1)
    opt.step()
    scheduler.step()
    resumed = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5, eta_min=0.1, last_epoch=0)
    return scheduler.get_last_lr(), resumed.get_last_lr()


@program
def plateau_get_last_lr_before_step_and_lr_types(m):
    opt = setup_optimizer(m)
    scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", patience=0)
    before = scheduler.get_last_lr()
    scheduler.step(1.0)
    scheduler.step(2.0)
    return before, [type(lr).__name__ for lr in lrs_now(opt)], lrs_now(opt)


@program
def sequentiallr4_and_no_warnings_and_tensor_lr(m):
    opt = m.optim.SGD([m.tensor(0.5)], lr=0.1)
    s = m.optim.lr_scheduler
    s.SequentialLR(opt, [s.ConstantLR(opt, factor=1), s.ConstantLR(opt, factor=0.1)], [10])
    first = opt.param_groups[0]["lr"]
    opt = setup_optimizer(m)
    scheduler = s.SequentialLR(opt, [s.LinearLR(opt, start_factor=0.5, end_factor=0.1,
                                                total_iters=5), s.ExponentialLR(opt, 0.9)], [5])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(10):
            opt.step()
            scheduler.step()
    opt = m.optim.SGD([param(m, 1.0)], lr=m.tensor(2.0))
    aliasing = s.SequentialLR(opt, [s.LinearLR(opt, 0.1, 0.8, total_iters=4),
                                    s.LinearLR(opt, 0.8, 0.1, total_iters=4)], milestones=[4])
    return first, messages(caught), run_plain([aliasing], opt, 8)


@program
def chained_get_last_lr_before_step(m):
    opt = setup_optimizer(m)
    s = m.optim.lr_scheduler
    schedulers = [s.LinearLR(opt, start_factor=0.4, total_iters=3),
                  s.MultiStepLR(opt, milestones=[4, 8, 10], gamma=0.1)]
    return s.ChainedScheduler(schedulers).get_last_lr(), schedulers[-1].get_last_lr()


@program
def cycle_lr_momentum_errors_and_beta1(m):
    s = m.optim.lr_scheduler
    adam = m.optim.Adam([param(m, 1.0)])
    s.CyclicLR(adam, base_lr=1, max_lr=5, cycle_momentum=True)
    s.CyclicLR(m.optim.Rprop([param(m, 1.0)]), base_lr=1, max_lr=5, cycle_momentum=True)


@program
def cycle_lr_state_dicts_pickle_and_restore(m):
    s = m.optim.lr_scheduler
    adam = m.optim.Adam([param(m, 1.0)])

    class ScaleFn:
        def __init__(self):
            self.x = 0.5

        def __call__(self, _):
            return self.x

    seen = []
    for scale_fn in (None, lambda _: 0.5, ScaleFn()):
        state = s.CyclicLR(adam, 1, 5, cycle_momentum=False, scale_fn=scale_fn).state_dict()
        pickle.dumps(state)
        seen.append((sorted(state), state["_scale_fn_custom"]))
    restored = s.CyclicLR(adam, base_lr=1, max_lr=5, cycle_momentum=False)
    restored.load_state_dict(s.CyclicLR(adam, 1, 5, cycle_momentum=False,
                                        mode="triangular2").state_dict())
    return seen, restored.mode, restored._scale_fn_custom


def _state_dict_copy(make, make_other, epochs=10):
    """_check_scheduler_state_dict: the attributes that differ after loading into another."""
    def run(m):
        opt = setup_optimizer(m)
        s = Schedulers(m)
        scheduler = make(s, opt)
        for _ in range(epochs):
            opt.step()
            scheduler.step()
        other = make_other(s, opt)
        other.load_state_dict(scheduler.state_dict())
        differing = [k for k in vars(scheduler) if k != "optimizer" and
                     repr(vars(scheduler)[k]) != repr(vars(other).get(k))]
        return differing, other.get_last_lr()
    return run


for _name, (_make, _other) in {
        "step_lr": (lambda s, o: s.StepLR(o, gamma=0.1, step_size=3),
                    lambda s, o: s.StepLR(o, gamma=0.005, step_size=1)),
        "multi_step_lr": (lambda s, o: s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9]),
                          lambda s, o: s.MultiStepLR(o, gamma=0.01, milestones=[1, 4, 6])),
        "exp_step_lr": (lambda s, o: s.ExponentialLR(o, gamma=0.1),
                        lambda s, o: s.ExponentialLR(o, gamma=0.01)),
        "cosine_lr": (lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=1e-10),
                      lambda s, o: s.CosineAnnealingLR(o, T_max=5, eta_min=5e-11)),
        "CosineAnnealingWarmRestarts_lr": (
            lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=10, T_mult=2),
            lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=100)),
        "swa_lr": (lambda s, o: s.SWALR(o, anneal_epochs=3, swa_lr=0.5),
                   lambda s, o: s.SWALR(o, anneal_epochs=10, anneal_strategy="linear",
                                        swa_lr=5.0))}.items():
    PROGRAMS[f"{_name}_state_dict"] = _state_dict_copy(_make, _other)


@program
def constant_initial_lr_is_not_aliased(m):
    """test_constant_initial_lr: a tensor lr changed in place later moves no initial_lr."""
    s = m.optim.lr_scheduler
    seen = []
    for make in [lambda o: s.LambdaLR(o, lambda e: e // 10), lambda o: s.StepLR(o, 30),
                 lambda o: s.MultiplicativeLR(o, lambda e: 0.95), s.ConstantLR, s.LinearLR,
                 lambda o: s.ExponentialLR(o, 0.9), s.PolynomialLR,
                 lambda o: s.CosineAnnealingLR(o, 10),
                 lambda o: s.CosineAnnealingWarmRestarts(o, 20)]:
        lr = m.tensor(0.1)
        opt = m.optim.SGD([param(m, 1.0)], lr=lr)
        scheduler = make(opt)
        original = copy.deepcopy(opt.param_groups[0]["initial_lr"])
        for i in range(2):
            opt.step()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scheduler.step(i)
            lr.mul_(0.1)
        seen.append((opt.param_groups[0]["initial_lr"], original, scheduler.base_lrs,
                     scheduler.base_lrs[0] is opt.param_groups[0]["initial_lr"]))
    return seen


@program
def lr_scheduler_checkpoint(m):
    """test_lr_scheduler_checkpoint: a scheduler resumed (last_epoch=0) on a loaded AdamW."""
    s = Schedulers(m)
    seen = []
    for make in [lambda o, **k: s.ExponentialLR(o, 0.999, **k), lambda o, **k: s.StepLR(o, 30, **k),
                 lambda o, **k: s.LinearLR(o, **k), lambda o, **k: s.PolynomialLR(o, **k),
                 lambda o, **k: s.CosineAnnealingLR(o, 10, **k),
                 lambda o, **k: s.CyclicLR(o, 0.01, 0.1, **k),
                 lambda o, **k: s.OneCycleLR(o, 0.01, total_steps=10, **k)]:
        weights = [param(m, 1.0, 2.0)]
        optim = m.optim.AdamW(weights)
        scheduler = make(optim)
        optim.step()
        scheduler.step()
        optim2 = m.optim.AdamW(weights)
        optim2.load_state_dict(optim.state_dict())
        seen.append((make(optim2, last_epoch=0).get_last_lr()[0], optim.param_groups[0]["lr"]))
    return seen


@program
def add_param_group_and_reduce_lr_on_plateau(m):
    seen = []
    for min_lr in (0, [1e-5, 1e-4]):
        opt = setup_optimizer(m)
        for group in opt.param_groups:
            group["lr"] = 0.5
        scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode="min", threshold_mode="rel", threshold=0.1, patience=5, cooldown=5,
            min_lr=min_lr)
        for epoch, metric in enumerate([1] * 7 + [0.6] + [0.5] * 12):
            if epoch == 8:
                opt.add_param_group({"params": [param(m, 1.0)], "lr": 0.05})
                if isinstance(min_lr, list):
                    scheduler.min_lrs.append(1e-6)
            opt.step()
            scheduler.step(metric)
            seen.append(lrs_now(opt))
    opt = setup_optimizer(m)
    scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(opt, threshold=1e-5, patience=0,
                                                       min_lr=[1e-5, 1e-4])
    opt.add_param_group({"params": [param(m, 1.0)], "lr": 0.05})
    scheduler.step(1)
    try:
        scheduler.step(1.3)
    except RuntimeError as error:
        return seen, str(error)


@program
def plateau_and_lambda_state_dicts(m):
    """test_reduce_lr_on_plateau_state_dict, test_lambda_lr_state_dict_fn: what differs once
    loaded into another (the comparison function and the lambdas excepted)."""
    opt = setup_optimizer(m)
    s = m.optim.lr_scheduler
    scheduler = s.ReduceLROnPlateau(opt, mode="min", factor=0.1, patience=2)
    for score in [1.0, 2.0, 3.0, 4.0, 3.0, 4.0, 5.0, 3.0, 2.0, 1.0]:
        scheduler.step(score)
    copied = s.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=10)
    copied.load_state_dict(scheduler.state_dict())
    lambda_lr = s.LambdaLR(opt, lr_lambda=lambda x: x)
    state = lambda_lr.state_dict()
    lambda_copy = s.LambdaLR(opt, lr_lambda=lambda x: x)
    lambda_copy.load_state_dict(state)
    return ([k for k in vars(scheduler) if k not in {"optimizer", "is_better"}
             and repr(vars(scheduler)[k]) != repr(vars(copied)[k])], state["lr_lambdas"],
            [k for k in vars(lambda_lr) if k not in {"optimizer", "lr_lambdas"}
             and repr(vars(lambda_lr)[k]) != repr(vars(lambda_copy)[k])])


@program
def constant_initial_params_of_cyclic_one_cycle_and_swalr(m):
    """test_constant_initial_params_*: tensors given for the rates and momenta, changed in
    place afterwards, move none of the groups' initial values."""
    s = m.optim.lr_scheduler
    seen = []
    for kind in ("cyclic", "one_cycle", "swalr"):
        lr, top, low, high = m.tensor(0.1), m.tensor(0.2), m.tensor(0.8), m.tensor(0.9)
        opt = m.optim.SGD([param(m, 1.0)], lr=lr, momentum=0.5)
        if kind == "cyclic":
            scheduler = s.CyclicLR(opt, base_lr=lr, max_lr=top, base_momentum=low,
                                   max_momentum=high)
        elif kind == "one_cycle":
            scheduler = s.OneCycleLR(opt, max_lr=lr, total_steps=10, base_momentum=low,
                                     max_momentum=high)
        else:
            scheduler = m.optim.swa_utils.SWALR(opt, swa_lr=top)
        for i in range(2):
            for t in (lr, top, low, high):
                t.mul_(0.5)
            opt.step()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scheduler.step() if kind == "swalr" else scheduler.step(i)
        group = opt.param_groups[0]
        seen.append(({k: group[k] for k in sorted(group) if k != "params"},
                     scheduler.base_lrs, getattr(scheduler, "max_lrs", None)))
    return seen


@program
def lr_scheduler_checkpoint_on_plateau(m):
    weights = [param(m, 1.0, 2.0)]
    optim = m.optim.AdamW(weights)
    scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(optim, mode="min")
    optim.step()
    scheduler.step(1)
    optim2 = m.optim.AdamW(weights)
    optim2.load_state_dict(optim.state_dict())
    resumed = m.optim.lr_scheduler.ReduceLROnPlateau(optim2, mode="min")
    return resumed.get_last_lr()[0], optim.param_groups[0]["lr"]


@pytest.mark.parametrize("lib", ["gradkit", "torch"])
def test_no_cyclic_references(lib):
    """test_no_cyclic_references*, test_cycle_lr_removed_after_out_of_scope: with the
    collector off, a dropped scheduler (and, once the scheduler is gone, its optimizer) is
    freed at once."""
    m = pytest.importorskip(lib)
    weights = m.nn.Parameter(m.zeros(10))
    optimizer = m.optim.SGD([weights], lr=0.5)
    scheduler = m.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 1.0)
    del scheduler
    assert gc.get_referrers(optimizer) == []

    def run(make):
        weights = m.zeros(10, requires_grad=True)
        optimizer = m.optim.Adam([weights])
        scheduler = make(optimizer)
        weights.sum().backward()
        optimizer.step()
        scheduler.step()
        return weakref.ref(scheduler)

    gc.disable()
    try:
        s = m.optim.lr_scheduler
        assert run(lambda o: s.LambdaLR(o, lambda epoch: 1.0))() is None
        assert run(lambda o: s.CyclicLR(o, base_lr=1, max_lr=5, cycle_momentum=False))() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch(name):
    assert_program_matches_torch(PROGRAMS[name])
