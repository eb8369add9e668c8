"""Hook registration: the ordered dicts that hold hooks and the handles that remove them."""
from __future__ import annotations

import weakref
from collections import OrderedDict


class RemovableHandle:
    """Returned by every ``register_*hook``; ``.remove()`` unregisters the hook."""

    next_id = 0

    def __init__(self, hooks_dict: OrderedDict) -> None:
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self._hooks = weakref.ref(hooks_dict)
        self.hooks_dict_ref = self._hooks  # torch's public name: call it for the dict (or None)

    def __getstate__(self) -> tuple:
        # a weak reference does not pickle: the dict goes (a module pickles its hooks with it)
        return self._hooks(), self.id

    def __setstate__(self, state: tuple) -> None:
        hooks, self.id = state
        self._hooks = self.hooks_dict_ref = weakref.ref(_HookDict() if hooks is None else hooks)
        # ids made in this process must not meet the loaded ones
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

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
