"""torch's CopySlices: the node a base takes when one of its views is written in place.

As torch's, the node wraps the node of the op that wrote the view (``fn``): its edges are the
base's old history, then fn's edges after the first (the view's other inputs), and its backward
runs fn on the view's region of the gradient and writes fn's first gradient back into that
region. fn is not a node of the graph itself: its hooks never run, anomaly mode names the
CopySlices, and the profiler sees one node.
"""
from __future__ import annotations

from gradkit.autograd.saved_messages import FREED_MESSAGE
from gradkit.autograd.node_edges import shown_inputs
from gradkit.creation import zeros
from gradkit.ops._op import op
from gradkit.ops.memory_overlap import OVERLAP_MESSAGE
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.views import copy_in_layout, layout_of, replay_view, write_through


@op(save="base.shape", node_name="CopySlices")
def copy_slices(xp, base, values, chain=(), written=True, overlapping=False, layout=None):
    """The base after its view (described by ``chain``) was overwritten with ``values``.
    ``written``: the write already happened in place, and the op only records the graph.
    ``layout``: the base's memory order (views.layout_of), which the chain's replay needs.
    ``overlapping``: the region's elements share memory (True: its backward refuses the base's
    gradient) or the base's do ("base": its backward refuses, as torch's copy into a buffer
    laid out as the base)."""
    if written:
        return base
    out = copy_in_layout(xp, base, layout)
    write_through(chain, out, values)
    return out


def _copy_slices_jvp(tangents, base_shape, chain, written, overlapping, layout):
    """The base's tangent takes the values' tangent in the view's region (missing: zeros)."""
    t_base, t_values = tangents
    if t_base is None:
        t_base = zeros(tuple(base_shape), dtype=t_values.dtype, device=t_values.device)
    if t_values is None:
        t_values = zeros_like(replay_view(chain, in_layout(t_base, layout)))
    return copy_slices(t_base, t_values, chain=chain, written=False, layout=layout)


@op(linear=True)
def zero_view_region(xp, g, chain=(), layout=None):
    """``g`` with zeros where the view described by ``chain`` lies (a projection)."""
    out = copy_in_layout(xp, g, layout)
    write_through(chain, out, 0)
    return out


zero_view_region.defvjp(lambda g, chain, layout: zero_view_region(g, chain, layout))
zero_view_region.defjvp(lambda t, chain, layout: zero_view_region(t, chain, layout))


@op(linear=True)
def relayout(xp, g, layout=None):
    """A copy of ``g`` laid out in memory as ``layout`` says (same values)."""
    return copy_in_layout(xp, g, layout)


relayout.defvjp(lambda g, layout: g)
relayout.defjvp(lambda t, layout: t)


def in_layout(g, layout):
    """``g`` itself when its memory follows ``layout`` already, else a copy that does."""
    data = getattr(g, "_data", g)
    if not hasattr(data, "strides") or layout_of(data) == layout:
        return g
    return relayout(g, layout)


def _copy_slices_base_grad(g, base_shape, chain, written, overlapping, layout):
    # torch's CopySlices copies the gradient into the written region of a base-shaped buffer:
    # refused, as any write, where that region's elements share memory (fill_ of an expanded
    # view)
    if overlapping:
        raise RuntimeError(OVERLAP_MESSAGE)
    return zero_view_region(g, chain, layout)


def _copy_slices_values_grad(g, base_shape, chain, written, overlapping, layout):
    if overlapping == "base":
        raise RuntimeError(OVERLAP_MESSAGE)
    return replay_view(chain, in_layout(g, layout))


copy_slices.defvjp(_copy_slices_base_grad, _copy_slices_values_grad)
copy_slices.defjvp_all(_copy_slices_jvp)


class _WrappedOp:
    """The op of a CopySlices node that wraps an op's node (its ``saved``, released as torch's
    CopySlices releases its ``fn``: a second backward then raises, whatever fn saved)."""

    __slots__ = ("shown",)
    checks_grads = True

    def __init__(self, shown: tuple) -> None:
        self.shown = shown  # fn's edges torch shows: the first is the view's old values

    def backward(self, node, grads: tuple, create_graph: bool, edges: tuple) -> tuple:
        """The base's gradient with fn's gradient of the view's old values in the view's region,
        then fn's gradients of its other inputs."""
        if node.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        g = grads[0]
        if g is None:
            return (None,) * len(node._next)
        chain, overlapping, layout = (node.params[k] for k in ("chain", "overlapping", "layout"))
        if overlapping == "base" or overlapping and edges[0] is not None:
            # torch's CopySlices writes fn's gradient into the region only for the base's
            # gradient: refused there where the region overlaps, the other inputs' computed
            raise RuntimeError(OVERLAP_MESSAGE)
        fn = node.saved[0]
        region = replay_view(chain, in_layout(g, layout))
        results = fn.op.backward(fn, (region,), create_graph, fn._next if edges is node._next
                                 else _wanted_edges(fn, self.shown, edges))
        first = results[self.shown[0]]
        if edges[0] is None:  # the base's gradient is not wanted (torch's should_compute_output)
            base = None
        elif first is None:
            base = zero_view_region(g, chain, layout)
        else:
            base = copy_slices(g, first, chain=chain, written=False, layout=layout)
        return (base,) + tuple(results[i] for i in self.shown[1:])


def _wanted_edges(fn, shown: tuple, edges: tuple) -> tuple:
    """``fn``'s edges, None where the CopySlices edge an input of fn is shown at is not wanted
    (or where fn's input is not shown at all)."""
    wanted = dict(zip(shown, edges))
    return tuple(child if wanted.get(i) is not None else None for i, child in enumerate(fn._next))


def wrap_op_node(node, result) -> None:
    """Make the CopySlices ``node`` (edges: the base's old history, then ``result``) wrap the
    node of the op whose ``result`` was written into the view, as torch's does: its edges
    become the base's, then that node's after its first. Not for a custom Function's node
    or an output of several."""
    fn = result.grad_fn
    if fn is None or result._output_nr or not getattr(fn.op, "checks_grads", False) or (
            fn._extras is not None and fn._extras.output_meta is not None):
        return
    shown = shown_inputs(fn)
    shown = tuple(range(len(fn._next))) if shown is None else shown
    if not shown:
        return
    node._next = (node._next[0],) + tuple(fn._next[i] for i in shown[1:])
    node._next_nr = (node._next_nr[0],) + tuple(fn._next_nr[i] for i in shown[1:])
    node.input_meta = None  # every edge is one torch shows
    node.op = _WrappedOp(shown)
    node.saved = (fn,)  # released after a backward, as torch's CopySlices drops its fn
