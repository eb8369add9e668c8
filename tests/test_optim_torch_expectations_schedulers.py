"""torch's scheduler and swa_utils tests (test/optim/test_lrscheduler.py,
test/optim/test_swa_utils.py, test/optim/test_reduce_lr_tensor.py and the other small
scheduler files) as programs run under gradkit and torch 2.13: every program's outcome
(learning rates, momenta, state dicts, warnings, error type and message) must be the same."""
import pickle
import warnings

import numpy as np
import pytest

from torch_expectations.optim_programs import (
    assert_program_matches_torch,
    lrs_over,
    messages,
    param,
    sgd,
)
from torch_expectations.outcome import outcome

pytest.importorskip("torch")

PROGRAMS = {}


def program(function):
    """Register ``function`` under its name."""
    PROGRAMS[function.__name__] = function
    return function


# --- learning-rate schedulers: tensor learning rates (test/optim/test_reduce_lr_tensor.py,
# test_scheduler_tensor_aliasing.py): a tensor rate keeps its identity and is filled in place,
# get_last_lr and base_lrs hold copies.

def _tensor_lr_run(m, make, metric=False):
    optimizer = m.optim.SGD([param(m, 1.0)], lr=m.tensor(0.5), momentum=0.9)
    scheduler = make(m.optim.lr_scheduler, optimizer)
    group_lr, seen = optimizer.param_groups[0]["lr"], []
    for _ in range(4):
        optimizer.step()
        scheduler.step(1.0) if metric else scheduler.step()
        last = scheduler.get_last_lr()
        seen.append((optimizer.param_groups[0]["lr"] is group_lr, group_lr.clone(),
                     [type(v).__name__ for v in last], last, last[0] is group_lr))
    return seen, [type(v).__name__ for v in getattr(scheduler, "base_lrs", [])]


TENSOR_LR_SCHEDULES = {
    "step": lambda s, o: s.StepLR(o, 2),
    "exponential": lambda s, o: s.ExponentialLR(o, 0.9),
    "cosine": lambda s, o: s.CosineAnnealingLR(o, 3),
    "linear": lambda s, o: s.LinearLR(o),
    "constant": lambda s, o: s.ConstantLR(o),
    "lambda": lambda s, o: s.LambdaLR(o, lambda e: 0.5 ** e),
    "multiplicative": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.5),
    "multistep": lambda s, o: s.MultiStepLR(o, [1, 3]),
    "polynomial": lambda s, o: s.PolynomialLR(o),
    "warm_restarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, 2),
    "sequential": lambda s, o: s.SequentialLR(o, [s.ConstantLR(o), s.ExponentialLR(o, .9)], [2]),
    "chained": lambda s, o: s.ChainedScheduler([s.ConstantLR(o), s.ExponentialLR(o, .9)]),
    "cyclic": lambda s, o: s.CyclicLR(o, 0.1, 1.0, step_size_up=2),
    "one_cycle": lambda s, o: s.OneCycleLR(o, 1.0, total_steps=10),
}
for _kind, _make in TENSOR_LR_SCHEDULES.items():
    PROGRAMS[f"tensor_lr_{_kind}"] = lambda m, make=_make: _tensor_lr_run(m, make)


@program
def tensor_lr_plateau(m):
    return _tensor_lr_run(m, lambda s, o: s.ReduceLROnPlateau(o, patience=0), metric=True)


@program
def tensor_lr_swalr(m):
    return _tensor_lr_run(m, lambda s, o: m.optim.swa_utils.SWALR(o, swa_lr=0.1,
                                                                  anneal_epochs=2))


@program
def plateau_keeps_a_one_element_tensor_lr(m):
    optimizer = m.optim.Adam([param(m, 1.0)], lr=m.tensor([0.1]))
    scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=0,
                                                       min_lr=0.001)
    scheduler.step(1.0)
    scheduler.step(1.0)
    lr = optimizer.param_groups[0]["lr"]
    return type(lr).__name__, lr


@program
def plateau_with_tensor_and_float_lrs(m):
    optimizer = m.optim.SGD([{"params": [param(m, 1.0)], "lr": m.tensor([0.1])},
                             {"params": [param(m, 1.0)], "lr": 0.2}])
    scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=0,
                                                       min_lr=0.001)
    scheduler.step(1.0)
    scheduler.step(1.0)
    return [group["lr"] for group in optimizer.param_groups]


@program
def base_lrs_do_not_alias_a_tensor_lr(m):
    optimizer = m.optim.SGD([param(m, 1.0)], lr=m.tensor(0.1))
    L = m.optim.lr_scheduler
    scheduler = L.SequentialLR(optimizer, [L.ConstantLR(optimizer, factor=0.5, total_iters=1)],
                               milestones=[])
    optimizer.param_groups[0]["lr"].add_(1.0)  # (torch 2.13's SequentialLR has no base_lrs)
    return (scheduler._schedulers[0].base_lrs[0].item(), optimizer.param_groups[0]["initial_lr"],
            hasattr(scheduler, "base_lrs"))


# --- schedulers: edge cases and errors (test/optim/test_constant_lr_edge_cases.py,
# test_linear_lr_edge_cases.py, test_lrscheduler.py's test_*_error / invalid cases)

SCHEDULER_ERRORS = {
    "plateau_factor_one": lambda s, o: s.ReduceLROnPlateau(o, factor=1.0),
    "plateau_bad_mode": lambda s, o: s.ReduceLROnPlateau(o, mode="foo"),
    "plateau_bad_threshold_mode": lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="foo"),
    "plateau_min_lr_per_group": lambda s, o: s.ReduceLROnPlateau(o, min_lr=[1, 2]),
    "one_cycle_without_steps": lambda s, o: s.OneCycleLR(o, max_lr=1.0),
    "one_cycle_pct_start": lambda s, o: s.OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5),
    "one_cycle_anneal": lambda s, o: s.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="x"),
    "cyclic_bad_mode": lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="x"),
    "cyclic_base_lr_per_group": lambda s, o: s.CyclicLR(o, base_lr=[0.1, 0.2], max_lr=1.0),
    "sequential_milestones": lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o), s.ExponentialLR(o, 0.9)], milestones=[1, 2]),
    "sequential_empty": lambda s, o: s.SequentialLR(o, [], milestones=[]),
    "sequential_not_a_scheduler": lambda s, o: s.SequentialLR(o, [s.ConstantLR(o), 3], [1]),
    "sequential_plateau": lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o), s.ReduceLROnPlateau(o)], milestones=[1]),
    "chained_empty": lambda s, o: s.ChainedScheduler([]),
    "not_an_optimizer": lambda s, o: s.StepLR(3, 2),
    "lambdas_per_group": lambda s, o: s.LambdaLR(o, [lambda e: 1, lambda e: 2]),
    "warm_restarts_t0": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    "warm_restarts_t_mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "warm_restarts_eta_min": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="a"),
}
for _kind, _make in SCHEDULER_ERRORS.items():
    PROGRAMS[f"scheduler_error_{_kind}"] = (
        lambda m, make=_make: make(m.optim.lr_scheduler, sgd(m, momentum=0.9)))


@program
def constant_zero_factor_and_linear_zero_total_iters(m):
    # (torch 2.13 accepts both; later torch refuses them, test_*_lr_edge_cases.py)
    s = m.optim.lr_scheduler
    first, second = sgd(m), sgd(m)
    return (lrs_over(first, s.ConstantLR(first, factor=0.0), 3),
            outcome(lambda lib: lrs_over(second, s.LinearLR(second, total_iters=0), 3), m))


@program
def resume_without_initial_lr(m):
    try:
        m.optim.lr_scheduler.StepLR(sgd(m), 2, last_epoch=3)
    except KeyError as error:
        return str(error)


@program
def schedulers_of_two_optimizers(m):
    first, second = sgd(m), sgd(m)
    results = []
    for build in (lambda s: s.SequentialLR(first, [s.ConstantLR(first),
                                                   s.ExponentialLR(second, 0.9)], [1]),
                  lambda s: s.ChainedScheduler([s.ConstantLR(first),
                                                s.ExponentialLR(second, 0.9)])):
        results.append(outcome(build, m.optim.lr_scheduler))
    return results


@program
def cyclic_momentum_needs_a_momentum_optimizer(m):
    m.optim.lr_scheduler.CyclicLR(m.optim.Adam([param(m, 1.0)]), base_lr=0.1, max_lr=1.0)


@program
def one_cycle_needs_a_momentum_optimizer(m):
    m.optim.lr_scheduler.OneCycleLR(m.optim.Adagrad([param(m, 1.0)]), 1.0, total_steps=10)


@program
def one_cycle_stepped_past_its_end(m):
    optimizer = sgd(m)
    lrs_over(optimizer, m.optim.lr_scheduler.OneCycleLR(optimizer, 1.0, total_steps=3), 4)


# --- schedulers: sequences (test_lrscheduler.py's test_*_lr / _momentum cases,
# test/optim/test_scheduler_nested_composite.py)

@program
def nested_sequential_like_direct(m):
    s = m.optim.lr_scheduler
    optimizer = sgd(m)
    inner = s.SequentialLR(optimizer, [s.ConstantLR(optimizer, factor=0.5, total_iters=2),
                                       s.ConstantLR(optimizer, factor=0.2, total_iters=10)],
                           milestones=[2])
    return lrs_over(optimizer, s.SequentialLR(optimizer, [inner], milestones=[]), 5)


@program
def nested_chained_in_sequential(m):
    s = m.optim.lr_scheduler
    optimizer = sgd(m)
    inner = s.ChainedScheduler([s.ConstantLR(optimizer, factor=0.5, total_iters=2),
                                s.ExponentialLR(optimizer, gamma=0.9)], optimizer=optimizer)
    return lrs_over(optimizer, s.SequentialLR(optimizer, [inner], milestones=[]), 5)


@program
def chained_with_plateau(m):
    s = m.optim.lr_scheduler
    optimizer = sgd(m)
    chained = s.ChainedScheduler([s.ExponentialLR(optimizer, 0.9),
                                  s.ReduceLROnPlateau(optimizer, patience=0)])
    return lrs_over(optimizer, chained, 4)


@program
def chained_state_dict(m):
    s = m.optim.lr_scheduler
    optimizer = sgd(m)
    chained = s.ChainedScheduler([s.ExponentialLR(optimizer, 0.9), s.StepLR(optimizer, 2)])
    lrs_over(optimizer, chained, 1)
    saved = chained.state_dict()
    return sorted(saved), saved["_schedulers"]


@program
def plateau_max_mode_with_cooldown(m):
    optimizer = sgd(m, lr=1.0)
    scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode="max", patience=1, cooldown=1, threshold=0.1, threshold_mode="abs",
        eps=1e-3, min_lr=0.01)
    lrs = []
    for metric in [1, 1, 1, 1.05, 1.2, 1, 1, 1, 1, 1, 1, 1, 1]:
        scheduler.step(metric)
        lrs.append(scheduler.get_last_lr()[0])
    return lrs, scheduler.state_dict()["best"], scheduler.num_bad_epochs


@program
def one_cycle_three_phase_linear(m):
    optimizer = sgd(m, momentum=0.9)
    scheduler = m.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=[1.0], epochs=2,
                                                steps_per_epoch=5, three_phase=True,
                                                anneal_strategy="linear")
    return lrs_over(optimizer, scheduler, 9, pair_with="momentum")


@program
def one_cycle_cycles_adam_betas(m):
    optimizer = m.optim.Adam([param(m, 1.0)], lr=0.1)
    scheduler = m.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=10)
    return lrs_over(optimizer, scheduler, 9, pair_with="betas")


@program
def cyclic_every_mode(m):
    results = []
    for mode in ["triangular", "triangular2", "exp_range"]:
        optimizer = sgd(m, momentum=0.9)
        scheduler = m.optim.lr_scheduler.CyclicLR(optimizer, base_lr=0.1, max_lr=1.0,
                                                  step_size_up=2, step_size_down=3,
                                                  mode=mode, gamma=0.9)
        results.append(lrs_over(optimizer, scheduler, 12, pair_with="momentum"))
    return results


@program
def cyclic_scale_fn_by_iterations(m):
    optimizer = sgd(m, momentum=0.9)
    scheduler = m.optim.lr_scheduler.CyclicLR(optimizer, base_lr=0.1, max_lr=1.0,
                                              step_size_up=2, scale_fn=lambda x: 0.5 ** x,
                                              scale_mode="iterations")
    return lrs_over(optimizer, scheduler, 8), sorted(scheduler.state_dict())


@program
def cyclic_without_momentum_on_adam(m):
    optimizer = m.optim.Adam([param(m, 1.0)], lr=0.1)
    scheduler = m.optim.lr_scheduler.CyclicLR(optimizer, base_lr=0.1, max_lr=1.0,
                                              cycle_momentum=False, step_size_up=2)
    return lrs_over(optimizer, scheduler, 5)


@program
def multiplicative_and_polynomial(m):
    s = m.optim.lr_scheduler
    first, second = sgd(m), sgd(m)
    return (lrs_over(first, s.MultiplicativeLR(first, lambda e: 0.9), 4),
            lrs_over(second, s.PolynomialLR(second, total_iters=4, power=2.0), 6))


@program
def warm_restarts_with_epochs(m):
    optimizer = sgd(m)
    scheduler = m.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2,
                                                                 eta_min=0.01)
    lrs = lrs_over(optimizer, scheduler, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in [0.5, 3.3, 7]:
            scheduler.step(epoch)
            lrs.append(scheduler.get_last_lr()[0])
    return lrs, scheduler.T_cur, scheduler.T_i


@program
def scheduler_state_dict_keys(m):
    s = m.optim.lr_scheduler
    optimizer = sgd(m)
    schedulers = [s.StepLR(optimizer, 2), s.MultiStepLR(optimizer, [1, 2]),
                  s.ExponentialLR(optimizer, 0.9), s.CosineAnnealingLR(optimizer, 3),
                  s.ConstantLR(optimizer), s.LinearLR(optimizer), s.PolynomialLR(optimizer),
                  s.LambdaLR(optimizer, lambda e: 1.0)]
    return {type(x).__name__: sorted(x.state_dict()) for x in schedulers}


@program
def multistep_state_dict_counts_milestones(m):
    optimizer = sgd(m)
    scheduler = m.optim.lr_scheduler.MultiStepLR(optimizer, [1, 2, 2])
    lrs_over(optimizer, scheduler, 1)
    saved = scheduler.state_dict()
    return {k: (dict(v) if k == "milestones" else v) for k, v in saved.items()}


# --- schedulers: warnings (test_lrscheduler.py's test_old_pattern_warning*, step order)

@program
def warnings_of_epoch_argument_get_lr_and_verbose(m):
    optimizer = sgd(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler = m.optim.lr_scheduler.StepLR(optimizer, 2, verbose=True)
        scheduler.get_lr()
        optimizer.step()
        scheduler.step(3)
    return messages(caught)


# --- swa_utils (test/optim/test_swa_utils.py)

@program
def swalr_linear_anneal(m):
    optimizer = sgd(m, lr=1.0)
    scheduler = m.optim.swa_utils.SWALR(optimizer, swa_lr=0.1, anneal_epochs=3,
                                        anneal_strategy="linear")
    return lrs_over(optimizer, scheduler, 6)


SWALR_ERRORS = {
    "anneal_strategy": {"swa_lr": 0.1, "anneal_strategy": "x"},
    "anneal_epochs": {"swa_lr": 0.1, "anneal_epochs": -1},
    "swa_lr_per_group": {"swa_lr": [0.1, 0.2]},
}
for _kind, _options in SWALR_ERRORS.items():
    PROGRAMS[f"swalr_error_{_kind}"] = (
        lambda m, options=_options: m.optim.swa_utils.SWALR(sgd(m), **options))


def _bn_net(m, momentum=0.1):
    net = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3, momentum=momentum)).double()
    for weights in net.parameters():
        weights.data.copy_(m.tensor(np.linspace(-1, 1, weights.numel()).reshape(weights.shape)))
    return net


@program
def averaged_model_swa_and_ema(m):
    net = _bn_net(m)
    swa = m.optim.swa_utils.AveragedModel(net, use_buffers=True)
    ema = m.optim.swa_utils.AveragedModel(
        net, multi_avg_fn=m.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    history = []
    for i in range(3):
        with m.no_grad():
            for weights in net.parameters():
                weights.mul_(1.5).add_(0.1)
        net(m.tensor(np.ones((4, 2)) * i))
        swa.update_parameters(net)
        ema.update_parameters(net)
        history.append([x.clone() for x in [*swa.parameters(), *swa.buffers(),
                                            *ema.parameters(), swa.n_averaged]])
    return history, list(swa.state_dict())


@program
def update_bn_recomputes_running_statistics(m):
    net = _bn_net(m, momentum=0.3)
    loader = [m.tensor(np.arange(8.0).reshape(4, 2)),
              m.tensor(np.arange(8.0).reshape(4, 2) ** 2 / 3)]
    m.optim.swa_utils.update_bn(loader, net)
    norm = net[1]
    return norm.running_mean, norm.running_var, norm.momentum, norm.num_batches_tracked, \
        net.training


@program
def update_bn_takes_the_first_of_tuples(m):
    net = _bn_net(m)
    m.optim.swa_utils.update_bn([(m.tensor(np.arange(8.0).reshape(4, 2)), 1)], net)
    return net[1].running_mean


def _cnn(m):
    net = m.nn.Sequential(m.nn.Conv2d(1, 2, kernel_size=3), m.nn.BatchNorm2d(2, momentum=0.3),
                          m.nn.Linear(2, 3)).double()
    for weights in net.parameters():
        weights.data.copy_(m.tensor(np.linspace(-1, 1, weights.numel()).reshape(weights.shape)))
    return net


def _perturbed_averages(m, averaged, net, updates=4):
    history = []
    for i in range(updates):
        with m.no_grad():
            for weights in net.parameters():
                weights.add_(m.tensor(np.cos(np.arange(weights.numel()) + i)).reshape(
                    weights.shape))
        net(m.tensor(np.linspace(-1, 1, 40).reshape(2, 1, 5, 4)) * (i + 1))
        averaged.update_parameters(net)
        history.append([x.clone() for x in [*averaged.module.parameters(),
                                            *averaged.module.buffers(), averaged.n_averaged]])
    return history


for _kind, _make in {
    "swa_multi_avg_fn": lambda u: {"multi_avg_fn": u.get_swa_multi_avg_fn()},
    "ema_multi_avg_fn_with_buffers": lambda u: {"multi_avg_fn": u.get_ema_multi_avg_fn(0.9),
                                                "use_buffers": True},
    "avg_fn": lambda u: {"avg_fn": lambda avg, new, n: 0.9 * avg + 0.1 * new},
    "avg_fn_with_buffers": lambda u: {"avg_fn": lambda avg, new, n: 0.9 * avg + 0.1 * new,
                                      "use_buffers": True},
    "swa_avg_fn": lambda u: {"avg_fn": u.get_swa_avg_fn()},
}.items():
    def _averaged_program(m, make=_make):
        net = _cnn(m)
        averaged = m.optim.swa_utils.AveragedModel(net, **make(m.optim.swa_utils))
        return _perturbed_averages(m, averaged, net)
    PROGRAMS[f"averaged_model_{_kind}"] = _averaged_program


@program
def averaged_model_state_dict_round_trip(m):
    net = _cnn(m)
    averaged = m.optim.swa_utils.AveragedModel(net)
    _perturbed_averages(m, averaged, net, updates=3)
    other = m.optim.swa_utils.AveragedModel(net)
    other.load_state_dict(averaged.state_dict())
    return list(other.parameters()), other.n_averaged, list(averaged.state_dict())


@program
def averaged_model_with_the_default_average_pickles(m):
    averaged = m.optim.swa_utils.AveragedModel(_cnn(m))
    return type(pickle.loads(pickle.dumps(averaged))).__name__


@program
def update_bn_keeps_eval_mode_and_momentum(m):
    net = _cnn(m).eval()
    m.optim.swa_utils.update_bn([m.tensor(np.linspace(0, 1, 40).reshape(2, 1, 5, 4))], net)
    return net.training, net[1].momentum, net[1].running_mean, net[1].running_var


@program
def update_bn_without_batch_norm_is_a_no_op(m):
    net = m.nn.Linear(2, 2)
    m.optim.swa_utils.update_bn([m.ones(3, 2)], net)
    return net.training


# --- schedulers: composition, closed forms, groups, state dicts (test_lrscheduler.py's
# test_compound_*, test_closed_form_*, test_*_state_dict, test_onecycle_lr_*, test_cycle_lr_*)

@program
def four_schedulers_on_one_optimizer(m):
    s = m.optim.lr_scheduler
    optimizer = sgd(m, lr=0.05)
    schedulers = [s.StepLR(optimizer, 3, 0.1), s.ExponentialLR(optimizer, 0.9),
                  s.CosineAnnealingLR(optimizer, 5, 0.001), s.LinearLR(optimizer, 0.2, 1.0, 4)]
    lrs = []
    for _ in range(12):
        optimizer.step()
        for scheduler in schedulers:
            scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    return lrs


@program
def scheduler_state_dicts_pickle(m):
    s = m.optim.lr_scheduler
    optimizer = sgd(m, momentum=0.9)
    schedulers = [s.CyclicLR(optimizer, 0.1, 1.0), s.StepLR(optimizer, 2),
                  s.ReduceLROnPlateau(optimizer)]
    return [type(pickle.loads(pickle.dumps(x.state_dict()))).__name__ for x in schedulers]


@program
def plateau_state_dict_resumes(m):
    s = m.optim.lr_scheduler
    scheduler = s.ReduceLROnPlateau(sgd(m), patience=1, cooldown=2)
    for metric in [3, 2, 2, 2, 2]:
        scheduler.step(metric)
    saved = scheduler.state_dict()
    resumed = s.ReduceLROnPlateau(sgd(m))
    resumed.load_state_dict(saved)
    for metric in [2, 2, 2, 2]:
        resumed.step(metric)
    return ({k: v for k, v in saved.items() if k != "optimizer"}, resumed.get_last_lr(),
            resumed.num_bad_epochs, resumed.cooldown_counter)


CLOSED_FORMS = [lambda s, o: s.StepLR(o, 2, 0.5), lambda s, o: s.MultiStepLR(o, [2, 5], 0.3),
                lambda s, o: s.ExponentialLR(o, 0.9), lambda s, o: s.CosineAnnealingLR(o, 4, 0.01),
                lambda s, o: s.LinearLR(o, 0.3, 0.9, 3), lambda s, o: s.ConstantLR(o, 0.3, 2),
                lambda s, o: s.PolynomialLR(o, 4, 2.0)]


@program
def closed_forms_of_step_with_epoch(m):
    results = []
    for make in CLOSED_FORMS:
        optimizer = sgd(m)
        scheduler, lrs = make(m.optim.lr_scheduler, optimizer), []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in [1, 3, 2, 7, 0]:
                optimizer.step()
                scheduler.step(epoch)
                lrs.append(scheduler.get_last_lr()[0])
        results.append(lrs)
    return results


class Halving:
    """A callable object: LambdaLR saves its attributes."""

    def __init__(self):
        self.k = 0.5

    def __call__(self, epoch):
        return self.k ** epoch


@program
def lambda_state_dict_keeps_callable_objects(m):
    optimizer = sgd(m)
    scheduler = m.optim.lr_scheduler.LambdaLR(optimizer, [Halving()])
    lrs_over(optimizer, scheduler, 1)
    return scheduler.state_dict()


@program
def one_cycle_per_group_values(m):
    optimizer = m.optim.SGD([{"params": [param(m, 1.0)], "lr": 0.1},
                             {"params": [param(m, 2.0)], "lr": 0.3, "momentum": 0.5}],
                            lr=0.2, momentum=0.9)
    scheduler = m.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=[1.0, 2.0], total_steps=6, div_factor=5, final_div_factor=100,
        base_momentum=[0.7, 0.6], max_momentum=0.95)
    values = []
    for _ in range(5):
        optimizer.step()
        scheduler.step()
        values.append([(g["lr"], g["momentum"]) for g in optimizer.param_groups])
    return values, sorted(scheduler.state_dict())


@program
def cyclic_cycles_adam_beta1(m):
    optimizer = m.optim.Adam([param(m, 1.0)])
    scheduler = m.optim.lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, step_size_up=2)
    return lrs_over(optimizer, scheduler, 5, pair_with="betas")


@program
def step_order_warning_comes_once(m):
    optimizer = sgd(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler = m.optim.lr_scheduler.StepLR(optimizer, 1)
        scheduler.step()
        scheduler.step()
        optimizer.step()
        scheduler.step()
    return messages(caught)


@program
def plateau_takes_tensor_metrics(m):
    scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(sgd(m), patience=0)
    for metric in [1.0, 1.0, 1.0]:
        scheduler.step(m.tensor(metric))
    return scheduler.get_last_lr(), scheduler.best


@program
def swalr_per_group_cosine(m):
    optimizer = m.optim.SGD([{"params": [param(m, 1.0)], "lr": 0.1},
                             {"params": [param(m, 2.0)], "lr": 0.3}])
    scheduler = m.optim.swa_utils.SWALR(optimizer, swa_lr=[0.05, 0.5], anneal_epochs=3)
    return lrs_over(optimizer, scheduler, 5), sorted(scheduler.state_dict())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch(name):
    assert_program_matches_torch(PROGRAMS[name])
