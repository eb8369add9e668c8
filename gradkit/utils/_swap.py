"""torch.utils.swap_tensors: two Tensor objects exchange their contents, each keeping its
identity (Module._apply's conversions under ``set_swap_module_params_on_conversion(True)``)."""
from __future__ import annotations

import copyreg
import gc
import weakref

from gradkit._tensor import Tensor
from gradkit.autograd.graph import AccumulateGrad, SavedTensor
from gradkit.ops.views import live_views

POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen "
    "when you try to run backward on a tensor that was swapped. For a module m with "
    "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the "
    "device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running forward and "
    "backward. To resolve this, please only change the device/dtype before running forward "
    "(or after both forward and backward).")


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Give ``t1`` the contents of ``t2`` and ``t2`` those of ``t1`` (class, attributes, data,
    history, gradient, hooks), as torch's. Refused for a tensor with weak references or one
    the graph holds (torch's use count: saved for backward); a leaf's gradient accumulator is
    poisoned instead, so a backward through it raises."""
    for t, name in ((t1, "t1"), (t2, "t2")):
        if weakref.getweakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))  # noqa: SLF001 - torch's own test of the slots
    if slots != set(copyreg._slotnames(type(t2))):  # noqa: SLF001
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t, name in ((t1, "t1"), (t2, "t2")):
        _poison_or_refuse(t, name)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in slots - {"__weakref__", "__dict__"}:
        values = [getattr(t, slot, _MISSING) for t in (t1, t2)]
        for t, value in zip((t1, t2), reversed(values)):
            if value is _MISSING:
                if hasattr(t, slot):
                    delattr(t, slot)
            else:
                setattr(t, slot, value)
    for t in (t1, t2):  # an accumulator follows the contents it was made for, as torch's
        node = _accumulator(t)
        if node is not None:
            node.variable = t


_MISSING = object()


def _accumulator(t: Tensor):
    ref = getattr(t, "_accum", None)
    return ref() if ref is not None else None


def _poison_or_refuse(t: Tensor, name: str) -> None:
    """torch's check of the tensor's use count: one (the tensor), or two for a leaf whose
    second user is its AccumulateGrad (then poisoned); a saved tensor and a view of it are
    other users."""
    users = 1 + sum(isinstance(r, (AccumulateGrad, SavedTensor)) for r in gc.get_referrers(t))
    users += sum(view._view.base is t for view in live_views(t))
    if users == 1:
        return
    node = _accumulator(t)
    if users == 2 and t.grad_fn is None:
        if not t._requires_grad:  # torch asks for its gradient edge
            raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                               "does not require gradients")
        if node is not None:  # (else torch's edge makes one: a third user)
            node.register_prehook(_poisoned)
            return
        users += 1
    raise RuntimeError(f"Expected use_count of {name} to be 1 or 2 with an AccumulateGrad node "
                       f"but got {users} make sure you are not holding references to the tensor "
                       "in other places.")


def _poisoned(grad_outputs):
    raise RuntimeError(POISONED)
