"""Forward-mode AD: dual tensors carry a tangent that every op pushes forward.

>>> import gradkit.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(gradkit.tensor([1.0, 2.0]), gradkit.tensor([1.0, 0.0]))
...     fwAD.unpack_dual(x.exp()).tangent       # d/dt exp(x + t v) = exp(x) * v
tensor([2.7183, 0.0000])

While a level is open, op dispatch (ops/_dispatch.py) calls :func:`propagate` for any op with a
dual input. The output tangent comes from the op's jvp rules (one per input, summed), its
``jvp_all`` rule, the op itself applied to the tangents for linear ops, else its vjp rules by the
double-vjp trick (J t = d/du <J^T u, t>). The rules run on Tensors: forward-over-reverse works.
Known-zero tangents (torch's efficient zero tensors, zero_grads.py) add no term.
"""
from __future__ import annotations

import sys
import threading
import weakref
from typing import NamedTuple

from gradkit._tensor import Tensor
from gradkit.autograd.api import grad
from gradkit.autograd import zero_grads as _zero_grads
from gradkit.autograd.function_checks import check_function_tangents as _check_function_tangents
from gradkit.autograd.function_checks import check_tangent_size as _check_tangent_size
from gradkit.autograd.function_checks import checked_function_tangents as _checked_tangents
from gradkit.autograd.grad_mode import enable_grad, state as grad_state
from gradkit.autograd.graph import SavedTensor
from gradkit.ops import _dispatch, _op
from gradkit.ops.complex import conj, is_conjugated_view as _is_conjugated_view, real
from gradkit.ops.piecewise import zeros_like as _zeros_like
from gradkit.ops.copy_slices import copy_slices as _copy_slices
from gradkit.ops.memory_overlap import same_layout as _same_layout
from gradkit.ops.reduction import sum as sum_
from gradkit.ops.shape import broadcast_to, view
from gradkit.ops.base_layout import buffer_layout as _buffer_layout
from gradkit.ops.views import live_views as _live_views, replay_view as _replay_view


class _Level:
    """One open dual level; tensors keep ``_fw = (level, tangent)`` and check ``open``."""

    __slots__ = ("index", "open")

    def __init__(self, index: int) -> None:
        self.index = index
        self.open = True


_current: _Level | None = None
_level_lock = threading.Lock()


class _Busy(threading.local):
    busy = False  # True while a jvp rule runs: its own ops must not push tangents again


_busy = _Busy()


def enter_dual_level() -> int:
    """Open a dual level (only one at a time, as in torch); returns its index."""
    global _current
    with _level_lock:
        if _current is not None:
            raise RuntimeError("Nested forward mode AD is not supported at the moment")
        _current = _Level(0)
        _dispatch._forward_ad = sys.modules[__name__]
    return _current.index


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the current dual level: every tangent created in it becomes unreachable."""
    global _current
    with _level_lock:
        if _current is None or (level is not None and level != _current.index):
            raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                               "that was created. This is not supported.")
        _current.open = False
        _current = None
        _dispatch._forward_ad = None


def level_open() -> bool:
    """Whether a dual level is open (gradkit.func's jvp opens its own only where none is)."""
    return _current is not None


class dual_level:  # noqa: N801 - torch's spelling
    """Context manager for one forward AD level: dual tensors made inside live until exit.

    >>> with fwAD.dual_level():
    ...     y = f(fwAD.make_dual(x, v))
    ...     jvp = fwAD.unpack_dual(y).tangent
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and its tangent (None if none)."""

    primal: object
    tangent: object


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of ``tensor`` that carries ``tangent`` (same shape) in the current level.

    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(gradkit.ones(2), gradkit.tensor([1.0, 0.0]))
    """
    if _current is None or (level is not None and level != _current.index):
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dual(): expected {what} to be a Tensor, got "
                            f"{type(t).__name__}")
        if t._data.dtype.kind not in "fc":
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"{t.dtype}")
    tangent_fw = getattr(tangent, "_fw", None)
    if tangent_fw is not None and tangent_fw[0] is _current:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{_current.index} is not supported.")
    _check_tangent_size(tensor, tangent)
    if tangent._data.dtype != tensor._data.dtype:
        tangent = tangent.to(tensor.dtype)
    elif not _same_layout(tensor._data, tangent._data) or \
            _is_conjugated_view(tensor) != _is_conjugated_view(tangent):
        tangent = tangent.clone()  # as torch: a tangent laid out otherwise (a slice of more
        # memory, a conjugated view of a plain primal or the reverse) is copied
    if grad_state.inference:  # as torch: inference tensors track no views, so no view here
        dual = Tensor._make(tensor._data, None, 0, tensor._vc)
        dual._fw = (_current, tangent)
        return dual
    dual = _alias(tensor)
    dual._fw = (_current, tangent)
    dual._view.forward_base = weakref.ref(dual)  # views of the dual take their tangents from it
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; tangent is None for a tensor without one.

    Beyond torch: a tangent from a level that has exited raises instead of reading as None.
    """
    fw = getattr(tensor, "_fw", None)
    if fw is None:
        return UnpackedDualTensor(tensor, None)
    if not fw[0].open:
        raise RuntimeError(
            f"unpack_dual(): this tensor was made dual in forward AD level {fw[0].index}, which "
            "has already exited, so its tangent is gone. Call unpack_dual() inside the "
            "`with dual_level():` block that created it.")
    primal = _alias(tensor)
    # as torch, the primal is a view for backward only: writing into it (or its views) leaves
    # the dual's tangent alone, so it is its own base for tangents
    primal._view.forward_base = weakref.ref(primal)
    return UnpackedDualTensor(primal, fw[1])


def _alias(tensor):
    """A differentiable view of ``tensor`` (sharing data and version) without its tangent."""
    _busy.busy, previous = True, _busy.busy
    try:
        return view(tensor, tuple(tensor._data.shape))
    finally:
        _busy.busy = previous


def _tangent(a):
    fw = getattr(a, "_fw", None)
    return fw[1] if fw is not None and fw[0].open else None


# -- the dispatch hook --------------------------------------------------------------

def has_tangents(args) -> bool:
    """True when an argument carries a tangent of the open level (dispatch's cheap check)."""
    if _current is None or _busy.busy or grad_state.inference:  # inference mode: no tangents
        return False
    return any(isinstance(a, Tensor) and _tangent(a) is not None for a in args)


class suspended:  # noqa: N801
    """Ops in this block push no tangents (a custom Function's forward, a jvp rule)."""

    def __enter__(self) -> None:
        self.previous = _busy.busy
        _busy.busy = True

    def __exit__(self, *exc) -> None:
        _busy.busy = self.previous


def propagate(op, args, params, result) -> None:
    """Give ``result`` (one Tensor or a tuple) the tangent of ``op`` at ``args``."""
    outputs = result if isinstance(result, tuple) else (result,)
    tangents = [_tangent(a) for a in args]
    with suspended():
        out_tangents = _output_tangents(op, args, tangents, params, outputs)
    _attach(outputs, out_tangents, tangents)


def _attach(outputs, out_tangents, input_tangents=()) -> None:
    for out, t in zip(outputs, out_tangents, strict=False):
        if t is None or not isinstance(out, Tensor) or out._data.dtype.kind not in "fc":
            continue
        if not isinstance(t, Tensor):
            t = Tensor._make(t)
        elif getattr(out, "_view", None) is None and any(t is given for given in input_tangents):
            # a rule that passes a tangent through (clone, x + 1): an in-place write into the
            # output updates its tangent in place, which must not reach the input's
            with suspended():
                t = t.clone()
        if _is_conjugated_view(t) and not _is_conjugated_view(out):
            with suspended():  # a rule's lazy conj(): materialized, as torch's tangents are
                t = t.resolve_conj()  # (view_as_real of the dual views its tangent too)
        if t._data.shape != out._data.shape:
            t = broadcast_to(t, tuple(out._data.shape))
        if t._data.dtype != out._data.dtype:  # a complex Scalar's term of a real output:
            t = (real(t) if t.is_complex() > out.is_complex() else t).to(out.dtype)  # real part
        if getattr(out, "_view", None) is None and out._data.flags.c_contiguous and \
                not t._data.flags.c_contiguous:
            with suspended():  # torch's set_fw_grad copies a tangent laid out otherwise (the
                t = t.contiguous()  # real part of a complex rule's result) as its primal
        out._fw = (_current, t)
        _keep_saved_outputs_dual(out)


def _keep_saved_outputs_dual(out) -> None:
    """An output saved by its own node is rebuilt from its array in backward, dropping its
    tangent: the entry holds an alias with it, as torch's keeps the saved forward grad (so a
    later ``detach_()`` of the output drops neither node nor tangent: fwd seed 595048)."""
    node = out.grad_fn
    for s in getattr(node, "saved", None) or ():
        if type(s) is SavedTensor and s.output_nr == out._output_nr and s.tensor is None \
                and s.unpack_hook is None and s.data is out._data:
            s.tensor = Tensor._make(out._data, node, out._output_nr, out._vc)
            s.tensor._fw = out._fw


def _output_tangents(op, args, tangents, params, outputs) -> tuple:
    if not op.differentiable:
        return (None,) * len(outputs)
    params = {**op.defaults, **params} if op.defaults else params
    tangents, only_known_zeros = _zero_grads.without_known_zeros(tangents)  # (their terms are zero)
    if only_known_zeros and op.outputs == 1:
        return (_zero_grads.marked(_zeros_like(outputs[0])),)
    if op.outputs == 1 and op.jvps is not None:
        saved = _saved_values(op, args, outputs)
        terms = [rule(t, *saved, **params) for rule, t in zip(op.jvps, tangents, strict=False)
                 if t is not None and rule is not None]
        return (sum(terms[1:], terms[0]) if terms else None,)
    if op.jvp_all is not None:
        saved = _saved_values(op, args, outputs)
        out = op.jvp_all(tuple(tangents), *saved, **params)
        return (out,) if op.outputs == 1 else tuple(out)
    if op.linear and op.outputs == 1:
        filled = [t if t is not None else (_zeros_like(a) if isinstance(a, Tensor) else 0 * a)
                  for a, t in zip(args, tangents, strict=False)]
        return (op(*filled, **params),)
    return _double_vjp(op, args, tangents, params, outputs)


def _saved_values(op, args, outputs) -> list:
    """What the op saves for its rules (its vjp's spec unless it names its own), as Tensors."""
    values = []
    for kind, index, attr in getattr(op, "jvp_save_spec", op.save_spec):  # (softmax's: x too)
        if kind == "inputs":
            values.append(tuple(args) if not attr else
                          tuple(getattr(_data(a), attr) for a in args))
            continue
        source = args[index] if kind == "input" else outputs[index]
        if attr:  # metadata; a Python scalar argument has shape () (as the op's own save)
            data = _data(source)
            values.append(getattr(data, attr) if hasattr(data, attr) else _op._scalar_meta(attr))
        else:
            values.append(source)
    return values


def _data(a):
    return getattr(a, "_data", a)


def _double_vjp(op, args, tangents, params, outputs) -> tuple:
    """J t for an op with only vjp rules: <J^T u, t> is linear in u, its gradient is J t.

    The primals enter as fresh leaves, so (unlike ops with jvp rules) the tangent
    does not connect back to the primal's history in reverse mode.
    """
    primals = [Tensor._make(a._data)._set_requires_grad(True) if t is not None else a
               for a, t in zip(args, tangents, strict=False)]
    wrt = [p for p, t in zip(primals, tangents, strict=False) if t is not None]
    with enable_grad():
        out = op(*primals, **params)
        outs = out if isinstance(out, tuple) else (out,)
        diff = [i for i, o in enumerate(outs) if o._requires_grad]
        if not diff:
            return (None,) * len(outputs)
        probes = [_zeros_like(outs[i])._set_requires_grad(True) for i in diff]
        vjps = grad([outs[i] for i in diff], wrt, probes, create_graph=True, allow_unused=True)
        inner = None  # Re<vjp(u), t> = Re<u, J t>: its gradient in u is J t (complex too)
        for g, t in zip(vjps, [t for t in tangents if t is not None], strict=False):
            if g is not None and g._requires_grad:  # a vjp that ignores u adds nothing
                term = real(sum_(conj(g) * t))
                inner = term if inner is None else inner + term
        if inner is None:
            return tuple(_zeros_like(outs[i]) if i in diff else None for i in range(len(outputs)))
        keep = any(t._requires_grad for t in tangents if t is not None)
        columns = grad(inner, probes, create_graph=keep, allow_unused=True)
    result = [None] * len(outputs)
    for i, c in zip(diff, columns, strict=False):
        result[i] = c if c is not None else _zeros_like(outs[i])
    return tuple(result)


def after_inplace(tensor, view) -> None:
    """Tangents after an in-place write into ``tensor`` (a view when ``view`` is its ViewInfo),
    kept as torch keeps them: a view's tangent is its region of its base's tangent. A write
    into a view writes the view's new tangent (zeros if none) into the base's tangent, and
    every live view of that memory then reads its region of the base's new tangent."""
    base, chain = (tensor, ()) if view is None else _forward_base(view)
    with suspended():
        t_base = _tangent(base)
        if chain:
            t_view = _tangent(tensor)
            if t_view is None and t_base is None:
                return
            t_base = _copy_slices(_zeros_like(base) if t_base is None else t_base,
                                 _zeros_like(tensor) if t_view is None else t_view, chain=chain,
                                 written=False, layout=_buffer_layout(base._data, chain))
            base._fw = (_current, t_base)
        if t_base is None:
            return
        for other in (tensor, *_live_views(tensor)):
            if other is base or other._view is None:
                continue
            other_base, other_chain = _forward_base(other._view)
            if other_base is base:
                other._fw = (_current, _replay_view(other_chain, t_base))


def _forward_base(view) -> tuple:
    """The tensor whose tangent a view's tangent is a region of, and the view chain from it:
    the nearest dual made by make_dual above the view (a base for tangents, as in torch), else
    the view's base."""
    steps = []
    info = view
    while info is not None:
        dual = info.forward_base() if info.forward_base is not None else None
        if dual is not None:
            break
        steps.append((info.op, info.params, info.index))
        info = info.parent
    steps.reverse()
    return (view.base if dual is None else dual), tuple(steps)


# -- custom Functions -----------------------------------------------------------------

def input_tangents(args) -> list:
    """The tangents a custom Function's inputs carry (None for a non-dual), read before its
    forward runs."""
    return [_tangent(a) if isinstance(a, Tensor) else None for a in args]


def propagate_function(cls, ctx, args, outputs, given: list, raw_outputs: tuple) -> None:
    """Output tangents of a custom Function from its ``jvp`` staticmethod, given the inputs'
    tangents ``given`` (:func:`input_tangents`) and what forward returned (``raw_outputs``,
    before outputs that are inputs became views of them)."""
    versions = [None if t is None else t._vc[0] for t in given]
    tangents = [_zeros_like(a) if t is None and ctx.materialize_grads and isinstance(a, Tensor)
                and a._data.dtype.kind in "fc" else t for a, t in zip(args, given)]
    ctx._in_jvp = True
    try:
        with suspended():
            out = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    returned = _checked_tangents(outputs, out)
    _check_function_tangents(ctx, args, raw_outputs, outputs, given, versions, returned,
                            _base_for_tangents)
    _attach(outputs, returned)


def _base_for_tangents(tensor):
    """The tensor whose tangent ``tensor``'s tangent is a view of: its forward base."""
    view = getattr(tensor, "_view", None)
    return tensor if view is None else _forward_base(view)[0]
