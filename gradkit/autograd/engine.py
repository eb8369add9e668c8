"""The backward engine: ``backward`` and ``grad``.

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
import threading

from gradkit.autograd import batching, observers
from gradkit.backend import device_context
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.graph import AccumulateGrad, accumulate_lock, accumulate_node

_LEAF_PRIORITY = float("inf")  # leaves accumulate after every other node has run


def _Tensor():
    from gradkit._tensor import Tensor
    _TensorType[0] = Tensor
    return Tensor


def _tensors(value, what: str) -> tuple:
    Tensor = _Tensor()
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, (list, tuple)):
        for v in value:
            if not isinstance(v, Tensor):
                raise TypeError(f"{what} must be Tensors, but got {type(v).__name__}")
        return tuple(value)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, but got "
                    f"{type(value).__name__}")


def _root_edge(t, index: int):
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (accumulate_node(t), 0)
    raise RuntimeError(f"element {index} of tensors does not require grad and does not have a "
                       "grad_fn")


def _shape_str(shape) -> str:
    return f"gradkit.Size({list(shape)})"


def _root_grads(outputs, grads, create_graph: bool, batched: bool) -> list:
    """Check or create the seed gradient of every output (torch's _make_grads)."""
    Tensor = _Tensor()
    if grads is None:
        grads = (None,) * len(outputs)
    elif not isinstance(grads, (list, tuple)):  # a Tensor, or a wrong type reported below
        grads = (grads,)
    else:
        grads = tuple(grads)
    if len(grads) != len(outputs):
        raise RuntimeError("grad can be implicitly created only for scalar outputs" if not grads
                           else f"got {len(outputs)} tensors and {len(grads)} gradients")
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out._requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.kind == "c":
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       "outputs")
            with device_context(out._data):
                data = _xp(out._data).ones_like(out._data)
            seeds.append(Tensor._make(data) if create_graph else data)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        out_shape = tuple(out._data.shape)
        g_shape = tuple(g._data.shape)
        if batched:
            if g_shape[1:] != out_shape:
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each "
                    "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                    "expected to match the shape of corresponding output, but a mismatch was "
                    f"detected: grad_output[{i}] has a shape of {_shape_str(g_shape)} and "
                    f"output[{i}] has a shape of {_shape_str(out_shape)}. If you only want some "
                    "tensors in `grad_output` to be considered batched, consider using vmap.")
        elif g_shape != out_shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{_shape_str(g_shape)} and output[{i}] has a shape of "
                               f"{_shape_str(out_shape)}.")
        if (g._data.dtype.kind == "c") != (out._data.dtype.kind == "c"):
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                f"output[{i}] has a dtype of {out.dtype}.")
        if g._data.dtype != out._data.dtype and not batched:
            g = g.to(out.dtype)
        seeds.append(g if create_graph else g._data)
    return seeds


def _xp(array):
    from gradkit.backend import get_array_module
    return get_array_module(array)


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on.

    >>> x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    >>> gradkit.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both "
                               "passed to backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    outputs = _tensors(tensors, "tensors")
    if inputs is not None:
        inputs = _tensors(inputs, "inputs")
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    seeds = _root_grads(outputs, grad_tensors, create_graph, batched=False)
    targets = None
    if inputs is not None:
        targets = [_input_edge(t, "backward") for t in inputs]
    captured = run(roots, seeds, retain_graph, create_graph, targets, accumulate=True)
    if inputs is not None:  # non-leaf inputs: their gradient goes into their .grad
        for t, g in zip(inputs, captured):
            if t.grad_fn is not None and g is not None:
                _accumulate_into(t, g, create_graph)


def _input_edge(t, caller: str):
    if not t._requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (accumulate_node(t), 0)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned (not accumulated into ``.grad``).

    >>> x = gradkit.tensor(3.0, requires_grad=True)
    >>> gradkit.autograd.grad(x ** 2, x)
    (tensor(6.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads="
                         "True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _tensors(outputs, "outputs")
    ins = _tensors(inputs, "inputs")
    if not ins:
        raise RuntimeError("grad requires non-empty inputs.")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outs)]
    targets = [_input_edge(t, "grad") for t in ins]
    if is_grads_batched:
        results = _batched_grad(outs, ins, roots, targets, grad_outputs, retain_graph,
                                create_graph)
    else:
        seeds = _root_grads(outs, grad_outputs, create_graph, batched=False)
        captured = run(roots, seeds, retain_graph, create_graph, targets, accumulate=False)
        results = [_as_tensor(g) for g in captured]
    for i, g in enumerate(results):
        if g is None:
            if materialize_grads:
                from gradkit.creation import zeros_like
                results[i] = zeros_like(ins[i])
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
    return tuple(results)


def _batched_grad(outs, ins, roots, targets, grad_outputs, retain_graph, create_graph) -> list:
    """Batched vjp: one backward pass on the stacked seeds when every node that runs is
    batchable (autograd/batching.py), otherwise one pass per row, stacked."""
    grads = _root_grads(outs, grad_outputs, True, batched=True)
    sizes = [g.shape[0] for g in grads]
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    batch = sizes[0]
    if _vectorizable(roots, targets, batch):
        seeds = grads if create_graph else [g._data for g in grads]
        with batching.batched(batch):
            captured = run(roots, seeds, retain_graph, create_graph, targets, accumulate=False)
        for t, g in zip(ins, captured):
            expected = (batch, *t._data.shape)
            if g is not None and tuple(g.shape) != expected:  # an op wrongly marked batchable
                raise RuntimeError(f"vectorized is_grads_batched gave a gradient of shape "
                                   f"{list(g.shape)}, expected {list(expected)}")
        return [_as_tensor(g) for g in captured]
    return _looped_grad(grads, batch, roots, targets, retain_graph, create_graph)


def _vectorizable(roots, targets, batch: int) -> bool:
    from gradkit.ops import _op
    if batch == 0 or _op._forward_ad is not None:  # a jvp rule must not see batched values
        return False
    _, runs = _plan(roots, targets, accumulate=False)
    return batching.vectorizable(runs | {node for node, _ in targets})


def _looped_grad(grads, batch, roots, targets, retain_graph, create_graph) -> list:
    """One backward pass per row of the batched seeds, stacked (correct for any graph)."""
    from gradkit.ops.shape import stack
    Tensor = _Tensor()
    rows = []
    for b in range(batch):
        seeds = [g[b] if create_graph else g[b]._data for g in grads]
        keep = retain_graph or b < batch - 1
        rows.append(run(roots, seeds, keep, create_graph, targets, accumulate=False))
    results = []
    for j in range(len(targets)):
        column = [r[j] for r in rows]
        if all(c is None for c in column):
            results.append(None)
            continue
        like = next(c for c in column if c is not None)
        column = [c if c is not None else _zeros_like(like) for c in column]
        column = [c if isinstance(c, Tensor) else Tensor._make(c) for c in column]
        results.append(stack(column))
    return results


def _zeros_like(g):
    return _xp(getattr(g, "_data", g)).zeros_like(getattr(g, "_data", g))


def _as_tensor(g):
    if g is None:
        return None
    Tensor = _Tensor()
    return g if isinstance(g, Tensor) else Tensor._make(g)


# -- the core loop -------------------------------------------------------------------

def run(roots, seeds, retain_graph: bool, create_graph: bool, targets=None,
        accumulate: bool = True) -> list:
    """Run backward from ``roots`` seeded with ``seeds``; return the grads captured at targets.

    ``targets`` (edges) restricts the run to nodes that lead to them. With
    ``accumulate=False`` the targets' gradients are captured instead of
    accumulated into leaves (autograd.grad).
    """
    previous_mode = grad_state.grad_enabled
    grad_state.grad_enabled = create_graph
    _callbacks.stack = (*_callbacks.stack, [])
    try:
        if observers.active:
            captured = observers.observe_backward(_execute, roots, seeds, retain_graph,
                                                  create_graph, targets, accumulate)
        else:
            captured = _execute(roots, seeds, retain_graph, create_graph, targets, accumulate)
    finally:
        grad_state.grad_enabled = previous_mode
        queued = _callbacks.stack[-1]
        _callbacks.stack = _callbacks.stack[:-1]
    for callback in queued:  # after leaves accumulated: multi-grad hooks see every gradient
        callback()
    return captured


class _Callbacks(threading.local):
    stack: tuple = ()  # one list per engine pass running on this thread (innermost last)


_callbacks = _Callbacks()


def queue_callback(callback) -> None:
    """Run ``callback()`` when the innermost backward pass of this thread has finished."""
    if not _callbacks.stack:
        raise RuntimeError("queue_callback can only be called during the backward pass")
    _callbacks.stack[-1].append(callback)


def current_pass():
    """An object that identifies this thread's innermost running backward pass (or None)."""
    return _callbacks.stack[-1] if _callbacks.stack else None


def _execute(roots, seeds, retain_graph, create_graph, targets, accumulate):
    dependencies, runs = _plan(roots, targets, accumulate)
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
    while ready:
        node = pop(ready)[2]
        grads = buffers.pop(node, None) or [None]
        extras = node._extras  # also set for metadata or anomaly traces: look for hooks
        if extras is not None and (extras.tensor_pre_hooks or extras.retain_grad_hooks
                                   or extras.pre_hooks):
            grads = _stage(observed, node, _call_pre_hooks, node, grads, create_graph)
        if type(node) is AccumulateGrad and getattr(node.variable, "_hooks", None):
            # a leaf's tensor hooks, before its gradient is captured or accumulated
            grads = _stage(observed, node, _call_leaf_hooks, node.variable, grads, create_graph)
        if capture and node in capture:
            for slot, j in capture[node]:
                captured[j] = grads[slot] if slot < len(grads) else None
        if runs is not None and node not in runs:
            continue
        if type(node) is AccumulateGrad:
            leaf_grad = grads[0]
            if leaf_grad is not None:
                # like torch, steal a gradient nobody else holds instead of copying it into
                # .grad: 3 references = `grads`, `leaf_grad` and getrefcount's argument
                owned = getattr(leaf_grad, "base", 0) is None and sys.getrefcount(leaf_grad) == 3
                leaves.append((node, leaf_grad, owned))
            continue
        if watcher is not None:  # one observer watches nodes (a profiler or anomaly mode)
            token = watcher.node_enter(node, grads)
            try:
                grad_inputs = node.op.backward(node, grads, create_graph)
            except BaseException as exc:
                _node_failed(watcher, token, node, exc)
                raise
            watcher.node_exit(token, grad_inputs)
        elif watched:
            grad_inputs = _run_observed(watched, node, grads, create_graph)
        elif observed:  # observers that do not watch nodes still hear of its errors
            grad_inputs = _observed_hooks(node, node.op.backward, node, grads, create_graph)
        else:
            grad_inputs = node.op.backward(node, grads, create_graph)
        if not node.op.checks_grads:
            grad_inputs = _validate(node, grad_inputs)
        if node._extras is not None and node._extras.post_hooks:
            grad_inputs = _call_post_hooks(node, grad_inputs, grads, create_graph)
        if not retain_graph:
            if watch_saved:
                node.release()
            else:
                node.saved = None
        for edge, g in zip(node._next, grad_inputs):
            if edge is None:
                continue
            child, slot = edge
            if runs is not None and child not in runs and child not in capture:
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
                push(ready, (_LEAF_PRIORITY if type(child) is AccumulateGrad
                             else -child._sequence_nr, order, child))
                order += 1
        g = grad_inputs = None  # drop references: gradients may be stolen by .grad
    for node, g, owned in leaves:
        _stage(observed, node, _accumulate_into, node.variable, g, create_graph, owned)
    return captured


def _stage(observed, node, run, *args):
    """Run one hook/accumulation stage of ``node``; observers hear of its exceptions."""
    return _observed_hooks(node, run, *args) if observed else run(*args)


def _priority(node) -> float:
    return _LEAF_PRIORITY if type(node) is AccumulateGrad else -node._sequence_nr


def _add_to_buffer(buffers, node, slot, g) -> None:
    buffer = buffers.get(node)
    if buffer is None:
        buffer = buffers[node] = [None] * (slot + 1 if slot else 1)
    elif len(buffer) <= slot:
        buffer.extend([None] * (slot + 1 - len(buffer)))
    current = buffer[slot]
    buffer[slot] = g if current is None else current + g


def _plan(roots, targets, accumulate):
    """Dependency counts over the nodes that will run; with targets, which nodes run."""
    root_nodes = {node for node, _ in roots}
    seen = set(root_nodes)
    stack = list(root_nodes)
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        for edge in node._next:
            if edge is not None and edge[0] not in seen:
                seen.add(edge[0])
                stack.append(edge[0])
    runs = None
    if targets is not None:
        target_nodes = {node for node, _ in targets}
        leads = {}
        # children have smaller sequence numbers: ascending order visits them first
        for node in sorted(order, key=_seq):
            leads[node] = node in target_nodes or any(
                edge is not None and leads.get(edge[0], False) for edge in node._next)
        runs = {node for node in order
                if any(edge is not None and leads.get(edge[0], False) for edge in node._next)}
        if accumulate:  # backward(inputs=...): the targeted leaves do accumulate
            runs |= {n for n in target_nodes if type(n) is AccumulateGrad}
        scheduled = runs | target_nodes
    else:
        scheduled = seen
    dependencies = {}
    for node in order:
        if runs is not None and node not in runs:
            continue
        for edge in node._next:
            if edge is not None and edge[0] in scheduled:
                dependencies[edge[0]] = dependencies.get(edge[0], 0) + 1
    return dependencies, runs


def _seq(node) -> int:
    return -1 if type(node) is AccumulateGrad else node._sequence_nr


def _run_observed(watchers, node, grads, create_graph):
    """The node's backward between node_enter and node_exit of several observers; all
    observers hear of its exceptions (node_error)."""
    tokens = [obs.node_enter(node, grads) for obs in watchers]
    grad_inputs = None
    try:
        grad_inputs = node.op.backward(node, grads, create_graph)
        return grad_inputs
    except Exception as exc:
        observers.notify_error(node, exc)
        raise
    finally:
        observers.exit_nodes(watchers, tokens, grad_inputs)


def _node_failed(watcher, token, node, exc: BaseException) -> None:
    """The one node watcher's node_exit after a failed backward; all observers hear of it."""
    if isinstance(exc, Exception):
        observers.notify_error(node, exc)
    watcher.node_exit(token, None)


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
        data = g._data if type(g) is _TensorType[0] else getattr(g, "_data", g)
        if data.shape != shape:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(data.shape)} but expected shape compatible with {list(shape)}")
        if data.dtype != dtype:
            fixed = list(grad_inputs) if fixed is None else fixed
            from gradkit.ops._op import cast_grad  # ops sit above the engine's imports
            fixed[i] = cast_grad(g, dtype)
    return grad_inputs if fixed is None else tuple(fixed)


_TensorType = [None]  # the Tensor class, bound by _Tensor() before any backward runs


# -- hooks -----------------------------------------------------------------------------

def _wrap(g, create_graph):
    if g is None or create_graph:
        return g
    return _Tensor()._make(g)


def _unwrap(g, create_graph):
    if g is None or create_graph:
        return g
    return g._data


def _call_pre_hooks(node, grads, create_graph):
    extras = node._extras
    grads = list(grads)
    if extras.tensor_pre_hooks:
        for slot, hooks in extras.tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if slot >= len(grads) or grads[slot] is None:
                    continue
                new = hook(_wrap(grads[slot], create_graph))
                if new is not None:
                    _check_hook_result(new, grads[slot], "hook")
                    grads[slot] = _unwrap(new, create_graph)
    if extras.retain_grad_hooks:
        for slot, hook in extras.retain_grad_hooks.items():
            if slot < len(grads) and grads[slot] is not None:
                hook(_wrap(grads[slot], create_graph))
    if extras.pre_hooks:
        for hook in list(extras.pre_hooks.values()):
            new = hook(tuple(_wrap(g, create_graph) for g in grads))
            if new is not None:
                grads = [_unwrap(g, create_graph) for g in new]
    return grads


def _call_leaf_hooks(leaf, grads, create_graph):
    """``leaf.register_hook`` hooks: see (and may replace) the gradient flowing into the leaf."""
    g = grads[0]
    if g is None:
        return grads
    for hook in list(leaf._hooks.values()):
        new = hook(_wrap(g, create_graph))
        if new is not None:
            _check_hook_result(new, g, "hook")
            g = _unwrap(new, create_graph)
    return [g]


def _call_post_hooks(node, grad_inputs, grads, create_graph):
    wrapped_outputs = tuple(_wrap(g, create_graph) for g in grads)
    for hook in list(node._extras.post_hooks.values()):
        new = hook(tuple(_wrap(g, create_graph) for g in grad_inputs), wrapped_outputs)
        if new is not None:
            if len(new) != len(grad_inputs):
                name = getattr(hook, "__name__", type(hook).__name__)
                raise RuntimeError(f"hook '{name}' has returned an incorrect number of values "
                                   f"(got {len(new)}, but expected {len(grad_inputs)})")
            grad_inputs = tuple(_unwrap(g, create_graph) for g in new)
    return grad_inputs


def _check_hook_result(new, old, what):
    Tensor = _Tensor()
    if not isinstance(new, Tensor):
        raise TypeError(f"{what} must return a Tensor or None, but got {type(new).__name__}")
    old_shape = getattr(old, "_data", old).shape
    if new._data.shape != old_shape:
        raise RuntimeError(f"hook 'hook' has changed the size of value: expected "
                           f"{list(old_shape)} but got {list(new._data.shape)}")


def _accumulate_into(t, g, create_graph: bool, owned: bool = False) -> None:
    """``t.grad += g`` (torch's AccumulateGrad), after the leaf's tensor hooks.

    ``owned``: no one else refers to the array ``g``, so it may become ``.grad`` uncopied.
    """
    Tensor = _Tensor()
    with accumulate_lock:
        current = getattr(t, "_grad", None)
        if isinstance(g, Tensor):  # create_graph: keep the graph of the gradient
            t._grad = g if current is None else current + g
        elif current is None:
            t._grad = Tensor._make(g if owned else _xp(g).array(g, copy=True))
        elif current._requires_grad or current._data.shape != g.shape:
            t._grad = current + Tensor._make(g)
        else:
            current._data += g  # in place, as torch does when no graph is built
    post_hooks = getattr(t, "_post_acc_hooks", None)
    if post_hooks:
        for hook in list(post_hooks.values()):
            hook(t)
