"""gradkit.optim.lr_scheduler against torch.optim.lr_scheduler on the same schedules."""
import copy
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

EPOCHS = 30


def make_optimizer(lib, name="SGD", groups=2, **options):
    params = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
              for i in range(groups)]
    options = options or (dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1))
    return getattr(lib.optim, name)(params, **options)


def scheduler_of(lib, opt, kind, **options):
    return getattr(lib.optim.lr_scheduler, kind)(opt, **options)


def halve(epoch):
    return 0.5 ** (epoch // 3)


def decay(epoch):
    return 0.95


CONFIGS = [
    ("LambdaLR", dict(lr_lambda=halve)),
    ("LambdaLR", dict(lr_lambda=[halve, lambda e: 1.0 / (e + 1)])),
    ("MultiplicativeLR", dict(lr_lambda=decay)),
    ("StepLR", dict(step_size=4)),
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 7, 7, 20], gamma=0.3)),
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.25, total_iters=8)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.7, total_iters=12)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("PolynomialLR", dict()),
    ("PolynomialLR", dict(total_iters=20, power=2.5)),
    ("CosineAnnealingLR", dict(T_max=7)),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.01)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5,
                      mode="triangular2", base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range",
                      gamma=0.9, cycle_momentum=False)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=halve,
                      scale_mode="iterations")),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS + 1)),
    ("OneCycleLR", dict(max_lr=[0.5, 1.0], epochs=4, steps_per_epoch=8, pct_start=0.25,
                        anneal_strategy="linear", three_phase=True, div_factor=10.0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.001)),
]
IDS = [f"{kind}-{i}" for i, (kind, _) in enumerate(CONFIGS)]


def momentum_of(group):
    return group["betas"][0] if "betas" in group else group.get("momentum")


def trajectory(lib, make_scheduler, optimizer_name="SGD", epochs=EPOCHS):
    """(last lr, group lr, momentum) after each epoch of optimizer.step(); scheduler.step()."""
    opt = make_optimizer(lib, optimizer_name)
    scheduler = make_scheduler(lib, opt)
    seen = [(scheduler.get_last_lr(), [momentum_of(g) for g in opt.param_groups])]
    for _ in range(epochs):
        opt.step()
        scheduler.step()
        seen.append((list(scheduler.get_last_lr()), [momentum_of(g) for g in opt.param_groups]))
        assert scheduler.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return seen, scheduler


@pytest.mark.parametrize("kind,options", CONFIGS, ids=IDS)
@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam", "NAdam"])
def test_schedule_matches_torch(kind, options, optimizer_name):
    def make(lib, opt):
        return scheduler_of(lib, opt, kind, **options)
    ours, _ = trajectory(gradkit, make, optimizer_name)
    theirs, _ = trajectory(torch, make, optimizer_name)
    assert ours == theirs


def comparable(state):
    """A scheduler state dict with torch objects turned into plain values."""
    out = {}
    for key, value in state.items():
        if key == "_schedulers":
            value = [comparable(s) for s in value]
        elif key == "_scale_fn_ref" or callable(value):
            continue
        out[key] = value
    return out


@pytest.mark.parametrize("kind,options", CONFIGS, ids=IDS)
def test_state_dict_matches_torch(kind, options):
    def make(lib, opt):
        return scheduler_of(lib, opt, kind, **options)
    _, ours = trajectory(gradkit, make, epochs=5)
    _, theirs = trajectory(torch, make, epochs=5)
    assert comparable(ours.state_dict()) == comparable(theirs.state_dict())
    assert ours.optimizer.state_dict()["param_groups"] == \
        theirs.optimizer.state_dict()["param_groups"]


@pytest.mark.parametrize("kind,options", CONFIGS, ids=IDS)
def test_state_dict_round_trip_resumes_like_torch(kind, options):
    # the resumed schedule is torch's, quirks included (a scheduler built on a loaded
    # optimizer takes its initial step before load_state_dict restores it)
    def run(lib, epochs=12, resume_at=6):
        opt = make_optimizer(lib)
        scheduler = scheduler_of(lib, opt, kind, **options)
        lrs = []
        for epoch in range(epochs):
            if epoch == resume_at:
                saved = copy.deepcopy((opt.state_dict(), scheduler.state_dict()))
                opt = make_optimizer(lib)
                opt.load_state_dict(saved[0])
                scheduler = scheduler_of(lib, opt, kind, **options)
                scheduler.load_state_dict(saved[1])
            opt.step()
            scheduler.step()
            lrs.append((scheduler.get_last_lr(), scheduler.last_epoch))
        return lrs
    assert run(gradkit) == run(torch)


@pytest.mark.parametrize("kind,options", [c for c in CONFIGS if c[0] != "OneCycleLR"],
                         ids=[i for i, c in zip(IDS, CONFIGS, strict=True)
                              if c[0] != "OneCycleLR"])
def test_resuming_with_last_epoch_matches_torch(kind, options):
    # a scheduler built with last_epoch >= 0 on groups that hold initial_lr (torch's resume)
    def run(lib):
        opt = make_optimizer(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"] * 2
        scheduler = scheduler_of(lib, opt, kind, last_epoch=5, **options)
        seen = [scheduler.get_last_lr()]
        for _ in range(8):
            opt.step()
            scheduler.step()
            seen.append(scheduler.get_last_lr())
        return seen
    assert run(gradkit) == run(torch)


def composite(lib, opt, kind):
    inner = [lib.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=4),
             lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),
             lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)]
    if kind == "ChainedScheduler":
        return lib.optim.lr_scheduler.ChainedScheduler(inner)
    return lib.optim.lr_scheduler.SequentialLR(opt, inner, milestones=[5, 12])


@pytest.mark.parametrize("kind", ["ChainedScheduler", "SequentialLR"])
def test_composite_schedulers_match_torch(kind):
    def make(lib, opt):
        return composite(lib, opt, kind)
    ours, ours_scheduler = trajectory(gradkit, make)
    theirs, theirs_scheduler = trajectory(torch, make)
    assert ours == theirs
    assert comparable(ours_scheduler.state_dict()) == comparable(theirs_scheduler.state_dict())


def test_sequential_of_linear_warmup_and_cosine_matches_torch():
    def make(lib, opt):
        schedulers = lib.optim.lr_scheduler
        return schedulers.SequentialLR(
            opt, [schedulers.LinearLR(opt, start_factor=0.1, total_iters=5),
                  schedulers.CosineAnnealingLR(opt, T_max=20, eta_min=1e-4)], milestones=[5])
    assert trajectory(gradkit, make)[0] == trajectory(torch, make)[0]


PLATEAU_METRICS = [5.0, 4.0, 4.0, 4.0, 3.9999, 4.5, 4.5, 4.5, 4.5, 2.0, 2.0, 2.0, 2.0, 2.0,
                   2.1, 2.2, 2.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize("options", [
    dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2),
    dict(threshold_mode="abs", threshold=0.05, patience=1, min_lr=[0.03, 0.001]),
    dict(patience=0, factor=0.5, eps=0.02, min_lr=0.02)])
def test_reduce_lr_on_plateau_matches_torch(options):
    def run(lib):
        opt = make_optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **options)
        seen = []
        for metric in PLATEAU_METRICS:
            opt.step()
            scheduler.step(lib.tensor(metric))
            seen.append((scheduler.get_last_lr(), scheduler.num_bad_epochs,
                         scheduler.cooldown_counter, scheduler.best))
        return seen, comparable(scheduler.state_dict())
    assert run(gradkit) == run(torch)


def test_training_with_a_schedule_matches_torch():
    rng = np.random.default_rng(3)
    w0, target = rng.standard_normal(3), rng.standard_normal(3)

    def train(lib):
        w = lib.tensor(w0, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.2, momentum=0.5)
        scheduler = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=25)
        for _ in range(25):
            opt.zero_grad()
            ((w - lib.tensor(target)) ** 2).sum().backward()
            opt.step()
            scheduler.step()
        return w.detach().numpy()

    np.testing.assert_allclose(train(gradkit), train(torch), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind,options", [
    ("StepLR", dict(step_size=3)), ("MultiStepLR", dict(milestones=[2, 5])),
    ("ConstantLR", dict()), ("LinearLR", dict()), ("ExponentialLR", dict(gamma=0.8)),
    ("PolynomialLR", dict(power=2.0)), ("CosineAnnealingLR", dict(T_max=4)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2)),
    ("LambdaLR", dict(lr_lambda=halve))])
def test_step_with_epoch_uses_the_closed_form_and_warns(kind, options):
    def run(lib):
        opt = make_optimizer(lib)
        scheduler = scheduler_of(lib, opt, kind, **options)
        seen = []
        for epoch in [3, 1, 7, 7, 2.5, 10]:
            if kind != "CosineAnnealingWarmRestarts" and epoch == 2.5:
                continue
            opt.step()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                scheduler.step(epoch)
            seen.append((scheduler.get_last_lr(), scheduler.last_epoch,
                         [str(w.message)[:60] for w in caught]))
        return seen
    ours = run(gradkit)
    assert ours == run(torch)
    # CosineAnnealingWarmRestarts takes an epoch without the deprecation warning, as torch's
    deprecated = "The epoch parameter in `scheduler.step()` was not necessary"
    assert all(any(m.startswith(deprecated[:40]) for m in messages)
               == (kind != "CosineAnnealingWarmRestarts") for _, _, messages in ours)


def test_warm_restarts_rejects_a_negative_epoch():
    for lib in (gradkit, torch):
        scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(make_optimizer(lib), 3)
        with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
            scheduler.step(-1)


@pytest.mark.parametrize("lib", [gradkit, torch], ids=["gradkit", "torch"])
def test_warns_when_scheduler_steps_before_optimizer(lib):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                         r"`optimizer.step\(\)`"):
        scheduler.step()


@pytest.mark.parametrize("lib", [gradkit, torch], ids=["gradkit", "torch"])
def test_no_warning_in_the_right_order(lib):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.step()
            scheduler.step()


@pytest.mark.parametrize("lib", [gradkit, torch], ids=["gradkit", "torch"])
def test_warns_when_optimizer_step_is_replaced(lib):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
    opt.step = type(opt).step.__get__(opt)
    with pytest.warns(UserWarning, match=r"Seems like `optimizer.step\(\)` has been overridden"):
        scheduler.step()


@pytest.mark.parametrize("lib", [gradkit, torch], ids=["gradkit", "torch"])
def test_get_lr_outside_step_warns(lib):
    scheduler = lib.optim.lr_scheduler.StepLR(make_optimizer(lib), step_size=2)
    with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
        assert scheduler.get_lr() == [0.1, 0.2]


@pytest.mark.parametrize("make,error,message", [
    (lambda s, o: s.StepLR("sgd", 3), TypeError, "str is not an Optimizer"),
    (lambda s, o: s.StepLR(o, 3, last_epoch=4), KeyError,
     r"param 'initial_lr' is not specified in param_groups\[0\]"),
    (lambda s, o: s.LambdaLR(o, [halve]), ValueError, "Expected 2 lr_lambdas, but got 1"),
    (lambda s, o: s.MultiplicativeLR(o, 0.9), TypeError,
     "lr_lambda should be a function, but got float"),
    (lambda s, o: s.ConstantLR(o, factor=1.5), ValueError,
     "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda s, o: s.LinearLR(o, start_factor=0), ValueError,
     "Starting multiplicative factor expected to be greater than 0"),
    (lambda s, o: s.LinearLR(o, end_factor=2), ValueError,
     "Ending multiplicative factor expected to be between 0 and 1."),
    (lambda s, o: s.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0."),
    (lambda s, o: s.ReduceLROnPlateau(o, mode="up"), ValueError, "mode up is unknown!"),
    (lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="x"), ValueError,
     "threshold mode x is unknown!"),
    (lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "expected 2 min_lrs, got 1"),
    (lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="wave"), ValueError,
     "mode is invalid and scale_fn is None"),
    (lambda s, o: s.CyclicLR(o, [0.1], 1.0), ValueError,
     "base_lr must have the same length as optimizer.param_groups. base_lr has 1 values, "
     "param_groups has 2."),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, 0), ValueError,
     "Expected positive integer T_0, but got 0"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, 2, T_mult=0), ValueError,
     "Expected integer T_mult >= 1, but got 0"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, 2, eta_min="0"), ValueError,
     "Expected float or int eta_min, but got 0 of type <class 'str'>"),
    (lambda s, o: s.OneCycleLR(o, 0.1), ValueError,
     r"You must define either total_steps OR \(epochs AND steps_per_epoch\)"),
    (lambda s, o: s.OneCycleLR(o, 0.1, total_steps=0), ValueError,
     "Expected positive integer total_steps, but got 0"),
    (lambda s, o: s.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=2), ValueError,
     "Expected positive integer epochs, but got 0"),
    (lambda s, o: s.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=-1), ValueError,
     "Expected positive integer steps_per_epoch, but got -1"),
    (lambda s, o: s.OneCycleLR(o, 0.1, total_steps=5, pct_start=1), ValueError,
     "Expected float between 0 and 1 pct_start, but got 1"),
    (lambda s, o: s.OneCycleLR(o, 0.1, total_steps=5, anneal_strategy="cube"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got cube"),
    (lambda s, o: s.SequentialLR(o, [], milestones=[]), ValueError,
     "SequentialLR expects at least one scheduler, but got no scheduler."),
    (lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]), ValueError,
     "Sequential Schedulers expects number of schedulers provided to be one more than the "
     "number of milestone points, but got number of schedulers 1 and the number of "
     "milestones to be equal to 1"),
    (lambda s, o: s.SequentialLR(o, [s.ReduceLROnPlateau(o)], milestones=[]), ValueError,
     "SequentialLR does not support `ReduceLROnPlateau` scheduler"),
    (lambda s, o: s.ChainedScheduler([]), ValueError,
     "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler."),
    (lambda s, o: s.ChainedScheduler([s.StepLR(o, 2), object()]), TypeError,
     "ChainedScheduler at index 1 should have `optimizer` as its attribute."),
])
def test_errors_match_torch(make, error, message):
    for lib in (gradkit, torch):
        with pytest.raises(error, match=message):
            make(lib.optim.lr_scheduler, make_optimizer(lib))


def test_errors_at_step_match_torch():
    for lib in (gradkit, torch):
        opt = make_optimizer(lib, groups=1)
        one_cycle = lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=2)
        opt.step()
        one_cycle.step()
        one_cycle.step()
        with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of "
                                             "total steps is 2"):
            one_cycle.step()
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            lib.optim.lr_scheduler.CyclicLR(lib.optim.Adagrad(opt.param_groups[0]["params"]),
                                            0.01, 0.1)
        plateau = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0])
        opt.add_param_group({"params": [lib.zeros(1, requires_grad=True)]})
        plateau.step(1.0)
        with pytest.raises(RuntimeError, match=r"The number of param groups in the `optimizer` "
                                               r"\(2\) differs from when `ReduceLROnPlateau` "
                                               r"was initialized \(1\)"):
            plateau.step(2.0)


def test_lambda_state_dict_keeps_callable_objects_state():
    class Schedule:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    opt = make_optimizer(gradkit, groups=1)
    saved = gradkit.optim.lr_scheduler.LambdaLR(opt, Schedule(0.5)).state_dict()
    assert saved["lr_lambdas"] == [{"rate": 0.5}]
    assert gradkit.optim.lr_scheduler.LambdaLR(opt, halve).state_dict()["lr_lambdas"] == [None]
    target = Schedule(0.9)
    gradkit.optim.lr_scheduler.LambdaLR(opt, target).load_state_dict(saved)
    assert target.rate == 0.5
