"""The public entry points of reverse mode: ``backward()`` and ``grad()``.

Everything a user can get wrong is checked here, before the engine runs (torch's
messages): the outputs and their seed gradients, ``inputs``, ``allow_unused``,
batched seeds. ``is_grads_batched`` runs one vectorized pass when every node on
the way is batchable (autograd/batching.py), else one pass per row.
"""
from __future__ import annotations

import warnings

from gradkit._tensor import Tensor
from gradkit.autograd import batching
from gradkit.autograd.engine import run
from gradkit.autograd.exec_plan import plan
from gradkit.autograd.graph import GradientEdge, accumulate_node, edge_meta
from gradkit.autograd.transform_errors import BACKWARD, refuse_in_transform
from gradkit.backend import device_context, get_array_module
from gradkit.creation import zeros_like
from gradkit.ops import _dispatch, one_node
from gradkit.ops.joining import stack


def _tensors(value, what: str) -> tuple:
    """Tensors or GradientEdges (torch takes either, one or a sequence)."""
    if isinstance(value, (Tensor, GradientEdge)):
        return (value,)
    if isinstance(value, (list, tuple)):
        for v in value:
            if not isinstance(v, (Tensor, GradientEdge)):
                raise TypeError(f"{what} must be Tensors, but got {type(v).__name__}")
        return tuple(value)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, but got "
                    f"{type(value).__name__}")


def _root_edge(t, index: int):
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (accumulate_node(t), 0)
    raise RuntimeError(f"element {index} of tensors does not require grad and does not have a "
                       "grad_fn")


def _stand_ins(outputs, grads) -> list:
    """The outputs as _root_grads reads them: a GradientEdge becomes a placeholder tensor of
    the shape and dtype of the gradient that flows into it (torch's input metadata)."""
    grads = grads if isinstance(grads, (list, tuple)) else (grads,) * len(outputs)
    stand_ins = []
    for i, out in enumerate(outputs):
        if isinstance(out, Tensor):
            stand_ins.append(out)
            continue
        meta = edge_meta(out)
        seed = grads[i] if i < len(grads) else None
        if meta is None and not isinstance(seed, Tensor):
            raise RuntimeError("gradkit does not know the shape of this GradientEdge's "
                               "gradient (an edge not made by get_gradient_edge): pass its "
                               "grad_outputs")
        shape, dtype, xp = meta if meta is not None else (
            seed._data.shape, seed._data.dtype, get_array_module(seed._data))
        stand_in = Tensor._make(xp.broadcast_to(xp.zeros((), dtype), shape))
        stand_in._requires_grad = True
        stand_ins.append(stand_in)
    return stand_ins


def _shape_str(shape) -> str:
    return f"gradkit.Size({list(shape)})"


def _root_grads(outputs, grads, create_graph: bool, batched: bool) -> list:
    """Check or create the seed gradient of every output (torch's _make_grads)."""
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
                                       f"outputs but got {out.dtype}")
            with device_context(out._data):
                data = get_array_module(out._data).ones_like(out._data)
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

# torch's words: a .grad that requires grad refers back to its own leaf through the graph
CREATE_GRAPH_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on.

    >>> x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    >>> gradkit.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    refuse_in_transform(BACKWARD)
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
    if create_graph:
        warnings.warn(CREATE_GRAPH_CYCLE_WARNING, UserWarning, stacklevel=2)
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    seeds = _root_grads(_stand_ins(outputs, grad_tensors), grad_tensors, create_graph,
                        batched=False)
    targets = None
    if inputs is not None:
        targets = [_input_edge(t, "backward") for t in inputs]
        for t in inputs:  # as torch: a non-leaf input retains its gradient (after its hooks)
            if isinstance(t, Tensor) and t.grad_fn is not None:
                t.retain_grad()
    run(roots, seeds, retain_graph, create_graph, targets, accumulate=True)


def _input_edge(t, caller: str):
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
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
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outs)]
    targets = [_input_edge(t, "grad") for t in ins]
    if is_grads_batched:
        results = _batched_grad(outs, ins, roots, targets, grad_outputs, retain_graph,
                                create_graph)
    else:
        seeds = _root_grads(_stand_ins(outs, grad_outputs), grad_outputs, create_graph,
                            batched=False)
        captured = run(roots, seeds, retain_graph, create_graph, targets, accumulate=False)
        results = [_as_tensor(g) for g in captured]
    for i, g in enumerate(results):
        if g is None:
            if materialize_grads:
                if isinstance(ins[i], GradientEdge):
                    raise RuntimeError("materialize_grads cannot be used when the given input "
                                       "is a GradientEdge")
                # as torch: a zero that is part of the new graph when one is being built
                results[i] = zeros_like(ins[i], requires_grad=create_graph)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
    return tuple(results)


def _batched_grad(outs, ins, roots, targets, grad_outputs, retain_graph, create_graph) -> list:
    """Batched vjp: one backward pass on the stacked seeds when every node that runs is
    batchable (autograd/batching.py), otherwise one pass per row, stacked."""
    grads = _root_grads(_stand_ins(outs, grad_outputs), grad_outputs, True, batched=True)
    sizes = [g.shape[0] for g in grads]
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    batch = sizes[0]
    if _vectorizable(roots, targets, batch):
        seeds = grads if create_graph else [g._data for g in grads]
        with batching.batched(batch):
            captured = run(roots, seeds, retain_graph, create_graph, targets, accumulate=False)
        for t, g in zip(_stand_ins(ins, None), captured):
            expected = (batch, *t._data.shape)
            if g is not None and tuple(g.shape) != expected:  # an op wrongly marked batchable
                raise RuntimeError(f"vectorized is_grads_batched gave a gradient of shape "
                                   f"{list(g.shape)}, expected {list(expected)}")
        return [_as_tensor(g) for g in captured]
    return _looped_grad(grads, batch, roots, targets, retain_graph, create_graph)


def _vectorizable(roots, targets, batch: int) -> bool:
    if batch == 0 or _dispatch._forward_ad is not None:  # a jvp rule must not see batched values
        return False
    _, runs = plan(roots, targets, accumulate=False)
    return batching.vectorizable(runs.keys() | {node for node, _ in targets})


def _looped_grad(grads, batch, roots, targets, retain_graph, create_graph) -> list:
    """One backward pass per row of the batched seeds, stacked (correct for any graph)."""
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
    return get_array_module(getattr(g, "_data", g)).zeros_like(getattr(g, "_data", g))


def _as_tensor(g):
    if g is None:
        return None
    return g if isinstance(g, Tensor) else Tensor._make(g)


one_node.engine_run = run  # a composite recorded as one node runs its own graph (ops/one_node.py)
