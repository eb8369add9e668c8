"""gradkit.optim: every optimizer option against torch.optim on the same program."""
import copy

import numpy as np
import pytest

import gradkit
from gradkit import optim

rng = np.random.default_rng(0)
A = rng.standard_normal((5, 4))
B = rng.standard_normal(5)
W0 = rng.standard_normal(4)
V0 = rng.standard_normal((2, 3))


def loss_of(lib, w, v):
    """A non-quadratic loss written identically for gradkit and torch."""
    a, b = lib.tensor(A), lib.tensor(B)
    return ((a @ w - b) ** 2).sum() + (lib.sin(v) * v).sum() + (w ** 4).sum() * 0.1


def run(lib, opt_name, steps=6, groups=False, **options):
    w = lib.tensor(W0.copy(), requires_grad=True)
    v = lib.tensor(V0.copy(), requires_grad=True)
    params = [{"params": [w]}, {"params": [v], "lr": 0.05}] if groups else [w, v]
    opt = getattr(lib.optim, opt_name)(params, **options)
    for _ in range(steps):
        opt.zero_grad()
        loss_of(lib, w, v).backward()
        opt.step()
    return w.detach().numpy(), v.detach().numpy()


CONFIGS = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, momentum=0.8, nesterov=True)),
    ("SGD", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, maximize=True, weight_decay=0.05)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9)),
]


@pytest.mark.parametrize("name,options", CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
def test_matches_torch(name, options):
    torch = pytest.importorskip("torch")
    ours = run(gradkit, name, **options)
    theirs = run(torch, name, **options)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_param_groups_match_torch(name):
    torch = pytest.importorskip("torch")
    options = dict(lr=0.01, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    ours = run(gradkit, name, groups=True, **options)
    theirs = run(torch, name, groups=True, **options)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_sgd_closed_form():
    # one step of plain SGD on sum(w²): w <- w - lr * 2w
    w = gradkit.tensor([1.0, -2.0], dtype=gradkit.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.25)
    (w * w).sum().backward()
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), [0.5, -1.0])


def test_adam_first_step_is_lr_times_sign():
    # with bias correction, Adam's first step is lr * g / (|g| + eps)
    w = gradkit.tensor([3.0, -0.5], dtype=gradkit.float64, requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), [2.9, -0.4], rtol=1e-7)


def test_step_updates_in_place_under_no_grad():
    w = gradkit.tensor([1.0, 2.0], requires_grad=True)
    data_before = w._data
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    version = w._version
    opt.step()
    assert w._version > version
    assert w._data is data_before  # same buffer, updated in place
    assert w.is_leaf and w.grad_fn is None and w.requires_grad


def test_step_invalidates_tensors_saved_for_backward():
    w = gradkit.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_parameters_without_grad_are_skipped():
    w = gradkit.tensor([1.0], requires_grad=True)
    unused = gradkit.tensor([5.0], requires_grad=True)
    opt = optim.SGD([w, unused], lr=0.1, momentum=0.9)
    (w * 2).sum().backward()
    opt.step()
    assert unused.tolist() == [5.0] and unused._version == 0
    assert unused not in opt.state


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    w = gradkit.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    opt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert w.grad is None
    else:
        assert w.grad.tolist() == [0.0, 0.0]


def test_step_with_closure_returns_loss():
    w = gradkit.tensor([2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with gradkit.no_grad():  # the closure still records: step enables grad for it
        loss = opt.step(closure)
    assert loss.item() == pytest.approx(4.0)
    assert w.item() == pytest.approx(1.6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_state_dict_round_trip_resumes_exactly(name):
    options = {"SGD": dict(lr=0.05, momentum=0.9), "RMSprop": dict(lr=0.05, momentum=0.5,
                                                                   centered=True)}.get(
        name, dict(lr=0.05, amsgrad=True))

    def make(w_value):
        w = gradkit.tensor(w_value, dtype=gradkit.float64, requires_grad=True)
        return w, getattr(optim, name)([w], **options)

    def train(w, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            ((w - 1) ** 4).sum().backward()
            opt.step()

    w, opt = make([3.0, -2.0])
    train(w, opt, 3)
    saved_w, saved_opt = w.detach().clone(), copy.deepcopy(opt.state_dict())
    train(w, opt, 3)
    resumed_w, resumed = make(saved_w.tolist())
    resumed.load_state_dict(saved_opt)
    train(resumed_w, resumed, 3)
    np.testing.assert_array_equal(resumed_w.detach().numpy(), w.detach().numpy())


def test_state_dict_layout_like_torch():
    w = gradkit.tensor([1.0], requires_grad=True)
    v = gradkit.tensor([1.0], requires_grad=True)
    opt = optim.Adam([{"params": [w]}, {"params": [v], "lr": 0.5}], lr=0.1)
    (w * v).sum().backward()
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.1, 0.5]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["state"][1]["step"].item() == 1


def test_load_state_dict_restores_hyperparameters():
    w = gradkit.tensor([1.0], requires_grad=True)
    source = optim.SGD([w], lr=0.3, momentum=0.5)
    target = optim.SGD([w], lr=0.1)
    target.load_state_dict(source.state_dict())
    assert target.param_groups[0]["lr"] == 0.3
    assert target.param_groups[0]["momentum"] == 0.5
    assert target.param_groups[0]["params"][0] is w


def test_load_state_dict_errors():
    w = gradkit.tensor([1.0], requires_grad=True)
    v = gradkit.tensor([1.0], requires_grad=True)
    one_group = optim.SGD([w, v], lr=0.1).state_dict()
    two_groups = optim.SGD([{"params": [w]}, {"params": [v]}], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([w, v], lr=0.1).load_state_dict(two_groups)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([w], lr=0.1).load_state_dict(one_group)


@pytest.mark.parametrize("make,message", [
    (lambda p: optim.SGD(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.SGD(p, momentum=-0.1), "Invalid momentum value: -0.1"),
    (lambda p: optim.SGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD(p, nesterov=True), "Nesterov momentum requires a momentum"),
    (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True),
     "zero dampening"),
    (lambda p: optim.Adam(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.Adam(p, eps=-1.0), "Invalid epsilon value: -1.0"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), r"Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.AdamW(p, betas=(0.9, -0.1)), r"Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.AdamW(p, weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    (lambda p: optim.SGD([], lr=0.1), "optimizer got an empty parameter list"),
    (lambda p: optim.RMSprop(p, alpha=-0.5), "Invalid alpha value: -0.5"),
    (lambda p: optim.RMSprop(p, momentum=-1.0), "Invalid momentum value: -1.0"),
    (lambda p: optim.RMSprop(p, eps=-1.0), "Invalid epsilon value: -1.0"),
])
def test_invalid_arguments(make, message):
    params = [gradkit.tensor([1.0], requires_grad=True)]
    with pytest.raises(ValueError, match=message):
        make(params)


def test_param_errors():
    w = gradkit.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    opt = optim.SGD([w], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([w])


def test_add_param_group_uses_defaults():
    w = gradkit.tensor([1.0], requires_grad=True)
    v = gradkit.tensor([1.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.2, betas=(0.5, 0.6))
    opt.add_param_group({"params": v, "eps": 1e-3})
    group = opt.param_groups[1]
    assert group["lr"] == 0.2 and group["betas"] == (0.5, 0.6) and group["eps"] == 1e-3
    assert len(group["params"]) == 1 and group["params"][0] is v


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_defaults_match_torch(name):
    torch = pytest.importorskip("torch")
    ours = getattr(optim, name)([gradkit.zeros(1, requires_grad=True)]).defaults
    theirs = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).defaults
    for key, value in ours.items():
        assert value == theirs[key], key
