"""The backward engine: runs a graph backward from seeded roots (autograd/api.py checks
the user's arguments of ``backward``/``grad`` and calls ``run``).

Iterative (no recursion, so a 10**6-node chain is fine) and dependency-counted:
a node runs once every node that feeds it a gradient has run; among the ready
nodes the most recently created runs first (decreasing sequence number), as in
PyTorch. Gradients are summed per input slot, each node's buffer is dropped as
soon as the node runs, and saved tensors are freed after use unless
``retain_graph``. Leaf accumulation happens last, so an error in the middle of
backward never leaves ``.grad`` half-updated.

A plain backward runs the derivative rules on raw arrays; ``create_graph=True``
runs the same rules on Tensors with grad mode on, which records them.
"""
from __future__ import annotations

import heapq
import sys
from time import perf_counter_ns

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd import observers
from gradkit.autograd.backward_pass import BackwardPass, passes
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.exec_plan import plan
from gradkit.autograd.graph import (AccumulateGrad, SavedTensor, accumulate_lock,
                                    holds_saved_variables)
from gradkit.autograd.reentrant import PASSES_PER_THREAD, on_fresh_thread
from gradkit.autograd.saved_hooks import saved_hooks_state
from gradkit.autograd.zero_grads import is_known_zero, plain
from gradkit.autograd.hook_results import check_post_accumulate_result
from gradkit.autograd.hooks import _call_node_pre_hooks, _call_post_hooks, _call_tensor_pre_hooks
from gradkit.backend import get_array_module
from gradkit.creation import empty_like
from gradkit.memory_format import in_grad_layout
from gradkit.ops._dispatch_general import fit_grad
from gradkit.quiet_numpy import keep_quiet

# what a node saves that makes it refuse a second backward once freed (never metadata: saved
# shapes are tuples, dtypes NumPy's)
_VARIABLES = frozenset((SavedTensor, float, int, complex, bool))
_LEAF_PRIORITY = float("inf")  # leaves accumulate after every other node has run
_FIRST_PRIORITY = -_LEAF_PRIORITY  # a node that only raises runs before the others (torch's)


def run(roots, seeds, retain_graph: bool, create_graph: bool, targets=None,
        accumulate: bool = True, bounded: bool = False) -> list:
    """Run backward from ``roots`` seeded with ``seeds``; return the grads captured at targets.

    ``targets`` (edges) restricts the run to nodes that lead to them. With ``accumulate=False``
    their gradients are captured, not accumulated into leaves (autograd.grad); ``bounded``: no
    target leads to another, so the graph past them is not even read (ops/one_node.py).
    """
    if len(passes.stack) >= PASSES_PER_THREAD:  # deep reentrant backward
        return on_fresh_thread(run, roots, seeds, retain_graph, create_graph, targets,
                               accumulate, bounded)
    previous_mode = grad_state.grad_enabled
    grad_state.grad_enabled = create_graph
    passes.stack = (*passes.stack, BackwardPass(targets is not None))
    # as torch restores its thread-local state after a graph task: saved-tensor hooks entered
    # or left (unbalanced) by a hook during backward do not outlive it
    hooks_before = saved_hooks_state.stack
    try:
        args = (roots, seeds, retain_graph, create_graph, targets, accumulate, bounded)
        captured = observers.observe_backward(_execute, *args) if observers.active else \
            _execute(*args)
    finally:
        grad_state.grad_enabled = previous_mode
        saved_hooks_state.stack = hooks_before
        queued = passes.stack[-1]
        passes.stack = passes.stack[:-1]
    for callback in queued:  # after leaves accumulated: multi-grad hooks see every gradient
        callback()
    return captured


def _execute(roots, seeds, retain_graph, create_graph, targets, accumulate, bounded=False):
    keep_quiet()
    dependencies, runs = plan(roots, targets, accumulate, bounded)
    capture = {}
    if targets is not None:
        for j, (node, slot) in enumerate(targets):
            capture.setdefault(node, []).append((slot, j))
    captured = [None] * (len(targets) if targets else 0)

    buffers = {}
    for (node, slot), g in zip(roots, seeds):
        _add_to_buffer(buffers, node, slot, g)
    ready = []
    order = 0
    for node in {node for node, _ in roots}:
        if dependencies.get(node, 0) == 0:
            ready.append((_priority(node), order, node))
            order += 1
    heapq.heapify(ready)
    leaves = []  # (AccumulateGrad, grad): applied once everything else succeeded
    observed = observers.active
    watched = observers.node_watchers
    watcher = watched[0] if len(watched) == 1 else None
    watch_saved = observers.saved_watchers
    pop, push = heapq.heappop, heapq.heappush
    # a node that alone became ready runs next, without a trip through the heap (a chain's)
    follow = follow_order = None
    while True:
        if follow is not None:
            node, follow = follow, None
        elif ready:
            node = pop(ready)[2]
        else:
            break
        grads = buffers.pop(node, None) or [None]
        # the edges whose gradients it computes; towards given inputs, only those that lead
        # to one (torch's should_compute_output), and None for a node that does not run
        edges = node._next if runs is None else runs.get(node)
        if capture and edges is not None and node in capture:
            _capture(capture[node], grads, captured)  # torch: a node that runs is captured
        extras = node._extras  # also set for metadata or anomaly traces: look for hooks
        leaf = type(node) is AccumulateGrad
        if extras is not None and (extras.tensor_pre_hooks or extras.retain_grad_hooks) or \
                leaf and getattr(node.variable, "_hooks", None):
            grads = _stage(observed, node, _call_tensor_pre_hooks, node, grads, create_graph)
        if edges is None:  # ... before its tensor hooks; one that does not, after them
            if capture and node in capture:
                _capture(capture[node], grads, captured)
            continue
        if extras is not None and extras.pre_hooks:
            grads = _stage(observed, node, _call_node_pre_hooks, node, grads, create_graph)
        if leaf:
            leaf_grad = grads[0]
            # 3 references: `grads`, `leaf_grad` and getrefcount's argument
            others = sys.getrefcount(leaf_grad) - 3
            leaves.append((node, leaf_grad, _owned(leaf_grad, others, leaves)))
            continue
        op = node.op
        if not observed:  # (observers.active: every node watcher is one of them)
            grad_inputs = op.backward(node, grads, create_graph, edges)
        elif watcher is not None:  # one observer watches nodes (a profiler or anomaly mode)
            token = watcher.node_enter(node, grads) if observers.node_entering else \
                perf_counter_ns()
            try:
                grad_inputs = op.backward(node, grads, create_graph, edges)
            except BaseException as exc:
                _node_failed(watcher, token, node, grads, exc)
                raise
            watcher.node_exit(token, node, grads, grad_inputs)
        elif watched:
            grad_inputs = _run_observed(watched, node, grads, create_graph, edges)
        else:  # observers that do not watch nodes still hear of its errors
            grad_inputs = _observed_hooks(node, op.backward, node, grads, create_graph, edges)
        if not op.checks_grads:
            grad_inputs = _validate(node, grad_inputs)
        if node._extras is not None and node._extras.post_hooks:
            grad_inputs = _call_post_hooks(node, grad_inputs, grads, create_graph)
        saved = node.saved  # a saved tensor first, or one or a number last, is a saved variable
        if not retain_graph and saved and (type(saved[0]) is SavedTensor or
                                           type(saved[-1]) in _VARIABLES or
                                           holds_saved_variables(node)):
            if watch_saved:
                node.release()
            else:
                node.saved = None
        for child, slot, g in zip(edges, node._next_nr, grad_inputs):
            if child is None:  # no input there, or one that leads to no target
                continue
            if g is not None:
                buffer = buffers.get(child)
                if buffer is None and slot == 0:
                    buffers[child] = [g]
                else:
                    _add_to_buffer(buffers, child, slot, g)
            remaining = dependencies[child] - 1
            dependencies[child] = remaining
            if remaining == 0:
                if follow is None and not ready:
                    follow, follow_order = child, order
                else:
                    if follow is not None:  # a second ready node: both go through the heap
                        push(ready, (_priority(follow), follow_order, follow))
                        follow = None
                    push(ready, (_priority(child), order, child))
                order += 1
        g = grad_inputs = None  # drop references: gradients may be stolen by .grad
    for node, g, owned in leaves:
        _stage(observed, node, _accumulate_leaf, node, g, create_graph, owned)
    return captured


def _capture(slots, grads, captured) -> None:
    """Record the gradients autograd.grad returns: ``slots`` is ((slot, result index), ...)."""
    for slot, j in slots:
        captured[j] = plain(grads[slot]) if slot < len(grads) else None


def _owned(leaf_grad, others: int, leaves) -> bool:
    """Whether a leaf may steal ``leaf_grad`` into its ``.grad`` instead of copying it, as
    torch's AccumulateGrad does with a gradient nobody else holds (``others`` references).
    Leaves are applied after the pass, in order, so references of earlier leaves (which
    copy it first) do not count: of leaves given one array, the last steals it, as in torch,
    whose earlier AccumulateGrad copied it while the later one's buffer still held it."""
    if getattr(leaf_grad, "base", 0) is not None:  # a view, or no array
        return False
    return others == 0 or others == sum(entry[1] is leaf_grad for entry in leaves)


def _accumulate_leaf(node, g, create_graph: bool, owned: bool) -> None:
    """Run a leaf's AccumulateGrad: accumulate, post-accumulate hooks (even when no gradient
    arrived, as torch), then the node's post hooks with ``grad_inputs=()``. A leaf that no
    longer requires grad (``detach_()`` since the graph was built) is left alone, as torch."""
    if g is not None and node.variable.grad_fn is not None:  # detach_(), then written in place
        raise RuntimeError("leaf variable has been moved into the graph interior")
    if node.variable._requires_grad:
        _accumulate_into(node.variable, plain(g), create_graph, owned)
    if node._extras is not None and node._extras.post_hooks:
        _call_post_hooks(node, (), (g,), create_graph)


def _stage(observed, node, run, *args):
    """Run one hook/accumulation stage of ``node``; observers hear of its exceptions."""
    return _observed_hooks(node, run, *args) if observed else run(*args)


def _priority(node) -> float:
    kind = type(node)
    if kind is AccumulateGrad:
        return _LEAF_PRIORITY
    return _FIRST_PRIORITY if kind.runs_first else -node._sequence_nr


def _add_to_buffer(buffers, node, slot, g) -> None:
    buffer = buffers.get(node)
    if buffer is None:
        buffer = buffers[node] = [None] * (slot + 1 if slot else 1)
    elif len(buffer) <= slot:
        buffer.extend([None] * (slot + 1 - len(buffer)))
    current = buffer[slot]
    if current is None:
        buffer[slot] = g
    elif type(current) is np.ndarray and type(g) is np.ndarray and current.base is None \
            and current.shape == g.shape and current.dtype == g.dtype \
            and current.flags.writeable and sys.getrefcount(current) == 3:
        # 3 references: the buffer, `current` and getrefcount's argument. Nothing else sees
        # this array (a view or an alias would hold a reference): add in place, as torch's
        # InputBuffer does, instead of allocating a new sum (the same bits)
        current += g if g.dtype.kind != "c" else _times_alpha(g)  # (a real g: no call)
    elif is_known_zero(g):  # a known zero adds nothing (torch's zero tensors); the in-place
        return              # branch above never sees one (its type is not np.ndarray)
    elif is_known_zero(current):
        buffer[slot] = g
    else:
        buffer[slot] = current + _times_alpha(g)


def _times_alpha(g):
    """``g`` as torch's ``current.add_(g)`` adds it when accumulating gradients: a complex
    array times alpha = 1 + 0j, so an infinite part becomes NaN + NaN j as in torch.
    Tensors (create_graph) go through ``add``, which does the same itself."""
    if type(g) is not Tensor and g.dtype.kind == "c":
        return g.dtype.type(1) * g
    return g


def _run_observed(watchers, node, grads, create_graph, edges):
    """The node's backward between node_enter and node_exit of several observers; all
    observers hear of its exceptions (node_error)."""
    tokens = observers.enter_nodes(watchers, node, grads)
    grad_inputs = None
    try:
        grad_inputs = node.op.backward(node, grads, create_graph, edges)
        return grad_inputs
    except Exception as exc:
        observers.notify_error(node, exc)
        raise
    finally:
        observers.exit_nodes(watchers, tokens, node, grads, grad_inputs)


def _node_failed(watcher, token, node, grads, exc: BaseException) -> None:
    """The one node watcher's node_exit after a failed backward; all observers hear of it."""
    if isinstance(exc, Exception):
        observers.notify_error(node, exc)
    watcher.node_exit(token, node, grads, None)


def _observed_hooks(node, run_hooks, *args):
    """Run a hook stage of ``node`` so that observers hear of its exceptions (anomaly mode)."""
    try:
        return run_hooks(*args)
    except Exception as exc:
        observers.notify_error(node, exc)
        raise


def _validate(node, grad_inputs) -> tuple:
    """Check the count, shapes and dtypes of a node's input gradients (cast like torch)."""
    edges = node._next
    if len(grad_inputs) != len(edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(edges)}, got {len(grad_inputs)})")
    fixed = None
    for i, g in enumerate(grad_inputs):
        if g is None or edges[i] is None:
            continue
        shape, dtype = node.input_meta[i]
        fitted = fit_grad(node, i, g, shape, dtype, reducible=False)
        if fitted is not g:
            fixed = list(grad_inputs) if fixed is None else fixed
            fixed[i] = fitted
    return grad_inputs if fixed is None else tuple(fixed)


# -- hooks -----------------------------------------------------------------------------

def _accumulate_into(t, g, create_graph: bool, owned: bool = False) -> None:
    """``t.grad += g`` (torch's AccumulateGrad), after the leaf's tensor hooks.

    ``owned``: no one else refers to the array ``g``, so it may become ``.grad`` uncopied.
    """
    if not t._requires_grad:  # detach_()ed since the graph was built: torch adds nothing
        return
    with accumulate_lock:
        current = getattr(t, "_grad", None)
        if g is None:  # no gradient arrived (torch still runs the post-accumulate hooks)
            pass
        elif isinstance(g, Tensor):  # create_graph: keep the graph of the gradient
            # a copy, as torch: in-place changes of .grad never reach the graph's gradient
            t._grad = _copy_with_graph(g) if current is None else current + g
        elif current is None:  # laid out as the leaf (torch's layout contract)
            fitted = in_grad_layout(xp := get_array_module(g), g, t._data)
            # a copy unless no one else sees it; a read-only one (a 0-d leaf's NumPy scalar)
            # too, as torch's .grad is written in place (zero_grad(set_to_none=False))
            keep = (owned or fitted is not g) and getattr(fitted.flags, "writeable", True)
            t._grad = Tensor._make(fitted if keep else xp.array(fitted, order="K"))
        elif current._requires_grad or current._data.shape != g.shape:
            t._grad = current + Tensor._make(g)
        else:
            current._data += _times_alpha(g)  # in place, as torch does when no graph is built
    post_hooks = getattr(t, "_post_acc_hooks", None)
    if post_hooks:
        for hook in list(post_hooks.values()):
            check_post_accumulate_result(hook(t), t, hook)


def _copy_with_graph(g):
    """A copy of ``g`` that keeps its graph (torch's CopyBackwards)."""
    return empty_like(g).copy_(g)
