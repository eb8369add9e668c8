"""The fast path of view ops (``@op(view=True)`` with one output): unsqueeze, view, t, x[i]...

``Op`` binds it at declaration time (``Op.view_dispatch``) and ``dispatch`` hands such ops to it
first. For a CPU Tensor input, no op observer, no dual level and no inference mode, it runs the
forward on NumPy, records the node as dispatch's fast path does and marks the view
(``views.mark_one_view``) with no detour through ``_dispatch_general``'s argument scan,
device probe, ``_apply`` and ``_finish``. Anything else, a forward that fails (the forward
is pure: the general path runs it again and raises torch's message) or one that gives no
NumPy array takes ``_dispatch_general``, the path as it was (docs/performance.md).
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd import observers
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.inference import InferenceVersion
from gradkit.ops import _dispatch
from gradkit.ops._dispatch import _dispatch_general, _record, _record_fast
from gradkit.ops.views import mark_one_view

_new_tensor = object.__new__


def dispatch_view(op, args: tuple, params: dict):
    """``dispatch`` for a one-output view op: the same result, node and view record."""
    x = args[0] if len(args) == 1 else None
    if type(x) is np.ndarray:  # a raw array: a derivative rule running in a plain backward
        try:
            return op.forward(np, x, **params)
        except Exception:
            return _dispatch_general(op, args, params)
    if x is None or observers.op_watchers or _dispatch._forward_ad is not None or \
            grad_state.inference or type(x) is not Tensor and not isinstance(x, Tensor):
        return _dispatch_general(op, args, params)
    data = x._data
    if type(data) is not np.ndarray:
        return _dispatch_general(op, args, params)
    try:
        out = op.forward(np, data, **params)
    except Exception:
        return _dispatch_general(op, args, params)
    if type(out) is not np.ndarray:  # a NumPy scalar: _finish makes it a 0-d array
        return _dispatch_general(op, args, params)
    # a view of an inference tensor (outside the mode) is a plain alias, without history
    if x._requires_grad and op.differentiable and grad_state.grad_enabled and \
            out.dtype.kind in "fcV" and type(x._vc) is not InferenceVersion:
        if op.plain_save is not None and op.node_name_rule is None:
            result = _record_fast(op, args, [data], params, out)
        else:
            result = _record(op, args, [data], params, out, np)
    else:
        result = _new_tensor(Tensor)  # Tensor._make(out), inline (mark_one_view sets _vc)
        result._data, result.grad_fn, result._requires_grad, result._output_nr = \
            out, None, False, 0
    mark_one_view(op, x, result, params, None)
    return result
