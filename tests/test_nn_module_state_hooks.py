"""nn.Module's get_parameter/get_buffer, extra state, state-dict hooks, half/type/to_empty,
each run under gradkit and torch and compared."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _outcome(program, lib):
    try:
        return program(lib)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error)


def _same(program):
    got, expected = _outcome(program, gradkit), _outcome(program, torch)
    assert got == expected
    return got


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))


@pytest.mark.parametrize("call", [
    lambda m: tuple(m.get_parameter("0.weight").shape),
    lambda m: m.get_parameter("0.nope"), lambda m: m.get_parameter("1.running_mean"),
    lambda m: m.get_parameter("2.weight"), lambda m: m.get_parameter(""),
    lambda m: tuple(m.get_buffer("1.running_mean").shape), lambda m: m.get_buffer("0.weight"),
    lambda m: m.get_buffer("1.nope"), lambda m: m.get_extra_state(),
    lambda m: m.set_extra_state(1)])
def test_get_parameter_buffer_and_extra_state_defaults(call):
    _same(lambda lib: call(_model(lib)))


def test_get_parameter_returns_the_parameter_itself():
    model = _model(gradkit)
    assert model.get_parameter("0.bias") is model[0].bias
    assert model.get_buffer("1.running_var") is model[1].running_var


def _with_extra_state(lib):
    class WithState(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(1))
            self.state = {"a": 1}

        def get_extra_state(self):
            return self.state

        def set_extra_state(self, state):
            self.state = state
    return lib.nn.Sequential(WithState())


@pytest.mark.parametrize("case", ["keys", "missing", "not strict", "loaded", "unexpected"])
def test_extra_state_is_saved_and_loaded(case):
    def program(lib):
        model = _with_extra_state(lib)
        if case == "keys":
            return list(model.state_dict()), model.state_dict()["0._extra_state"]
        if case == "missing":
            return model.load_state_dict({"0.w": lib.ones(1)})
        if case == "not strict":
            return repr(model.load_state_dict({"0.w": lib.ones(1)}, strict=False))
        if case == "loaded":
            result = repr(model.load_state_dict({"0.w": lib.ones(1), "0._extra_state": {"b": 2}}))
            return result, model[0].state
        plain = _model(lib)
        return plain.load_state_dict({**plain.state_dict(), "1._extra_state": 5})
    _same(program)


def test_state_dict_pre_hooks_run_per_module_with_prefix_and_can_be_removed():
    def program(lib):
        model, calls = _model(lib), []
        def hook(module, prefix, keep_vars):
            calls.append((type(module).__name__, prefix, keep_vars))
        handle = model.register_state_dict_pre_hook(hook)
        model[0].register_state_dict_pre_hook(hook)
        model.state_dict(keep_vars=True)
        handle.remove()
        model.state_dict()
        model.load_state_dict(model.state_dict())  # loading runs no state_dict hook
        return calls
    _same(program)


@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_post_hook_sees_and_can_forgive_keys(strict):
    def program(lib):
        model, calls = _model(lib), []
        def forgive(module, keys):
            calls.append((type(module).__name__, list(keys.missing_keys),
                          list(keys.unexpected_keys)))
            keys.missing_keys.clear()
        model.register_load_state_dict_post_hook(forgive)
        state = model.state_dict()
        del state["0.bias"]
        state["extra"] = lib.ones(1)
        result = _outcome(lambda lib: repr(model.load_state_dict(state, strict=strict)), lib)
        return calls, result
    _same(program)


def test_load_state_dict_post_hook_must_return_none():
    def program(lib):
        model = lib.nn.Linear(2, 2)
        model.register_load_state_dict_post_hook(lambda module, keys: 1)
        return model.load_state_dict(model.state_dict())
    _same(program)


def test_half_type_and_to_empty():
    def program(lib):
        layer = lib.nn.Linear(2, 2)
        layer.register_buffer("counts", lib.ones(2, dtype=lib.int64))
        weight = layer.weight
        half = layer.half()
        dtypes = [str(layer.weight.dtype), str(layer.counts.dtype)]
        same = layer.type(lib.float64) is layer
        dtypes += [str(layer.weight.dtype), str(layer.counts.dtype), str(layer.bias.dtype)]
        empty = layer.to_empty(device="cpu")
        return (half is layer, same, empty is layer, layer.weight is weight,
                [d.split(".")[-1] for d in dtypes], tuple(layer.weight.shape),
                layer.weight.requires_grad)
    _same(program)
    with pytest.raises(TypeError):
        gradkit.nn.Linear(2, 2).to_empty("cpu")


def test_to_empty_without_recurse_leaves_children():
    model = _model(gradkit)
    with gradkit.no_grad():
        model[0].weight.fill_(3.0)
    model.to_empty(device="cpu", recurse=False)
    assert np.all(model[0].weight.detach().numpy() == 3.0)
    model.to_empty(device="cpu")
    assert model[0].weight.shape == (2, 2)
