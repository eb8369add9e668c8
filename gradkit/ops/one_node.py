"""A composite recorded as one backward node named as torch's (``ConvolutionBackward0``).

gradkit writes some of torch's ops (conv_transpose, interpolate, avg_pool, the norms, unfold,
pdist) from other ops, so their last step would be the graph's ``grad_fn``. ``one_node`` runs
the composite with grad on stand-ins of the inputs (each its input's memory and version counter
behind an ``AliasBackward0`` node: an edge to the input, and no hook of the user's) and records
ONE node whose edges go to the inputs. Its backward runs the composite's own graph from that
node's gradient to the stand-ins (a nested engine pass that stops there), so the first
derivative is the composite's; with ``create_graph=True`` the gradients so built depend on the
stand-ins, hence on the inputs, so double backward is exact too, without running the forward
again.
"""
from __future__ import annotations

from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.autograd.batching import state as batch_state
from gradkit.autograd.grad_mode import records_graph, state as grad_state
from gradkit.autograd.graph import FREED_MESSAGE, node_type
from gradkit.autograd.raw_saved import refuse_hooks
from gradkit.autograd.saved_messages import forward_op_name, version_error
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.autograd.zero_grads import plain
from gradkit.backend import legacy_type_name
from gradkit.ops import _dispatch
from gradkit.ops._dispatch import edges_and_meta
from gradkit.ops.slicing import _alias


# engine.run, bound by gradkit.autograd.api as it loads (the engine imports the ops package)
engine_run: Callable | None = None


class _Recorded:
    """What a node keeps: the composite's graph (its output's edge, the stand-ins' nodes that
    end it), and only what torch's node saves (those inputs, their versions, the result): no
    other tensor's memory is held until backward."""

    __slots__ = ("root", "ends", "inputs", "result", "versions", "returned", "kept", "hooks")

    def __init__(self, inputs: tuple, stand_ins: tuple, output: Tensor, saved: dict,
                 kept: dict | None, guards: dict) -> None:
        self.root = (output.grad_fn, output._output_nr)
        self.ends = tuple(None if s is None or not isinstance(s, Tensor) else s.grad_fn
                          for s in stand_ins)
        wanted = {i for i in saved.values() if i not in guards or any(
            self.ends[j] is not None for j in guards[i])}
        self.inputs = tuple(t if i in wanted else None for i, t in enumerate(inputs))
        self.result = output.detach() if "result" in wanted else None
        self.versions = tuple((i, inputs[i]._vc[0]) for i in wanted
                              if i != "result" and inputs[i] is not None)
        # (its description, version counter, version) of the tensor one_node returns, when
        # "result" is saved: no reference to that tensor (it holds the node: a cycle)
        self.returned = None
        self.kept = kept  # one_node's ``kept``: torch's other saved tensors, freed with these
        self.hooks = None  # name -> (packed, unpack_hook) of _raw_saved_<name>.register_hooks

    def check_versions(self) -> None:
        """torch's error for a saved input written in place since (named by its node now)."""
        for i, version in self.versions:
            t = self.inputs[i]
            if t._vc[0] != version:
                owner = "" if t.grad_fn is None else \
                    f", which is output {t._output_nr} of {forward_op_name(t.grad_fn.name())}"
                raise version_error(f"{legacy_type_name(t._data)} {list(t.shape)}", owner,
                                    t._vc[0], version)
        if self.returned is not None:  # the saved result, written in place since
            description, counter, version = self.returned
            if counter[0] != version:
                raise version_error(*description, counter[0], version)


class OneNodeOp:
    """The ``op`` of the nodes named ``node_name``: backward is the composite's graph."""

    checks_grads = True  # the captured gradients have their stand-in's (its input's) meta
    number_edges = True  # torch's node has an edge per input: (None, 0) for an absent bias

    def __init__(self, node_name: str, saved: dict, constant_names: tuple = (),
                 kept_names: tuple = ()) -> None:
        self.node_name = node_name
        self.node_class = node_type(node_name)
        self.profiler_name = node_name
        # torch's _saved_<name> -> an input's position, or "result"; or one_node's ``kept``
        self.torch_saved = {name: _saved_reader(name, where) for name, where in
                            (*saved.items(), *((name, None) for name in kept_names))}
        self.param_names = constant_names  # the rest: values kept in node.params
        self.raw_names = (*saved, *kept_names)  # the tensors: _raw_saved_<name>
        declare_saved_names(self)

    def raw_saved(self, node, name: str) -> SavedTensor:
        """``node._raw_saved_<name>``."""
        if name not in self.raw_names:
            raise AttributeError(f"'{node.name()}' object has no attribute '_raw_saved_{name}'")
        return SavedTensor(node, name)

    def node_attribute(self, node, name: str):
        """No ctx fields: a plain AttributeError, as a built-in node's."""
        raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")

    def backward(self, node, grads: tuple, create_graph: bool, edges: tuple) -> list:
        """The inputs' gradients: the composite's graph run from ``grads[0]`` to the stand-ins."""
        if node.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        recorded = node.saved[0]
        recorded.check_versions()
        for hooked in (recorded.hooks or {}).values():  # torch unpacks what its formula reads
            _unpacked(hooked)
        g = grads[0]
        if g is None:
            return [None] * len(node._next)
        g = plain(g)
        if create_graph and not isinstance(g, Tensor):
            g = Tensor._make(g)
        elif not create_graph and isinstance(g, Tensor):
            g = g._data
        wanted = [i for i, (child, end) in enumerate(zip(edges, recorded.ends))
                  if child is not None and end is not None]
        # retain_graph: the composite's graph lives while this node keeps it (engine frees it)
        # bounded: the stand-ins' nodes end the composite's graph (what lies past them, the
        # graph before this op, is not read: a pass costs the composite's size alone)
        captured = engine_run([recorded.root], [g], True, create_graph,
                              [(recorded.ends[i], 0) for i in wanted],
                              accumulate=False, bounded=True)
        result = [None] * len(node._next)
        for i, grad in zip(wanted, captured):
            if grad is not None and not create_graph and isinstance(grad, Tensor):
                grad = grad._data
            result[i] = grad
        return result


def _saved_reader(name: str, where: int | str | None) -> Callable:
    """``node._saved_<name>``: input ``where``, the result, or (``where`` None) the node's
    ``kept[name]``, a tensor or ``fn(inputs)`` computed when read. Backward frees them; an
    absent one (None) stays readable, as torch's."""
    def read(node):
        if node.saved is None:
            if name in (node.params or {}).get("_absent", ()):
                return None
            raise RuntimeError(FREED_MESSAGE)
        recorded = node.saved[0]
        if recorded.hooks and name in recorded.hooks:
            return _unpacked(recorded.hooks[name])
        if where is None:
            value = recorded.kept[name]
            return value(recorded.inputs) if callable(value) else value
        return recorded.result if where == "result" else recorded.inputs[where]
    return read


def _unpacked(hooked: tuple) -> Tensor:
    packed, unpack_hook = hooked
    tensor = unpack_hook(packed)
    if not isinstance(tensor, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(tensor).__name__}")
    return tensor


class SavedTensor:
    """``node._raw_saved_<name>`` of a one_node node, as torch's raw saved variable: its
    ``register_hooks(pack, unpack)`` packs the tensor now and unpacks it at each later use
    (``_saved_<name>``, backward). The composite's graph keeps its own saved tensors."""

    __slots__ = ("_node", "_name")

    def __init__(self, node, name: str) -> None:
        self._node, self._name = node, name

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """torch's ``SavedTensor.register_hooks``, with its refusals."""
        node, name = self._node, self._name
        recorded = None if node.saved is None else node.saved[0]
        hooks = (recorded.hooks or {}) if recorded is not None else {}
        value = None if recorded is None or name in hooks else node.op.torch_saved[name](node)
        refuse_hooks(pack_hook, unpack_hook, recorded is None,
                     value is None and name not in hooks, name in hooks)
        recorded.hooks = {**hooks, name: (pack_hook(value), unpack_hook)}


def _stand_in(t: Tensor) -> Tensor:
    """``t``'s memory and version counter behind an AliasBackward0 node with ``t``'s edge: not
    a view (no view bookkeeping: the composite never writes into it)."""
    nodes, slots, meta, _ = edges_and_meta((t,), (t._data,))
    return Tensor._make(t._data, _alias.node_class(_alias, nodes, slots, (), None, meta), 0,
                        t._vc)


_ops: dict = {}


def one_node(node_name: str, composite: Callable, inputs: tuple, saved: dict | None = None,
             constants: dict | None = None, kept: dict | None = None,
             guards: dict | None = None) -> Tensor:
    """``composite(*inputs)`` (inputs: Tensors or None), its graph recorded as one node named
    ``node_name`` with an edge per input. ``saved`` maps torch's ``_saved_<name>`` attributes
    of that node to an input's position or ``"result"``: the inputs torch's node saves, whose
    in-place change before backward raises torch's error. ``constants``: the other
    ``_saved_<name>`` values torch's node keeps (sizes, flags), readable after backward.
    ``kept``: the other tensors torch's node saves (running statistics: a tensor or None; its
    results: ``fn(inputs)``, computed when read from the saved inputs), freed by backward.
    ``guards`` maps a saved input's position to the positions whose need of a gradient saves
    it (torch's ``wrap_opt_if``): otherwise it is not saved (None, and free to be written).
    Without a graph to record (no grad, forward AD, a ``gradkit.func`` transform), the
    composite runs as it is."""
    if not records_graph() or grad_state.transforms or batch_state.size or \
            not any(isinstance(t, Tensor) and t._requires_grad for t in inputs) or \
            _dispatch._forward_ad is not None and _dispatch._forward_ad.has_tangents(inputs):
        return composite(*inputs)
    stand_ins = tuple(_stand_in(t) if isinstance(t, Tensor) and t._requires_grad else t
                      for t in inputs)
    output = composite(*stand_ins)
    if output.grad_fn is None:  # not differentiable (an integer result): nothing to record
        return output
    absent = tuple(name for name, where in (saved or {}).items()
                   if where != "result" and inputs[where] is None) + \
        tuple(name for name, value in (kept or {}).items() if value is None)
    if absent:  # torch's undefined saved tensors: None, after backward too
        constants = {**(constants or {}), "_absent": absent}
    key = (node_name, tuple(sorted((saved or {}).items())), tuple(constants or ()),
           tuple(kept or ()))
    op = _ops.get(key)
    if op is None:
        op = _ops[key] = OneNodeOp(node_name, saved or {}, key[2], key[3])
    nodes, slots, meta, _ = edges_and_meta(
        inputs, [t._data if isinstance(t, Tensor) else t for t in inputs])
    node = op.node_class(op, tuple(nodes), tuple(slots),
                         (_Recorded(inputs, stand_ins, output, saved or {}, kept,
                                    guards or {}),), constants,
                         tuple(meta))
    node.anomaly_trace = output.grad_fn.anomaly_trace  # anomaly mode's forward stack: the user's
    result = Tensor._make(output._data, node, 0)
    if saved and "result" in saved.values():  # torch's node checks its saved output's version
        description = (f"{legacy_type_name(result._data)} {list(result.shape)}",
                       f", which is output 0 of {forward_op_name(node_name)}")
        node.saved[0].returned = (description, result._vc, result._vc[0])
    return result
