"""Saved-tensor hooks: decide how tensors saved for backward are stored.

Re-exported from :mod:`gradkit.autograd.graph` (torch's home for them). The
stack of (pack, unpack) pairs is per thread and read by ``graph.SavedTensor``
when a node saves a tensor; the innermost pair wins.
"""
from __future__ import annotations

import threading


class _SavedHooksState(threading.local):
    stack: tuple = ()       # (pack, unpack) pairs, innermost last; rebound, never mutated
    disabled: str | None = None


saved_hooks_state = _SavedHooksState()  # read by graph.SavedTensor when a node saves a tensor


class saved_tensors_hooks:  # noqa: N801 - torch's spelling
    """Within this block, tensors saved for backward are stored as ``pack_hook(tensor)``.

    ``unpack_hook(packed)`` must give the tensor back when backward needs it.

    >>> with gradkit.autograd.graph.saved_tensors_hooks(lambda t: t.numpy(),
    ...                                                   lambda a: gradkit.from_numpy(a)):
    ...     y = x * x          # x is kept as a NumPy array
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if saved_hooks_state.disabled is not None:
            raise RuntimeError(saved_hooks_state.disabled)
        # rebind (never mutate): the class-level default is shared by every thread
        saved_hooks_state.stack = (*saved_hooks_state.stack, (self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        saved_hooks_state.stack = saved_hooks_state.stack[:-1]


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Keep saved tensors in host memory and copy them back to their device for backward.

    On CuPy this trades GPU memory for transfers; on NumPy it is a plain copy.
    ``pin_memory`` is accepted for torch compatibility (host buffers are pageable).

    >>> with gradkit.autograd.graph.save_on_cpu():
    ...     loss = model(x).sum()
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        self.pin_memory = pin_memory
        super().__init__(_pack_to_cpu, _unpack_from_cpu)


def _pack_to_cpu(tensor):
    return tensor.device, tensor.detach().to("cpu", copy=True)


def _unpack_from_cpu(packed):
    device, tensor = packed
    return tensor.to(device)


class disable_saved_tensors_hooks:  # noqa: N801
    """Forbid saved_tensors_hooks in this block; entering one raises ``error_message``.

    >>> with gradkit.autograd.graph.disable_saved_tensors_hooks("not supported here"):
    ...     ...
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        if saved_hooks_state.stack:  # hooks already active would silently keep running
            raise RuntimeError(self.error_message)
        self.previous = saved_hooks_state.disabled
        saved_hooks_state.disabled = self.error_message
        return self

    def __exit__(self, *exc) -> None:
        saved_hooks_state.disabled = self.previous
