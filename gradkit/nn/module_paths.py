"""Module calls as the profiler sees them with ``with_modules=True``: each call of an
``nn.Module`` is a range named ``nn.Module: <path> (<class>)`` (``nn.Module: CNN.conv1
(Conv2d)``), so the ops of layers called from one line of the user's code are told apart.

The path is the module's attribute names from the outermost module being called (named by its
class) down, found as the calls nest: no registry of models, nothing kept after a call.
"""
from __future__ import annotations

import threading

from gradkit.autograd import observers

MODULE_PREFIX = "nn.Module: "  # torch's prefix for module events in its traces


class _Paths(threading.local):
    def __init__(self) -> None:
        self.stack: list = []  # (module, path) of the calls open on this thread


_paths = _Paths()


def call_observed(module, call):
    """``call()`` inside a module range for the observers that watch module calls."""
    stack = _paths.stack
    path = _path_of(module, stack[-1] if stack else None)
    stack.append((module, path))
    try:
        return observers.observe_module(f"{MODULE_PREFIX}{path} ({type(module).__name__})",
                                        call)
    finally:
        stack.pop()


def _path_of(module, parent) -> str:
    """``parent_path.name`` for a child called by its parent, else the class name (a call from
    outside any module, or a module its caller does not hold)."""
    if parent is None:
        return type(module).__name__
    parent_module, parent_path = parent
    for name, child in parent_module._modules.items():
        if child is module:
            return f"{parent_path}.{name}"
    return f"{parent_path}.{type(module).__name__}"
