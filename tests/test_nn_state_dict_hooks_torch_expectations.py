"""torch's TestStateDictHooks (test/nn/test_module_hooks.py), rerun on gradkit.nn and
compared with torch 2.13 on the same program (outcome, error text and warnings)."""
import gc
import pickle
import weakref

import pytest

from tests.test_nn_hooks_torch_expectations import same


def _hook_to_pickle(*args, **kwargs):
    """A module-level hook, so that a module holding it pickles."""


def _keys(state_dict):
    return sorted(state_dict)


def test_load_state_dict_pre_hook_with_and_without_module():
    """test_load_state_dict_pre_hook: the private spelling's with_module flag."""
    def program(lib):
        source = lib.nn.Linear(3, 3)
        target, seen = lib.nn.Linear(3, 3), []

        def without_module(state_dict, prefix, local_metadata, strict, missing, unexpected,
                           errors):
            seen.append(("without", _keys(state_dict), prefix, strict))

        def with_module(module, state_dict, prefix, local_metadata, strict, missing,
                        unexpected, errors):
            seen.append(("with", module is target, _keys(state_dict)))
        target._register_load_state_dict_pre_hook(without_module)
        target.load_state_dict(source.state_dict())
        target._register_load_state_dict_pre_hook(with_module, True)
        target.load_state_dict(source.state_dict())
        return seen
    (seen, _) = same(program)
    assert [entry[0] for entry in seen] == ["without", "without", "with"]


def test_a_load_state_dict_pre_hook_holds_no_reference_to_its_module():
    """test_no_extra_ref_to_module (and test_pickled_hook: the module still pickles)."""
    def program(lib):
        gc.disable()
        try:
            m = lib.nn.Linear(3, 3)
            m._register_load_state_dict_pre_hook(_hook_to_pickle, True)
            restored = pickle.loads(pickle.dumps(m))
            weak = weakref.ref(m)
            del m
            return weak() is None, type(restored).__name__
        finally:
            gc.enable()
    assert same(program) == ((True, "Linear"), [])


@pytest.mark.parametrize("wrapped", [True, False])
def test_load_state_dict_pre_hook_methods_on_a_submodule(wrapped):
    """test_load_state_dict_module_pre_hook: bound methods as hooks, on a submodule too: the
    lists they get start empty, strict is passed, the module is the submodule."""
    def program(lib):
        seen = []

        class Mine(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.foo = lib.nn.Parameter(lib.ones(3))

            def pre_hook(self, state_dict, prefix, metadata, strict, missing, unexpected,
                         errors):
                seen.append((prefix, strict, missing, unexpected, errors))

            def pre_hook_with_module(self, module, state_dict, prefix, metadata, strict,
                                     missing, unexpected, errors):
                seen.append((module is self, prefix, strict, missing, unexpected, errors))
        mod = Mine()
        m = lib.nn.Sequential(mod) if wrapped else mod
        state = m.state_dict()
        mod._register_load_state_dict_pre_hook(mod.pre_hook)
        m.load_state_dict(state)
        mod._register_load_state_dict_pre_hook(mod.pre_hook_with_module, True)
        m.load_state_dict(state)
        return seen
    (seen, _) = same(program)
    assert len(seen) == 3 and all(entry[-3:] == ([], [], []) for entry in seen)


def test_load_state_dict_post_hook_edits_the_incompatible_keys():
    """test_load_state_dict_post_hook: keys a post-hook adds are returned (and make strict
    loading fail); a removed hook stops; a hook clearing the lists forgives strict."""
    def program(lib):
        calls = []

        class Mine(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.foo = lib.nn.Parameter(lib.ones(3))

            def post_hook(self, module, incompatible_keys):
                calls.append(module is self)
                incompatible_keys.missing_keys.append("foo")
                incompatible_keys.unexpected_keys.append("bar")
        nested = Mine()
        wrapped = lib.nn.ModuleList([nested])
        handle = nested.register_load_state_dict_post_hook(nested.post_hook)
        results = [tuple(wrapped.load_state_dict(wrapped.state_dict(), strict=False))]
        try:
            wrapped.load_state_dict(wrapped.state_dict(), strict=True)
        except RuntimeError as error:
            results.append(str(error))
        handle.remove()
        results.append(tuple(wrapped.load_state_dict(wrapped.state_dict(), strict=False)))

        def clear(module, incompatible_keys):
            incompatible_keys.missing_keys.clear()
            incompatible_keys.unexpected_keys.clear()
        nested.register_load_state_dict_post_hook(clear)
        state = wrapped.state_dict()
        state["extra"] = lib.ones(1)
        results.append(tuple(wrapped.load_state_dict(state, strict=True)))
        return calls, results
    ((calls, results), _) = same(program)
    assert calls == [True, True]
    assert results[0] == (["foo"], ["bar"]) and results[2] == results[3] == ([], [])
    assert '"foo"' in results[1] and '"bar"' in results[1]


@pytest.mark.parametrize("layer", ["Softmin", "Softmax", "LogSoftmax"])
def test_load_state_dict_post_hooks_of_an_older_saved_module(layer):
    """test_load_state_dict_post_hook_backward_compatibility: a module saved without the
    post-hook table loads a state dict, and takes new post-hooks."""
    def program(lib):
        called = []
        m = getattr(lib.nn, layer)(1)
        state = m.state_dict()
        had_table = hasattr(m, "_load_state_dict_post_hooks")
        delattr(m, "_load_state_dict_post_hooks")
        m = pickle.loads(pickle.dumps(m))  # torch's test uses torch.save of the module: a
        # pickle; gradkit.save stores no modules (docs/serialization.md)
        m.load_state_dict(state)
        before = list(called)
        m.register_load_state_dict_post_hook(lambda module, keys: called.append(True))
        m.load_state_dict(state)
        return had_table, before, called
    assert same(program) == ((True, [], [True]), [])


@pytest.mark.parametrize("lazy", [False, True])
def test_state_dict_pre_hooks_see_prefix_and_keep_vars(lazy):
    """test_register_state_dict_pre_hook(_lazy_module): a hook on the model and one on a
    submodule run once each per state_dict call, before and after a forward."""
    def program(lib):
        seen = []

        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                make = (lambda: lib.nn.LazyLinear(3)) if lazy else (lambda: lib.nn.Linear(3, 3))
                self.a = lib.nn.Sequential(make(), make())

            def forward(self, x):
                return self.a(x)
        model = Model()
        hook = (lambda module, prefix, keep_vars: seen.append((prefix, keep_vars)))
        model.register_state_dict_pre_hook(hook)
        model.a[0].register_state_dict_pre_hook(hook)
        for keep_vars in (True, False):
            model.state_dict(prefix="foo.", keep_vars=keep_vars)
        model(lib.ones(10, 3))
        model.state_dict(prefix="foo.")
        return seen
    assert same(program)[0][:2] == [("foo.", True), ("foo.a.0.", True)]


def test_state_dict_pre_hooks_of_an_older_saved_module():
    """test_register_state_dict_pre_hook_backward_compat (pickled, as in the post-hook
    case above)."""
    def program(lib):
        called = []
        m = lib.nn.Linear(1, 1)
        had_table = hasattr(m, "_state_dict_pre_hooks")
        delattr(m, "_state_dict_pre_hooks")
        m = pickle.loads(pickle.dumps(m))
        m.state_dict()
        before = list(called)
        m.register_state_dict_pre_hook(lambda *args: called.append(True))
        m.state_dict()
        return had_table, before, called
    assert same(program) == ((True, [], [True]), [])


def test_state_dict_post_hooks_public_and_private():
    """register_state_dict_post_hook / _register_state_dict_hook (newer torch's
    test_register_state_dict_post_hook): post-order, in-place edits, the private hook's
    result replaces the root's dict, the public one must return None."""
    def program(lib):
        order, results = [], []
        net = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Sequential(lib.nn.Linear(1, 1)))

        def note(module, state_dict, prefix, metadata):
            order.append((prefix, sorted(state_dict), metadata.get("version")))
            state_dict[prefix + "seen"] = lib.zeros(1)
        for m in (net, net[0], net[1], net[1][0]):
            m.register_state_dict_post_hook(note)
        results.append(sorted(net.state_dict()))
        handle = net._register_state_dict_hook(lambda m, sd, p, meta: {"replaced": lib.ones(1)})
        results.append(sorted(net.state_dict()))
        handle.remove()
        net[0]._register_state_dict_hook(lambda m, sd, p, meta: {"ignored": lib.ones(1)})
        results.append("ignored" in net.state_dict())
        for register, hook in ((net.register_state_dict_post_hook, lambda *a: {}),
                               (net._register_state_dict_hook, note)):
            try:
                register(hook)
                net.state_dict()
            except RuntimeError as error:
                results.append(str(error))
        return order[:4], results
    ((order, results), _) = same(program)
    assert [prefix for prefix, _, _ in order] == ["0.", "1.0.", "1.", ""]
    assert results[1] == ["replaced"] and results[2] is False
    assert results[3:] == ["state_dict post-hook must return None",
                           "Cannot register the same function as the state dict post hook that "
                           "was previously registered via register_state_dict_post_hook"]


def test_a_shared_module_is_saved_and_loaded_under_each_name():
    """test_load_state_dict (nn/test_load_state_dict.py): net.linear1 = net.linear2 = l."""
    def program(lib):
        shared, net, calls = lib.nn.Linear(2, 2), lib.nn.Module(), []
        net.linear1 = shared
        net.linear2 = shared
        shared.register_state_dict_pre_hook(lambda m, prefix, keep: calls.append(prefix))
        keys = list(net.state_dict())
        state = net.state_dict()
        del state["linear2.bias"]
        return keys, calls, tuple(net.load_state_dict(state, strict=False))
    ((keys, calls, incompatible), _) = same(program)
    assert keys == ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]
    assert incompatible == (["linear2.bias"], [])


def test_load_state_dict_pre_hook_of_a_child_sees_its_own_keys():
    """test_load_state_dict_child (nn/test_load_state_dict.py): a child's pre-hook gets the
    keys under its prefix only; what it renames there is loaded."""
    def program(lib):
        seen = []
        model = lib.nn.Sequential(lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Linear(1, 1)),
                                  lib.nn.Linear(1, 1))

        def hook(module, state_dict, prefix, metadata, strict, missing, unexpected, errors):
            seen.append((prefix, sorted(state_dict), len(module.state_dict())))
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        model[0][0]._register_load_state_dict_pre_hook(hook, with_module=True)
        model.load_state_dict(model.state_dict(), strict=True)
        state = model.state_dict()
        state["0.0.w"] = state.pop("0.0.weight") * 0 + 5
        result = tuple(model.load_state_dict(state))
        return seen, result, model[0][0].weight
    ((seen, result, weight), _) = same(program)
    assert seen[0] == ("0.0.", ["0.0.bias", "0.0.weight"], 2)
    assert result == ([], []) and weight.tolist() == [[5.0]]


def test_load_state_dict_post_hooks_run_children_first():
    """torch's load recursion: a module's post-hooks run after its children's."""
    def program(lib):
        order = []
        net = lib.nn.Sequential(lib.nn.Sequential(lib.nn.Linear(1, 1)), lib.nn.Linear(1, 1))
        for name, module in net.named_modules():
            module.register_load_state_dict_post_hook(
                lambda m, keys, name=name: order.append(name))
        net.load_state_dict(net.state_dict())
        return order
    assert same(program) == (["0.0", "0", "1", ""], [])
