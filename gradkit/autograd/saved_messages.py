"""What saved tensors say when they cannot be used: freed, detached in place, written by a pack
hook, or modified in place since they were saved (torch's texts)."""
from __future__ import annotations

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")

FREED_ENTRY = object()  # in NodeExtras.kept_meta: a saved tensor (or wrapped number), freed

DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead")


HINT = (" Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with gradkit.autograd.set_detect_anomaly(True, check_nan=False).")
# what anomaly mode says instead: it has shown where the variable was saved
ANOMALY_HINT = (" Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!")


def forward_op_name(node_name: str) -> str:
    """The forward op a node stands for, as torch 2.13 names it in these messages:
    ``ExpBackward0`` -> ``Exp``, ``PowBackward1`` -> ``Pow1``, ``MyFnBackward`` -> ``MyFn``."""
    head, found, overload = node_name.rpartition("Backward")
    if not found:
        return node_name
    return head + ("" if overload == "0" else overload)


def version_error(tensor_desc: str, owner: str, now: int, expected: int) -> RuntimeError:
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{tensor_desc}]{owner + ',' if owner else ''} is at version {now}; "
        f"expected version {expected} instead." + HINT)


def with_anomaly_hint(exc: BaseException) -> None:
    """Swap a version error's hint for anomaly mode's, as torch words it in that mode."""
    if exc.args and isinstance(exc.args[0], str) and exc.args[0].endswith(HINT):
        exc.args = (exc.args[0][:-len(HINT)] + ANOMALY_HINT, *exc.args[1:])


PACK_HOOK_WRITES = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook.")
