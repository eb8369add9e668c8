"""What saved tensors say when they cannot be used: freed, detached in place, written by a pack
hook, or modified in place since they were saved (torch's texts)."""
from __future__ import annotations

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")

DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead")


def version_error(tensor_desc: str, owner: str, now: int, expected: int) -> RuntimeError:
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{tensor_desc}]{owner + ',' if owner else ''} is at version {now}; "
        f"expected version "
        f"{expected} instead. Hint: enable anomaly detection to find the operation that "
        "failed to compute its gradient, with gradkit.autograd.set_detect_anomaly(True).")


PACK_HOOK_WRITES = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook.")
