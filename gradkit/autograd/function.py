"""Custom differentiable functions: ``gradkit.autograd.Function``, as in torch.

A Function's forward runs on Tensors with grad mode off; its node is an ordinary
:class:`~gradkit.autograd.graph.Node` whose ``op`` is a small adapter per Function class
(:class:`FunctionOp`), so hooks, anomaly mode and the profiler treat it like any built-in op. The
node keeps the ``ctx`` in ``node.params`` and the tensors of ``save_for_backward`` in
``node.saved`` (counted by ``saved_tensors_info``, freed after backward like any other).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import warnings
import weakref

from gradkit._tensor import Tensor
from gradkit.autograd import forward_ad, observers
from gradkit.autograd.grad_mode import no_grad, records_graph, set_grad_enabled, state as grad_state
from gradkit.autograd.function_checks import DIRTY_VIEW_OF_SEVERAL, check_grads, check_outputs
from gradkit.autograd.function_node import FunctionNode, keep_if_stashed
from gradkit.autograd.graph import FREED_MESSAGE, Node, SavedTensor
from gradkit.autograd.transform_errors import check_function_class, node_class
from gradkit.autograd.zero_grads import plain
from gradkit.backend import get_array_module
from gradkit.ops._dispatch import edges_and_meta
from gradkit.ops.inplace import _rebase_view
from gradkit.ops.slicing import _alias
from gradkit.ops.views import mark_function_output, mark_view


class FunctionCtx(Node):
    """The ``ctx`` of a custom Function: what forward leaves for backward (and jvp).

    A graph Node by type, as torch's ctx is its node (``isinstance(ctx, graph.Node)``); the
    node proper is a separate object here, so the Node fields are left unset on the ctx.
    """

    def __init__(self) -> None:
        self._to_save = ()
        self._node = None            # weak reference, set once the node exists
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self.saved_for_forward = ()  # ctx.save_for_forward: what jvp reads
        self._in_jvp = False
        self._output_meta = ()
        self._kept_node = None       # the node, once it outlived its graph (keep_if_stashed)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for backward; read them back with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{i} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors for the ``jvp`` staticmethod (forward-mode AD)."""
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to save_for_backward (checked against in-place changes)."""
        if self._in_jvp:  # jvp sees save_for_forward's tensors only, as torch
            return tuple(self.saved_for_forward)
        if self._node is None:  # forward ran without recording: nothing was packed
            return tuple(self._to_save)
        node = self._kept_node or self._node()
        if node is None or node.saved is None:  # freed by backward, then the node died
            raise RuntimeError(FREED_MESSAGE)
        return tuple(s.unpack(node, True) if type(s) is SavedTensor else s for s in node.saved)

    @property
    def saved_variables(self) -> tuple:
        """Deprecated spelling of :attr:`saved_tensors` (warns, as torch does)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that forward modified in place (they must also be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that get no gradient (e.g. indices); backward sees zeros for them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None (not zeros) for outputs without a gradient."""
        self.materialize_grads = bool(value)


class FunctionOp:
    """The node ``op`` of one Function class: runs the user's backward for graph.Node."""

    checks_grads = False  # the engine checks all the user returned, wanted or not, as torch

    def __init__(self, function_class) -> None:
        self.function_class = function_class
        self.node_name = function_class.__name__ + "Backward"
        self.profiler_name = function_class.__name__

    def node_attribute(self, node: Node, name: str):
        """As in torch, a Function's node shows its ctx (``grad_fn.saved_tensors``, fields)."""
        return getattr(node.params, name)

    def backward(self, node: Node, grads: tuple, create_graph: bool, edges: tuple) -> tuple:
        ctx = node.params
        grad_outputs = []
        for i, meta in enumerate(ctx._output_meta):
            g = grads[i] if i < len(grads) else None
            if g is None and meta is not None and ctx.materialize_grads:
                shape, dtype, xp = meta
                g = xp.zeros(shape, dtype)
            if g is not None and not isinstance(g, Tensor):
                g = Tensor._make(g)
            grad_outputs.append(plain(g))  # the user's backward may write into it
        backward = _user_backward(self.function_class)
        with set_grad_enabled(create_graph):
            result = backward(ctx, *grad_outputs)
        result = check_grads(node, result if isinstance(result, tuple) else (result,))
        if create_graph:
            return result
        return tuple(g._data if g is not None else None for g in result)


def _user_backward(function_class):
    """The Function's backward rule: its ``backward`` or its ``vjp`` (torch's alias), not both."""
    backward, vjp = function_class.backward, function_class.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed. You should only implement one of them.")
    return vjp if vjp is not Function.vjp else backward


class _FunctionMeta(type):
    """Gives every Function subclass its own node adapter (``_op``)."""

    def __init__(cls, name, bases, namespace) -> None:
        super().__init__(name, bases, namespace)
        cls._op = FunctionOp(cls)
        # the type of its nodes, named as torch names it: type(y.grad_fn).__name__ == "MyFnBackward"
        cls._backward_cls = type(cls._op.node_name, (FunctionNode,),
                                 {"__slots__": (), "__module__": __name__,
                                  "__qualname__": cls._op.node_name, "__del__": keep_if_stashed})
        # forward(*args) + setup_context(ctx, ...) instead of forward(ctx, *args)
        cls._setup_context_style = any(
            "setup_context" in vars(k) for k in cls.__mro__
            if isinstance(k, _FunctionMeta) and k.__bases__ != (object,))  # not Function itself


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations (torch.autograd.Function).

    >>> class Cube(gradkit.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         x, = ctx.saved_tensors
    ...         return 3 * x ** 2 * g
    >>> Cube.apply(gradkit.tensor(2.0, requires_grad=True)).grad_fn.name()
    'CubeBackward'
    """

    def __init__(self, *args, **kwargs) -> None:
        # torch only warns (its own tests instantiate Functions); calling the instance raises
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs from the inputs (grad mode off); override it."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        """Save what backward needs when forward takes no ctx; optional."""
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per forward input from one per output; override it."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward mode: the output tangents from the input tangents; optional."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward, and record a ``<Name>Backward`` node when an input requires grad."""
        watchers = observers.op_watchers
        if watchers:  # the same op_enter/op_exit point as built-in ops
            return observers.observe_op(watchers, cls._op.profiler_name, args,
                                        lambda: _apply(cls, args, kwargs))
        return _apply(cls, args, kwargs)[0]


_signature = functools.lru_cache(maxsize=256)(inspect.signature)  # per forward, not per call


def _apply(cls, args: tuple, kwargs: dict):
    check_function_class(cls)  # under a gradkit.func transform: setup_context style only
    ctx = FunctionCtx()
    if cls._setup_context_style:  # as torch: setup_context sees forward's defaults too
        bound = _signature(cls.forward).bind(*args, **kwargs)
        bound.apply_defaults()
        args, kwargs = bound.args, bound.kwargs
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    recording = records_graph() and any(ctx.needs_input_grad)
    dual = forward_ad.has_tangents(args)  # then jvp gives the tangents, not forward's ops
    # read before forward: an in-place write there (a dirty input) drops the input's tangent
    tangents = forward_ad.input_tangents(args) if dual else None
    with no_grad(), (forward_ad.suspended() if dual else contextlib.nullcontext()):
        if cls._setup_context_style:
            raw = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    single = not isinstance(raw, tuple)
    outputs = (raw,) if single else raw
    check_outputs(ctx, args, outputs, cls._setup_context_style)
    raw_outputs, node = outputs, None
    if recording:
        outputs, node = _record(cls, ctx, args, outputs)
    else:
        outputs = _unrecorded_outputs(cls, ctx, args, outputs)
    if dual:
        forward_ad.propagate_function(cls, ctx, args, outputs, tangents, raw_outputs)
    return (outputs[0] if single else outputs), node


def _unrecorded_outputs(cls, ctx: FunctionCtx, args: tuple, outputs: tuple) -> tuple:
    """Outputs when no graph is recorded, as torch makes them: an input returned as-is (and
    not dirty) comes back as a view of itself (its ``_base`` is the input), and a view
    refuses in-place writes that would be recorded, as a custom Function's (inference aside)."""
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in ctx._dirty}
    result = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor) or id(out) in dirty:
            result.append(out)
            continue
        if id(out) in input_ids:
            returned_input, out = out, Tensor._make(out._data, None, 0, out._vc)
            mark_view(_alias, returned_input, out, {})
        if getattr(out, "_view", None) is not None and not grad_state.inference:
            mark_function_output(out, cls.__name__, i, len(outputs), ctx._pure_view_of)
        result.append(out)
    return tuple(result)


def _record(cls, ctx: FunctionCtx, args: tuple, outputs: tuple):
    """Create the node and connect the outputs to it (dirty inputs are rebased in place)."""
    nodes, slots, meta, _ = edges_and_meta(
        args, [a._data if isinstance(a, Tensor) else a for a in args])
    node = node_class(cls)(cls._op, nodes, slots, (), ctx, meta)
    ctx._node = weakref.ref(node)
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    wrapped = []
    output_meta = []
    for i, out in enumerate(outputs):
        returned_input = None
        if not isinstance(out, Tensor):
            wrapped.append(out)
            output_meta.append(None)
            continue
        output_meta.append((out._data.shape, out._data.dtype, get_array_module(out._data)))
        view = getattr(out, "_view", None) if id(out) in dirty else None
        if id(out) in dirty:
            if out.grad_fn is None and out._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            if view is not None and len(outputs) > 1:
                raise RuntimeError(DIRTY_VIEW_OF_SEVERAL)
            refusal = None if view is None else view.refusal(indirect=False)
            if refusal is not None:  # a split output, a no_grad view: as an in-place op
                raise RuntimeError(refusal)
            if view is not None and view.base.grad_fn is None and view.base._requires_grad:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used "
                                   "in an in-place operation.")
            out._vc[0] += 1
        elif id(out) in input_ids:  # an input returned as is: an alias sharing its version
            returned_input, out = out, Tensor._make(out._data, None, 0, out._vc)
        if id(outputs[i]) in non_diff or out._data.dtype.kind not in "fc":
            if id(out) not in dirty:
                out.grad_fn, out._requires_grad = None, False
        else:
            if returned_input is not None:  # torch: a view of the input (``_base`` is it)
                mark_view(_alias, returned_input, out, {})
            out.grad_fn, out._output_nr, out._requires_grad = node, i, True
            if view is not None:  # a view written in place: its base's history changes too
                _rebase_view(out, view, Tensor._make(out._data, node, i))
            elif getattr(out, "_view", None) is not None and id(out) not in dirty:
                mark_function_output(out, cls.__name__, i, len(outputs), ctx._pure_view_of)
        wrapped.append(out)
    ctx._output_meta = tuple(output_meta)
    node.saved = _saved(ctx, node, wrapped)
    return tuple(wrapped), node


def _saved(ctx: FunctionCtx, node: Node, outputs: tuple) -> tuple:
    """save_for_backward's tensors as SavedTensors; our own outputs keep no back-reference."""
    owned = {id(o) for o in outputs if isinstance(o, Tensor) and o.grad_fn is node}
    saved = []
    nbytes = 0
    # taken first: a pack hook may raise (checkpoint's early stop) and leave ctx -> output cycles
    to_save, ctx._to_save = ctx._to_save, ()
    for t in to_save:
        if t is None:
            saved.append(None)
            continue
        s = SavedTensor(t, id(t) in owned)
        nbytes += s.nbytes
        saved.append(s)
    if nbytes and observers.saved_watchers:  # released when the SavedTensors die
        observers.saved_pack_held_by(s, nbytes)
    return tuple(saved)


# -- once_differentiable -------------------------------------------------------------

class _DelayedError(Function):
    """Stands in for a once-differentiable backward's graph: differentiating it fails."""

    @staticmethod
    def forward(ctx, *grads):
        return tuple(g.detach() if g is not None else None for g in grads)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


_DelayedError._op.node_name = "torch::autograd::Error"


def once_differentiable(backward):
    """Decorate a Function's backward that cannot itself be differentiated (runs without graph).

    >>> @staticmethod
    ... @once_differentiable
    ... def backward(ctx, g): ...
    """
    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            result = backward(ctx, *grad_outputs)
        needs_graph = records_graph() and any(
            isinstance(g, Tensor) and g._requires_grad for g in grad_outputs)
        if not needs_graph:
            return result
        single = not isinstance(result, tuple)
        grads = (result,) if single else result
        grads = tuple(g.clone() if isinstance(g, Tensor) else g for g in grads)
        tensors = [g for g in grads if isinstance(g, Tensor)]
        with_error = iter(_DelayedError.apply(*map(_requiring, tensors)) if tensors else ())
        grads = tuple(next(with_error) if isinstance(g, Tensor) else g for g in grads)
        return grads[0] if single else grads
    return wrapper


def _requiring(t):
    # a detached gradient becomes a leaf that requires grad, so _DelayedError records a node
    return t._set_requires_grad(True) if t.grad_fn is None and t._data.dtype.kind in "fc" else t


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag for its subclasses (torch.autograd.function's)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace
