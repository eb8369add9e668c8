"""torch's optimizer tests (test/test_optim.py, test/optim/test_optim.py, test/optim/*.py) as
programs run under gradkit and torch 2.13: every program's outcome (values, dtypes, shapes,
types, error type and message) must be the same. Each program takes the library module ``m``;
schedulers and swa_utils: test_optim_torch_expectations_schedulers.py."""
import copy
import importlib
import io

import numpy as np
import pytest

from torch_expectations.optim_programs import OPTIMIZERS, assert_program_matches_torch, param

pytest.importorskip("torch")

PROGRAMS = {}


def program(function):
    """Register ``function`` under its name."""
    PROGRAMS[function.__name__] = function
    return function


# --- optimizers: tensor hyperparameters (test_optim.py's tensor-lr and tensor-betas cases)

def _step_with_tensor_lr(m, name, lr, **options):
    weights = param(m, 1.0, 2.0)
    optimizer = getattr(m.optim, name)([weights], lr=lr, **options)
    for _ in range(3):
        weights.grad = weights.detach() * 2
        optimizer.step()
    return weights, optimizer.state_dict()["param_groups"][0]["lr"]


for _name in [*OPTIMIZERS, "Adafactor"]:
    PROGRAMS[f"tensor_lr_steps_{_name}"] = (
        lambda m, name=_name: _step_with_tensor_lr(m, name, m.tensor(0.01)))
    PROGRAMS[f"tensor_lr_of_two_elements_{_name}"] = (
        lambda m, name=_name: _step_with_tensor_lr(m, name, m.tensor([0.01, 0.02])))
    PROGRAMS[f"tensor_lr_with_foreach_{_name}"] = (
        lambda m, name=_name: _step_with_tensor_lr(m, name, m.tensor(0.01), foreach=True))

BETAS = {
    "tensors": lambda m: (m.tensor(0.9), m.tensor(0.99)),
    "one_element_tensors": lambda m: (m.tensor([0.9]), m.tensor([[0.99]])),
    "tensor_and_float": lambda m: (m.tensor(0.9), 0.99),
    "int_and_float": lambda m: (0, 0.99),
    "two_element_tensor": lambda m: (m.tensor([0.9, 0.8]), m.tensor(0.99)),
}
for _name in ["Adam", "AdamW"]:
    for _kind, _betas in BETAS.items():
        for _foreach in (False, True):
            def _betas_program(m, name=_name, betas=_betas, foreach=_foreach):
                weights = param(m, 1.0, 2.0)
                optimizer = getattr(m.optim, name)([weights], betas=betas(m), foreach=foreach)
                weights.grad = m.ones_like(weights)
                optimizer.step()
                return weights, list(optimizer.defaults["betas"])
            PROGRAMS[f"betas_{_kind}_{_name}_foreach_{_foreach}"] = _betas_program


# --- optimizers: parameter lists and groups (test_optim.py's test_param_groups_*,
# add_param_group errors)

@program
def add_param_group_given_a_list(m):
    optimizer = m.optim.SGD([param(m, 1.0)], lr=0.1)
    optimizer.add_param_group([param(m, 1.0)])


@program
def params_given_one_tensor(m):
    m.optim.SGD(param(m, 1.0), lr=0.1)


@program
def add_param_group_overlapping(m):
    weights = param(m, 1.0)
    optimizer = m.optim.SGD([weights], lr=0.1)
    optimizer.add_param_group({"params": weights})


@program
def add_param_group_given_a_set(m):
    optimizer = m.optim.SGD([param(m, 1.0)], lr=0.1)
    optimizer.add_param_group({"params": {param(m, 1.0)}})


@program
def add_param_group_with_a_non_leaf(m):
    optimizer = m.optim.SGD([param(m, 1.0)], lr=0.1)
    optimizer.add_param_group({"params": [param(m, 1.0) * 2]})


@program
def group_without_lr_uses_the_default(m):
    weights = param(m, 1.0)
    optimizer = m.optim.SGD([{"params": [weights]}])
    weights.grad = m.ones_like(weights)
    optimizer.step()
    return weights, optimizer.defaults["lr"]


@program
def empty_parameter_list(m):
    m.optim.SGD([], lr=0.1)


@program
def zero_grad_to_none_and_to_zeros(m):
    weights = param(m, 1.0)
    optimizer = m.optim.SGD([weights], lr=0.1)
    weights.grad = m.ones_like(weights)
    optimizer.zero_grad()
    cleared = weights.grad
    weights.grad = m.ones_like(weights)
    optimizer.zero_grad(set_to_none=False)
    return cleared, weights.grad


@program
def step_with_closure_returns_its_loss(m):
    weights = param(m, 1.0, 2.0)
    optimizer = m.optim.SGD([weights], lr=0.1)

    def closure():
        optimizer.zero_grad()
        loss = (weights ** 2).sum()
        loss.backward()
        return loss
    return optimizer.step(closure), weights


@program
def maximize_every_optimizer(m):
    results = []
    for name in OPTIMIZERS:
        weights = param(m, 1.0, 2.0)
        optimizer = getattr(m.optim, name)([weights], maximize=True,
                                           **({"lr": 0.1} if name == "SGD" else {}))
        for _ in range(3):
            optimizer.zero_grad()
            (weights ** 2).sum().backward()
            optimizer.step()
        results.append(weights)
    return results


@program
def complex_parameters_every_optimizer(m):
    results = []
    for name in OPTIMIZERS:
        weights = m.nn.Parameter(m.tensor(np.array([1 + 2j, -0.5 + 1j])))
        optimizer = getattr(m.optim, name)([weights], **({"lr": 0.1} if name == "SGD" else {}))
        for _ in range(3):
            optimizer.zero_grad()
            (weights * weights.conj()).real.sum().backward()
            optimizer.step()
        results.append(weights)
    return results


@program
def amsgrad_with_weight_decay(m):
    results = []
    for name in ["Adam", "AdamW"]:
        weights = param(m, 1.0, 2.0)
        optimizer = getattr(m.optim, name)([weights], amsgrad=True, weight_decay=0.1)
        for power in (2, 3, 4):
            optimizer.zero_grad()
            (weights ** power).sum().backward()
            optimizer.step()
        results.append((weights, sorted(optimizer.state[weights])))
    return results


@program
def nadam_and_radam_decoupled_weight_decay(m):
    results = []
    for name, options in [("NAdam", {"momentum_decay": 0.01}), ("RAdam", {})]:
        weights = param(m, 1.0, 2.0)
        optimizer = getattr(m.optim, name)([weights], decoupled_weight_decay=True,
                                           weight_decay=0.1, **options)
        for _ in range(8):
            optimizer.zero_grad()
            (weights ** 2).sum().backward()
            optimizer.step()
        results.append((weights, sorted(optimizer.state[weights])))
    return results


for _flag in ["foreach", "fused"]:
    for _name in [*OPTIMIZERS, "Adafactor"]:
        def _flag_program(m, name=_name, flag=_flag):
            weights = param(m, 1.0, 2.0)
            optimizer = getattr(m.optim, name)([weights], **{flag: True})
            weights.grad = m.ones_like(weights)
            optimizer.step()
            return weights, optimizer.defaults.get(flag)
        PROGRAMS[f"flag_{_flag}_{_name}"] = _flag_program


@program
def nesterov_needs_momentum(m):
    m.optim.SGD([param(m, 1.0)], lr=0.1, nesterov=True)


@program
def lbfgs_takes_one_group(m):
    m.optim.LBFGS([{"params": [param(m, 1.0)]}, {"params": [param(m, 1.0)]}])


@program
def optimizer_reprs(m):
    return (repr(m.optim.SGD([param(m, 1.0)], lr=0.1, momentum=0.9)),
            repr(m.optim.Adam([param(m, 1.0)], lr=m.tensor(0.01))))


# --- optimizers: state_dict format and load_state_dict (test_optim.py's test_state_dict_*,
# test_load_nontensor_step, test_state_dict_with_cuda_params' dtype casts)

@program
def state_dict_layout(m):
    first, second = param(m, 1.0), param(m, 2.0)
    optimizer = m.optim.Adam([{"params": [first]}, {"params": [second], "lr": 0.5}])
    first.grad = m.ones_like(first)
    optimizer.step()
    saved = optimizer.state_dict()
    return (saved["param_groups"], sorted(saved["state"]), sorted(saved["state"][0]),
            saved["state"][0]["step"])


@program
def state_dict_of_stateless_sgd(m):
    weights = param(m, 1.0)
    optimizer = m.optim.SGD([weights], lr=0.1)
    weights.grad = m.ones_like(weights)
    optimizer.step()
    return dict(optimizer.state), optimizer.state_dict()["state"]


@program
def state_dict_keeps_aliases_within_one_state(m):
    weights = param(m, 1.0)
    optimizer = m.optim.SGD([weights], lr=0.1, momentum=0.9)
    weights.grad = m.ones_like(weights)
    optimizer.step()
    optimizer.state[weights]["alias"] = optimizer.state[weights]["momentum_buffer"]
    exported = optimizer.state_dict()["state"][0]
    return exported["momentum_buffer"] is exported["alias"]


@program
def load_state_dict_with_other_group_count(m):
    optimizer = m.optim.SGD([param(m, 1.0)], lr=0.1)
    other = m.optim.SGD([{"params": [param(m, 1.0)]}, {"params": [param(m, 1.0)]}], lr=0.1)
    optimizer.load_state_dict(other.state_dict())


@program
def load_state_dict_with_other_group_sizes(m):
    optimizer = m.optim.SGD([param(m, 1.0)], lr=0.1)
    optimizer.load_state_dict(m.optim.SGD([param(m, 1.0), param(m, 1.0)], lr=0.1).state_dict())


@program
def load_state_dict_casts_to_the_parameter_dtype(m):
    weights = param(m, 1.0, 2.0)
    optimizer = m.optim.Adam([weights])
    weights.grad = m.ones_like(weights)
    optimizer.step()
    single = m.nn.Parameter(m.tensor([1.0, 2.0], dtype=m.float32))
    loaded = m.optim.Adam([single])
    loaded.load_state_dict(optimizer.state_dict())
    state = loaded.state[single]
    return state["exp_avg"].dtype, state["step"].dtype, state["step"]


# --- optimizers: hooks (test_optim.py's test_*_hook*)

@program
def state_dict_and_load_hooks(m):
    optimizer, log = m.optim.SGD([param(m, 1.0)], lr=0.1), []
    optimizer.register_state_dict_pre_hook(lambda opt: log.append("pre"))
    optimizer.register_state_dict_post_hook(
        lambda opt, saved: (log.append("post"), saved.__setitem__("extra", 1))[1])
    optimizer.register_load_state_dict_pre_hook(lambda opt, saved: log.append("load pre"))
    optimizer.register_load_state_dict_post_hook(lambda opt: log.append("load post"))
    saved = optimizer.state_dict()
    optimizer.load_state_dict(saved)
    return log, sorted(saved)


@program
def hooks_prepended(m):
    optimizer, log = m.optim.SGD([param(m, 1.0)], lr=0.1), []
    optimizer.register_load_state_dict_pre_hook(lambda *a: log.append(1))
    optimizer.register_load_state_dict_pre_hook(lambda *a: log.append(2), prepend=True)
    optimizer.register_state_dict_post_hook(lambda *a: log.append(3))
    optimizer.register_state_dict_post_hook(lambda *a: log.append(4), prepend=True)
    optimizer.load_state_dict(optimizer.state_dict())
    return log


@program
def step_hooks_and_removal(m):
    weights = param(m, 1.0)
    optimizer, log = m.optim.SGD([weights], lr=0.1), []
    optimizer.register_step_pre_hook(lambda *a: log.append(1))
    optimizer.register_step_pre_hook(lambda *a: log.append(2))
    handle = optimizer.register_step_post_hook(lambda *a: log.append(3))
    weights.grad = m.ones_like(weights)
    optimizer.step()
    handle.remove()
    optimizer.step()
    return log


@program
def global_step_hooks(m):
    weights = param(m, 1.0)
    optimizer, log = m.optim.SGD([weights], lr=0.1), []
    module = importlib.import_module(m.__name__ + ".optim.optimizer")
    pre = module.register_optimizer_step_pre_hook(lambda *a: log.append("global pre"))
    post = module.register_optimizer_step_post_hook(lambda *a: log.append("global post"))
    optimizer.register_step_pre_hook(lambda *a: log.append("pre"))
    weights.grad = m.ones_like(weights)
    optimizer.step()
    pre.remove()
    post.remove()
    optimizer.step()
    return log


# --- optimizers: steps without or with zero gradients, numbers as loaded state, mixed dtypes,
# deepcopy (test_optim.py's test_step_is_noop_*, test_load_nontensor_step,
# test_mixed_device_dtype, test_deepcopy_copies_all_public_attrs)

def _optimizer(m, name, params):
    return getattr(m.optim, name)(params, **({"lr": 0.1} if name == "SGD" else {}))


def _state(optimizer, weights):
    return dict(optimizer.state[weights])


def _numbers_for_scalar_state(saved):
    """The state dict of an older torch: step (ASGD's eta and mu, NAdam's mu_product) numbers."""
    for values in saved["state"].values():
        for key in ("step", "eta", "mu", "mu_product"):
            if key in values:
                values[key] = float(values[key])
    return saved


for _name in [*OPTIMIZERS, "Adafactor"]:
    def _without_grads(m, name=_name):
        weights = param(m, 1.0, 2.0)
        optimizer = _optimizer(m, name, [weights])
        optimizer.step()
        return weights, len(optimizer.state)

    def _zero_grads(m, name=_name):
        weights = param(m, 1.0, 2.0)
        optimizer = _optimizer(m, name, [weights])
        weights.grad = m.zeros_like(weights)
        optimizer.step()
        return weights, _state(optimizer, weights)

    def _numbers_as_state(m, name=_name):
        weights = param(m, 1.0, 2.0)
        optimizer = _optimizer(m, name, [weights])
        weights.grad = m.ones_like(weights)
        optimizer.step()
        loaded = _optimizer(m, name, [weights])
        loaded.load_state_dict(_numbers_for_scalar_state(optimizer.state_dict()))
        weights.grad = m.ones_like(weights)
        loaded.step()
        return weights, _state(loaded, weights)

    def _mixed_dtypes(m, name=_name):
        double, single = param(m, 1.0, 2.0), m.nn.Parameter(m.tensor([1.0, 3.0]))
        optimizer = _optimizer(m, name, [double, single])
        for _ in range(2):
            double.grad, single.grad = double.detach() * 1.5, single.detach() * 0.5
            optimizer.step()
        return double, single, _state(optimizer, double), _state(optimizer, single)

    def _deepcopy(m, name=_name):
        optimizer = _optimizer(m, name, [param(m, 1.0)])
        copied = copy.deepcopy(optimizer)
        public = [sorted(k for k in o.__dict__ if not k.startswith("_"))
                  for o in (optimizer, copied)]
        return public, copied.param_groups[0]["params"][0] is optimizer.param_groups[0]["params"][0]

    for _kind, _function in [("step_without_grads", _without_grads),
                             ("step_with_zero_grads", _zero_grads),
                             ("numbers_as_loaded_state", _numbers_as_state),
                             ("mixed_dtypes", _mixed_dtypes), ("deepcopy", _deepcopy)]:
        PROGRAMS[f"{_kind}_{_name}"] = _function


@program
def state_dict_saved_and_loaded_weights_only(m):
    weights = param(m, 1.0, 2.0)
    optimizer = m.optim.Adam([weights])
    weights.grad = m.ones_like(weights)
    optimizer.step()
    buffer = io.BytesIO()
    m.save(optimizer.state_dict(), buffer)
    buffer.seek(0)
    saved = m.load(buffer, weights_only=True)
    return saved["state"][0], saved["param_groups"]


@program
def named_parameters_in_the_state_dict(m):
    optimizer = m.optim.SGD(m.nn.Linear(2, 1).named_parameters(), lr=0.1)
    return [sorted(group) for group in optimizer.state_dict()["param_groups"]], \
        optimizer.state_dict()["param_groups"][0]["param_names"]


@program
def lr_none_is_refused(m):
    m.optim.SGD([param(m, 1.0)], lr=None)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch(name):
    assert_program_matches_torch(PROGRAMS[name])
