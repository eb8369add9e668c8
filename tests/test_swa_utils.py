"""gradkit.optim.swa_utils (AveragedModel, SWALR, update_bn) against torch.optim.swa_utils."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)
W1, B1 = rng.standard_normal((4, 3)), rng.standard_normal(4)
W2, B2 = rng.standard_normal((1, 4)), rng.standard_normal(1)
X, Y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))


def make_model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(),
                              lib.nn.Linear(4, 1)).double()
    with lib.no_grad():
        for param, value in zip(model.parameters(), [W1, B1, np.ones(4), np.zeros(4), W2, B2],
                                strict=True):
            param.copy_(lib.tensor(value))
    return model


def swa_utils_of(lib):
    return lib.optim.swa_utils


AVERAGES = {
    "swa": dict(),
    "ema": dict(multi_avg_fn="ema"),
    "ema one by one": dict(avg_fn="ema"),
    "swa lists": dict(multi_avg_fn="swa"),
    "with buffers": dict(use_buffers=True, multi_avg_fn="ema"),
}


def build_average(lib, model, options):
    swa = swa_utils_of(lib)
    options = dict(options)
    if options.get("multi_avg_fn") == "ema":
        options["multi_avg_fn"] = swa.get_ema_multi_avg_fn(0.9)
    if options.get("multi_avg_fn") == "swa":
        options["multi_avg_fn"] = swa.get_swa_multi_avg_fn()
    if options.get("avg_fn") == "ema":
        options["avg_fn"] = swa.get_ema_avg_fn(0.8)
    return swa.AveragedModel(model, **options)


def train_with_swa(lib, options, epochs=12):
    model = make_model(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    averaged = build_average(lib, model, options)
    schedule = swa_utils_of(lib).SWALR(opt, swa_lr=0.01, anneal_epochs=4)
    x, y = lib.tensor(X), lib.tensor(Y)
    lrs = []
    for epoch in range(epochs):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        if epoch >= 3:
            averaged.update_parameters(model)
            schedule.step()
        lrs.append(schedule.get_last_lr())
    swa_utils_of(lib).update_bn([(x[:8], 0), (x[8:], 1)], averaged)
    state = {k: v.detach().numpy() for k, v in averaged.state_dict().items()}
    return state, lrs, averaged(x).detach().numpy(), schedule.state_dict()


@pytest.mark.parametrize("options", list(AVERAGES.values()), ids=list(AVERAGES))
def test_averaged_model_swalr_and_update_bn_match_torch(options):
    ours = train_with_swa(gradkit, options)
    theirs = train_with_swa(torch, options)
    assert ours[0].keys() == theirs[0].keys()
    for key in ours[0]:
        np.testing.assert_allclose(ours[0][key], theirs[0][key], rtol=1e-12, atol=1e-14,
                                   err_msg=key)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-14)
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("options", [dict(anneal_epochs=0), dict(anneal_strategy="linear"),
                                     dict(swa_lr=[0.01, 0.2], anneal_epochs=3)])
def test_swalr_matches_torch(options):
    def run(lib):
        params = [{"params": [lib.zeros(1, requires_grad=True)], "lr": 0.5},
                  {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.1}]
        opt = lib.optim.SGD(params)
        options_ = {"swa_lr": 0.05, **options}
        schedule = swa_utils_of(lib).SWALR(opt, **options_)
        lrs = [schedule.get_last_lr()]
        for _ in range(8):
            opt.step()
            schedule.step()
            lrs.append(schedule.get_last_lr())
        return lrs
    assert run(gradkit) == run(torch)


def test_swa_errors_match_torch():
    for lib in (gradkit, torch):
        swa = swa_utils_of(lib)
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide "
                                             r"a value in \[0,1\] range."):
            swa.get_ema_multi_avg_fn(1.5)
        with pytest.raises(ValueError, match="Invalid decay value -1"):
            swa.get_ema_avg_fn(-1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', "
                                             "instead got step"):
            swa.SWALR(opt, 0.1, anneal_strategy="step")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, "
                                             "got -1"):
            swa.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be "
                                                 "provided"):
            swa.AveragedModel(lib.nn.Linear(1, 1), avg_fn=swa.get_swa_avg_fn(),
                              multi_avg_fn=swa.get_swa_multi_avg_fn())


def test_update_bn_without_batch_norm_leaves_the_model_alone():
    model = gradkit.nn.Linear(2, 1)
    model.eval()
    gradkit.optim.swa_utils.update_bn([gradkit.ones(3, 2)], model)
    assert not model.training


def test_averaged_model_on_a_stand_in_cuda_device(monkeypatch):
    # on a GPU torch averages with lerp_ (its foreach kernels) by a weight 1/(n+1) rounded to
    # the default dtype (float32): the same mean as on the CPU to that rounding
    def average(device):
        model = gradkit.nn.Linear(3, 2).double()
        with gradkit.no_grad():
            model.weight.copy_(gradkit.tensor(W1[:2]))
            model.bias.copy_(gradkit.tensor(B1[:2]))
        model.to(device)
        averaged = gradkit.optim.swa_utils.AveragedModel(model)
        for step in range(4):
            with gradkit.no_grad():
                for param in model.parameters():
                    param.add_(0.5 * step)
            averaged.update_parameters(model)
        return [p.detach().cpu().numpy() for p in averaged.parameters()], averaged

    on_cpu, _ = average("cpu")
    import strict_xp
    strict_xp.install(monkeypatch)
    on_device, averaged = average("cuda")
    assert averaged.module.weight.device.type == "cuda"
    for a, b in zip(on_device, on_cpu, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-7)
