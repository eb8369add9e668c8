"""torch's TestLRScheduler (test/optim/test_lrscheduler.py), read line by line, as programs run
under gradkit and torch 2.13 on its setUp optimizer: SGD over two groups, the second with a
tensor learning rate (0.05 and tensor(0.5)). torch's tests check closed-form targets; here the
same drives must give torch's learning rates and momenta. This file: the schedules driven
step by step (its table of tests); the checks of state, warnings and errors are in
test_optim_torch_expectations_lrscheduler_more.py."""
import math

import pytest

import gradkit
from torch_expectations.lrscheduler_programs import (
    Schedulers,
    drive,
    lrs_now,
    plateau_run,
    run_constant_epoch,
    run_cycle,
    run_get_last_lr,
    run_plain,
    run_with_epoch,
    setup_optimizer,
)
from torch_expectations.optim_programs import assert_program_matches_torch, param

pytest.importorskip("torch")

PROGRAMS = {}
S, W = run_plain, run_with_epoch

TABLE = {  # torch test name: (runner, make, epochs)
    "step_lr": (S, lambda s, o: s.StepLR(o, gamma=0.1, step_size=3), 10),
    "get_last_lr_step_lr": (run_get_last_lr, lambda s, o: s.StepLR(o, 3, gamma=0.1), 10),
    "get_last_lr_multi_step_lr": (run_get_last_lr,
                                  lambda s, o: s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9]),
                                  10),
    "multi_step_lr": (S, lambda s, o: s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9]), 10),
    "multi_step_lr_with_epoch": (W, lambda s, o: s.MultiStepLR(o, gamma=0.1,
                                                                milestones=[2, 5, 9]), 10),
    "get_last_lr_constantlr": (run_get_last_lr,
                               lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=5), 10),
    "get_last_lr_linearlr": (run_get_last_lr, lambda s, o: s.LinearLR(
        o, start_factor=0.25, end_factor=0.6, total_iters=4), 10),
    "constantlr": (S, lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=5), 10),
    "linearlr": (S, lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=4), 10),
    "linearlr_start_factor_limits1": (S, lambda s, o: s.LinearLR(o, start_factor=0.0), 1),
    "linearlr_start_factor_limits2": (S, lambda s, o: s.LinearLR(o, start_factor=1.1), 1),
    "constantlr_with_epoch": (W, lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=5), 10),
    "linearlr_with_epoch": (W, lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=4), 10),
    "exp_lr": (S, lambda s, o: s.ExponentialLR(o, gamma=0.9), 10),
    "poly_lr": (S, lambda s, o: s.PolynomialLR(o, power=0.9, total_iters=5), 10),
    "cos_anneal_lr": (S, lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=1e-10), 10),
    "sequentiallr1": (S, lambda s, o: s.SequentialLR(
        o, [s.ExponentialLR(o, gamma=0.8), s.StepLR(o, gamma=0.1, step_size=4)], [3]), 19),
    "sequentiallr2": (S, lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.1, total_iters=3), s.ExponentialLR(o, gamma=0.9)], [3]),
        13),
    "sequentiallr3": (S, lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.1, total_iters=3), s.ExponentialLR(o, gamma=0.8),
            s.StepLR(o, gamma=0.1, step_size=2)], [3, 6]), 12),
    "sequentiallr5": (S, lambda s, o: s.SequentialLR(o, [s.ChainedScheduler(
        [s.LinearLR(o, start_factor=0.1, total_iters=5),
         s.ConstantLR(o, factor=0.1, total_iters=5)]),
        s.ConstantLR(o, factor=0.5, total_iters=5)], [5]), 10),
    "get_last_lr_sequentiallr": (run_get_last_lr, lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.1, total_iters=3), s.ExponentialLR(o, gamma=0.8),
            s.StepLR(o, gamma=0.1, step_size=2)], [3, 6]), 12),
    "chained_lr1": (S, lambda s, o: s.ChainedScheduler([s.StepLR(o, gamma=0.1, step_size=3)]),
                    10),
    "chained_lr2": (S, lambda s, o: s.ChainedScheduler([s.LinearLR(o, start_factor=0.4,
                                                                   total_iters=3)]), 10),
    "chained_lr3": (S, lambda s, o: s.ChainedScheduler([
        s.LinearLR(o, start_factor=0.4, total_iters=3),
        s.MultiStepLR(o, milestones=[4, 8, 10], gamma=0.1)]), 10),
    "chained_lr4": (S, lambda s, o: s.ChainedScheduler([
        s.ExponentialLR(o, gamma=0.9), s.ConstantLR(o, factor=0.2, total_iters=4),
        s.StepLR(o, gamma=0.1, step_size=3)]), 9),
    "chained_lr5": (S, lambda s, o: s.ChainedScheduler([
        s.PolynomialLR(o, power=0.9, total_iters=5), s.ConstantLR(o, factor=0.1)]), 10),
    "compound_step_and_multistep_lr": (S, lambda s, o: [
        s.StepLR(o, gamma=0.1, step_size=3), s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9])],
        10),
    "compound_step_and_exp_lr": (S, lambda s, o: [
        s.StepLR(o, gamma=0.1, step_size=3), s.ExponentialLR(o, gamma=0.9)], 10),
    "compound_exp_and_multistep_lr": (S, lambda s, o: [
        s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9]), s.ExponentialLR(o, gamma=0.9)], 10),
    "compound_exp_and_linearlr": (S, lambda s, o: [
        s.LinearLR(o, start_factor=0.4, end_factor=0.9, total_iters=4),
        s.ExponentialLR(o, gamma=0.9)], 10),
    "compound_step_and_constantlr": (S, lambda s, o: [
        s.StepLR(o, gamma=0.1, step_size=3), s.ConstantLR(o, factor=0.4, total_iters=4)], 10),
    "compound_linearlr_and_multistep_lr": (S, lambda s, o: [
        s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9]),
        s.LinearLR(o, start_factor=0.4, total_iters=4)], 10),
    "compound_cosanneal_and_step_lr": (S, lambda s, o: [
        s.CosineAnnealingLR(o, T_max=10, eta_min=1e-10), s.StepLR(o, gamma=0.1, step_size=3)],
        10),
    "compound_cosanneal_and_multistep_lr": (S, lambda s, o: [
        s.CosineAnnealingLR(o, T_max=10, eta_min=1e-10),
        s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9])], 10),
    "compound_cosanneal_and_linearlr": (S, lambda s, o: [
        s.LinearLR(o, start_factor=0.4, total_iters=4),
        s.CosineAnnealingLR(o, T_max=10, eta_min=1e-10)], 10),
    "compound_cosanneal_and_exp_lr": (S, lambda s, o: [
        s.CosineAnnealingLR(o, T_max=10, eta_min=1e-10), s.ExponentialLR(o, gamma=0.1)], 10),
    "cycle_lr_invalid_mode": (S, lambda s, o: s.CyclicLR(o, 0, 0, mode="CATS"), 1),
    "cycle_lr_triangular_mode_one_lr": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=True, base_momentum=1,
        max_momentum=5, mode="triangular"), 11),
    "cycle_lr_triangular_mode_one_lr_no_momentum": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=False, mode="triangular"), 11),
    "cycle_lr_exp_range_mode_one_lr": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=True, base_momentum=1,
        max_momentum=5, mode="exp_range", gamma=0.9), 13),
    "cycle_lr_triangular_mode": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=[1, 2], max_lr=[5, 6], step_size_up=4, cycle_momentum=True,
        base_momentum=[1, 2], max_momentum=[5, 6], mode="triangular"), 11),
    "cycle_lr_triangular2_mode": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=[1, 3], max_lr=[5, 7], step_size_up=4, cycle_momentum=True,
        base_momentum=[1, 3], max_momentum=[5, 7], mode="triangular2"), 22),
    "onecycle_lr_linear_annealing_three_phases": (run_cycle, lambda s, o: s.OneCycleLR(
        o, max_lr=25, div_factor=25, base_momentum=1, max_momentum=22, total_steps=10,
        anneal_strategy="linear", pct_start=0.4, final_div_factor=4, three_phase=True), 10),
    "cycle_lr_triangular2_mode_one_lr": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=True, base_momentum=1,
        max_momentum=5, mode="triangular2"), 22),
    "cycle_lr_exp_range_mode": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=[1, 5], max_lr=[5, 12], step_size_up=4, cycle_momentum=True,
        base_momentum=[1, 5], max_momentum=[5, 12], mode="exp_range", gamma=0.9), 13),
    "cycle_lr_triangular_mode_step_size_up_down": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=1, max_lr=5, step_size_up=4, step_size_down=6, cycle_momentum=True,
        base_momentum=1, max_momentum=5, mode="triangular"), 11),
    "cycle_lr_triangular2_mode_step_size_up_down": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=[1, 3], max_lr=[5, 7], step_size_up=2, step_size_down=6,
        cycle_momentum=True, base_momentum=[1, 3], max_momentum=[5, 7], mode="triangular2"),
        24),
    "cycle_lr_exp_range_mode_step_size_up_down": (run_cycle, lambda s, o: s.CyclicLR(
        o, base_lr=1, max_lr=5, step_size_up=2, step_size_down=6, cycle_momentum=True,
        base_momentum=1, max_momentum=5, mode="exp_range", gamma=0.9), 13),
    "onecycle_lr_invalid_anneal_strategy": (S, lambda s, o: s.OneCycleLR(
        o, max_lr=1e-3, total_steps=10, anneal_strategy="CATS"), 1),
    "onecycle_lr_invalid_pct_start": (S, lambda s, o: s.OneCycleLR(
        o, max_lr=1e-3, total_steps=10, pct_start=1.1), 1),
    "onecycle_lr_cannot_calculate_total_steps": (S, lambda s, o: s.OneCycleLR(o, 1e-3), 1),
    "onecycle_lr_linear_annealing": (run_cycle, lambda s, o: s.OneCycleLR(
        o, max_lr=25, final_div_factor=2, base_momentum=1, max_momentum=22, total_steps=10,
        anneal_strategy="linear"), 10),
    "onecycle_lr_cosine_annealing": (run_cycle, lambda s, o: s.OneCycleLR(
        o, max_lr=25, final_div_factor=2, base_momentum=1, max_momentum=22, total_steps=10),
        10),
    "swalr_no_anneal": (S, lambda s, o: s.SWALR(o, anneal_epochs=1, swa_lr=0.01), 10),
}
for _name, (_runner, _make, _epochs) in TABLE.items():
    PROGRAMS[_name] = drive(_runner, _make, _epochs)
for _name, _make in {  # torch's _test_lr_is_constant_forrun_constant_epoch
        "step_lr": lambda s, o: s.StepLR(o, 2),
        "exponential_lr": lambda s, o: s.ExponentialLR(o, gamma=0.9),
        "constantlr": lambda s, o: s.ConstantLR(o), "linear_linearlr": lambda s, o: s.LinearLR(o),
        "polynomial_lr": lambda s, o: s.PolynomialLR(o, power=0.9)}.items():
    PROGRAMS[f"{_name}_is_constant_forrun_constant_epoch"] = drive(run_constant_epoch, _make, 10)
PROGRAMS["cycle_lr_with_momentumless_optimizer"] = drive(run_cycle, lambda s, o: s.CyclicLR(
    o, base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=False), 11, cls="Adam",
    second_lr=0.5)
PROGRAMS["cycle_lr_with_adam"] = drive(run_cycle, lambda s, o: s.OneCycleLR(
    o, max_lr=25, final_div_factor=2, base_momentum=1, max_momentum=22, total_steps=10,
    anneal_strategy="linear"), 10, cls="Adam", second_lr=0.5)
PROGRAMS["lambda_lr"] = drive(S, lambda s, o: s.LambdaLR(
    o, lr_lambda=[lambda x1: 0.9 ** x1, lambda x2: 0.8 ** x2]), 10, lrs=[0.05, 0.4])
PROGRAMS["multiplicative_lr"] = drive(S, lambda s, o: s.MultiplicativeLR(
    o, lr_lambda=[lambda x1: 0.9, lambda x2: 0.8]), 10, lrs=[0.05, 0.4])
PROGRAMS["multiplicative_lr_with_lr_lambda"] = drive(
    S, lambda s, o: s.MultiplicativeLR(o, [0.95, 0.95]), 1)
for _t_mult in (1, 2, 4):
    PROGRAMS[f"CosineAnnealingWarmRestarts_lr1_{_t_mult}"] = drive(
        S, lambda s, o, t=_t_mult: s.CosineAnnealingWarmRestarts(o, T_0=10, T_mult=t,
                                                                 eta_min=1e-10), 100)

PLATEAU = {  # test_reduce_lr_on_plateau1..8: (kwargs, metrics, epochs)
    1: (dict(threshold_mode="abs", mode="min", threshold=0.01, patience=5, cooldown=5),
        [10 - i * 0.0167 for i in range(20)], 10),
    2: (dict(patience=5, cooldown=0, threshold_mode="abs", mode="min", threshold=0.1),
        [10 - i * 0.0165 for i in range(22)], 22),
    3: (dict(mode="max", patience=5, cooldown=5, threshold_mode="abs"),
        [-0.8] * 2 + [-0.234] * 20, 22),
    4: (dict(mode="max", patience=3, threshold_mode="rel", threshold=0.1),
        [1.5 * (1.025 ** i) for i in range(20)], 20),
    5: (dict(mode="max", threshold_mode="rel", threshold=0.1, patience=5, cooldown=5),
        [1.5 * (1.005 ** i) for i in range(20)], 20),
    6: (dict(mode="min", threshold_mode="rel", threshold=0.1),
        [1.5 * (0.85 ** i) for i in range(20)], 20),
    7: (dict(mode="min", threshold_mode="rel", threshold=0.1, patience=5, cooldown=5),
        [1] * 7 + [0.6] + [0.5] * 12, 20),
    8: (dict(mode="max", threshold_mode="rel", min_lr=[0.4, 0.3], threshold=0.1, patience=5,
             cooldown=5), [1.5 * (1.005 ** i) for i in range(20)], 20),
}
for _k, (_kwargs, _metrics, _epochs) in PLATEAU.items():
    PROGRAMS[f"reduce_lr_on_plateau{_k}"] = plateau_run(
        lambda s, o, kw=_kwargs: [s.ReduceLROnPlateau(o, **kw)], _metrics, _epochs)
COMPOUND_PLATEAU = {  # test_compound_reduce_lr_on_plateau1..5: the other scheduler
    1: (lambda s, o: s.StepLR(o, gamma=0.1, step_size=3), 1, 0.5),
    2: (lambda s, o: s.MultiStepLR(o, gamma=0.1, milestones=[3, 8, 12]), 2, 0.5),
    3: (lambda s, o: s.ExponentialLR(o, gamma=0.1), 3, 0.5),
    4: (lambda s, o: s.CosineAnnealingLR(o, 10, 1e-10), 4, 0.05),
    5: (lambda s, o: s.LinearLR(o, start_factor=0.4, total_iters=4), 2, 0.5),
}
for _k, (_other, _like, _lr) in COMPOUND_PLATEAU.items():
    _kwargs, _metrics, _epochs = PLATEAU[_like]
    PROGRAMS[f"compound_reduce_lr_on_plateau{_k}"] = plateau_run(
        lambda s, o, kw=_kwargs, other=_other: [s.ReduceLROnPlateau(o, **kw), other(s, o)],
        _metrics, 10 if _k == 4 else _epochs, lr=_lr)



def program(function):
    PROGRAMS[function.__name__] = function
    return function


@program
def closed_forms_against_steps(m):
    """test_closed_form_*: step(epoch) (deprecated) and plain steps give the same rates."""
    s = Schedulers(m)
    makes = [lambda o: s.StepLR(o, gamma=0.1, step_size=3),
             lambda o: s.LinearLR(o, start_factor=1 / 3, end_factor=0.7, total_iters=4),
             lambda o: s.ConstantLR(o, factor=1 / 3, total_iters=4),
             lambda o: s.MultiStepLR(o, gamma=0.1, milestones=[2, 5, 9]),
             lambda o: s.ExponentialLR(o, gamma=0.9), lambda o: s.PolynomialLR(o, power=0.9),
             lambda o: s.CosineAnnealingLR(o, T_max=5, eta_min=1e-10)]
    return [(run_with_epoch([make(o := setup_optimizer(m))], o, 20),
             run_cycle([make(o2 := setup_optimizer(m))], o2, 20)) for make in makes]


@program
def warm_restarts_fractional_and_interleaved_epochs(m):
    seen = []
    for t_mult, epochs in [(1, [0, 1, 2, 3, 4, 5, 12, 27, 3, 4, 5, 6, 13]),
                           (2, [0, 1, 2, 3, 4, 5, 25, 32, 33, 34, 80, 81, 3]),
                           (3, [0, 0.1, 0.2, 0.3, 1.3, 2.3, 17.5, 18.5, 19.5, 29.5, 30.5])]:
        opt = setup_optimizer(m)
        scheduler = m.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=t_mult,
                                                                     eta_min=1e-10)
        for epoch in [*epochs, *(round(k * 0.1, 1) for k in range(40))]:
            scheduler.step(epoch)
            seen.append(lrs_now(opt))
    sch = m.optim.lr_scheduler.CosineAnnealingWarmRestarts(setup_optimizer(m), T_0=4)
    for epoch in [7, 8, 9]:
        sch.T_cur = epoch
        sch.step()
        seen.append(sch.T_cur)
    return seen


@program
def cosine_then_cyclic(m):
    optimizer = m.optim.SGD([param(m, 1.0, 2.0)], lr=0.5)
    s = m.optim.lr_scheduler
    first = s.CosineAnnealingLR(optimizer, T_max=20, eta_min=0.1)
    second = s.CyclicLR(optimizer, base_lr=0.1, max_lr=0.3, step_size_up=1, step_size_down=3)
    seen = []
    for i in range(40):
        optimizer.step()
        (first if i <= first.T_max else second).step()
        seen.append(optimizer.param_groups[0]["lr"])
    return seen


@program
def swalr_anneal_after_multiplicative_and_hypers(m):
    seen = []
    for strategy, swa_lr, anneal_epochs in [("cos", 0.01, 5), ("linear", [0.01, 0.02], 4)]:
        opt = setup_optimizer(m)
        scheduler = m.optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.9)
        swa = m.optim.swa_utils.SWALR(opt, anneal_epochs=anneal_epochs, swa_lr=swa_lr,
                                      anneal_strategy=strategy)
        for epoch in range(15):
            seen.append(lrs_now(opt))
            opt.step()
            (swa if epoch >= 5 else scheduler).step()
    for kwargs in [dict(anneal_strategy="exponential", swa_lr=1.0),
                   dict(anneal_epochs=-1, swa_lr=1.0), dict(anneal_epochs=1.7, swa_lr=1.0),
                   dict(swa_lr=[1.0, 0.1, 0.01])]:
        try:
            m.optim.swa_utils.SWALR(setup_optimizer(m), **kwargs)
        except ValueError as error:
            seen.append(str(error))
    return seen


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch(name):
    assert_program_matches_torch(PROGRAMS[name])


def test_cos_anneal_closed_form():
    """A closed form with no torch: CosineAnnealingLR's rates are eta_min + (lr - eta_min) *
    (1 + cos(pi t / T)) / 2 (test_cos_anneal_lr's targets)."""
    lrs = PROGRAMS["cos_anneal_lr"](gradkit)
    for t, (first, _) in enumerate(lrs):
        assert first == pytest.approx(1e-10 + (0.05 - 1e-10) * (1 + math.cos(math.pi * t / 10))
                                      / 2, abs=1e-12)
