"""torch.nn.utils.stateless.functional_call: call a module with some of its parameters and
buffers replaced by given tensors, for that call only.

>>> layer = gradkit.nn.Linear(2, 1, bias=False)
>>> functional_call(layer, {"weight": gradkit.ones(1, 2)}, gradkit.tensor([1.0, 2.0]))
tensor([3.])
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from gradkit._tensor import Tensor
from gradkit.nn.module import Module

_MISSING = object()


def _named_tensors(module: Module) -> dict[str, Tensor]:
    found = dict(module.named_parameters(remove_duplicate=False))
    found.update(module.named_buffers(remove_duplicate=False))
    return found


def _untie(module: Module, given: dict[str, Tensor]) -> dict[str, Tensor]:
    """A value given for one name of a tensor shared under several names goes to all."""
    names_of: dict[int, set[str]] = {}
    for name, tensor in _named_tensors(module).items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    tied_given = [name for name in given if name in tied]
    untied = dict(given)
    for name in tied_given:
        names = tied[name]
        values = {id(given[n]) for n in names if n in given}
        if len(names.intersection(tied_given)) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
        untied.update({n: given[name] for n in names})
    return untied


def _swap(module: Module, path: str, tensor) -> Any:
    """Put ``tensor`` at ``path`` (``_MISSING`` removes it); return what was there."""
    owner_path, _, name = path.rpartition(".")
    owner = module.get_submodule(owner_path) if owner_path else module
    original = getattr(owner, name, _MISSING)
    if name in owner._parameters:
        owner._parameters[name] = tensor
    elif name in owner._buffers:
        owner._buffers[name] = tensor
    elif tensor is not _MISSING:
        setattr(owner, name, tensor)
    elif hasattr(owner, name):
        delattr(owner, name)
    return original


@contextlib.contextmanager
def _reparametrized(module: Module, given: dict[str, Tensor], tie_weights: bool,
                    strict: bool) -> Iterator[None]:
    values = _untie(module, given) if tie_weights else given
    if strict:
        valid = set(_named_tensors(module))
        errors = []
        unexpected, missing = sorted(set(values) - valid), sorted(valid - set(values))
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(errors))
    originals = {}
    try:
        for path, tensor in values.items():
            originals[path] = _swap(module, path, tensor)
        yield
    finally:
        for path, tensor in originals.items():
            value = _swap(module, path, tensor)
            if path in given:
                given[path] = value


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor],
                    args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by the
    given tensors during the call (the module is restored after). ``tie_weights``: a tensor
    shared under several names is replaced under all; ``strict``: every name must be given.
    Deprecated in torch (a FutureWarning) for torch.func.functional_call."""
    warnings.warn("`gradkit.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`gradkit.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _reparametrized(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **(kwargs or {}))


__all__ = ["functional_call"]
