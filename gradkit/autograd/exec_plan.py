"""Which nodes a backward pass runs, and which of their input gradients it computes.

torch's graph task keeps this as ``exec_info``: a pass towards given inputs
(``autograd.grad``, ``backward(inputs=...)``) runs only the nodes that lead to them, and a
node computes only the input slots whose edge leads there (``should_compute_output``), so
a derivative that is not implemented for another input (``igamma``'s ``input``) is never
asked for, and no work goes into gradients nobody reads.
"""
from __future__ import annotations

from gradkit.autograd.graph import AccumulateGrad


def plan(roots, targets, accumulate: bool, bounded: bool = False) -> tuple:
    """``(dependencies, runs)``: dependency counts over the nodes that will run, and with
    targets ``runs`` {node that runs: its edges, None where an edge leads to no target (the
    gradients it leaves uncomputed)}; without targets every node reached runs (None)."""
    root_nodes = {node for node, _ in roots}
    # not followed further: the roots (already on the stack) and, bounded, the targets
    stops = root_nodes | {node for node, _ in targets} if bounded else root_nodes
    stack = list(root_nodes)
    dependencies = {}  # without targets every node reached runs: count its edges on the way
    count = dependencies.get  # (a node is new when it has no count yet: no set of seen nodes)
    while stack:
        for child in stack.pop()._next:
            if child is not None:
                n = count(child)
                if n is None:
                    dependencies[child] = 1
                    if child not in stops:
                        stack.append(child)
                else:
                    dependencies[child] = n + 1
    if targets is None:
        return dependencies, None
    order = [*root_nodes, *(node for node in dependencies if node not in root_nodes)]
    target_nodes = {node for node, _ in targets}
    leads = {}
    # children have smaller sequence numbers: ascending order visits them first
    for node in sorted(order, key=_seq):
        leads[node] = node in target_nodes or any(
            leads.get(child, False) for child in node._next)
    running = {node for node in order if any(leads.get(child, False) for child in node._next)}
    if accumulate:  # backward(inputs=...): the targeted nodes run, as torch (leaves
        running |= target_nodes  # accumulate; a non-leaf's node runs its hooks, no further)
    scheduled = running | target_nodes
    dependencies = {}
    runs = {}
    for node in order:
        if node not in running:
            continue
        edges = runs[node] = node._next  # the very tuple where no edge is cut (Op.backward)
        for child in edges:
            if child in scheduled:  # never None: scheduled holds nodes
                dependencies[child] = dependencies.get(child, 0) + 1
            elif child is not None:
                runs[node] = tuple(c if c in scheduled else None for c in edges)
    return dependencies, runs


def _seq(node) -> int:
    return -1 if type(node) is AccumulateGrad else node._sequence_nr
