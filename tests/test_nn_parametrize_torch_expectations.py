"""torch's test/nn/test_parametrization.py, run on gradkit and on torch 2.13.

Each test is one program of the library ``lib`` with torch's own asserts; it runs on gradkit
and, when torch is installed, on torch, so both libraries are held to the same expectations.
Values that do not depend on random draws are also compared between the two (``like_torch``).
Left out: the swap_tensors path (``@swap``), DataParallel, TwoTensor wrapper subclasses,
torch.ao.nn.qat modules (a plain Linear takes their place) and the meta device.
"""
import copy
import pickle

import numpy as np
import pytest

import gradkit
from parametrize_modules import parametrization_modules as _modules
from torch_expectations.twin import both_libraries as both, like_torch



def _close(a, b, atol=1e-5) -> bool:
    return np.allclose(a.detach().numpy(), b.detach().numpy(), atol=atol)


def _sgd_step_changes_both(lib, model) -> None:
    sgd = lib.optim.SGD(model.parameters(), lr=0.01)
    weight, bias = model.weight.clone(), model.bias.clone()
    sgd.zero_grad()
    (model.weight.T @ model.bias).sum().backward()
    sgd.step()
    assert not lib.equal(model.weight, weight)
    assert not lib.equal(model.bias, bias)


@both
def test_register_and_remove_parametrization(lib):
    P, m = lib.nn.utils.parametrize, _modules(lib)  # noqa: N806 - a module
    model = lib.nn.Linear(8, 8)
    weight_id, bias_id = id(model.weight), id(model.bias)
    initial = copy.deepcopy(model)
    with pytest.raises(ValueError, match="may not change the shape of the tensor"):
        P.register_parametrization(model, "weight", m["Resize"]())
    assert not P.is_parametrized(model)

    def check_removed():
        P.remove_parametrizations(model, "weight", leave_parametrized=False)
        assert not hasattr(model, "parametrizations")
        assert lib.equal(model.weight, initial.weight)
        assert id(model.weight) == weight_id
        assert model.__class__ is lib.nn.Linear

    for chain in (["Resize"], ["Resize", "NoResize"]):  # unsafe, then a safe one on top
        P.register_parametrization(model, "weight", m[chain[0]](), unsafe=True)
        for name in chain[1:]:
            P.register_parametrization(model, "weight", m[name](), unsafe=False)
        assert P.is_parametrized(model) and P.is_parametrized(model, "weight")
        assert not P.is_parametrized(model, "bias")
        assert "weight" not in model._parameters
        assert model.weight.shape[0] == 1
        check_removed()
    for unsafe in (True, False):
        P.register_parametrization(model, "weight", m["Skew"](), unsafe=unsafe)
        assert lib.equal(model.weight, -model.weight.T)
        check_removed()
    P.register_parametrization(model, "weight", m["Skew"]())
    P.register_parametrization(model, "weight", m["Cayley"]())
    x = model.weight
    assert _close(x.T @ x, lib.eye(8))
    assert "weight" in model.parametrizations
    check_removed()

    P.register_parametrization(model, "weight", m["Skew"]())
    P.register_parametrization(model, "weight", m["Cayley"]())
    P.register_parametrization(model, "bias", m["FirstZero"]())
    P.register_parametrization(model, "bias", m["LastZero"]())
    assert model.bias[0].item() == 0.0 and model.bias[-1].item() == 0.0
    assert len(list(model.parameters())) == 2
    _sgd_step_changes_both(lib, model)
    P.remove_parametrizations(model, "weight", leave_parametrized=False)
    assert P.is_parametrized(model) and not P.is_parametrized(model, "weight")
    assert model.bias[0].item() == 0.0 and model.bias[-1].item() == 0.0
    assert not lib.equal(model.weight, initial.weight)  # the SGD step moved the original
    assert id(model.weight) == weight_id
    _sgd_step_changes_both(lib, model)
    P.remove_parametrizations(model, "bias", leave_parametrized=False)
    assert not P.is_parametrized(model) and model.__class__ is lib.nn.Linear
    assert id(model.bias) == bias_id and model.bias[0].item() != 0.0
    _sgd_step_changes_both(lib, model)
    for _ in range(2):  # leave_parametrized=True keeps the same tensor objects
        P.register_parametrization(model, "weight", m["Skew"]())
        P.register_parametrization(model, "weight", m["Cayley"]())
        P.remove_parametrizations(model, "weight", leave_parametrized=True)
        assert id(model.weight) == weight_id and id(model.bias) == bias_id
        assert _close(model.weight.T @ model.weight, lib.eye(8))
        _sgd_step_changes_both(lib, model)


@both
def test_register_and_remove_nested_parametrization(lib):
    P, m = lib.nn.utils.parametrize, _modules(lib)  # noqa: N806 - a module
    model = lib.nn.Linear(8, 8)
    P.register_parametrization(model, "weight", m["Skew"]())
    inner = model.parametrizations.weight
    assert not hasattr(inner, "parametrizations") and not P.is_parametrized(inner)
    P.register_parametrization(inner, "original", m["Skew"]())
    assert P.is_parametrized(inner, "original") and "original" not in inner._parameters
    assert lib.equal(inner.original, -inner.original.T)
    assert lib.equal(model.weight, -model.weight.T)
    P.remove_parametrizations(inner, "original", leave_parametrized=False)
    assert not hasattr(inner, "parametrizations")
    assert inner.__class__ is P.ParametrizationList
    P.remove_parametrizations(model, "weight", leave_parametrized=False)
    assert model.__class__ is lib.nn.Linear


@both
def test_register_and_remove_buffer_parametrization(lib):
    P, m = lib.nn.utils.parametrize, _modules(lib)  # noqa: N806 - a module
    model = lib.nn.Linear(8, 8)
    delattr(model, "bias")
    model.bias = lib.nn.Buffer(lib.ones(8))
    P.register_parametrization(model, "bias", m["FirstZero"]())
    P.register_parametrization(model, "bias", m["LastZero"]())
    assert P.is_parametrized(model, "bias")
    assert model.bias.tolist() == [0.0] + [1.0] * 6 + [0.0]
    assert len(list(model.parameters())) == 1
    assert list(model.state_dict()) == ["weight", "parametrizations.bias.original"]
    P.remove_parametrizations(model, "bias", leave_parametrized=True)
    assert not P.is_parametrized(model)
    assert model.bias.tolist() == [0.0] + [1.0] * 6 + [0.0]
    assert list(model.buffers())[0] is model.bias
    assert len(list(model.parameters())) == 1


@both
def test_serialization_parametrization(lib, tmp_path):
    """A stateful parametrization travels through state_dict; saving the module refuses."""
    nn = lib.nn

    class Orthogonal(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.id = nn.Buffer(lib.eye(n))
            self.B = nn.Buffer(lib.empty(n, n))
            nn.init.orthogonal_(self.B)

        def forward(self, x):
            a = x.triu(1)
            a = a - a.T
            return self.B @ lib.linalg.solve(self.id + a, self.id - a)

    def get_model():
        model = nn.Sequential(nn.Linear(5, 5), nn.ReLU(), nn.Linear(5, 1))
        nn.utils.parametrize.register_parametrization(model[0], "weight", Orthogonal(5))
        return model

    model, new_model = get_model(), get_model()
    assert sorted(model.state_dict()) == [
        "0.bias", "0.parametrizations.weight.0.B", "0.parametrizations.weight.0.id",
        "0.parametrizations.weight.original", "2.bias", "2.weight"]
    lib.save(model.state_dict(), tmp_path / "state.pt")
    new_model.load_state_dict(lib.load(tmp_path / "state.pt"))
    assert nn.utils.parametrize.is_parametrized(new_model[0], "weight")
    assert lib.equal(model[0].weight, new_model[0].weight)
    assert lib.equal(model[0].parametrizations.weight[0].B,
                     new_model[0].parametrizations.weight[0].B)
    with pytest.raises(RuntimeError, match="state_dict"):  # what torch.save meets
        pickle.dumps(model)
    if lib is gradkit:  # gradkit.save pickles nothing: it refuses every module
        with pytest.raises(TypeError, match="cannot store obj"):
            lib.save(model, tmp_path / "model.pt")


@both
def test_initialization_parametrization(lib):
    """Assigning to a parametrized tensor goes through each right_inverse, in reverse."""
    nn = lib.nn

    class Skew(nn.Module):
        def forward(self, x):
            a = x.triu(1)
            return a - a.T

        def right_inverse(self, x):
            if not lib.allclose(x, -x.T, atol=1e-6):
                raise ValueError("The matrix is not skew-symmetric.")
            return x.triu(1)

    class Orthogonal(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.B = nn.Buffer(lib.eye(n))

        def forward(self, x):
            eye = lib.eye(x.size(0))
            return self.B @ lib.linalg.solve(eye + x, eye - x)

        def right_inverse(self, x):
            if not lib.allclose(x.T @ x, lib.eye(x.size(0)), atol=1e-4):
                raise ValueError("The input is not orthogonal.")
            self.B = x  # cayley(0) is the identity
            return lib.zeros_like(x)

    n = 5
    model, skew = nn.Linear(n, n), Skew()
    with lib.no_grad():
        model.weight.set_(skew(model.weight))
    nn.utils.parametrize.register_parametrization(model, "weight", skew)
    x = lib.rand(n, n)
    with pytest.raises(ValueError, match="not skew-symmetric"):
        model.weight = x
    x = x - x.T
    model.weight = x
    assert lib.equal(model.parametrizations.weight.original, x.triu(1))
    assert lib.equal(model.weight, x)
    nn.utils.parametrize.register_parametrization(model, "weight", Orthogonal(n))
    x = lib.rand(n, n)
    with pytest.raises(ValueError, match="not orthogonal"):
        model.weight = x
    nn.init.orthogonal_(x)
    model.weight = x
    assert _close(model.weight, x)
    assert lib.equal(model.parametrizations.weight.original, lib.zeros_like(x))


@both
def test_multiple_inputs_parametrization(lib):
    P, m = lib.nn.utils.parametrize, _modules(lib)  # noqa: N806 - a module
    model = lib.nn.Linear(3, 3)
    P.register_parametrization(model, "weight", m["RankOne"]())
    weights = model.parametrizations.weight
    assert "original0" in weights._parameters and "original1" in weights._parameters
    assert "weight" not in model._parameters
    assert lib.linalg.matrix_rank(model.weight).item() == 1
    assert [k for k in model.state_dict()] == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    with pytest.raises(ValueError, match="Cannot leave unparametrized "
                                         r"\(`leave_parametrized=False`\) a tensor that is "
                                         "parametrized in terms of a sequence of tensors."):
        P.remove_parametrizations(model, "weight", leave_parametrized=False)
    P.remove_parametrizations(model, "weight", leave_parametrized=True)
    assert model.__class__ is lib.nn.Linear and "weight" in model._parameters
    assert lib.linalg.matrix_rank(model.weight).item() == 1

    initial = model.weight.clone()
    P.register_parametrization(model, "weight", m["RankOne"]())
    assert _close(initial, model.weight)  # a rank-1 matrix projects onto itself
    P.register_parametrization(model, "weight", m["Double"]())
    assert _close(2.0 * initial, model.weight)
    assert len(list(model.parameters())) == 3
    sgd = lib.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        sgd.zero_grad()
        (model.weight.T @ model.bias).sum().backward()
        sgd.step()
    with pytest.raises(ValueError, match="leave_parametrized=False"):
        P.remove_parametrizations(model, "weight", leave_parametrized=False)
    P.remove_parametrizations(model, "weight", leave_parametrized=True)
    assert lib.linalg.matrix_rank(model.weight).item() == 1
    assert isinstance(model.weight, lib.nn.Parameter)
    assert len(list(model.parameters())) == 2


def test_multiple_inputs_values_and_gradients_like_torch():
    """The same rank-one and doubling program gives torch's numbers (float64)."""
    weight = np.random.default_rng(3).standard_normal((3, 3))

    def program(lib):
        P, m = lib.nn.utils.parametrize, _modules(lib)  # noqa: N806 - a module
        model = lib.nn.Linear(3, 3).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor(weight))
            model.bias.fill_(0.5)
        P.register_parametrization(model, "weight", m["RankOne"]())
        P.register_parametrization(model, "weight", m["Double"]())
        (model.weight.T @ model.bias).sum().backward()
        parts = model.parametrizations.weight
        return [model.weight, parts.original0.grad, parts.original1.grad]
    like_torch(program, rtol=1e-6, atol=1e-9)


@both
def test_caching_parametrization(lib):
    P, m = lib.nn.utils.parametrize, _modules(lib)  # noqa: N806 - a module
    model = lib.nn.Linear(5, 5)
    P.register_parametrization(model, "weight", m["Skew"]())
    P.register_parametrization(model, "weight", m["Cayley"]())
    to_model = lib.nn.Linear(5, 5)
    P.transfer_parametrizations_and_params(model, to_model)
    with P.cached():
        x, y = model.weight, model.weight
        assert x is y
        a, b = to_model.weight, to_model.weight
        assert a is b and a is not x
    assert model.weight is not model.weight


@both
def test_parametrization_same_training_mode(lib):
    P, identity = lib.nn.utils.parametrize, _modules(lib)["Identity"]  # noqa: N806
    module = lib.nn.Linear(4, 4)
    module.eval()
    P.register_parametrization(module, "weight", identity())
    assert not module.parametrizations.weight[0].training
    module.train()
    P.register_parametrization(module, "weight", identity().eval())
    assert module.parametrizations.weight[0].training
    assert module.parametrizations.weight[1].training


@both
def test_type_before_parametrizations(lib):
    P, identity = lib.nn.utils.parametrize, _modules(lib)["Identity"]  # noqa: N806
    model = lib.nn.Linear(5, 5)
    assert P.type_before_parametrizations(model) is lib.nn.Linear
    P.register_parametrization(model, "weight", identity())
    assert P.type_before_parametrizations(model) is lib.nn.Linear
    assert type(model).__name__ == "ParametrizedLinear"


@both
def test_deepcopy_after_parametrization(lib):
    nn = lib.nn

    class AddOne(nn.Module):
        def forward(self, x):
            return x + 1.0

    class ModelWithoutDeepcopy(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.tensor([1.0, 1.0, 1.0, 1.0]), requires_grad=True)
            self.bias = nn.Parameter(lib.tensor([0.0, 0.0, 0.0, 0.0]), requires_grad=True)
            self.attr = [1.0, 2.0, 3.0, 4.0]

    class ActualModel(ModelWithoutDeepcopy):
        def __deepcopy__(self, memo):
            result = self.__new__(self.__class__)
            memo[id(self)] = result
            result.__dict__ = copy.deepcopy(self.__dict__, memo)
            return result

    def original(model, name):
        if nn.utils.parametrize.is_parametrized(model, name):
            return getattr(model.parametrizations, name).original
        return getattr(model, name)

    def check(m1, m2):
        assert m1.__dict__.keys() == m2.__dict__.keys() and m1 is not m2
        for name in ("weight", "bias"):
            assert lib.equal(original(m1, name), original(m2, name))
            assert original(m1, name) is not original(m2, name)
        assert m1.attr == m2.attr and m1.attr is not m2.attr

    for model in (ModelWithoutDeepcopy(), ActualModel()):
        for name in ("weight", "bias", "weight"):
            nn.utils.parametrize.register_parametrization(model, name, AddOne())
            check(model, copy.deepcopy(model))


@both
def test_transfer_parametrizations_and_params(lib):
    P, m, nn = lib.nn.utils.parametrize, _modules(lib), lib.nn  # noqa: N806 - a module

    class AddOne(nn.Module):
        def forward(self, x):
            return x + 1.0

    class MinusOne(nn.Module):
        def forward(self, x):
            return x - 1.0

    model = nn.Linear(5, 5)
    for parametrization in (AddOne(), m["Double"](), MinusOne()):
        P.register_parametrization(model, "weight", parametrization)
    hold_weight = model.weight
    to_model = nn.Linear(5, 5)
    P.transfer_parametrizations_and_params(model, to_model)
    assert P.is_parametrized(to_model, "weight")
    assert lib.equal(model.weight, to_model.weight)
    assert lib.equal(model.parametrizations.weight.original,
                     to_model.parametrizations.weight.original)
    assert lib.equal(hold_weight, model.weight)
    P.remove_parametrizations(to_model, "weight")
    assert not P.is_parametrized(to_model, "weight") and P.is_parametrized(model, "weight")
    model.test_param = nn.Parameter(lib.randn(5, 5))
    assert not hasattr(to_model, "test_param")
    P.register_parametrization(model, "test_param", m["Double"]())
    hold = model.test_param
    P.transfer_parametrizations_and_params(model, to_model, "test_param")
    assert lib.equal(model.test_param, to_model.test_param)
    assert lib.equal(model.parametrizations.test_param.original,
                     to_model.parametrizations.test_param.original)
    assert lib.equal(hold, model.test_param)


@both
def test_transfer_parametrizations_single_param_and_many_to_one(lib):
    P, m, nn = lib.nn.utils.parametrize, _modules(lib), lib.nn  # noqa: N806 - a module
    model = nn.Linear(5, 5)
    for name in ("weight", "bias"):
        P.register_parametrization(model, name, m["Double"]())
    to_model = nn.Linear(5, 5)
    P.transfer_parametrizations_and_params(model, to_model, "weight")
    assert lib.equal(model.weight, to_model.weight)
    assert "bias" not in to_model.parametrizations

    model = nn.Linear(3, 3)
    P.register_parametrization(model, "weight", m["RankOne"]())
    P.register_parametrization(model, "weight", m["Double"]())
    hold_weight = model.weight
    to_model = nn.Linear(3, 3)
    P.transfer_parametrizations_and_params(model, to_model)
    assert lib.equal(model.weight, to_model.weight)
    for name in ("original0", "original1"):
        assert lib.equal(getattr(model.parametrizations.weight, name),
                         getattr(to_model.parametrizations.weight, name))
    assert lib.equal(hold_weight, model.weight)
    model.test_param = nn.Parameter(lib.randn(3, 3))
    P.register_parametrization(model, "test_param", m["RankOne"]())
    P.transfer_parametrizations_and_params(model, to_model, "test_param")
    assert lib.equal(model.test_param, to_model.test_param)


@both
def test_register_parametrization_no_grad(lib):
    class SplitAndCat(lib.nn.Module):
        def right_inverse(self, x):
            return lib.split(x, x.shape[1] // 2)

        def forward(self, x0, x1):
            return lib.cat([x0, x1])

    model = lib.nn.Linear(8, 8)
    model.weight.requires_grad = False
    lib.nn.utils.parametrize.register_parametrization(model, "weight", SplitAndCat())
    assert not model.weight.requires_grad
    assert not model.parametrizations.weight.original0.requires_grad
    assert not model.parametrizations.weight.original1.requires_grad


@both
def test_pickle_and_deepcopy_of_weight_norm(lib):
    m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 5))
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only "
                                           r"supported through state_dict\(\)"):
        pickle.dumps(m)
    m2 = copy.deepcopy(m)
    x = lib.randn(3, 4)
    assert lib.equal(m(x), m2(x))


@both
def test_plain_attributes_before_module_init(lib):
    """torch refuses only parameters, modules and buffers before Module.__init__ (the
    deepcopy above assigns ``__dict__`` to a fresh ``__new__`` instance)."""
    class Early(lib.nn.Module):
        def __init__(self, value):
            self.plain = 1
            self.tensor = lib.ones(1)
            self.value = value

    assert Early(None).plain == 1
    for value, what in ((lib.nn.Parameter(lib.ones(1)), "parameters"),
                        (lib.nn.ReLU(), "module"), (lib.nn.Buffer(lib.ones(1)), "buffer")):
        with pytest.raises(AttributeError, match=f"^cannot assign {what} before "
                                                 r"Module.__init__\(\) call$"):
            Early(value)
