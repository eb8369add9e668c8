"""The hot paths of ops with one or two inputs and one output, chosen when the op is declared.

``Op`` binds ``dispatch_unary`` or ``dispatch_binary`` at declaration time (``Op.hot_dispatch``)
and ``dispatch`` hands the op's calls to it first. Each does the work of dispatch's fast path
for its arity with nothing generic left: no loop over arguments, the edges, input metadata and
node built inline, the save mask of a unary op read once (docs/performance.md). Views take
the unary path too and are marked there (``views.mark_one_view``). Anything else — a device
array, an op observer, a dual level, NumPy operands, a forward that fails (the forward is
pure: the general path runs it again and raises torch's message), a result that is no NumPy
array — takes ``_dispatch_general``, the path as it always was.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd import observers
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.graph import Node, SavedTensor, accumulate_node, node_type
from gradkit.autograd.inference import InferenceVersion
from gradkit.autograd.saved_messages import FREED_ENTRY
from gradkit.ops import _dispatch, wide_unsigned
from gradkit.ops._dispatch import (_dispatch_general, _finish, _init_saved, _refuse_complex_grad,
                                   _save_plain)
from gradkit.ops._dispatch_general import _save, numbers_only
from gradkit.ops.promotion import WIDE_UNSIGNED as _WIDE
from gradkit.ops.result_layout import iterator_layout
from gradkit.ops.views import mark_one_view

# a node made as object.__new__ then Node.__init__ as a plain function: the class call would
# run __init__ through type.__call__'s C frame (~260 instructions more per node, callgrind);
# node classes (graph.node_type) define no __init__ of their own
_new = object.__new__
_init_node = Node.__init__
_ndarray = np.ndarray
_SLOT_0 = (0,)
_SLOTS_00 = (0, 0)
_SHAPE_OF_X = (("input", 0, "shape"),)  # Op.save_spec of save="x.shape"
_OPERANDS_AND_SHAPES = (("input", 0, ""), ("input", 1, ""), ("input", 0, "shape"),
                        ("input", 1, "shape"))  # of save=("x", "y", "x.shape", "y.shape")


def dispatch_unary(op, args: tuple, params: dict):
    """``dispatch`` for an op with one input: the same result, node (and view record)."""
    if len(args) != 1:
        return _dispatch_general(op, args, params)
    x = args[0]
    if type(x) is _ndarray:  # a raw array: a derivative rule running in a plain backward
        try:
            out = op.kernel(np, x, **params) if params else op.kernel(np, x)
            return iterator_layout(out, args) if op.lays_out and \
                type(out) is _ndarray and out.ndim > 1 else out
        except Exception:
            return _dispatch_general(op, args, params)
    if observers.op_watchers or _dispatch._forward_ad is not None or grad_state.inference or \
            type(x) is not Tensor and not isinstance(x, Tensor):
        return _dispatch_general(op, args, params)
    data = x._data
    if type(data) is not _ndarray:
        return _dispatch_general(op, args, params)
    try:
        out = op.kernel(np, data, **params) if params else op.kernel(np, data)
    except Exception:
        return _dispatch_general(op, args, params)
    if op.lays_out and type(out) is _ndarray and out.ndim > 1 and \
            not data.flags.c_contiguous:
        out = iterator_layout(out, (data,))
    if type(out) is not _ndarray:  # a NumPy scalar: _finish makes it a 0-d array
        return _finish(op, args, (data,), params, x._requires_grad, np, out)
    result = _new(Tensor)  # Tensor._make(out), inline (mark_one_view gives a view its base's
    result._data, result._output_nr, result._vc = out, 0, [0]  # version counter)
    # a view of an inference tensor (outside the mode) is a plain alias, without history
    if x._requires_grad and op.differentiable and grad_state.grad_enabled and \
            out.dtype.kind in "fcV" and not (op.view and type(x._vc) is InferenceVersion):
        if op.no_complex_grad is not None and out.dtype.kind == "c":
            _refuse_complex_grad(op)
        fn = x.grad_fn
        if fn is None:
            nodes, slots = (accumulate_node(x),), _SLOT_0
        else:
            nodes, slots = (fn,), _SLOT_0 if x._output_nr == 0 else (x._output_nr,)
        node = _new(op.node_class if op.node_name_rule is None else
                    _named_class(op, params, (data,)))
        _init_node(node, op, nodes, slots, (), params or op.defaults if not params or
                   not op.defaults else {**op.defaults, **params}, ((data.shape, data.dtype),))
        result.grad_fn, result._requires_grad = node, True
        plain = op.plain_save
        if plain:
            keep = () if op.saves_read is None else op._save_masks.get(1)
            if keep == () and len(plain) == 1:  # one whole tensor (sin's x, tanh's result):
                is_result = plain[0][0]  # _save_plain's work without its loop
                held = _new(SavedTensor)
                _init_saved(held, result if is_result else x, is_result)
                node.saved = (held,)
                if held.nbytes and observers.saved_watchers:
                    observers.saved_pack_held_by(held, held.nbytes)
            else:
                _save_plain(node, plain, args, (result,),
                            op.save_mask(1) if keep is None else keep)
        elif plain is None:  # metadata saved too (x.shape): the general _save, as _record's
            if op.save_spec == _SHAPE_OF_X and (op.saves_read is None or
                                                op._save_masks.get(1) == ()):
                # _save's one entry (views, sums) without its loop; no tensor saved, so
                # backward frees nothing and the size stays readable
                node.saved = (data.shape,)
            else:
                _save(node, op, args, (data,), (result,),
                      () if op.saves_read is None else op.save_mask(1))
    else:
        if out.dtype.kind in "uib" and data.dtype in _WIDE:  # uint16/32/64: few kernels
            wide_unsigned.check(op, (data,))
        result.grad_fn, result._requires_grad = None, False
    if op.view:
        mark_one_view(op, x, result, params, None)
    return result


def dispatch_binary(op, args: tuple, params: dict):
    """``dispatch`` for an op with two inputs (Tensors or Python numbers)."""
    if len(args) != 2:
        return _dispatch_general(op, args, params)
    a, b = args
    ta, tb = type(a), type(b)
    if ta is float or ta is int or ta is _ndarray:
        da = a
    elif ta is Tensor or isinstance(a, Tensor):
        da = a._data
        if type(da) is not _ndarray:  # a device array
            return _dispatch_general(op, args, params)
    else:
        return _dispatch_general(op, args, params)
    if tb is float or tb is int or tb is _ndarray:
        db = b
    elif tb is Tensor or isinstance(b, Tensor):
        db = b._data
        if type(db) is not _ndarray:
            return _dispatch_general(op, args, params)
    else:
        return _dispatch_general(op, args, params)
    if da is a and db is b:  # raw arrays and numbers: a derivative rule in a plain backward
        if ta is not _ndarray and tb is not _ndarray:  # two numbers: torch.add(2, 3)
            return _dispatch_general(op, args, params)
        try:
            out = op.kernel(np, a, b, **params) if params else op.kernel(np, a, b)
            return iterator_layout(out, args) if op.lays_out and \
                type(out) is _ndarray and out.ndim > 1 else out
        except Exception:
            return _dispatch_general(op, args, params)
    # NumPy operands with a tensor are read as torch reads them: the general path
    if ta is _ndarray or tb is _ndarray or observers.op_watchers or \
            _dispatch._forward_ad is not None or grad_state.inference:
        return _dispatch_general(op, args, params)
    try:
        out = op.kernel(np, da, db, **params) if params else op.kernel(np, da, db)
    except Exception:
        return _dispatch_general(op, args, params)
    if op.lays_out and type(out) is _ndarray and out.ndim > 1:
        out = iterator_layout(out, (da, db))
    ga = da is not a and a._requires_grad
    gb = db is not b and b._requires_grad
    if type(out) is not _ndarray:
        return _finish(op, args, (da, db), params, ga or gb, np, out)
    result = _new(Tensor)  # Tensor._make(out), inline
    result._data, result._output_nr, result._vc = out, 0, [0]
    if (ga or gb) and op.differentiable and grad_state.grad_enabled and \
            out.dtype.kind in "fcV":
        if op.no_complex_grad is not None and out.dtype.kind == "c":
            _refuse_complex_grad(op)
        if ga:
            fa = a.grad_fn
            na, sa = (accumulate_node(a), 0) if fa is None else (fa, a._output_nr)
        else:
            na = sa = None
        if gb:
            fb = b.grad_fn
            nb, sb = (accumulate_node(b), 0) if fb is None else (fb, b._output_nr)
        else:
            nb = sb = None
        node = _new(op.node_class if op.node_name_rule is None else
                    _named_class(op, params, (da, db)))
        _init_node(
            node, op, (na, nb), _SLOTS_00 if not sa and not sb else (sa or 0, sb or 0), (),
            params or op.defaults if not params or not op.defaults else {**op.defaults, **params},
            (None if da is a else (da.shape, da.dtype), None if db is b else (db.shape, db.dtype)))
        result.grad_fn, result._requires_grad = node, True
        plain = op.plain_save
        if plain:
            needing = ga | gb << 1
            if op.saves_for_every_tensor:  # pow: its node saves for both whenever both are
                needing = (da is not a) | (db is not b) << 1
            keep = () if op.saves_read is None else op._save_masks.get(needing)
            if node.runs_first:  # torch's NotImplemented: remainder(1.5, x) saves no tensor
                keep = numbers_only(plain, args, (da, db))
            _save_plain(node, plain, args, (result,),
                        op.save_mask(needing) if keep is None else keep)
        elif plain is None:  # metadata saved too (matmul's x.shape): the general _save
            keep = () if op.saves_read is None else op.save_mask(ga | gb << 1)
            if op.save_spec == _OPERANDS_AND_SHAPES and da is not a and db is not b:
                node.saved = saved = _save_operands_and_shapes(a, b, da, db, keep)
                # the sizes outlive backward's freeing of the operands (_save's kept_meta)
                node.extras().kept_meta = (None if saved[0] is None else FREED_ENTRY,
                                           None if saved[1] is None else FREED_ENTRY,
                                           saved[2], saved[3])
            else:
                _save(node, op, args, (da, db), (result,), keep)
    else:
        if out.dtype.kind in "uib" and ((da is not a and da.dtype in _WIDE) or
                                        (db is not b and db.dtype in _WIDE)):
            wide_unsigned.check(op, (da, db))  # uint16/32/64: few kernels
        result.grad_fn, result._requires_grad = None, False
    return result



def _save_operands_and_shapes(a, b, da, db, keep: tuple) -> tuple:
    """``_save`` of two tensors saved whole and then their shapes (matmul's x, y, x.shape,
    y.shape: 200 products a step of the RNN benchmark) without its loop over the entries;
    ``keep``: the save mask (``()``: everything)."""
    nbytes, held, sa, sb = 0, None, None, None
    if not keep or keep[0]:
        held = sa = _new(SavedTensor)
        _init_saved(sa, a, False)
        nbytes = sa.nbytes
    if not keep or keep[1]:
        held = sb = _new(SavedTensor)
        _init_saved(sb, b, False)
        nbytes += sb.nbytes
    if nbytes and observers.saved_watchers:
        observers.saved_pack_held_by(held, nbytes)
    return (sa, sb, da.shape if not keep or keep[2] else None,
            db.shape if not keep or keep[3] else None)


def _named_class(op, params: dict, datas: tuple) -> type:
    """The node class of an op whose node name depends on the call (torch's overloads:
    ``sum`` with a dim is SumBackward1, a product of matrices MmBackward0)."""
    return node_type(op.node_name_rule(
        params or op.defaults if not params or not op.defaults else {**op.defaults, **params},
        datas))
