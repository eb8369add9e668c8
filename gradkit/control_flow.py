"""torch.cond and torch.while_loop, run eagerly.

torch compiles both (torch.compile with the eager backend) and so checks both branches, and
every step of a loop, for matching outputs and refuses outputs that alias inputs; gradkit does
not trace: it checks the arguments as torch does before tracing, then runs the Python.
"""
from __future__ import annotations

from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.backend import bool_
from gradkit.func.pytree import tree_flatten


def cond(pred, true_fn: Callable, false_fn: Callable, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``: ``pred`` a Python bool
    (or number) or a one-element tensor, ``operands`` a tuple or list of (nested) tensors.
    torch's errors for other arguments."""
    if isinstance(pred, (bool, int, float)):  # torch runs a constant's branch unchecked
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not all(
            isinstance(leaf, Tensor) for leaf in tree_flatten(operands)[0]):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that "
                           f"only consists of tensor leaves, but got {operands}.")
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


def _check_predicate(pred) -> bool:
    if isinstance(pred, bool) or (isinstance(pred, Tensor) and pred.shape == ()
                                  and pred.dtype is bool_):
        return bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred!s}")


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs):
    """Run ``carried_inputs = body_fn(*carried_inputs)`` while ``cond_fn(*carried_inputs)``
    (a bool or a 0-d bool tensor), and return the last ``carried_inputs`` (their tensors cloned
    when the loop never runs). The carried inputs are a tuple or list of (nested) tensors and
    ints; torch's errors for other arguments and for a body that returns another count."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got "
                           f"{type(carried_inputs)}")
    leaves = tree_flatten(carried_inputs)[0]
    if not all(isinstance(leaf, (Tensor, int)) for leaf in leaves):
        raise AssertionError(f"{leaves} can only be of ({Tensor}, {int}) but got "
                             f"{tuple(type(leaf) for leaf in leaves)}")
    carried = carried_inputs
    if not _check_predicate(cond_fn(*carried)):
        return tuple(v.clone() if isinstance(v, Tensor) else v for v in carried)
    while True:
        carried = body_fn(*carried)
        if not isinstance(carried, (tuple, list)):
            raise AssertionError(f"body_fn should return a tuple but got {type(carried)}")
        if len(carried) != len(carried_inputs):
            raise AssertionError("body_fn should return the same number of elements as "
                                 f"carried_inputs, got {len(carried)} vs {len(carried_inputs)}")
        if not _check_predicate(cond_fn(*carried)):
            return carried
