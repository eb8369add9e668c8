"""Tensor-level hooks: register_hook, retain_grad, post-accumulate hooks.

Leaf hooks live on the tensor (its AccumulateGrad is cached only weakly); hooks
of non-leaf tensors live on their grad_fn, keyed by output slot. Hooks that
need the tensor hold it weakly, so a hook never keeps its graph alive.
"""
from __future__ import annotations

import weakref

from gradkit._tensor import Tensor
from gradkit.autograd.graph import AccumulateGrad, RemovableHandle, _HookDict, add_hook
from gradkit.autograd.hook_results import check_hook_tensor, check_hook_tuple
from gradkit.autograd.node_edges import shown_inputs
from gradkit.autograd.zero_grads import plain
from gradkit.memory_format import contiguous_format


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
            # torch's clone(contiguous_format): an expanded gradient (of a sum) becomes dense,
            # and under create_graph the copy keeps the graph (CloneBackward0)
            source = grad if grad._requires_grad else grad.detach()
            t._grad = source.clone(memory_format=contiguous_format)
        else:
            t._grad = current + grad

    extras = tensor.grad_fn.extras()
    if extras.retain_grad_hooks is None:
        extras.retain_grad_hooks = {}
    extras.retain_grad_hooks[tensor._output_nr] = retain


# -- running hooks (the engine calls these around a node) ---------------------------------


def _wrap(g, create_graph):
    if g is None or create_graph:
        return g
    return Tensor._make(g)


def _unwrap(g, create_graph):
    if g is None or create_graph:
        return g
    return g._data


def _call_tensor_pre_hooks(node, grads, create_graph):
    """The hooks of the tensors whose gradients ``node`` receives, as torch orders them:
    ``register_hook`` hooks (per tensor, in registration order), then ``retain_grad``.

    A leaf's hooks live on the leaf and act as the tensor pre-hooks of its AccumulateGrad.
    """
    grads = [plain(g) for g in grads]  # hooks may write into them
    if type(node) is AccumulateGrad:
        hooks = getattr(node.variable, "_hooks", None)
        if hooks:
            grads[0] = _run_tensor_hooks(hooks, grads[0], create_graph)
        return grads
    extras = node._extras
    if extras.tensor_pre_hooks:
        for slot, hooks in extras.tensor_pre_hooks.items():
            if slot >= len(grads):  # an output no gradient reached: its hooks see None
                grads.extend([None] * (slot + 1 - len(grads)))
            grads[slot] = _run_tensor_hooks(hooks, grads[slot], create_graph)
    if extras.retain_grad_hooks:
        for slot, hook in extras.retain_grad_hooks.items():
            if slot < len(grads) and grads[slot] is not None:
                hook(_wrap(grads[slot], create_graph))
    return grads


def _run_tensor_hooks(hooks, g, create_graph):
    """``g`` through one tensor's hooks; each may return a replacement of the same size.

    As in torch the hooks run even when no gradient reached the tensor (they see None)."""
    for hook in list(hooks.values()):
        new = hook(_wrap(g, create_graph))
        if new is not None:
            check_hook_tensor(new, g, hook)
            g = _unwrap(new, create_graph)
    return g


def _call_node_pre_hooks(node, grads, create_graph):
    """``node.register_prehook`` hooks: they see the gradients after the tensor hooks."""
    grads = _every_output(grads, node)  # (plain: hooks may write into them)
    for hook in list(node._extras.pre_hooks.values()):
        new = hook(tuple(_wrap(g, create_graph) for g in grads))
        if new is not None:
            check_hook_tuple(new, tuple(grads), hook)
            grads = [_unwrap(g, create_graph) for g in new]
    return grads


def _every_output(grads, node) -> list:
    """One gradient (or None) per output of ``node``, as torch's node hooks see them: the
    engine's buffer stops at the last output that was fed."""
    extras, ctx = node._extras, node.params
    meta = extras.output_meta if extras is not None and extras.output_meta else \
        getattr(ctx, "_output_meta", None)  # (a custom Function's ctx)
    grads = list(map(plain, grads))
    return grads + [None] * ((len(meta) if meta else 1) - len(grads))


def _call_post_hooks(node, grad_inputs, grads, create_graph):
    grad_inputs, grads = tuple(map(plain, grad_inputs)), tuple(_every_output(grads, node))
    wrapped_outputs = tuple(_wrap(g, create_graph) for g in grads)
    # the hooks see one gradient per edge of next_functions, as torch's (x ** 2: one)
    shown = shown_inputs(node) if grad_inputs else None
    visible = grad_inputs if shown is None else tuple(grad_inputs[i] for i in shown)
    for hook in list(node._extras.post_hooks.values()):
        new = hook(tuple(_wrap(g, create_graph) for g in visible), wrapped_outputs)
        if new is not None:
            check_hook_tuple(new, visible, hook)
            visible = tuple(_unwrap(g, create_graph) for g in new)
    if shown is None:
        return visible
    full = list(grad_inputs)  # the inputs torch has no edge for get no gradient anyway
    for i, g in zip(shown, visible):
        full[i] = g
    return tuple(full)
