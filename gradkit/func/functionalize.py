"""torch.func.functionalize, eagerly: the function runs on copies of its tensor arguments, and
the arguments it mutated get the new values back with one ``copy_`` each, as torch's does."""
from __future__ import annotations

import functools
from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.func._levels import transform_level
from gradkit.func.pytree import tree_flatten, tree_unflatten

_REMOVE_OPTIONS = (
    " Valid options are:\n"
    "     remove='mutations': all inplace and out= operators will be removed from the program, "
    "and replaced with their out-of-place equivalents.\n"
    "     remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
    "will be replaced with their non-aliasing counterparts, {view}_copy.\n")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with the same results and the same effect on its arguments, computed without
    mutating them in the middle: it runs on copies of the tensors among its (nested)
    arguments, then each argument ``func`` wrote to is updated once (``copy_``, one version
    bump). gradkit does not trace, so this is all ``remove`` changes nothing; as with torch's
    ``remove='mutations_and_views'``, results never share memory with the arguments.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError("functionalize(f, remove='mutations'): received invalid argument for "
                           f"remove={remove}." + _REMOVE_OPTIONS)

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        leaves, spec = tree_flatten((args, kwargs))
        copies = [leaf.clone() if isinstance(leaf, Tensor) else leaf for leaf in leaves]
        copied_args, copied_kwargs = tree_unflatten(copies, spec)
        with transform_level():  # a transform, as torch's: what transform_errors.py refuses
            result = func(*copied_args, **copied_kwargs)
        for leaf, copy in zip(leaves, copies):
            if isinstance(leaf, Tensor) and copy._version:  # written to, or through a view
                leaf.copy_(copy)
        return result
    return functionalized
