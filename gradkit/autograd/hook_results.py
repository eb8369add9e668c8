"""What a backward hook may return, checked as torch's python_hook.cpp checks it.

A tensor hook returns None or one tensor; a node's pre- and post-hooks return None or a tuple
of as many gradients as they were given. Each returned gradient must keep the dtype and size
of the one it replaces, and no gradient may appear where there was none.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.ops.unary_helpers import scalar_type_name


def hook_name(hook) -> str:
    """The name torch's messages give a hook: its ``__name__``, else ``<unknown>``."""
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def check_hook_tuple(new, old: tuple, hook) -> None:
    """torch's check_result: a node hook's result replacing the gradients ``old``."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(new)}, but expected {len(old)})")
    for n, o in zip(new, old):
        check_hook_tensor(n, o, hook)


def check_hook_tensor(new, old, hook) -> None:
    """torch's check_single_result: ``new`` (None or a tensor) replacing the gradient ``old``."""
    if new is None:
        return
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    old = getattr(old, "_data", old)
    was, got = _legacy_type_name(old), _legacy_type_name(new._data)
    if was != got:  # (the dtype and the device, as torch's type_equal)
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the type of value (was "
                           f"{was} got {got})")
    if new._data.shape != old.shape:
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the size of value")


def check_post_accumulate_result(result, leaf, hook) -> None:
    """A post-accumulate-grad hook acts on the leaf; it may not return a gradient (torch
    checks it as a replacement of the leaf first, then refuses it)."""
    check_hook_tensor(result, leaf, hook)
    if result is not None:
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _legacy_type_name(array) -> str:
    """torch's legacy tensor type name: ``torch.FloatTensor``, ``torch.cuda.LongTensor``."""
    where = "" if isinstance(array, (np.ndarray, np.generic)) else "cuda."
    return f"torch.{where}{scalar_type_name(array)}Tensor"
