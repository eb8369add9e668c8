"""Module state dicts: ``state_dict`` and ``load_state_dict`` (a mixin of ``nn.Module``), with
their hooks and a module's extra (non-tensor) state."""
from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.autograd.hook_handles import RemovableHandle, add_hook
from gradkit.nn.parameter import Parameter, is_lazy


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: the keys it did not find and the ones it did not use."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


_NEVER_CALLED = ("Reached a code path in Module.{}() that should never be called. Please file an "
                 "issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                 "to report this bug.")


_POST_HOOK_RETURNED = (
    "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return "
    "new values, if incompatible_keys need to be modified, it should be done inplace.")


class _WithoutModule:
    """A load_state_dict pre-hook registered without its module: called without it. A class,
    not a closure, so that a module holding it still pickles (and holds no module)."""

    def __init__(self, hook) -> None:
        self.hook = hook

    def __call__(self, module, *args) -> None:
        self.hook(*args)


class ModuleState:
    """Parameters and persistent buffers by dotted name, saved and loaded as torch does."""

    def __setstate__(self, state: dict) -> None:
        """Unpickling (or a state from ``__dict__``): the attributes back (the hook tables
        are made when first used, so an older state needs nothing more)."""
        self.__dict__.update(state)

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (detached unless keep_vars).

        As torch's, a module reached by two paths is saved under both; each module's
        pre-hooks run before its tensors are read, its post-hooks after its children's."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # each module's version, by prefix
        return self._save_tree(destination, prefix, keep_vars)

    def _save_tree(self, destination: dict, dot: str, keep_vars: bool) -> dict:
        metadata = {"version": getattr(self, "_version", 1)}  # the post-hooks may add to it
        if hasattr(destination, "_metadata"):
            destination._metadata[dot[:-1]] = metadata
        for hook in tuple(self._hook_table("_state_dict_pre_hooks").values()):
            hook(self, dot, keep_vars)
        destination.update(self._own_tensors(dot, keep_vars))
        if type(self).get_extra_state is not ModuleState.get_extra_state:
            destination[dot + "_extra_state"] = self.get_extra_state()
        for name, child in self._modules.items():
            if child is not None:
                child._save_tree(destination, dot + name + ".", keep_vars)
        for hook in tuple(self._hook_table("_state_dict_hooks").values()):
            result = hook(self, destination, dot, metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:  # the private hook's result (kept by the root only)
                destination = result
        return destination

    def _prefixed_modules(self, prefix: str = ""):
        """Every (dotted prefix, module), a module reached by two paths twice (as torch)."""
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip("."),
                                                        remove_duplicate=False):
            yield (module_prefix + "." if module_prefix else ""), module

    def _own_tensors(self, dot: str, keep_vars: bool) -> dict:
        skip = self.__dict__.get("_non_persistent", ())  # buffers only, as torch
        return {dot + name: value if keep_vars else value.detach()
                for registry in (self._parameters, self._buffers)
                for name, value in registry.items() if value is not None and not (
                    registry is self._buffers and name in skip)}

    def _hook_table(self, name: str) -> OrderedDict:
        return self.__dict__.setdefault(name, OrderedDict())

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` reads this module."""
        return add_hook(self._hook_table("_state_dict_pre_hooks"), hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict`` saved
        this module and its children; it may edit ``state_dict`` in place and returns None."""
        hook._from_public_api = True  # torch's mark: its result must be None
        return add_hook(self._hook_table("_state_dict_hooks"), hook)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """torch's older post-hook: a non-None result replaces the root's state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return add_hook(self._hook_table("_state_dict_hooks"), hook)

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before ``load_state_dict`` reads this module's
        keys; it may rename or add keys (in load_state_dict's own copy of the dict). The
        three lists it gets are scratch lists: load_state_dict computes its own after."""
        return add_hook(self._hook_table("_load_state_dict_pre_hooks"), hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False
                                           ) -> RemovableHandle:
        """torch's older spelling: without ``with_module`` the hook gets no module argument."""
        return add_hook(self._hook_table("_load_state_dict_pre_hooks"),
                        hook if with_module else _WithoutModule(hook))

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict`` copied the values
        and before its strict check: clearing keys from the lists in place forgives them."""
        return add_hook(self._hook_table("_load_state_dict_post_hooks"), hook)

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to save non-tensor state in the state dict."""
        raise RuntimeError(_NEVER_CALLED.format("get_extra_state"))

    def set_extra_state(self, state) -> None:
        """Override (with ``get_extra_state``) to restore what ``get_extra_state`` returned."""
        raise RuntimeError(_NEVER_CALLED.format("set_extra_state"))

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into parameters and buffers, in place."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", {})  # each module's, by prefix
        state_dict = OrderedDict(state_dict)  # pre-hooks may edit it: not the caller's
        self._run_load_pre_hooks(state_dict, "", strict, metadata)
        own, extra = self._load_targets()
        errors, refused = [], set()  # torch still loads the keys without an error
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            refused.add(key)
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected '
                              f"gradkit.Tensor or Tensor-like object from checkpoint but "
                              f"received {type(value)}")
            elif not is_lazy(target) and tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{target.shape}.")
            else:
                refused.discard(key)
        self._load({k: v for k, v in own.items() if k not in refused}, extra, state_dict, assign)
        while True:  # a set_extra_state may add submodules: torch loads them after it
            now_own, now_extra = self._load_targets()
            new_own = {k: v for k, v in now_own.items() if k not in own}
            new_extra = {k: v for k, v in now_extra.items() if k not in extra}
            if not new_own and not new_extra:
                break
            self._load(new_own, new_extra, state_dict, assign)
            own, extra = now_own, now_extra
        missing = [key for key in (*own, *extra) if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own and key not in extra]
        keys = _IncompatibleKeys(missing, unexpected)
        for module in self._children_first():  # torch's recursion: children first
            for hook in tuple(module._hook_table("_load_state_dict_post_hooks").values()):
                if hook(module, keys) is not None:
                    raise AssertionError(_POST_HOOK_RETURNED)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    def _upgrade_state_dict(self, state_dict: OrderedDict, dot: str, local_metadata: dict
                            ) -> None:
        """Bring keys saved by an older ``_version`` of this module up to date (in place):
        layers that changed override it, as torch's ``_load_from_state_dict``."""

    def _load_targets(self) -> tuple[dict, dict]:
        """What load_state_dict fills: the tensors and the modules with extra state, by key."""
        own, extra = {}, {}
        for dot, module in self._prefixed_modules():
            own.update(module._own_tensors(dot, keep_vars=True))
            if type(module).set_extra_state is not ModuleState.set_extra_state:
                extra[dot + "_extra_state"] = module
        return own, extra

    def _children_first(self):
        """Every module of the tree, each after its children (a shared one once per path)."""
        for child in self._modules.values():
            if child is not None:
                yield from child._children_first()
        yield self

    def _run_load_pre_hooks(self, state_dict: OrderedDict, dot: str, strict: bool,
                            metadata: dict) -> None:
        """This module's load pre-hooks, then its children's, each child's on the keys under
        its prefix only (as torch's recursive load); what a child's hooks change is merged
        back into ``state_dict``."""
        local_metadata = metadata.get(dot[:-1], {})
        self._upgrade_state_dict(state_dict, dot, local_metadata)
        for hook in tuple(self._hook_table("_load_state_dict_pre_hooks").values()):
            hook(self, state_dict, dot, local_metadata, strict, [], [], [])
        for name, child in self._modules.items():
            if child is None:
                continue
            child_dot = dot + name + "."
            local = OrderedDict((k, v) for k, v in state_dict.items() if k.startswith(child_dot))
            before = list(local.items())
            child._run_load_pre_hooks(local, child_dot, strict, metadata)
            after = list(local.items())
            if len(after) != len(before) or any(a[0] != b[0] or a[1] is not b[1]
                                                for a, b in zip(after, before)):
                for key in [k for k in state_dict if k.startswith(child_dot)]:
                    del state_dict[key]
                state_dict.update(local)

    def _load(self, own: dict, extra: dict, state_dict: dict, assign: bool) -> None:
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    if assign:  # take the checkpoint's tensor itself (keeping requires_grad)
                        owner, _, name = key.rpartition(".")
                        self.get_submodule(owner)._assign(name, target, state_dict[key])
                    else:
                        target.copy_(state_dict[key])
        for key, module in extra.items():
            if key in state_dict:
                module.set_extra_state(state_dict[key])

    def _assign(self, name: str, target: Tensor, value: Tensor) -> None:
        if name in self._parameters:
            value = value if isinstance(value, Parameter) else Parameter(value)
            self._parameters[name] = value._set_requires_grad(target.requires_grad)
        else:
            self._buffers[name] = value
