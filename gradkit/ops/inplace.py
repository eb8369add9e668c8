"""In-place ops: one mechanism for ``add_``, ``x[i] = v``, ``zero_`` and the rest.

An in-place op is its out-of-place op plus a write into the tensor's own
memory: the version counter (shared with every view) is bumped, and when a
graph is being recorded the tensor's history is rebased onto the new node, so
later gradients flow through the op. Writing into a view also rebases its base
(torch's CopySlices), so gradients of the base stay correct.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.autograd import saved_mutation
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.graph import SavedTensor
from gradkit.backend import device_context
from gradkit.ops._op import op, replay_view


def _tensor_type():
    from gradkit._tensor import Tensor
    return Tensor


LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."


def inplace(tensor, out_of_place, *args, **kwargs):
    """Run ``out_of_place(tensor, *args)`` and write the result into ``tensor``."""
    tensor_type = _tensor_type()
    recording = grad_state.grad_enabled and (
        tensor._requires_grad or any(isinstance(a, tensor_type) and a._requires_grad
                                     for a in args))
    view = getattr(tensor, "_view", None)
    if recording and tensor.grad_fn is None and tensor._requires_grad:
        raise RuntimeError(LEAF_MESSAGE)
    if recording and view is not None and view[0].grad_fn is None and view[0]._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if recording and view is not None:
        _refuse_multi_output_view(tensor, view[1])
    if recording:
        # the op may save its input for backward: give it the old values, not our buffer
        with device_context(tensor._data):
            old_values = tensor._data.copy()
        source = tensor_type._make(old_values, tensor.grad_fn, tensor._output_nr)
        source._requires_grad = tensor._requires_grad
        if getattr(tensor, "_fw", None) is not None:  # forward AD: the old tangent goes in too
            source._fw = tensor._fw
        result = out_of_place(source, *args, **kwargs)
    else:
        result = out_of_place(tensor, *args, **kwargs)
    if saved_mutation.state.active:  # allow_mutation_on_saved_tensors: copy what is saved
        saved_mutation.before_write(tensor)
    _write(tensor, result._data)
    if getattr(tensor, "_fw", None) is not None or getattr(result, "_fw", None) is not None:
        tensor._fw = getattr(result, "_fw", None)  # forward AD: the written values' tangent
    tensor._vc[0] += 1
    if recording:
        if view is not None:
            _rebase_view(tensor, view, result)
        else:
            tensor.grad_fn = result.grad_fn
            tensor._output_nr = result._output_nr
            tensor._requires_grad = result._requires_grad
        _resave_output(result, tensor)
        _refresh_views(tensor, view)
    return tensor


def _refuse_multi_output_view(tensor, chain) -> None:
    """torch: outputs of split/chunk/unbind (and views of them) are not written in place while
    recording, since one node produced them all."""
    made = [(view_op, index) for view_op, _, index in chain if index is not None]
    if not made:
        return
    view_op, index = made[-1]
    tail = ("This view is the output of a function that returns multiple views. Such functions "
            "do not allow the output views to be modified inplace. You should replace the "
            "inplace operation by an out-of-place one.")
    if tensor._requires_grad:
        name = view_op.node_name.removesuffix("Backward0")
        raise RuntimeError(f"Output {index} of {name} is a view and is being modified inplace. "
                           + tail)
    raise RuntimeError("A view was created in no_grad mode and is being modified inplace with "
                       "grad mode enabled. " + tail)


def _refresh_views(tensor, view) -> None:
    """The other live views of the written memory get a history starting at the new one
    (torch regenerates a view's grad_fn when its base changed under it)."""
    root = tensor if view is None else view[0]
    for ref in tensor._vc[1:]:
        other = ref()
        if other is None or other is tensor:
            continue
        other_view = getattr(other, "_view", None)
        if other_view is None or other_view[0] is not root:
            continue
        fresh = replay_view(other_view[1], root)
        other.grad_fn, other._output_nr = fresh.grad_fn, fresh._output_nr
        other._requires_grad = fresh._requires_grad


def _resave_output(result, tensor) -> None:
    """A node that saved its output now saves ``tensor`` (the output lives there, as in torch)."""
    node = result.grad_fn
    for saved in (node.saved or ()) if node is not None else ():
        if type(saved) is SavedTensor and saved.output_nr >= 0 and saved.data is result._data:
            saved.data, saved.version_counter = tensor._data, tensor._vc
            saved.version = tensor._vc[0]


def _write(tensor, values) -> None:
    target = tensor._data
    if values.dtype != target.dtype and not np.can_cast(values.dtype, target.dtype,
                                                         casting="same_kind"):
        raise RuntimeError(f"result type {_name(values.dtype)} can't be cast to the desired "
                           f"output type {_name(target.dtype)}")
    if values.shape != target.shape:
        try:
            np.broadcast_shapes(values.shape, target.shape)
            ok = np.broadcast_shapes(values.shape, target.shape) == target.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the "
                               f"broadcast shape {list(values.shape)}")
    if not target.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    target[...] = values


def _name(dtype) -> str:
    from gradkit.ops.unary_helpers import _SCALAR_TYPE_NAMES
    return _SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)


def _rebase_view(tensor, view, result) -> None:
    """The base now holds the written values: its history becomes CopySlices(base, result)."""
    base, chain = view
    old_base = Tensor_alias(base)
    new_base = copy_slices(old_base, result, chain=chain)
    base.grad_fn = new_base.grad_fn
    base._output_nr = 0
    base._requires_grad = True
    # the view itself is now that region of the new base
    regenerated = replay_view(chain, new_base)
    tensor.grad_fn = regenerated.grad_fn
    tensor._output_nr = regenerated._output_nr
    tensor._requires_grad = True


def Tensor_alias(t):  # noqa: N802
    alias = _tensor_type()._make(t._data, t.grad_fn, t._output_nr, [0])
    alias._requires_grad = t._requires_grad
    return alias


@op(save="base.shape", node_name="CopySlices")
def copy_slices(xp, base, values, chain=()):
    """The base after its view (described by ``chain``) was overwritten with ``values``."""
    return base  # the write already happened in place; this op records the graph


def _region_mask(shape, chain, dtype):
    # replayed on element numbers, not on the mask: a view down to one element is a NumPy
    # scalar, which cannot be written through
    region = np.asarray(replay_view(chain, np.arange(math.prod(shape)).reshape(shape)))
    mask = np.ones(math.prod(shape), dtype=dtype)
    mask[region.ravel()] = 0
    return mask.reshape(shape)


copy_slices.defvjp(
    lambda g, base_shape, chain: g * _as_like(g, _region_mask(base_shape, chain, _dt(g))),
    lambda g, base_shape, chain: replay_view(chain, g))


def _dt(g):
    return getattr(g, "_data", g).dtype


def _as_like(g, mask):
    from gradkit.backend import get_array_module
    xp = get_array_module(getattr(g, "_data", g))
    return mask if xp is np else xp.asarray(mask)
