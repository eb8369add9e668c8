"""Op dispatch, the hot path: run an op's forward on arrays and record its node.

``dispatch`` has a fast path for the common case (CPU Tensors, NumPy arrays and Python
numbers, no observer, no dual level; docs/performance.md) and falls back to
``_dispatch_general`` for everything else. Ops are declared in ops/_op.py.
"""
from __future__ import annotations

from time import perf_counter_ns
from typing import TYPE_CHECKING

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd import observers
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.graph import SavedTensor, accumulate_node, node_type
from gradkit.autograd.inference import InferenceVersion
from gradkit.autograd.zero_grads import Undefined
from gradkit.ops._dispatch_general import (
    _as_array, _broadcast_message, _check_argument_types, _floating, _forward_on_device,
    _init_saved, _new, _numpy_operands, _save, _xp_of, failed_on_argument, keep_values,
    numbers_only)
from gradkit.ops import wide_unsigned
from gradkit.ops.result_layout import iterator_layout
from gradkit.ops.unary_helpers import invalid_combination
from gradkit.ops.views import mark_view

if TYPE_CHECKING:
    from gradkit.ops._op import Op

_forward_ad = None  # bound by gradkit.autograd.forward_ad when a dual level opens


def _materialize(grads, node, differentiable, create_graph):
    """Zeros for the outputs that received no gradient (multi-output ops)."""
    out = []
    for i in differentiable:
        g = grads[i] if i < len(grads) else None  # engine buffers stop at the last slot fed
        if g is None:
            shape, dtype, xp = node._extras.output_meta[i]
            g = xp.zeros(shape, dtype)
            if xp is np:  # torch's undefined gradient, which some formulas check for
                g = g.view(Undefined)
            if create_graph:
                g = Tensor._make(g)
        out.append(g)
    return tuple(out)


def dispatch(op: Op, args: tuple, params: dict):
    """Run ``op`` on ``args``: Tensors give a Tensor (and a node); raw arrays an array.

    The fast path (docs/performance.md): every argument a CPU Tensor, a NumPy array or a
    Python float/int, no op observer and no dual level. Anything else, and any error (the
    forward is pure, so running it again is safe), takes ``_dispatch_general``.
    """
    if op.hot_dispatch is not None:  # ops of one or two inputs: ops/_dispatch_hot.py
        return op.hot_dispatch(op, args, params)
    datas = []
    tensors = arrays = needs_grad = False
    for a in args:
        t = type(a)
        if t is Tensor or t is not np.ndarray and isinstance(a, Tensor):
            d = a._data
            if type(d) is not np.ndarray:
                return _dispatch_general(op, args, params)
            datas.append(d)
            tensors = True
            if a._requires_grad:
                needs_grad = True
        elif t is float or t is int:
            datas.append(a)
        elif t is np.ndarray:
            datas.append(a)
            arrays = True
        else:
            return _dispatch_general(op, args, params)
    if not tensors:  # raw arrays: a derivative rule running in a plain backward
        try:
            return op.forward(np, *datas, **params)
        except Exception:
            return _dispatch_general(op, args, params)
    if arrays or op.plain_dispatch is False or observers.op_watchers or \
            _forward_ad is not None:  # NumPy arrays with tensors: read as torch reads them
        return _dispatch_general(op, args, params)
    try:
        out = op.forward(np, *datas, **params)
    except Exception:
        return _dispatch_general(op, args, params)
    if type(out) is not np.ndarray or grad_state.inference:  # a NumPy scalar; inference
        return _finish(op, args, datas, params, needs_grad, np, out)
    if needs_grad and op.differentiable and grad_state.grad_enabled and out.dtype.kind in "fcV":
        if op.plain_save is not None and op.node_name_rule is None:
            return _record_fast(op, args, datas, params, out)
        return _record(op, args, datas, params, out, np)
    if out.dtype.kind in "uib":  # an input may be uint16/32/64, which few ops take
        wide_unsigned.check(op, datas)
    result = _new_tensor(Tensor)  # Tensor._make(out), inline
    result._data, result.grad_fn, result._requires_grad = out, None, False
    result._output_nr, result._vc = 0, [0]
    return result


_new_tensor = object.__new__


def edges_and_meta(args, datas) -> tuple:
    """(next nodes, their input slots, input meta, bitmask of the inputs with an edge) of one
    op call: an edge to the node of each input that requires grad, the (shape, dtype) its
    gradient must have."""
    if len(args) == 1:  # unary ops, the commonest: no loop, no lists
        a = args[0]
        d = datas[0]
        if d is not a and a._requires_grad:
            fn = a.grad_fn
            if fn is None:
                return (accumulate_node(a),), _NO_SLOT, ((d.shape, d.dtype),), 1
            return (fn,), (a._output_nr,), ((d.shape, d.dtype),), 1
    nodes = []
    slots = []
    meta = []
    needing_grad = i = 0
    for a in args:
        d = datas[i]
        if d is a:  # a number or array (dispatch passes those through as their data): no edge
            nodes.append(None)
            slots.append(0)
            meta.append(None)
        else:
            if a._requires_grad:
                fn = a.grad_fn
                if fn is None:
                    nodes.append(accumulate_node(a))
                    slots.append(0)
                else:
                    nodes.append(fn)
                    slots.append(a._output_nr)
                needing_grad |= 1 << i
            else:
                nodes.append(None)
                slots.append(0)
            meta.append((d.shape, d.dtype))
        i += 1
    return tuple(nodes), tuple(slots), tuple(meta), needing_grad


_NO_SLOT = (0,)


def _record_fast(op, args, datas, params, out):
    """``_record`` for one NumPy output, whole inputs/results saved, the node's fixed name."""
    if op.no_complex_grad is not None and out.dtype.kind == "c":
        _refuse_complex_grad(op)
    nodes, slots, meta, needing_grad = edges_and_meta(args, datas)
    node = op.node_class(op, nodes, slots, None,
                         {**op.defaults, **params} if params and op.defaults else
                         params or op.defaults, meta)
    result = _new_tensor(Tensor)  # Tensor._make(out, node, 0), inline
    result._data, result.grad_fn, result._requires_grad = out, node, True
    result._output_nr, result._vc = 0, [0]
    plain = op.plain_save
    if plain:
        keep = () if op.saves_read is None else op._save_masks.get(needing_grad)
        if keep is None:
            keep = op.save_mask(needing_grad)
        _save_plain(node, plain, args, (result,), keep)
    else:
        node.saved = ()
    return result


def _dispatch_general(op: Op, args: tuple, params: dict):
    """Dispatch for any arguments: devices, NumPy values, observers, dual numbers, errors."""
    datas = []
    tensors = False
    needs_grad = False
    others = False  # arguments besides tensors and Python numbers (NumPy values, lists, ...)
    for a in args:
        if type(a) is Tensor or isinstance(a, Tensor):
            datas.append(a._data)
            tensors = True
            if a._requires_grad:
                needs_grad = True
        else:
            datas.append(a)
            if type(a) not in _PLAIN_ARGUMENTS:
                others = True
    if others and tensors:
        args, datas = _numpy_operands(args, datas)
    if not tensors:  # raw arrays: a derivative rule running in a plain backward
        if len(args) == 2 and type(args[0]) in _NUMBERS and type(args[1]) in _NUMBERS:
            return _of_two_numbers(op, args, params)
        xp = _xp_of(datas)
        try:
            return op.forward(xp, *datas, **params) if xp is np else \
                _forward_on_device(op, xp, datas, params)
        except (AttributeError, TypeError):
            _check_argument_types(op, args)
            raise
    watchers = observers.op_watchers
    if not watchers:
        return _apply(op, args, datas, params, needs_grad)
    if len(watchers) > 1:
        return _dispatch_observed(watchers, op, args, datas, params, needs_grad)
    # one observer (a profiler or anomaly mode): _dispatch_observed's work, inline
    observer, name = watchers[0], op.profiler_name
    token = observer.op_enter(name, args) if observers.op_entering else perf_counter_ns()
    try:
        result = _apply(op, args, datas, params, needs_grad)
    except BaseException:
        observer.op_exit(token, name, args, None, None, params)
        raise
    observer.op_exit(token, name, args, result,
                     result.grad_fn if type(result) is Tensor else _node_of(result), params)
    return result


_PLAIN_ARGUMENTS = frozenset({int, float, bool, complex, type(None)})
_NUMBERS = frozenset({int, float, bool, complex})
# torch's overloads taking two numbers (torch.add(2, 3) is a 0-d tensor); these ops have none
_TENSOR_OF_NUMBERS = frozenset({"add", "sub", "mul", "div", "floor_divide"})
_REFUSING_NUMBERS = frozenset({"remainder", "pow", "bitwise_and", "bitwise_or", "bitwise_xor",
                               "bitwise_left_shift", "bitwise_right_shift"})


def _of_two_numbers(op, args, params):
    """A binary op of two Python numbers, as torch: a 0-d tensor or its TypeError (others, as a
    derivative rule may call them, the number)."""
    if op.name in _REFUSING_NUMBERS:
        raise invalid_combination(op.name, *args)
    out = op.forward(np, *args, **params)
    return Tensor._make(np.asarray(out)) if op.name in _TENSOR_OF_NUMBERS else out


def _node_of(result):
    """The node that made an op's outputs (a tuple of Tensors, possibly empty), or None."""
    return result[0].grad_fn if result else None


def _apply(op, args, datas, params, needs_grad):
    """The op proper: forward on arrays, then the output tensors (and node when recording)."""
    xp = _xp_of(datas)
    try:
        if xp is np:  # an elementwise op's kernel, laid out here (result_layout.forwards)
            out = op.kernel(xp, *datas, **params)
            if op.lays_out and type(out) is np.ndarray and out.ndim > 1:
                out = iterator_layout(out, datas)
        else:
            out = _forward_on_device(op, xp, datas, params)
    except ValueError as e:  # NumPy's broadcast error, in torch's words and type
        if op.broadcast and "broadcast" in str(e):
            raise RuntimeError(_broadcast_message(datas)) from None
        raise
    except NotImplementedError as error:  # no kernel for the dtype: torch checks the shapes
        # before (an op that checked its own shapes marks the error)
        if op.broadcast and not getattr(error, "shapes_checked", False) and \
                not _shapes_broadcast(datas):
            raise RuntimeError(_broadcast_message(datas)) from None
        raise
    except TypeError:
        _check_argument_types(op, args)
        raise
    except AttributeError as error:  # a number, a None or a tuple where a tensor goes
        _check_argument_types(op, args, numbers=failed_on_argument(error, args))
        raise
    return _finish(op, args, datas, params, needs_grad, xp, out)


def _shapes_broadcast(datas) -> bool:
    """Whether the arrays among ``datas`` broadcast together."""
    try:
        np.broadcast_shapes(*(d.shape for d in datas if hasattr(d, "shape")))
    except ValueError:
        return False
    return True


def _finish(op, args, datas, params, needs_grad, xp, out):
    """The output tensors of a forward's result ``out`` (and the node when recording)."""
    if not needs_grad and not _floating(out):  # uint16/32/64 tensors never require grad:
        wide_unsigned.check(op, datas)  # check the integer ops they reach (floats: computed so)
    if needs_grad and op.differentiable and grad_state.grad_enabled \
            and not grad_state.inference and (
            out.dtype.kind in "fcV" if type(out) is np.ndarray else _floating(out)) and not (
            op.view and type(getattr(args[0], "_vc", None)) is InferenceVersion):  # torch: views
        result = _record(op, args, datas, params, out, xp)  # of inference tensors: no history
    elif op.outputs == 1:
        result = Tensor._make(out if type(out) is np.ndarray else _as_array(xp, out))
    else:
        result = tuple(Tensor._make(_as_array(xp, o)) for o in out)
    if op.view:
        mark_view(op, args[0], result, params)
    if _forward_ad is not None and _forward_ad.has_tangents(args):
        _forward_ad.propagate(op, args, params, result)
    return result


def _dispatch_observed(watchers, op, args, datas, params, needs_grad):
    """``_apply`` between the op_enter and op_exit of several observers."""
    def run():
        result = _apply(op, args, datas, params, needs_grad)
        return result, result.grad_fn if type(result) is Tensor else _node_of(result)
    return observers.observe_op(watchers, op.profiler_name, args, run, params)


def _record(op: Op, args, datas, params, out, xp):
    """Create the node for one op call and the output tensors that point at it."""
    if op.no_complex_grad is not None and any(
            o.dtype.kind == "c" for o in ((out,) if op.outputs == 1 else out)):
        _refuse_complex_grad(op)
    nodes, slots, meta, needing_grad = edges_and_meta(args, datas)
    if op.saves_for_every_tensor:  # pow: its node saves for every tensor input
        needing_grad = sum(1 << i for i, (a, d) in enumerate(zip(args, datas)) if d is not a)
    node_params = {**op.defaults, **params} if params and op.defaults else params or op.defaults
    node_class = op.node_class if op.node_name_rule is None else \
        node_type(op.node_name_rule(node_params, datas))
    node = node_class(op, nodes, slots, None, node_params, meta)
    if op.outputs == 1:
        result = Tensor._make(out if type(out) is np.ndarray else _as_array(xp, out), node, 0)
        outputs = (result,)
    else:
        diff = op.differentiable_outputs
        outputs = tuple(
            Tensor._make(_as_array(xp, o), node if diff is None or i in diff else None, i)
            for i, o in enumerate(out))
        node.extras().output_meta = tuple((o._data.shape, o._data.dtype, xp) for o in outputs)
        result = outputs
    plain = op.plain_save
    keep = op.save_mask(needing_grad) if op.saves_read is not None else ()
    if plain and node.runs_first:  # torch's NotImplemented: remainder(1.5, x) saves no tensor
        keep = numbers_only(plain, args, datas)
    if plain is not None:
        _save_plain(node, plain, args, outputs, keep)
    else:
        _save(node, op, args, datas, outputs, keep)
    return result


def _refuse_complex_grad(op):
    raise RuntimeError(f"{op.no_complex_grad} does not support automatic differentiation for "
                       "outputs with complex dtype.")


def _save_plain(node, plain, args, outputs, keep) -> None:
    """``_save`` for ops that save whole inputs/results only (most ops): one short loop."""
    saved = []
    nbytes = 0
    held = values = None  # held: a SavedTensor of this pack, its death releases the bytes
    for k, (is_result, index) in enumerate(plain):
        if keep and not keep[k]:  # no rule that will run reads it
            saved.append(None)
            continue
        source = outputs[index] if is_result else args[index]
        if type(source) is Tensor or isinstance(source, Tensor):
            held = _new(SavedTensor)  # SavedTensor(source, is_result) without type.__call__'s
            _init_saved(held, source, is_result)  # C frame (see _dispatch_hot's nodes)
            source = held
            nbytes += source.nbytes
        else:
            values = True
        saved.append(source)  # a Python scalar argument (or an absent one, None) as is
    if nbytes and observers.saved_watchers:
        observers.saved_pack_held_by(held, nbytes)
    node.saved = saved = tuple(saved)
    if values and not node.op.number_edges:  # (mul's number: torch's wrapped tensor, freed)
        keep_values(node, saved)
