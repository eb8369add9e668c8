"""The backward graph: Node, AccumulateGrad, saved tensors and their hooks.

One Node class serves built-in ops and custom Functions alike: a node holds the
``op`` that knows how to turn output gradients into input gradients, the edges
to the nodes of its inputs, and what it saved for backward. Nodes never point
at their own outputs (that would make a reference cycle per op).
"""
from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Iterable
from typing import Any, NamedTuple

from gradkit._tensor import Tensor
from gradkit.autograd.node_edges import class_body, torch_edges
from gradkit.autograd.hook_handles import RemovableHandle, _HookDict, add_hook  # noqa: F401
from gradkit.autograd.inference import SAVE_MESSAGE, InferenceVersion
from gradkit.autograd.saved_messages import (  # noqa: F401 - FREED_MESSAGE is read from here
    DETACHED_MESSAGE, FREED_ENTRY, FREED_MESSAGE, PACK_HOOK_WRITES, forward_op_name,
    version_error)

# the user-facing hooks live in their own files; torch users find them here
from gradkit.autograd.multi_grad_hook import register_multi_grad_hook  # noqa: F401
from gradkit.autograd.saved_hooks import (  # noqa: F401
    disable_saved_tensors_hooks, save_on_cpu, saved_hooks_state, saved_tensors_hooks)
from gradkit.autograd.saved_mutation import allow_mutation_on_saved_tensors  # noqa: F401
from gradkit.backend import get_array_module, legacy_type_name

_sequence = itertools.count()  # next() on a count is atomic under the GIL
accumulate_lock = threading.Lock()  # guards .grad of leaves shared across threads

class NodeExtras:
    """Rarely used per-node state, allocated only when something asks for it."""

    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retain_grad_hooks",
                 "metadata", "output_meta", "kept_meta")

    def __init__(self) -> None:
        # tensor_pre_hooks {slot: _HookDict}, retain_grad_hooks {slot: fn},
        # output_meta ((shape, dtype, xp), ...) of multi-output ops, kept_meta: what an op
        # saving sizes keeps past backward (saved_names.saved_entry)
        self.pre_hooks = self.post_hooks = self.tensor_pre_hooks = self.retain_grad_hooks = \
            self.metadata = self.output_meta = self.kept_meta = None


class Node:
    """A step of the backward graph (``grad_fn``), like ``torch.autograd.graph.Node``.

    ``op.backward(node, grad_outputs, create_graph, edges)`` computes the gradients for
    ``next_functions`` whose edge in ``edges`` is not None; ``saved`` holds what the op saved
    (SavedTensor or plain values).
    """

    __slots__ = ("op", "_sequence_nr", "_next", "_next_nr", "saved", "params", "input_meta",
                 "_extras", "anomaly_trace", "__weakref__")
    runs_first = False  # torch's NotImplemented: its largest sequence number runs it first

    def __init__(self, op, next_nodes: tuple, next_nr: tuple, saved=(), params=None,
                 input_meta=None) -> None:
        self.op = op
        self._sequence_nr = next(_sequence)
        # the edges, one per input, in two flat tuples rather than a (node, slot) pair each:
        # fewer objects for the cyclic GC to scan in a large graph (docs/performance.md)
        self._next = next_nodes          # (node | None, ...): where each input's gradient goes
        self._next_nr = next_nr          # (int, ...): the input slot of that node
        self.saved = saved
        self.params = params
        self.input_meta = input_meta     # ((shape, np dtype) | None, ...) one per input
        self._extras = None
        self.anomaly_trace = None        # where the forward made it, under anomaly mode

    # -- torch's public Node API -------------------------------------------------
    def name(self) -> str:
        """The node's name, as torch spells it (``MulBackward0``)."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        return torch_edges(self)  # torch's edges; the engine runs on all of ``_next``

    @next_functions.setter
    def next_functions(self, value) -> None:
        raise not_writable(self, "next_functions")

    @property
    def metadata(self) -> dict:
        extras = self.extras()
        if extras.metadata is None:
            extras.metadata = {}
        return extras.metadata

    @metadata.setter
    def metadata(self, value) -> None:
        raise not_writable(self, "metadata")

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after the node runs; may return new grad_inputs."""
        extras = self.extras()
        if extras.post_hooks is None:
            extras.post_hooks = _HookDict()
        return add_hook(extras.post_hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        extras = self.extras()
        if extras.pre_hooks is None:
            extras.pre_hooks = _HookDict()
        return add_hook(extras.pre_hooks, fn)

    def _register_tensor_pre_hook(self, slot: int, fn) -> RemovableHandle:
        extras = self.extras()
        if extras.tensor_pre_hooks is None:
            extras.tensor_pre_hooks = {}
        hooks = extras.tensor_pre_hooks.setdefault(slot, _HookDict())
        return add_hook(hooks, fn)

    def extras(self) -> NodeExtras:
        """The node's NodeExtras (hooks, metadata), created on first use."""
        if self._extras is None:
            self._extras = NodeExtras()
        return self._extras

    # -- saved tensors -----------------------------------------------------------
    @property
    def _saved_tensors(self) -> tuple:
        """The saved tensors as Tensors (raises once freed), like torch's ``_saved_*``."""
        if self.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(s.unpack(self, True) for s in _flat_saved(self.saved))

    def saved_tensors_info(self) -> tuple[int, int]:
        """(count, bytes) of the arrays this node holds for backward (0, 0 once freed)."""
        if not self.saved:
            return 0, 0
        tensors = list(_flat_saved(self.saved))
        return len(tensors), sum(s.nbytes for s in tensors)

    def release(self) -> None:
        """Free what was saved for backward (after a backward without retain_graph); a
        memory profile sees the bytes go as the SavedTensors die (observers.saved_pack_held_by)."""
        self.saved = None


_node_types: dict = {}


def node_type(name: str) -> type:
    """The Node subclass named ``name`` (torch's node classes: ``type(y.grad_fn).__name__``
    is ``MulBackward0``), made once per name."""
    cls = _node_types.get(name)
    if cls is None:
        cls = _node_types[name] = type(name, (Node,), class_body(name, __name__))
    return cls


def holds_saved_variables(node: Node) -> bool:
    """Whether ``node`` saved a tensor or a number input for backward (torch's SavedVariables;
    shapes, dtypes and parameters are not): only such a node refuses a second backward once
    its saved values are freed."""
    saved = node.saved
    if not saved:
        return False
    op = node.op
    if getattr(op, "plain_save", None) is not None or not hasattr(op, "save_spec"):
        # only whole inputs/results (most ops), or what a Function gave save_for_backward
        for s in saved:
            if s is not None:
                return True
        return False
    return any(s is not None and not attr for s, (_, _, attr) in zip(saved, op.save_spec))


def _flat_saved(saved):
    """The SavedTensors of a node, including those a variadic op saved in a tuple."""
    for s in saved:
        if type(s) is SavedTensor:
            yield s
        elif isinstance(s, tuple):
            yield from (t for t in s if type(t) is SavedTensor)


def not_writable(node: Node, name: str) -> AttributeError:
    """torch's error for writing a node attribute it keeps itself (``next_functions``)."""
    return AttributeError(f"attribute '{name}' of '{type(node).__name__}' objects is not "
                          "writable")


class _AccumulateOp:
    node_name = "AccumulateGrad"


class AccumulateGrad(Node):
    """The node at the end of every path to a leaf: adds the gradient into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        super().__init__(_ACCUMULATE_OP, (), ())
        self.variable = variable

    def name(self) -> str:
        """Always ``AccumulateGrad``."""
        return "AccumulateGrad"


_ACCUMULATE_OP = _AccumulateOp()


def accumulate_node(leaf) -> AccumulateGrad:
    """The leaf's AccumulateGrad, cached weakly so that leaf and node make no cycle."""
    ref = getattr(leaf, "_accum", None)
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(leaf)
        leaf._accum = weakref.ref(node)
    return node


# -- saved tensors ----------------------------------------------------------------

def _saved_as_view(saved, node) -> bool:
    """Whether torch's op saved a view of this input rather than the input itself (the op's
    ``torch_saves_views(saved)``: matmul unsqueezes, transposes or folds some operands). A
    leaf saved itself and detached since comes back without history, as torch's."""
    rule = getattr(getattr(node, "op", None), "torch_saves_views", None)
    return rule is not None and rule(node.saved)[node.saved.index(saved)]


def _reattached_leaf(leaf) -> Tensor:
    """A saved leaf that required grad when saved and no longer does (``detach_()``,
    ``requires_grad_(False)``), where torch saved a view of it: the view's history connects
    its data to the leaf's gradient accumulator, so double backward still reaches it."""
    ref = getattr(leaf, "_accum", None)
    accumulator = ref() if ref is not None else None
    if accumulator is None:
        raise RuntimeError("No grad accumulator for a saved leaf")
    return Tensor._make(leaf._data, accumulator, 0, leaf._vc)


class SavedTensor:
    """A tensor saved for backward, with its version at save time.

    Inputs keep their Tensor (double backward must connect through it); outputs
    keep only their array and version counter, so that a node never refers to the
    tensor that refers to it.
    """

    __slots__ = ("tensor", "data", "version_counter", "version", "output_nr", "packed",
                 "unpack_hook", "grad_edge", "history", "nbytes", "view_edge",
                 "__weakref__")

    def __init__(self, tensor, is_output: bool) -> None:
        if type(tensor._vc) is InferenceVersion:  # torch refuses to save an inference tensor
            raise RuntimeError(SAVE_MESSAGE)
        self.version_counter = tensor._vc
        self.version = tensor._vc[0]
        self.nbytes = tensor._data.nbytes
        self.output_nr = tensor._output_nr if is_output else -1
        self.packed = self.unpack_hook = self.view_edge = None
        # 0 a constant, 1 a leaf requiring grad, 2 a result with history: to tell an in-place
        # detach_() (or requires_grad_(False)) at unpacking
        self.history = tensor._requires_grad + (tensor.grad_fn is not None)
        stack = saved_hooks_state.stack
        if stack:
            pack, self.unpack_hook = stack[-1]
            self.tensor = self.data = None
            self.grad_edge = _history_edge(tensor, is_output)
            self.packed = pack(tensor)
            if tensor._vc[0] != self.version:
                raise RuntimeError(PACK_HOOK_WRITES)
        elif is_output and tensor.grad_fn is not None:  # non-differentiable outputs: constants
            self.tensor, self.data = None, tensor._data
        else:
            self.tensor, self.data = tensor, tensor._data

    def unpack(self, node, as_tensor: bool):
        """The saved value: its array, or a Tensor when double backward needs a graph."""
        if self.unpack_hook is not None:
            tensor = self.unpack_hook(self.packed)
            if not isinstance(tensor, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(tensor).__name__}")
            return self._attach(tensor, node) if as_tensor else tensor._data
        tensor = self.tensor
        detached = tensor is not None and tensor.grad_fn is None and self.history
        if detached == 2:  # torch checks this before the version (then written in place too)
            raise RuntimeError(DETACHED_MESSAGE)
        if self.version_counter[0] != self.version:
            desc = f"{legacy_type_name(self.data)} {list(self.data.shape)}"
            owner = ""
            if self.output_nr >= 0 and self.history:  # (indices and such: leaves, no node)
                owner = f", which is output {self.output_nr} of {forward_op_name(node.name())}"
            elif self.tensor is not None and self.tensor.grad_fn is not None:
                owner = (f", which is output {self.tensor._output_nr} of "
                         f"{forward_op_name(self.tensor.grad_fn.name())}")
            raise version_error(desc, owner, self.version_counter[0], self.version)
        if detached and as_tensor and not tensor._requires_grad and _saved_as_view(self, node):
            return _reattached_leaf(tensor)  # a leaf detached since (torch saved a view)
        if not as_tensor:  # an input's current array: ``input.data = ...`` reaches it (torch)
            return self.data if tensor is None else tensor._data
        if tensor is not None:
            return tensor
        if self.view_edge is not None:  # an output written into a view: the view's own node
            view_node = self.view_edge[0]()  # (torch's weak_grad_fn_; the saver once it dies)
            if view_node is not None:
                return Tensor._make(self.data, view_node, self.view_edge[1],
                                    self.version_counter)
        return Tensor._make(self.data, node, self.output_nr, self.version_counter)

    def _attach(self, unpacked, node):
        """The unpack hook's values with the saved tensor's place in the graph (torch's
        SavedVariable): double backward differentiates through the original tensor, never
        through what the hooks computed."""
        edge, data = self.grad_edge, unpacked._data
        if edge is None and not unpacked.requires_grad:  # nothing to attach: torch gives the
            return unpacked                                # hook's tensor itself
        if edge is _OWN_OUTPUT:
            return Tensor._make(data, node, self.output_nr)
        if edge is None:
            return Tensor._make(data)
        if type(edge[0]) is AccumulateGrad:  # a leaf: gradients go to its accumulator
            t = Tensor._make(data)
            t._requires_grad = True
            t._accum = weakref.ref(edge[0])
            return t
        return Tensor._make(data, *edge)


_OWN_OUTPUT = "output"  # a SavedTensor's grad_edge: an output of the node that saved it


def _history_edge(tensor, is_output: bool):
    """Where gradients of a saved tensor flow: _OWN_OUTPUT, its (node, output_nr), or None.

    Held strongly, as torch's SavedVariable holds grad_fn and grad accumulator."""
    if is_output and tensor.grad_fn is not None:
        return _OWN_OUTPUT  # not the node itself: node -> saved -> node would be a cycle
    if not tensor._requires_grad:
        return None
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    return (accumulate_node(tensor), 0)


# -- gradient edges ------------------------------------------------------------------

class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph; grad()/backward() take it for a tensor."""

    node: Any
    output_nr: int
    ownership_token: Any = None


# {node: {output_nr: (shape, dtype, xp)}} seen by get_gradient_edge (one-output nodes keep none)
_edge_meta: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_gradient_edge(tensor) -> GradientEdge:
    """``tensor``'s GradientEdge: (grad_fn, output number), or its AccumulateGrad for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, output_nr = _history_edge(tensor, False)
    _edge_meta.setdefault(node, {})[output_nr] = _meta_of(tensor._data)
    return GradientEdge(node, output_nr)


def edge_meta(edge: GradientEdge) -> tuple | None:
    """(shape, dtype, xp) of the gradient that flows into ``edge``, or None if unknown."""
    node, output_nr = edge.node, edge.output_nr
    if isinstance(node, AccumulateGrad):
        return _meta_of(node.variable._data)
    known = _edge_meta.get(node, {}).get(output_nr)
    if known is None and node._extras is not None and node._extras.output_meta:
        known = node._extras.output_meta[output_nr]  # IndexError past the last, as torch
    return known


def _meta_of(data) -> tuple:
    return data.shape, data.dtype, get_array_module(data)


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (or of each of an iterable), as an in-place
    write would (for code that writes a tensor's memory behind autograd's back)."""
    tensors = [tensor] if isinstance(tensor, Tensor) else \
        list(tensor) if isinstance(tensor, Iterable) else [None]
    if not all(isinstance(t, Tensor) for t in tensors):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
    for t in tensors:
        t._vc[0] += 1
