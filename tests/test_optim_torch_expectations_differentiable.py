"""torch's TestDifferentiableOptimizer (test/optim/test_optim.py) and its capturable/
differentiable checks as programs run under gradkit and torch 2.13: a differentiable step is
recorded in the graph, so the gradients of the stepped parameter and state with respect to the
parameter, its gradient, the state and tensor hyper-parameters are torch's. Each program takes
the library module ``m``."""
import numpy as np
import pytest

import gradkit
from torch_expectations.optim_programs import OPTIMIZERS, assert_program_matches_torch, param

pytest.importorskip("torch")

PROGRAMS = {}
_rng = np.random.default_rng(7)


def _rand(*shape):
    return _rng.random(shape)


def _data(state):
    """Fixed float64 values: the parameter, its gradient, a cotangent and ``state``'s entries
    ({name: (values, requires_grad)})."""
    return _rand(10), _rand(10), _rng.standard_normal(10), state


def _one_step_gradients(m, name, kwargs, data):
    """torch's ``_diff_fn``: one step of a non-leaf parameter whose state is cloned from
    inputs; returns the outputs and their gradients with respect to every input."""
    p_values, g_values, cotangent, state = data
    p0 = m.tensor(p_values, requires_grad=True)
    g0 = m.tensor(g_values, requires_grad=True)
    inputs = {k: m.tensor(v, requires_grad=grad) for k, (v, grad) in state.items()}
    p = p0.clone()
    p.grad = g0
    optimizer = getattr(m.optim, name)([p], **kwargs)
    optimizer.state[p].update({k: v.clone() for k, v in inputs.items()})
    optimizer.step()
    outputs = [p] + [v for v in optimizer.state[p].values()
                     if isinstance(v, m.Tensor) and v.requires_grad]
    total = sum((o * m.tensor(cotangent[:o.numel()]).reshape(o.shape)).sum() for o in outputs)
    wrt = [p0, g0] + [v for v in inputs.values() if v.requires_grad]
    return outputs, m.autograd.grad(total, wrt, allow_unused=True)


def _adam_state():
    return {"step": (np.float64(10.0), False), "exp_avg": (_rand(10), True),
            "exp_avg_sq": (_rand(10), True), "max_exp_avg_sq": (_rand(10), True)}


ONE_STEP = [  # test_sgd ... test_radam, with their kwargs and states
    ("SGD", {"lr": 0.9}, {"momentum_buffer": (_rand(10), True)}),
    ("SGD", {"lr": 0.9, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1},
     {"momentum_buffer": (_rand(10), True)}),
    ("Adam", {"lr": 0.9, "amsgrad": True}, _adam_state()),
    ("AdamW", {"lr": 0.9, "amsgrad": True}, _adam_state()),
    ("RMSprop", {"lr": 0.9, "maximize": True, "momentum": 0.9, "centered": True,
                 "weight_decay": 0.1},
     {"step": (np.float64(0.0), False), "square_avg": (_rand(10), True),
      "momentum_buffer": (_rand(10), True), "grad_avg": (1e-2 * _rand(10), True)}),
    ("Adadelta", {"lr": 0.9, "weight_decay": 0.1},
     {"step": (np.float64(10.0), False), "square_avg": (_rand(10), True),
      "acc_delta": (_rand(10), True)}),
    ("Adagrad", {"lr": 0.9, "weight_decay": 0.1},
     {"step": (np.float64(10.0), False), "sum": (_rand(10), True)}),
    ("Adamax", {"lr": 0.9, "weight_decay": 0.1},
     {"step": (np.float64(10.0), False), "exp_avg": (_rand(10), True),
      "exp_inf": (_rand(10), True)}),
    ("ASGD", {"lr": 0.9},
     {"step": (np.float64(10.0), False), "eta": (np.float64(0.9), False),
      "mu": (np.float64(1.0), False), "ax": (_rand(10), True)}),
    ("ASGD", {"lr": 0.9, "t0": 1.0},  # mu != 1: the averaging branch
     {"step": (np.float64(10.0), False), "eta": (np.float64(0.9), False),
      "mu": (np.float64(0.5), False), "ax": (_rand(10), True)}),
    ("Rprop", {"lr": 0.9},
     {"step": (np.float64(10.0), False), "prev": (_rand(10) - 0.5, True),
      "step_size": (_rand(10), True)}),
    ("NAdam", {"lr": 0.9}, {"step": (np.float64(10.0), False), "exp_avg": (_rand(10), True),
                            "exp_avg_sq": (_rand(10), True),
                            "mu_product": (np.float64(1.0), True)}),
    ("NAdam", {"lr": 0.9, "decoupled_weight_decay": True, "weight_decay": 0.1},
     {"step": (np.float64(10.0), False), "exp_avg": (_rand(10), True),
      "exp_avg_sq": (_rand(10), True), "mu_product": (np.float64(1.0), True)}),
    ("RAdam", {"lr": 0.9}, {"step": (np.float64(10.0), False), "exp_avg": (_rand(10), True),
                            "exp_avg_sq": (_rand(10), True)}),
    ("RAdam", {"lr": 0.9, "weight_decay": 0.1, "decoupled_weight_decay": True},
     {"step": (np.float64(10.0), False), "exp_avg": (_rand(10), True),
      "exp_avg_sq": (_rand(10), True)}),
]
for _i, (_name, _kwargs, _state) in enumerate(ONE_STEP):
    PROGRAMS[f"one_differentiable_step_{_i}_{_name}"] = (
        lambda m, name=_name, kwargs=_kwargs, data=_data(_state):
        _one_step_gradients(m, name, {**kwargs, "differentiable": True}, data))


def _two_steps_through_hyperparameters(m, name, hyper, data):
    """torch's ``_multistep_backprop_diff_hyperparams_fn``: two steps of MSE loss whose
    gradients come from ``backward(create_graph=True)``; the meta-loss's gradient reaches the
    tensor hyper-parameters (lr, weight_decay, betas)."""
    p_values, g_values, _, state = data
    p0 = m.tensor(p_values, requires_grad=True)
    hyper = {k: m.tensor(v, requires_grad=True) for k, v in hyper.items()}
    params = p0.clone()
    params.grad = m.tensor(g_values, requires_grad=True)
    kwargs = {k: v.clone() for k, v in hyper.items()}
    if "beta1" in kwargs:
        kwargs["betas"] = (kwargs.pop("beta1"), kwargs.pop("beta2"))
    optimizer = getattr(m.optim, name)([params], differentiable=True, **kwargs)
    optimizer.state[params].update(
        {k: m.tensor(v, requires_grad=grad) for k, (v, grad) in state.items()})
    x, y = m.tensor([1.0], dtype=m.float64), m.tensor([2.0], dtype=m.float64)
    for _ in range(2):
        loss = m.nn.MSELoss()(x * m.sum(params), y)
        loss.backward(inputs=(params,), create_graph=True)
        optimizer.step()
        optimizer.zero_grad()
    return loss, m.autograd.grad(loss, [p0, *hyper.values()])


HYPER = [  # test_adam_differentiable_lr ... test_differentiable_weight_decay_and_lr
    ("Adam", {"lr": 0.001}), ("Adam", {"weight_decay": 0.999}),
    ("Adam", {"beta1": 0.9, "beta2": 0.999, "lr": [0.001]}),
    ("Adam", {"lr": 0.001, "weight_decay": 0.999, "beta1": 0.9, "beta2": 0.999}),
    ("AdamW", {"lr": 0.001}), ("AdamW", {"weight_decay": 0.999}),
    ("AdamW", {"beta1": 0.9, "beta2": 0.999}),
    ("AdamW", {"lr": 0.001, "weight_decay": 0.999, "beta1": 0.9, "beta2": 0.999}),
    ("SGD", {"lr": 0.001}), ("SGD", {"weight_decay": 0.9}),
    ("SGD", {"weight_decay": 0.9, "lr": 0.001}),
]
for _i, (_name, _hyper) in enumerate(HYPER):
    _state = ({"momentum_buffer": (_rand(10), True)} if _name == "SGD" else _adam_state())
    PROGRAMS[f"two_steps_through_hyperparameters_{_i}_{_name}"] = (
        lambda m, name=_name, hyper=_hyper, data=_data(_state):
        _two_steps_through_hyperparameters(m, name, hyper, data))


# --- the flags' checks -----------------------------------------------------------------

def _step_of(m, name, *, leaf=True, steps=1, **kwargs):
    """``steps`` steps of a float64 parameter (a leaf, or a clone of one) with gradient 1;
    the parameter and the state, or the error with the state it left."""
    weights = param(m, 1.0, 2.0)
    if not leaf:
        weights = weights.clone()
    optimizer = getattr(m.optim, name)([weights], **kwargs)
    weights.grad = m.ones_like(weights)
    try:
        for _ in range(steps):
            optimizer.step()
    except (AssertionError, RuntimeError) as error:  # outcome() passes AssertionError on
        return type(error).__name__, str(error), sorted(optimizer.state[weights].items()), \
            weights.detach()
    return weights, sorted(optimizer.state[weights].items())


CAPTURABLE = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "RMSprop",
              "Adadelta"]
for _name in CAPTURABLE:  # refused at the step on the CPU, after the state is made
    for _extra in ({}, {"foreach": True}, {"differentiable": True}):
        PROGRAMS[f"capturable_{_name}_{sorted(_extra)}"] = (
            lambda m, name=_name, extra=_extra: _step_of(m, name, capturable=True, **extra))
for _name in OPTIMIZERS:  # torch's multi-tensor kernels (but SGD's) record no graph
    PROGRAMS[f"foreach_and_differentiable_{_name}"] = (
        lambda m, name=_name: _step_of(m, name, leaf=False, foreach=True, differentiable=True))
for _name in ["Adam", "AdamW", "RMSprop"]:  # which check comes first
    PROGRAMS[f"foreach_differentiable_and_capturable_{_name}"] = (
        lambda m, name=_name: _step_of(m, name, leaf=False, foreach=True, differentiable=True,
                                       capturable=True))
for _name in ["Adam", "AdamW"]:  # torch's fused CPU kernel skips the check
    PROGRAMS[f"capturable_and_fused_{_name}"] = (
        lambda m, name=_name: _step_of(m, name, capturable=True, fused=True, steps=2))
for _name in ["SGD", "Adagrad", "Adam", "AdamW"]:
    PROGRAMS[f"fused_and_differentiable_{_name}"] = (
        lambda m, name=_name: _step_of(m, name, fused=True, differentiable=True))
for _name in OPTIMIZERS:
    # a differentiable step of a leaf is an in-place change of a leaf that requires grad
    PROGRAMS[f"differentiable_leaf_{_name}"] = (
        lambda m, name=_name: _step_of(m, name, differentiable=True))
    # a non-leaf parameter is accepted when differentiable, refused otherwise
    PROGRAMS[f"differentiable_non_leaf_{_name}"] = (
        lambda m, name=_name: _step_of(m, name, leaf=False, differentiable=True, steps=1))
    PROGRAMS[f"non_leaf_refused_{_name}"] = (
        lambda m, name=_name: _step_of(m, name, leaf=False))
    PROGRAMS[f"differentiable_zero_grads_are_a_no_op_{_name}"] = (
        lambda m, name=_name: _zero_grad_step(m, name))


def _zero_grad_step(m, name):
    """test_step_is_noop_for_zero_grads with differentiable=True: the clone does not move."""
    weights = param(m, 1.0, -2.0).clone()
    optimizer = getattr(m.optim, name)([weights], differentiable=True)
    weights.grad = m.zeros_like(weights)
    optimizer.step()
    return weights


def _program(function):
    PROGRAMS[function.__name__] = function
    return function


@_program
def differentiable_step_with_a_step_that_requires_grad(m):
    weights = param(m, 1.0).clone()
    optimizer = m.optim.Adam([weights], differentiable=True)
    weights.grad = m.ones_like(weights)
    optimizer.step()
    optimizer.state[weights]["step"].requires_grad_(True)
    optimizer.step()


@_program
def differentiable_steps_that_change_saved_state_refuse_backward(m):
    """Rprop's second step updates in place the step sizes the first one saved."""
    weights = param(m, 1.0, 2.0).clone()
    optimizer = m.optim.Rprop([weights], differentiable=True)
    for _ in range(2):
        (weights ** 2).sum().backward(inputs=(weights,), create_graph=True)
        optimizer.step()
    weights.sum().backward()


@_program
def sgd_tensor_weight_decay_that_requires_grad_decays_the_grad_in_place(m):
    weights = param(m, 1.0, 2.0)
    optimizer = m.optim.SGD([weights], lr=0.1, weight_decay=m.tensor(0.5, requires_grad=True))
    weights.grad = m.ones_like(weights)
    optimizer.step()
    return weights, weights.grad


@_program
def muon_lr_of_two_elements(m):
    m.optim.Muon([m.zeros(2, 2, requires_grad=True)], lr=m.tensor([1e-3, 1e-3]))


@_program
def retained_grad_under_create_graph_is_a_dense_clone(m):
    """autograd's retain_grad hook: ``grad.clone(contiguous_format)``, so the expanded
    gradient of a sum lands dense, with CloneBackward0 as its grad_fn."""
    leaf = m.tensor(np.arange(3.0), requires_grad=True)
    inner = leaf.clone()
    (inner.sum() ** 2).backward(inputs=(inner,), create_graph=True)
    return inner.grad, list(inner.grad.stride()), type(inner.grad.grad_fn).__name__


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch(name):
    assert_program_matches_torch(PROGRAMS[name])


@pytest.mark.parametrize("name,kwargs", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                         ("RMSprop", {"centered": True, "momentum": 0.5})])
def test_differentiable_step_passes_gradcheck(name, kwargs):
    """The recorded step's gradients are the finite differences' (torch's gradcheck)."""
    state = {"Adam": {"exp_avg": _rand(4), "exp_avg_sq": _rand(4),
                      "max_exp_avg_sq": _rand(4)},
             "SGD": {"momentum_buffer": _rand(4)},
             "RMSprop": {"square_avg": 1 + _rand(4), "momentum_buffer": _rand(4),
                         "grad_avg": 1e-2 * _rand(4)}}[name]

    def stepped(p, grad, *values):
        p = p.clone()
        p.grad = grad
        optimizer = getattr(gradkit.optim, name)([p], lr=0.5, differentiable=True, **kwargs)
        optimizer.state[p].update({k: v.clone() for k, v in zip(state, values, strict=True)})
        if name != "SGD":  # a fresh step count: the step moves it in place
            optimizer.state[p]["step"] = gradkit.tensor(3.0)
        optimizer.step()
        return (p, *(optimizer.state[p][k] for k in state))

    inputs = [gradkit.tensor(v, requires_grad=True)
              for v in (_rand(4), _rand(4), *state.values())]
    assert gradkit.autograd.gradcheck(stepped, inputs)
