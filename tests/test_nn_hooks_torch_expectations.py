"""torch's nn.Module hook tests (test/nn/test_module_hooks.py), rerun on gradkit.nn.

Each program runs under gradkit and under torch 2.13 (when installed): what it returns, the
error it raises (type and message) and the warnings it emits must agree. Sections follow
torch's classes: TestModuleHooks, TestModuleGlobalHooks, TestModuleHookNN (the state-dict
class is in test_nn_state_dict_hooks_torch_expectations.py).
"""
import collections
import math
import warnings
from functools import partial

import numpy as np
import pytest

import gradkit
from gradkit.nn.module_global_hooks import _global_backward_kind
from tests.torch_expectations.twin import assert_same, torch


@pytest.fixture(autouse=True)
def _fresh_global_backward_kind():
    """Whether global backward hooks are full or legacy is fixed by the first one registered
    (in torch and gradkit); each test starts with neither."""
    yield
    _global_backward_kind["full"] = None
    if torch is not None:
        torch.nn.modules.module._global_is_full_backward_hook = None


def _run(program, lib):
    """What ``program(lib)`` returns (or raises), with the warnings it emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = program(lib)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            result = ("raised", type(error).__name__, str(error).replace("torch", "gradkit"))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def same(program):
    """``program``'s outcome under gradkit, checked against torch's when torch is there."""
    got = _run(program, gradkit)
    if torch is not None:
        assert_same(got, _run(program, torch))
    return got


def ones(lib, *shape, requires_grad=False):
    return lib.ones(*shape, dtype=lib.float64, requires_grad=requires_grad)


def data(lib, *shape, seed=0, requires_grad=True):
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def toy_model(lib):
    """torch's ToyModel: two Nets of two Sequentials of two Linear(10, 10)."""
    nn = lib.nn

    def net():
        return nn.Sequential(nn.Sequential(*[nn.Linear(10, 10) for _ in range(2)]),
                             nn.Sequential(*[nn.Linear(10, 10) for _ in range(2)]))
    return nn.Sequential(net(), net()).double()


def record(fired, hook_id, *args):
    """A hook that notes its id and the lengths of its tuple arguments."""
    fired.append((hook_id, *[len(a) for a in args[1:] if isinstance(a, tuple)]))


# -- TestModuleHooks ------------------------------------------------------------------------

@pytest.mark.parametrize("kind,target", [
    ("register_forward_hook", (0, 1)), ("register_forward_pre_hook", (1, 0)),
    ("register_full_backward_hook", (0,)), ("register_full_backward_pre_hook", (0,))])
def test_hook_order_with_prepend_and_when_hooks_fire(kind, target):
    """test_forward_hooks, test_forward_pre_hooks, test_full_backward_hooks,
    test_full_backward_pre_hooks: prepend puts a hook first; forward hooks fire in the
    call, backward ones in backward, each once per call."""
    def program(lib):
        fired, model = [], toy_model(lib)
        module = model
        for i in target:
            module = module[i]
        for hook_id, prepend in [(0, False), (1, True), (2, False), (3, False), (4, True)]:
            getattr(module, kind)(partial(record, fired, hook_id), prepend=prepend)
        events = [list(fired)]
        out = model(data(lib, 10, 10, requires_grad=False))
        events.append(list(fired))
        out.sum().backward()
        events.append(list(fired))
        model(data(lib, 10, 10, requires_grad=False)).sum().backward()
        return events + [fired]
    events, _ = same(program)  # full backward hooks also warn: the input needs no grad
    assert [e[0] for e in events[-1]] == [4, 1, 0, 2, 3] * 2


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_backward_pre_hook_result_changes_the_gradient(input_requires_grad):
    """test_full_backward_pre_hooks: a pre-hook returning zeros zeroes the gradients of the
    weight and of the input (None when the input needs none)."""
    def program(lib):
        a = ones(lib, 2, requires_grad=input_requires_grad)
        model = lib.nn.Linear(2, 2).double()
        model.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 0,))
        model(a).sum().backward()
        return a.grad, model.weight.grad
    ((grad, weight_grad), _) = same(program)
    assert not weight_grad.numpy().any()
    assert (grad is None) is not input_requires_grad


Pair = collections.namedtuple("Pair", "first second")


@pytest.mark.parametrize("container", ["namedtuple", "tuple", "list"])
def test_backward_hooks_and_the_output_container(container):
    """newer torch's named_tuple cases of test_forward_hooks ... test_mixed_hooks: a
    namedtuple output keeps its type; a list output is not routed, so its backward hooks
    never run (and a warning says so)."""
    def program(lib):
        seen = []
        make = {"namedtuple": lambda a, b: Pair(a, b), "tuple": lambda a, b: (a, b),
                "list": lambda a, b: [a, b]}[container]

        class Two(lib.nn.Module):
            def forward(self, x):
                return make(x * 2, x * 3)
        m = Two()
        m.register_full_backward_hook(lambda m, gi, go: seen.append((len(gi), len(go))))
        m.register_full_backward_pre_hook(lambda m, go: seen.append(len(go)))
        m.register_forward_hook(lambda m, i, o: seen.append(type(o).__name__))
        x = ones(lib, 2, requires_grad=True)
        out = m(x)
        out[0].sum().backward()
        return type(out).__name__, seen, x.grad
    ((name, seen, _), caught) = same(program)
    assert name == {"namedtuple": "Pair"}.get(container, container)
    assert len(seen) == (1 if container == "list" else 3)
    assert len(caught) == (container == "list")


def test_mixed_hooks_run_in_order():
    """test_mixed_hooks: pre, forward, backward pre, backward, once per call each."""
    def program(lib):
        fired, model = [], toy_model(lib)
        for hook_id, kind in enumerate(["register_forward_pre_hook", "register_forward_hook",
                                        "register_full_backward_pre_hook",
                                        "register_full_backward_hook"]):
            getattr(model, kind)(partial(record, fired, hook_id))
        out = model(data(lib, 10, 10))
        events = [list(fired)]
        out.sum().backward()
        model(data(lib, 10, 10)).sum().backward()
        return events + [fired]
    (events, caught) = same(program)
    assert [e[0] for e in events[1]] == [0, 1, 2, 3, 0, 1, 2, 3] and caught == []


class _KwargModel:
    """torch's KwargModel: forward(x, bias=None) = x + bias."""

    @staticmethod
    def make(lib):
        class KwargModel(lib.nn.Module):
            def forward(self, x, bias=None):
                return x if bias is None else x + bias

            def internal_forward_hook(self, module, args, kwargs, out):
                return out + kwargs["bias"]
        return KwargModel()


def _kwarg_pre_hook(fired, module, args, kwargs):
    fired.append(("pre", len(args)))
    kwargs["bias"] = 2 * kwargs["bias"]
    return args, kwargs


def _kwarg_hook(fired, module, args, kwargs, out):
    fired.append(("post", len(args)))
    return out + kwargs["bias"]


def test_kwarg_hooks_and_their_removal():
    """test_kwarg_hooks, test_remove_kwarg_hooks: with_kwargs hooks see and replace kwargs;
    removing a handle forgets its with_kwargs flag."""
    def program(lib):
        fired, x, bias = [], ones(lib, 3, 3), ones(lib, 3, 3)
        model = _KwargModel.make(lib)
        post = model.register_forward_hook(partial(_kwarg_hook, fired), with_kwargs=True)
        pre = model.register_forward_pre_hook(partial(_kwarg_pre_hook, fired),
                                              with_kwargs=True)
        outs = [model(x, bias=bias)]
        post.remove()
        outs.append(model(x, bias=bias))
        flags = [post.id in model._forward_hooks_with_kwargs]
        pre.remove()
        outs.append(model(x, bias=bias))
        flags.append(pre.id in model._forward_pre_hooks_with_kwargs)
        method = _KwargModel.make(lib)
        method.register_forward_hook(method.internal_forward_hook, with_kwargs=True)
        return outs + [method(x, bias=bias), fired, flags]
    (result, caught) = same(program)
    x = np.ones((3, 3))
    for out, times in zip(result[:4], (5, 3, 2, 3)):
        np.testing.assert_array_equal(out.numpy(), x * times)
    assert result[5] == [False, False] and caught == []


def test_kwarg_pre_hook_must_return_a_pair():
    def program(lib):
        model = _KwargModel.make(lib)
        model.register_forward_pre_hook(lambda m, a, k: (a,), with_kwargs=True)
        return model(ones(lib, 2))
    (result, _) = same(program)
    assert result[0] == "raised" and "(new_args, new_kwargs)" in result[2]


def _fails_in_forward(lib):
    class FailsInForwardModel(lib.nn.Module):
        def forward(self, x, fail=True):
            if fail:
                raise RuntimeError("failing in forward")
            return x * 2
    return FailsInForwardModel()


def test_always_called_forward_hooks():
    """test_always_called_forward_hooks: an always_call hook runs when forward, a pre-hook
    or another hook raised, once; its own error is silenced (a warning); the global one too."""
    def program(lib):
        stack, model, x, errors = [], _fails_in_forward(lib), ones(lib, 2), []
        modules = lib.nn.modules.module

        def call(**kwargs):
            try:
                model(x, **kwargs)
            except RuntimeError as error:
                errors.append(str(error))
            return list(stack)

        def enter(m, i):
            stack.append(2)

        def enter_fails(m, i):
            stack.append(2)
            raise RuntimeError("failing in ctx setup")

        def leave(m, i, o):
            stack.append(-1)

        def leave_fails(m, i, o):
            stack.append(-1)
            raise RuntimeError("failing in ctx shutdown")

        def throw(m, i, o):
            raise RuntimeError("failing in throw")

        pre = model.register_forward_pre_hook(enter)
        post = model.register_forward_hook(leave, always_call=True)
        states = [len(model._forward_hooks_always_called), call(), call(fail=False)]
        pre.remove()
        model.register_forward_pre_hook(enter_fails)
        states.append(call(fail=False))
        post2 = model.register_forward_hook(throw, prepend=True, always_call=True)
        states.append(call(fail=False))
        post.remove()
        post2.remove()
        states.append(len(model._forward_hooks_always_called))
        post3 = model.register_forward_hook(leave_fails, always_call=True)
        states.append(call(fail=False))
        post3.remove()
        handle = modules.register_module_forward_hook(leave, always_call=True)
        try:
            states.append(call(fail=False))
        finally:
            handle.remove()
        return states + [call(), errors]
    (states, caught) = same(program)
    assert states[-2] == [2, -1] * 6 + [2]
    assert [message for _, message in caught] == [
        "module forward hook with ``always_call=True`` raised an exception that was silenced "
        "as another error was raised in forward: failing in throw",
        "module forward hook with ``always_call=True`` raised an exception that was silenced "
        "as another error was raised in forward: failing in ctx shutdown"]


def test_backward_hooks_warn_for_an_output_that_is_no_tensor_or_tuple():
    """test_bw_hook_warning_for_non_tensor_or_tuple: a dict output: the forward hooks run,
    the backward ones never, and one warning says why."""
    def program(lib):
        counter = {"forward": 0, "backward": 0}

        def count(key, *args):
            counter[key] += 1

        class DictModule(lib.nn.Module):
            def forward(self, inputs):
                return {"x": lib.nn.functional.softmax(inputs["x"], dim=0)}

        model = DictModule()
        model.register_forward_pre_hook(partial(count, "forward"))
        model.register_forward_hook(partial(count, "forward"))
        model.register_full_backward_pre_hook(partial(count, "backward"))
        model.register_full_backward_hook(partial(count, "backward"))
        model({"x": ones(lib, 2, requires_grad=True)})["x"].sum().backward()
        return counter
    (counter, caught) = same(program)
    assert counter == {"forward": 2, "backward": 0} and len(caught) == 1
    assert "should be a Tensor or a tuple of Tensors" in caught[0][1]


# -- TestModuleGlobalHooks ------------------------------------------------------------------

def _global_hook_counts(lib, legacy: bool):
    """test_module_global_hooks: counts of global forward/backward hooks over three modules."""
    modules = lib.nn.modules.module
    register_backward = modules.register_module_backward_hook if legacy \
        else modules.register_module_full_backward_hook
    sigmoids = [lib.nn.Sigmoid() for _ in range(3)]
    x, two = ones(lib, 5, 5, requires_grad=True), ones(lib, 5, 5) * 2
    counter, checks = {"forwards": 0, "backwards": 0}, []

    def fw_hook(inc, module, args, output):
        checks.append((isinstance(args, tuple), float(output.detach()[0, 0])))
        counter["forwards"] += inc

    def bw_hook(inc, module, grad_input, grad_output):
        checks.append((isinstance(grad_input, tuple), float(grad_output[0][0, 0])))
        counter["backwards"] += inc

    handles, counts = [], []
    try:
        handles.append(modules.register_module_forward_hook(partial(fw_hook, 1)))
        for m in sigmoids:
            m(x)
        counts.append(dict(counter))
        handles.append(register_backward(partial(bw_hook, 1)))
        outs = [m(x) for m in sigmoids]
        for out, retain in zip(outs, (True, False, False)):
            out.backward(two, retain_graph=retain)
        outs[0].backward(two, retain_graph=True)
        counts.append(dict(counter))
        handles.append(modules.register_module_forward_hook(partial(fw_hook, 2)))
        for m in sigmoids:
            m(x)
        handles.append(register_backward(partial(bw_hook, 2)))
        sigmoids[0](x).backward(two)
        counts.append(dict(counter))
        handles.pop().remove()
        sigmoids[1](x).backward(two)
        counts.append(dict(counter))
        handles.pop().remove()
        sigmoids[2](x).backward(two)
        counts.append(dict(counter))
    finally:
        for handle in handles:
            handle.remove()
    return counts, checks


@pytest.mark.parametrize("legacy", [False, True])
def test_module_global_hooks(legacy):
    ((counts, checks), caught) = same(partial(_global_hook_counts, legacy=legacy))
    assert counts[-1] == {"forwards": 22, "backwards": 9}
    assert set(checks) == {(True, 1 / (1 + 1 / math.e)), (True, 2.0)}
    assert len(caught) == (9 if legacy else 0)  # the legacy hook's FutureWarning per call


def _invalid_backward_results(lib, register):
    """test_module_global_hook_invalid_outputs / test_hook_invalid_outputs."""
    module, x = lib.nn.Sigmoid(), data(lib, 5, 5)
    errors = []
    hooks = [lambda m, gi, go: gi[:-1], lambda m, gi, go: gi + (lib.ones(2, 2),)]
    if register.endswith("pre_hook"):
        hooks = [lambda m, go: (), lambda m, go: go + (lib.ones(2, 2),)]
    owner = lib.nn.modules.module if register.startswith("register_module") else module
    for hook in hooks:
        with getattr(owner, register)(hook):
            try:
                module(x).sum().backward()
            except RuntimeError as error:
                errors.append(str(error))
    return errors


@pytest.mark.parametrize("register", [
    "register_module_backward_hook", "register_backward_hook",
    "register_full_backward_pre_hook", "register_module_full_backward_pre_hook",
    "register_full_backward_hook", "register_module_full_backward_hook"])
def test_backward_hooks_returning_the_wrong_number_of_gradients(register):
    (errors, _) = same(partial(_invalid_backward_results, register=register))
    assert len(errors) == 2
    assert "got 0, but expected 1" in errors[0] and "got 2, but expected 1" in errors[1]


def test_a_global_module_hook_kind_cannot_change():
    def program(lib):
        modules = lib.nn.modules.module
        first = modules.register_module_full_backward_hook(lambda *a: None)
        first.remove()
        modules.register_module_backward_hook(lambda *a: None)
    (result, _) = same(program)
    assert result == ("raised", "RuntimeError", "Cannot use both regular backward hooks and "
                      "full backward hooks as a global Module hook. Please use only one of "
                      "them.")


@pytest.mark.parametrize("register", ["register_module_backward_hook", "register_backward_hook",
                                      "register_full_backward_hook"])
def test_backward_hook_result_is_written(register):
    """test_module_backward_global_hook_writeable / test_hook_backward_writeable."""
    def program(lib):
        module, x = lib.nn.Sigmoid(), data(lib, 5, 5)
        owner = lib.nn.modules.module if register.startswith("register_module") else module
        kinds = []

        def double(m, grad_input, grad_output):
            kinds.append([isinstance(g, lib.Tensor) for g in grad_input + grad_output])
            return tuple(g * 2 for g in grad_input)
        with getattr(owner, register)(double):
            module(x).backward(ones(lib, 5, 5))
        return x.grad, kinds
    ((grad, kinds), _) = same(program)
    assert kinds == [[True, True]]


@pytest.mark.parametrize("is_global", [True, False])
def test_forward_pre_hook_and_forward_hook_results_are_used(is_global):
    """test_module_global_forward_preforward_hook_writeable /
    test_hook_forward_preforward_writable: relu'd input, negated output, and the gradient."""
    def program(lib):
        module, x = lib.nn.Sigmoid(), data(lib, 5, 5)
        owner = lib.nn.modules.module if is_global else module
        with owner.register_module_forward_pre_hook(lambda m, i: lib.relu(i[0])) \
                if is_global else module.register_forward_pre_hook(lambda m, i: lib.relu(i[0])):
            register = owner.register_module_forward_hook if is_global \
                else module.register_forward_hook
            with register(lambda m, i, o: -o):
                output = module(x)
        output.backward(ones(lib, 5, 5) * 2, retain_graph=True)
        return output, x.grad
    ((output, grad), _) = same(program)
    x = np.random.default_rng(0).standard_normal((5, 5))
    sig = 1 / (1 + np.exp(-np.maximum(x, 0)))
    np.testing.assert_allclose(output.detach().numpy(), -sig)
    np.testing.assert_allclose(grad.numpy(), -sig * (1 - sig) * 2 * (x > 0))


@pytest.mark.parametrize("kind", ["register_forward_pre_hook", "register_forward_hook"])
def test_hooks_that_remove_themselves_while_running(kind):
    """test_module_forward_preforward_hook_removable, ..._forward_hook_removable."""
    def program(lib):
        module, handles = lib.nn.Sigmoid(), []

        def remove_first(m, *args):
            handles[0].remove()

        def remove_second(m, *args):
            handles[1].remove()
        handles += [getattr(module, kind)(remove_first), getattr(module, kind)(remove_second)]
        sizes = [len(handle.hooks_dict_ref()) for handle in handles]
        x = ones(lib, 2, 2)
        output = module(x)
        return sizes + [len(handle.hooks_dict_ref()) for handle in handles] + [output]
    ((*sizes, output), _) = same(program)
    assert sizes == [2, 2, 0, 0]


def test_global_hooks_run_before_the_modules_own():
    """test_global_and_local_hooks_order (with the legacy backward hooks, as torch's)."""
    def program(lib):
        modules, module, order = lib.nn.modules.module, lib.nn.Sigmoid(), []

        def note(name, m, *args):
            order.append(name)
        handles = [modules.register_module_forward_pre_hook(partial(note, "global pre")),
                   module.register_forward_pre_hook(partial(note, "local pre")),
                   modules.register_module_forward_hook(partial(note, "global forward")),
                   module.register_forward_hook(partial(note, "local forward")),
                   modules.register_module_backward_hook(partial(note, "global backward")),
                   module.register_backward_hook(partial(note, "local backward"))]
        try:
            module(data(lib, 5, 5)).backward(ones(lib, 5, 5), retain_graph=True)
        finally:
            for handle in handles:
                handle.remove()
        return order
    (order, caught) = same(program)
    assert order == ["global pre", "local pre", "global forward", "local forward",
                     "global backward", "local backward"]
    assert len(caught) == 1 and caught[0][0] == "FutureWarning"


# -- TestModuleHookNN -----------------------------------------------------------------------

@pytest.mark.parametrize("register", ["register_backward_hook", "register_full_backward_hook",
                                      "register_full_backward_pre_hook"])
def test_hook_counts_as_hooks_come_and_go(register):
    """test_hooks: forward and backward hook counts over calls, retained backwards and
    removals, for each kind of backward hook."""
    def program(lib):
        module, x = lib.nn.Sigmoid(), ones(lib, 5, 5, requires_grad=True)
        two, counter, seen = ones(lib, 5, 5) * 2, {"forwards": 0, "backwards": 0}, []

        def fw_hook(inc, m, args, output):
            seen.append((m is module, isinstance(args, tuple), float(output.detach()[0, 0])))
            counter["forwards"] += inc

        def bw_hook(inc, m, *grads):
            seen.append((m is module, float(grads[-1][0][0, 0])))
            counter["backwards"] += inc
        counts = []
        first_fw = module.register_forward_hook(partial(fw_hook, 1))
        module(x)
        module(x)
        first_bw = getattr(module, register)(partial(bw_hook, 1))
        output = module(x)
        counts.append(dict(counter))
        output.backward(two, retain_graph=True)
        output.backward(two, retain_graph=True)
        counts.append(dict(counter))
        second_fw = module.register_forward_hook(partial(fw_hook, 2))
        module(x)
        second_bw = getattr(module, register)(partial(bw_hook, 2))
        module(x).backward(two)
        counts.append(dict(counter))
        second_bw.remove()
        module(x).backward(two)
        second_fw.remove()
        module(x).backward(two)
        counts.append(dict(counter))
        first_fw.remove()
        first_bw.remove()
        return counts, seen
    ((counts, seen), _) = same(program)
    assert counts == [{"forwards": 3, "backwards": 0}, {"forwards": 3, "backwards": 2},
                      {"forwards": 9, "backwards": 5}, {"forwards": 13, "backwards": 7}]
    assert set(seen) == {(True, True, 1 / (1 + 1 / math.e)), (True, 2.0)}


@pytest.mark.parametrize("first,second", [
    ("register_backward_hook", "register_full_backward_hook"),
    ("register_full_backward_hook", "register_backward_hook")])
def test_a_module_cannot_mix_full_and_legacy_backward_hooks(first, second):
    def program(lib):
        module = lib.nn.Sigmoid()
        getattr(module, first)(lambda *a: None).remove()
        getattr(module, second)(lambda *a: None)
    (result, _) = same(program)
    assert result == ("raised", "RuntimeError", "Cannot use both regular backward hooks and "
                      "full backward hooks on a single Module. Please use only one of them.")


def test_full_backward_hook_of_batch_norm():
    """test_hook_cpp: one grad_input and one grad_output, the module itself."""
    def program(lib):
        bn, seen = lib.nn.BatchNorm1d(5).double(), []
        bn.register_full_backward_hook(
            lambda m, gi, go: seen.append((len(gi), len(go), m is bn)))
        bn(data(lib, 5, 5)).sum().backward()
        return seen
    assert same(program) == ([(1, 1, True)], [])


def test_backward_hook_sees_what_the_pre_hook_returned():
    """test_backward_hooks_interaction."""
    def program(lib):
        module, seen = lib.nn.Sigmoid(), []

        def pre_hook(m, grad_output):
            seen.append("pre")
            return (grad_output[0] * 0.5,)

        def hook(m, grad_input, grad_output):
            seen.append(grad_output[0])
            return grad_output
        module.register_full_backward_pre_hook(pre_hook)
        module.register_full_backward_hook(hook)
        t = ones(lib, 1, 2, requires_grad=True)
        module(t).sum().backward()
        return seen, t.grad
    ((seen, grad), _) = same(program)
    np.testing.assert_array_equal(seen[1].numpy(), np.full((1, 2), 0.5))


def test_requires_grad_of_inputs_passes_through_the_hook():
    """test_hook_requires_grad, test_hook_last_arg_requires_grad."""
    def program(lib):
        class ThreeInputs(lib.nn.Module):
            def forward(self, a, b, c):
                seen.append((a.requires_grad, b.requires_grad, c.requires_grad))
                return a.sum() + b.sum() + c.sum()
        seen, inp, mod = [], data(lib, 2), ThreeInputs()
        mod(inp, inp.detach(), inp)
        mod.register_full_backward_hook(lambda m, gi, go: None)
        mod(inp, inp.detach(), inp)
        loss = lib.nn.L1Loss()
        loss.register_full_backward_hook(lambda m, gi, go: None)
        return seen, loss(inp.detach(), inp)
    ((seen, _), _) = same(program)
    assert seen == [(True, False, True)] * 2


def test_backward_hook_of_a_module_whose_inputs_need_no_grad():
    """test_hook_no_requires_grad: the hook sees None grad_inputs; it may return them, any
    other value is refused."""
    def program(lib):
        mod, inp, seen = lib.nn.Linear(2, 3).double(), data(lib, 1, 2, requires_grad=False), []
        returns = iter([None, "grad_input", "invalid"])

        def hook(m, grad_input, grad_output):
            seen.append(([g is None for g in grad_input], tuple(grad_output[0].shape)))
            kind = next(returns)
            return grad_input if kind == "grad_input" else inp if kind == "invalid" else None
        mod.register_full_backward_hook(hook)
        for _ in range(3):
            try:
                mod(inp).sum().backward()
            except RuntimeError as error:
                seen.append(str(error))
        return seen
    (seen, caught) = same(program)
    assert seen[-1] == ("Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients.")
    assert len(caught) == 3


def test_hook_with_non_tensor_input_and_output():
    """test_hook_extra_input: None stands for the non-tensor input and output."""
    def program(lib):
        class Extra(lib.nn.Module):
            def forward(self, flag, tensor):
                return tensor.clone(), flag
        seen, mod = [], Extra()
        mod.register_full_backward_hook(
            lambda m, gi, go: seen.append(([g is None for g in gi], [g is None for g in go])))
        out, _ = mod(True, data(lib, 2))
        out.sum().backward()
        return seen
    assert same(program) == ([([True, False], [False, True])], [])


@pytest.mark.parametrize("register", ["register_full_backward_hook",
                                      "register_full_backward_pre_hook"])
def test_in_place_writes_through_the_hooked_inputs_and_outputs(register):
    """test_hook_inplace: the inputs and outputs are views made by BackwardHookFunction."""
    def program(lib):
        class Keeps(lib.nn.Module):
            def forward(self, inp, do_inplace):
                self.inp = inp
                if do_inplace:
                    inp += 1
                return inp.clone()
        calls, errors, inp, mod = [], [], data(lib, 10), Keeps()

        def attempt(action):
            try:
                action()
            except RuntimeError as error:
                errors.append(str(error))
        with getattr(mod, register)(lambda *args: calls.append(1)):
            mod(inp, False).sum().backward()
            attempt(lambda: mod(inp.clone(), True))
            local = inp.clone()
            mod(local, False)
            local[0] *= 1
            attempt(lambda: mod.inp + 2)
            out = mod(inp, False)

            def write_output():
                out.add_(1)
            attempt(write_output)
        return calls, errors
    ((calls, errors), _) = same(program)
    assert calls == [1] and len(errors) == 3
    assert all("BackwardHookFunction is a view" in error for error in errors)


def test_legacy_backward_hook_warnings():
    """test_hook_non_full_warning: torch's FutureWarnings where the legacy hook misses
    gradients (list input, list output, outputs of two nodes, forward of two nodes)."""
    def program(lib):
        a, b = data(lib, 2), data(lib, 2, seed=1)

        def module(forward):
            mod = type("M", (lib.nn.Module,), {"forward": forward})()
            mod.register_backward_hook(lambda *args: None)
            return mod
        module(lambda self, pair: (pair[0].clone(), pair[1].clone()))([a, b])
        module(lambda self, a, b: [a.clone(), b.clone()])(a, b)
        module(lambda self, a, b: (a.clone(), b.clone()))(a, b)
        module(lambda self, a: a.clone().clone())(a)
        return None
    (_, caught) = same(program)
    assert [category for category, _ in caught] == ["FutureWarning"] * 4
    assert "does not take as input a single Tensor" in caught[0][1]
    assert "does not return a single Tensor" in caught[1][1]
    assert "outputs are generated by different autograd Nodes" in caught[2][1]
    assert "the forward contains multiple autograd Nodes" in caught[3][1]


def test_full_backward_hook_gradient_sizes():
    """test_hook_backward_size: inputs and output of different sizes, many nodes."""
    def program(lib):
        class Many(lib.nn.Module):
            def forward(self, arg1, arg2):
                tmp = arg1.sum() * arg2
                tmp = tmp + arg2.sum() * arg1.sum()
                return tmp.sum().view(1).expand(8).contiguous()
        seen, module = [], Many()
        module.register_full_backward_hook(lambda m, gi, go: seen.append(
            ([tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])))
        module(data(lib, 5, 5), data(lib, 10, 10)).sum().backward()
        return seen
    assert same(program) == ([([(5, 5), (10, 10)], [(8,)])], [])


@pytest.mark.parametrize("kind", ["buffer", "parameter", "module"])
@pytest.mark.parametrize("returns", [True, False])
def test_global_registration_hooks(kind, returns):
    """test_hook_buffer_registration, test_hook_submodule_registration,
    test_hook_parameter_registration: every registration (attribute or register_*) is seen;
    a returned value is what gets registered."""
    def program(lib):
        seen = []

        def hook(module, name, value):
            seen.append(name)
            return value if returns else None
        register = getattr(lib.nn.modules.module, f"register_module_{kind}_registration_hook")
        with register(hook):
            net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
            net.add_module("extra", lib.nn.Identity())
            net.register_buffer("flag", lib.zeros(1))
            net.register_parameter("scale", lib.nn.Parameter(lib.ones(1)))
            net.scale = None
            net.extra = None
            net.flag = None
        return seen
    (seen, _) = same(program)
    assert {"parameter": "scale", "buffer": "flag", "module": "extra"}[kind] in seen


def test_a_registration_hook_result_replaces_the_value():
    def program(lib):
        replacement = lib.nn.Identity()
        with lib.nn.modules.module.register_module_module_registration_hook(
                lambda module, name, value: replacement):
            net = lib.nn.Sequential(lib.nn.Linear(2, 2))
        return net[0] is replacement
    assert same(program) == (True, [])


def test_backward_hooks_are_the_ones_registered_at_call_time():
    """torch's _call_impl hands the call's BackwardHook the hook lists of that moment: a hook
    removed after forward still runs in its backward, one added after forward does not."""
    def program(lib):
        module, seen = lib.nn.Sigmoid(), []
        first = module.register_full_backward_hook(lambda m, gi, go: seen.append("first"))
        out = module(data(lib, 3))
        first.remove()
        module.register_full_backward_hook(lambda m, gi, go: seen.append("second"))
        module.register_full_backward_pre_hook(lambda m, go: seen.append("pre"))
        out.sum().backward()
        module(data(lib, 3)).sum().backward()
        return seen
    assert same(program) == (["first", "pre", "second"], [])


def test_global_forward_hook_with_kwargs():
    def program(lib):
        seen = []
        model = _KwargModel.make(lib)
        with lib.nn.modules.module.register_module_forward_hook(
                lambda m, args, kwargs, out: out + kwargs["bias"], with_kwargs=True):
            seen.append(model(ones(lib, 2), bias=ones(lib, 2)))
        seen.append(model(ones(lib, 2), bias=ones(lib, 2)))
        return seen
    ((with_hook, without), _) = same(program)
    assert with_hook.tolist() == [3.0, 3.0] and without.tolist() == [2.0, 2.0]


def test_removing_a_global_forward_hook_forgets_always_call_but_not_with_kwargs():
    """torch's global forward hook handle forgets only the always_call flag on remove (its
    with_kwargs entry stays, harmless without the hook); a module's forgets both."""
    def program(lib):
        if lib is gradkit:
            from gradkit.nn import module_global_hooks as tables
        else:
            tables = lib.nn.modules.module
        hook = lib.nn.modules.module.register_module_forward_hook(
            lambda *args, **kwargs: None, with_kwargs=True, always_call=True)
        flags = [hook.id in tables._global_forward_hooks_with_kwargs,
                 hook.id in tables._global_forward_hooks_always_called]
        hook.remove()
        flags += [hook.id in tables._global_forward_hooks_with_kwargs,
                  hook.id in tables._global_forward_hooks_always_called]
        tables._global_forward_hooks_with_kwargs.pop(hook.id, None)
        model = lib.nn.Linear(2, 2)
        local = model.register_forward_hook(lambda *args, **kwargs: None, with_kwargs=True,
                                            always_call=True)
        local.remove()
        return flags + [local.id in model._forward_hooks_with_kwargs,
                        local.id in model._forward_hooks_always_called]
    result, caught = same(program)
    assert result == [True, True, True, False, False, False] and caught == []
