"""How a backward node shows itself as torch's: the edges of ``next_functions`` (torch's, not
the engine's one per input) and the qualified ``name()`` of torch's hand-written C++ nodes."""
from __future__ import annotations


def torch_edges(node) -> tuple:
    """``next_functions`` as torch's: the edges of ``shown_inputs``."""
    edges = tuple(zip(node._next, node._next_nr))
    shown = shown_inputs(node)
    return edges if shown is None else tuple(edges[i] for i in shown)


def shown_inputs(node) -> tuple | None:
    """The inputs torch's node has an edge for (None: all), those its overload
    differentiates. Not a Python number the overload takes as a Scalar (``x ** 2``, ``x % 2``)
    unless the op wraps numbers as tensors (``op.number_edges``: add, mul, where give
    ``(None, 0)``) or shows every input (``op.every_edge``: convolution's absent bias), nor
    an input without derivative rule (an index, a mask, where's condition: torch's
    ``non_differentiable``), nor one outside the op's ``edge_inputs`` (the inputs torch's
    derivatives.yaml names, for an op with one rule for all: ``lu_solve``'s pivots); a node
    without derivative (NotImplemented) keeps the inputs that require grad, as torch's
    autograd fallback."""
    nodes = node._next
    if type(node).__name__ == "NotImplemented":
        return tuple(i for i, n in enumerate(nodes) if n is not None)
    meta, rules = node.input_meta, getattr(node.op, "vjps", None)
    if meta is None or len(meta) != len(nodes):
        return None
    if rules is not None and len(rules) != len(nodes):  # a variadic op: one rule for all
        rules = None
    numbers = getattr(node.op, "number_edges", False) or getattr(node.op, "every_edge", False)
    named = getattr(node.op, "edge_inputs", None)
    shown = tuple(i for i in range(len(nodes))
                  if (meta[i] is not None or numbers) and (rules is None or rules[i] is not None)
                  and (named is None or i in named))
    return None if len(shown) == len(nodes) else shown


# torch's nodes written in C++ by hand: name() is the qualified C++ name, type() the class's
# (AccumulateGrad keeps its short name: docs/autograd_api.md)
_CPP_NODES = ("NotImplemented", "CopyBackwards", "CopySlices")


def _cpp_name(self) -> str:
    return "torch::autograd::" + type(self).__name__


def class_body(name: str, module: str) -> dict:
    """The body of the Node subclass named ``name``: no instance dict, and torch's qualified
    ``name()`` for the nodes torch wrote in C++ by hand. torch's NotImplemented has the
    largest sequence number: its engine runs it (it raises) before any other ready node."""
    body = {"__slots__": (), "__module__": module, "runs_first": name == "NotImplemented"}
    if name in _CPP_NODES:
        body["name"] = _cpp_name
    return body
