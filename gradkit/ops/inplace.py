"""In-place ops: one mechanism for ``add_``, ``x[i] = v``, ``zero_`` and the rest.

An in-place op is its out-of-place op plus a write into the tensor's own
memory: the version counter (shared with every view) is bumped, and when a
graph is being recorded the tensor's history is rebased onto the new node, so
later gradients flow through the op. Writing into a view also rebases its base
(torch's CopySlices), so gradients of the base stay correct.
"""
from __future__ import annotations

import contextlib
import weakref

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd import saved_mutation
from gradkit.autograd.grad_mode import enable_grad, records_graph
from gradkit.autograd.graph import SavedTensor, accumulate_node
from gradkit.autograd.inference import check_inplace
from gradkit.backend import device_context
from gradkit.ops import _dispatch
from gradkit.ops.complex import is_conjugated_view, is_negative_view
from gradkit.ops.base_layout import buffer_layout
from gradkit.ops.copy_slices import copy_slices, wrap_op_node
from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.in_place_overloads import (
    check_output, check_output_before_kernel, in_place_checks, name_in_place_node)
from gradkit.ops.memory_overlap import (
    OVERLAP_MESSAGE, PARTIAL_OVERLAP_MESSAGE, aliased_copy, has_internal_overlap, may_overlap,
    memory_of, partially_overlap)
from gradkit.ops.promotion import UNSIGNED_PROMOTION
from gradkit.ops.stale_views import make_stale
from gradkit.ops.views import (
    COMPUTED_VIEWS, DEFAULT, LEAF_VIEW_MESSAGE, live_views, refresh_computed,
    refresh_computed_elsewhere, replay_view, writable_alias, write_through)


def _tensor_type():
    return Tensor


LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."


def refuse_recorded_write(tensor, view) -> None:
    """torch's refusals of an in-place op (a write or a restride) that records: into a view
    that refuses writes, into a view of a leaf that requires grad (or a view that is such a
    leaf itself: a laid-out leaf), or into such a leaf."""
    if view is not None:
        refusal = view.refusal(indirect=False)
        if refusal is not None:
            raise RuntimeError(refusal)
        leaf_itself = view.of_transform_leaf()
        if leaf_itself is not None or view.base.grad_fn is None and (
                tensor._requires_grad or view.base._requires_grad):
            raise RuntimeError(LEAF_MESSAGE if leaf_itself else LEAF_VIEW_MESSAGE)
    if tensor.grad_fn is None and tensor._requires_grad:
        raise RuntimeError(LEAF_MESSAGE)


def inplace(tensor, out_of_place, *args, **kwargs):
    """Run ``out_of_place(tensor, *args)`` and write the result into ``tensor``."""
    check_inplace(tensor)
    in_place_checks(out_of_place, tensor._data, args, kwargs)  # masked_fill_'s own order
    # elements sharing memory (an expanded tensor): most ops refuse; the ones torch lets write
    # into such a region (fill_) leave a CopySlices whose backward refuses, as torch's
    overlapping = has_internal_overlap(tensor._data) and bool(
        getattr(out_of_place, "check_overlap", _refuse_overlap)(tensor._data, *args))
    tensor_type = _tensor_type()
    # (torch's conj and neg fallbacks copy an operand with either bit out first: conj_views
    # seed 301284, x.conj().add_(x.conj().imag); copy_ has no fallback: it reads the view's
    # memory, so x[1:].copy_(x.conj()[:-1]) is refused)
    conj_itself = getattr(out_of_place, "reads_conj_itself", False)
    if not getattr(out_of_place, "reads_value_first", False) and any(
            isinstance(a, tensor_type) and (partially_overlap(memory_of(tensor), memory_of(a))
                                            if conj_itself else partially_overlap(
                tensor._data, a._data) and not (is_conjugated_view(a) or is_negative_view(a)))
            for a in args):
        raise RuntimeError(PARTIAL_OVERLAP_MESSAGE)
    view = getattr(tensor, "_view", None)
    # an integer (or bool) target never records: what it holds has no gradient, as in torch
    recording = records_graph() and tensor._data.dtype.kind in "fcV" and (
        tensor._requires_grad or (view is not None and view.base._requires_grad)
        or any(isinstance(a, tensor_type) and a._requires_grad for a in args))
    if recording:
        refuse_recorded_write(tensor, view)
    if view is not None and view.computed and has_internal_overlap(tensor._data) and (
            is_conjugated_view(tensor) or is_negative_view(tensor)) and not getattr(
            out_of_place, "reads_conj_itself", False):
        # torch's conj (neg) fallback first resolves the written tensor with conj_physical_
        # (neg_): refused where its elements share memory, whatever the op (fill_ too)
        raise RuntimeError(OVERLAP_MESSAGE)
    try:
        result = _run_out_of_place(tensor, view, recording, out_of_place, args, kwargs)
    except (NotImplementedError, RuntimeError) as error:
        # torch checks the output before its TensorIterator finds no kernel or no common dtype
        if type(error) is NotImplementedError or str(error).startswith(UNSIGNED_PROMOTION):
            check_output_before_kernel(out_of_place, tensor._data, [
                a._data if isinstance(a, tensor_type) else a for a in args])
        raise
    if saved_mutation.state.active:  # allow_mutation_on_saved_tensors: copy what is saved
        saved_mutation.before_write(tensor)
    _write(tensor, result._data)
    if view is not None and view.computed:  # the view holds computed values (conj): write back
        write_through(view.steps(), view.base._data, tensor._data)
    if getattr(tensor, "_fw", None) is not None or getattr(result, "_fw", None) is not None:
        tensor._fw = _tangent_after_write(getattr(tensor, "_fw", None),
                                          getattr(result, "_fw", None))
    tensor._vc[0] += 1
    if not recording and view is not None and view.creation != DEFAULT:
        make_stale(tensor, view)  # unrecorded (no_grad, logical_and_): breadth seed 93115
    elif not recording and view is not None and tensor.grad_fn is not None:
        if view.base._requires_grad:
            _regenerate(tensor, view)
        else:  # a view of a laid-out leaf (strided seed 98998)
            _cut_from_base(tensor, view, view.base)
    if recording:
        if view is not None:
            _rebase_view(tensor, view, result, overlapping)
        else:
            set_history(tensor, result.grad_fn, result._output_nr)
        _resave_output(result, tensor, view is not None)
    if len(tensor._vc) > 1:
        _update_views(tensor, view, recording)
    if COMPUTED_VIEWS:  # conj views of this memory behind another version counter (.data)
        refresh_computed_elsewhere(tensor)
    forward_ad = _dispatch._forward_ad
    if forward_ad is not None and (view is not None or len(tensor._vc) > 1):
        forward_ad.after_inplace(tensor, view)
    return tensor


def _run_out_of_place(tensor, view, recording: bool, out_of_place, args, kwargs):
    """The op's result for the values ``tensor`` holds; recording, on a copy of them that
    carries the tensor's history (the op may save its input for backward)."""
    run = in_place_form(out_of_place)  # the same op, named as torch's in-place op
    if not recording:
        forward_ad = _dispatch._forward_ad
        if forward_ad is None or not forward_ad.has_tangents((tensor, *args)):
            return run(tensor, *args, **kwargs)
        with enable_grad():  # as torch, an in-place write's new tangent is recorded under
            return run(tensor, *args, **kwargs)  # no_grad too; the value's node is not
    with device_context(tensor._data):  # expanded: its elements still share memory, for the
        old_values = aliased_copy(tensor._data) if may_overlap(  # ops that add into it
            tensor._data) else tensor._data.copy()  # (index_put_(accumulate=True))
    grad_fn, output_nr = _history_of_written(tensor, view)
    source = _tensor_type()._make(old_values, grad_fn, output_nr)
    source._requires_grad = tensor._requires_grad
    if getattr(tensor, "_fw", None) is not None:  # forward AD: the old tangent goes in too
        source._fw = tensor._fw
    result = run(source, *args, **kwargs)
    name_in_place_node(out_of_place, result.grad_fn)  # fill_: FillBackward2 and 3
    if grad_fn is not tensor.grad_fn:  # a hook-free edge for the write; what the op saved
        _resave_with_hooks(result, source, tensor)  # keeps the view's hooked history
    return result


def _tangent_after_write(old, new):
    """Forward AD: the tangent of the written values (``new``; ``(level, tangent)`` pairs).
    As torch, it goes into the tensor's own tangent of that level when it has one (else into a
    copy), so ``dual *= 2`` doubles the tensor given to make_dual; a tangent in a graph, of
    another shape or dtype, or read-only (broadcast) is replaced instead."""
    if new is None:
        return None
    if old is None or old[0] is not new[0]:  # a copy: never another tensor's tangent (copy_)
        return new[0], new[1].clone()
    kept, written = old[1], new[1]
    if kept._requires_grad or written._requires_grad or kept._data.shape != \
            written._data.shape or kept._data.dtype != written._data.dtype or \
            not getattr(getattr(kept._data, "flags", None), "writeable", True):
        return new
    kept._data[...] = written._data
    kept._vc[0] += 1
    return old


def set_history(tensor, grad_fn, output_nr: int) -> None:
    """Point ``tensor`` at a new history; its retain_grad() moves along (torch: ``.grad`` is
    then the gradient of the tensor's current value, not of the value it had before)."""
    old = tensor.grad_fn
    if getattr(tensor, "_retains_grad", False) and old is not None and old._extras is not None:
        hooks = old._extras.retain_grad_hooks
        hook = hooks.pop(tensor._output_nr, None) if hooks else None
        if hook is not None and grad_fn is not None:
            extras = grad_fn.extras()
            if extras.retain_grad_hooks is None:
                extras.retain_grad_hooks = {}
            extras.retain_grad_hooks[output_nr] = hook
    tensor.grad_fn = grad_fn
    tensor._output_nr = output_nr
    tensor._requires_grad = grad_fn is not None or tensor._requires_grad


def _update_views(tensor, view, recording: bool) -> None:
    """After a write into ``tensor``, the other live views of its memory are updated as torch
    does when it next reads them: a view that refuses in-place writes (split outputs, views
    made under no_grad) becomes unusable for autograd; while recording, the others get a
    history starting at the new values of their base."""
    root = tensor if view is None else view.base
    for other in live_views(tensor):
        info = other._view
        if info.computed:
            refresh_computed(other)
        if info.creation != DEFAULT:
            make_stale(other, info)
        elif recording and info.base is root:
            _regenerate(other, info)
        elif info.base is root and not root._requires_grad and other.grad_fn is not None:
            _cut_from_base(other, info, root)
        elif other.grad_fn is not None and info.base._requires_grad:
            _regenerate(other, info)


def _regenerate(view, info) -> None:
    """The view's history made again from its base after a write into that memory: a recorded
    one, or one autograd did not record (no_grad, a detached alias), after which torch too
    regenerates it (AsStridedBackward0 on next read), so it no longer passes through the
    views it was made from (their hooks and retained grads)."""
    with enable_grad():
        fresh = replay_view(info.steps(), info.base)
    set_history(view, fresh.grad_fn, fresh._output_nr)


def _cut_from_base(view, info, root) -> None:
    """A write into a base whose history was cut (``detach_()``), or that never required grad
    (a view of a laid-out leaf, written unrecorded): torch regenerates the view's history from
    the base, which passes no gradient on (the view still requires grad)."""
    alias = Tensor_alias(root)
    alias._requires_grad = True
    # the edge ends at the base's own accumulator, which adds nothing while the base does not
    # require grad; should it again (requires_grad_()), torch's lazily regenerated view reaches
    # it, and so does this one
    alias._accum = weakref.ref(accumulate_node(root))
    with enable_grad():
        fresh = replay_view(info.steps(), alias)
    alias._requires_grad = False
    set_history(view, fresh.grad_fn, fresh._output_nr)


def _resave_output(result, tensor, into_view: bool) -> None:
    """A node that saved its output now saves ``tensor`` (the output lives there, as in torch).

    Written into a view, the output unpacks with the view's node (torch's SavedVariable
    ``is_inplace_on_view``): double backward passes the view's hooks again."""
    node = result.grad_fn
    for saved in (node.saved or ()) if node is not None else ():
        if type(saved) is SavedTensor and saved.output_nr >= 0 and saved.data is result._data:
            saved.data, saved.version_counter = tensor._data, tensor._vc
            saved.version = tensor._vc[0]
            if into_view:  # weak: the view's node leads back to this node
                saved.view_edge = (weakref.ref(tensor.grad_fn), tensor._output_nr)


def _write(tensor, values) -> None:
    target = tensor._data
    check_output(target, values.shape, values.dtype)
    if not getattr(target.flags, "writeable", True):  # an expanded tensor (CuPy: no flag)
        alias = writable_alias(target)
        if alias is None:
            raise RuntimeError(OVERLAP_MESSAGE)
        _write_changed(alias, values)
        return
    if type(target) is np.ndarray and not target.flags.c_contiguous and may_overlap(target):
        _write_changed(target, values)  # overlapping windows (as_strided, unfold)
        return
    target[...] = values


def _refuse_overlap(target, *args) -> bool:
    """Most in-place ops refuse a target whose elements share memory, as torch's
    assert_no_internal_overlap. fill_, zero_, masked_fill_ and x[i] = v declare their own
    ``check_overlap``: it warns or raises, and says whether the region written overlaps."""
    raise RuntimeError(OVERLAP_MESSAGE)


def _write_changed(alias, values) -> None:
    """Write only the elements whose bits change: where several elements share one location,
    a write that torch allows (into a region of distinct locations, or one value everywhere)
    then lands whatever the other elements sharing it held."""
    if not may_overlap(alias):
        alias[...] = values
        return
    new = np.ascontiguousarray(np.broadcast_to(values, alias.shape), dtype=alias.dtype)
    old = np.ascontiguousarray(alias)
    width = alias.dtype.itemsize
    changed = (new.reshape(-1).view(np.uint8).reshape(-1, width) !=
               old.reshape(-1).view(np.uint8).reshape(-1, width)).any(axis=1)
    where = np.nonzero(changed.reshape(alias.shape))
    alias[where] = new[where]


def _rebase_view(tensor, view, result, overlapping=False) -> None:
    """The base now holds the written values: its history becomes CopySlices(base, result)."""
    base = view.base
    chain = view.steps()
    if has_internal_overlap(base._data):  # torch's CopySlices copies the gradient into a
        overlapping = "base"  # buffer laid out as the base: refused whatever is wanted
    forward_ad = _dispatch._forward_ad  # (after_inplace gives the base its tangent: none here,
    # whose zeros would take the values' dtype through view_as_complex: fwd seed 440363)
    with forward_ad.suspended() if forward_ad is not None else contextlib.nullcontext():
        new_base = copy_slices(Tensor_alias(base), result, chain=chain,
                               overlapping=overlapping,
                               layout=buffer_layout(base._data, chain, tensor._data))
    wrap_op_node(new_base.grad_fn, result)
    set_history(base, new_base.grad_fn, 0)
    # the view itself is now that region of the new base
    regenerated = replay_view(chain, new_base)
    set_history(tensor, regenerated.grad_fn, regenerated._output_nr)


def _history_of_written(tensor, view) -> tuple:
    """(grad_fn, output_nr) through which the op that writes ``tensor`` differentiates its
    old values. torch's CopySlices sends that gradient straight to the base, bypassing the
    nodes of the view and of the views it was made from, so hooks registered on any of them
    never see it; other uses of the view's old value (``v.copy_(v)``, an op recorded before the
    write) still go through those nodes and their hooks. When one of them has hooks, the write
    gets a hook-free replay of the view, as does a pure view Function's output."""
    old = tensor.grad_fn
    if view is None or old is None or not (view.of_pure_view_function() or
                                           _chain_has_hooks(old, tensor._output_nr, view)):
        return old, tensor._output_nr
    with enable_grad():
        fresh = replay_view(view.steps(), Tensor_alias(view.base))
    return fresh.grad_fn, fresh._output_nr


def _resave_with_hooks(result, source, tensor) -> None:
    """The op that writes a hooked view differentiates its old values without the hooks
    (``_history_of_written``), but what it saved of them differentiates through the view's old
    nodes and their hooks, as torch's ``original_self`` clone does in double backward."""
    node = result.grad_fn
    for saved in (node.saved or ()) if node is not None else ():
        if type(saved) is SavedTensor and saved.tensor is source:
            hooked = _tensor_type()._make(source._data, tensor.grad_fn, tensor._output_nr)
            hooked._requires_grad = True
            saved.tensor = hooked


def _chain_has_hooks(node, output_nr: int, view) -> bool:
    """Whether a tensor hook sits on the view's node or on a node of the views it came from."""
    info = view
    while info is not None and node is not None:
        extras = node._extras
        if extras is not None and extras.tensor_pre_hooks and \
                output_nr in extras.tensor_pre_hooks:
            return True
        if not node._next:  # a leaf's accumulator: the chain's root
            return False
        node, output_nr = node._next[0], node._next_nr[0]
        info = info.parent
    return False


def Tensor_alias(t):  # noqa: N802
    alias = _tensor_type()._make(t._data, t.grad_fn, t._output_nr, [0])
    alias._requires_grad = t._requires_grad
    return alias
