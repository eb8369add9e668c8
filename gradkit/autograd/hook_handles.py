"""Hook registration: the ordered dicts that hold hooks and the handles that remove them."""
from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict


class RemovableHandle:
    """Returned by every ``register_*hook``; ``.remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks_dict: OrderedDict) -> None:
        self.id = next(RemovableHandle._ids)
        self._hooks = weakref.ref(hooks_dict)
        self.hooks_dict_ref = self._hooks  # torch's public name: call it for the dict (or None)

    def remove(self) -> None:
        hooks = self._hooks()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_hook(hooks: OrderedDict, fn) -> RemovableHandle:
    """Register ``fn`` in the ordered dict ``hooks``; the handle's ``remove()`` takes it out."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class _HookDict(OrderedDict):
    """OrderedDict that can be weak-referenced (for handles)."""


# their public home is gradkit.autograd.graph, where torch users find RemovableHandle
RemovableHandle.__module__ = add_hook.__module__ = "gradkit.autograd.graph"
