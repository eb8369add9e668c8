"""The edges torch's CopySlices takes from a NotImplemented node (an in-place op without
derivative, written through a view)."""
from __future__ import annotations

from gradkit.autograd.graph import Node


def shift_not_implemented_edges(node, view, source) -> None:
    """torch's NotImplemented node (an op without derivative) keeps edges only to the inputs
    that require grad, and CopySlices takes that node's edges after the first as those of the
    view's other inputs. When the op wrote a view (``view`` not None) whose old values
    (``source``) require no grad, the first edge is another input's: each input's edge goes
    to the next one's place and the last is lost (``view //= y``: ``autograd.grad(..., y)``
    does not reach y). The node still runs in a plain backward, as torch's CopySlices calls
    it, and raises: its first edge goes to a node that is never reached."""
    if view is None or source._requires_grad or node is None or \
            type(node).__name__ != "NotImplemented":
        return
    kept = [(n, nr) for n, nr in zip(node._next, node._next_nr) if n is not None][1:]
    kept += [(None, 0)] * (len(node._next) - 1 - len(kept))
    node._next = (Node(None, (), ()),) + tuple(n for n, _ in kept)
    node._next_nr = (0,) + tuple(nr for _, nr in kept)
