"""Tensor-level hooks: register_hook, retain_grad, post-accumulate hooks.

Leaf hooks live on the tensor (its AccumulateGrad is cached only weakly); hooks
of non-leaf tensors live on their grad_fn, keyed by output slot. Hooks that
need the tensor hold it weakly, so a hook never keeps its graph alive.
"""
from __future__ import annotations

import weakref

from gradkit.autograd.graph import RemovableHandle, _HookDict, add_hook


def register_tensor_hook(tensor, hook) -> RemovableHandle:
    if tensor.grad_fn is None:
        hooks = getattr(tensor, "_hooks", None)
        if hooks is None:
            hooks = tensor._hooks = _HookDict()
        return add_hook(hooks, hook)
    return tensor.grad_fn._register_tensor_pre_hook(tensor._output_nr, hook)


def register_post_accumulate_hook(tensor, hook) -> RemovableHandle:
    hooks = getattr(tensor, "_post_acc_hooks", None)
    if hooks is None:
        hooks = tensor._post_acc_hooks = _HookDict()
    return add_hook(hooks, hook)


def retain_grad_hook(tensor) -> None:
    """Make backward store the gradient of this non-leaf tensor in its ``.grad``."""
    ref = weakref.ref(tensor)

    def retain(grad):
        t = ref()
        if t is None:
            return
        current = getattr(t, "_grad", None)
        if current is None:
            t._grad = grad.detach().clone() if not grad._requires_grad else grad
        else:
            t._grad = current + grad

    extras = tensor.grad_fn.extras()
    if extras.retain_grad_hooks is None:
        extras.retain_grad_hooks = {}
    extras.retain_grad_hooks[tensor._output_nr] = retain
