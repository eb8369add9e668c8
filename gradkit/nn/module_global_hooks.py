"""Global module hooks: hooks that every ``nn.Module`` call (or registration) runs.

torch keeps them in ``torch.nn.modules.module`` (``register_module_forward_hook`` ...); a
module call runs the global hooks before its own. ``gradkit.nn.modules.module`` re-exports
these names. The tables are module-level dicts, mutated in place (never rebound), so that
every importer sees the same hooks.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from gradkit.autograd.graph import RemovableHandle

_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
# whether _global_backward_hooks hold full (True) or legacy (False) hooks; None: none yet.
# A one-entry dict rather than a global name, so that importers read its current value.
_global_backward_kind: dict = {"full": None}

_MIXED_GLOBAL = ("Cannot use both regular backward hooks and full backward hooks as a global "
                 "Module hook. Please use only one of them.")


class FlaggedHandle(RemovableHandle):
    """A handle that also forgets the hook's flags (with_kwargs, always_call: the entries of
    ``flag_tables``) on remove."""

    def __init__(self, hooks: OrderedDict, flag_tables: tuple) -> None:
        super().__init__(hooks)
        self._flag_tables = flag_tables

    def remove(self) -> None:
        super().remove()
        for table in self._flag_tables:
            table.pop(self.id, None)

    def __getstate__(self) -> tuple:
        return (*super().__getstate__(), self._flag_tables)

    def __setstate__(self, state: tuple) -> None:
        super().__setstate__(state[:2])
        self._flag_tables = state[2]


def _add(table: OrderedDict, hook: Callable) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (before the module's own hooks)."""
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` after every module's forward (before its own hooks)."""
    # torch's global handle forgets the always_call flag only, not with_kwargs
    handle = FlaggedHandle(_global_forward_hooks, (_global_forward_hooks_always_called,))
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, grad_output)`` for every module, as ``register_full_backward_pre_hook``."""
    return _add(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module, as
    ``Module.register_full_backward_hook``."""
    return _add_backward(hook, full=True)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """The deprecated non-full hook for every module, as ``Module.register_backward_hook``."""
    return _add_backward(hook, full=False)


def _add_backward(hook: Callable, full: bool) -> RemovableHandle:
    if _global_backward_kind["full"] is (not full):
        raise RuntimeError(_MIXED_GLOBAL)
    _global_backward_kind["full"] = full
    return _add(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, buffer)`` when any module registers a buffer; a non-None result
    is registered instead."""
    return _add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, submodule)`` when any module registers a submodule; a non-None
    result is registered instead."""
    return _add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, param)`` when any module registers a parameter; a non-None result
    is registered instead."""
    return _add(_global_parameter_registration_hooks, hook)


def run_registration_hooks(table: OrderedDict, module, name: str, value):
    """The value to register after the global registration hooks of ``table`` saw it."""
    for hook in tuple(table.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def global_backward_hooks(full: bool) -> list:
    """The global backward hooks of the kind asked for (full or legacy)."""
    return list(_global_backward_hooks.values()) if _global_backward_kind["full"] is full \
        else []
