"""torch.nn.utils.stateless: call a module with some of its parameters and buffers replaced by
given tensors, for that call only. ``gradkit.func.functional_call`` runs on this too.

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

_MISSING = object()  # "no such attribute": swapping it in deletes, swapping it out restores


def _named_tensors(module: Module) -> dict[str, Tensor]:
    found = dict(module.named_parameters(remove_duplicate=False))
    found.update(module.named_buffers(remove_duplicate=False))
    return found


def _untie_named_tensors_map(module: Module, given: dict) -> dict:
    """A value given for one name of a tensor shared under several names goes to all of them."""
    names_of: dict[int, set[str]] = {}
    for name, tensor in _named_tensors(module).items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    tied_given = [name for name in given.keys() if name in tied]
    for name in tied_given:
        names = tied[name]
        values = {id(given[n]) for n in names if n in given}
        if len(names.intersection(tied_given)) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(given)
    for name in tied_given:
        untied.update({n: given[name] for n in tied[name]})
    return untied


def _submodule(module: Module, path: str) -> Module:
    """The submodule at the dotted ``path``, with torch's errors (cycles are fine: no walk)."""
    if not path:
        return module
    parent_path, _, attr = path.rpartition(".")
    parent = _submodule(module, parent_path)
    try:
        child = getattr(parent, attr)
    except AttributeError:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from None
    if not isinstance(child, Module):
        raise TypeError(f"submodule `{path}`: {child} is not an instance of torch.nn.Module")
    return child


def _swap_tensor(module: Module, path: str, tensor) -> Any:
    """Put ``tensor`` at ``path`` (``_MISSING`` removes it); return what was there."""
    owner_path, _, name = path.rpartition(".")
    owner = _submodule(module, owner_path)
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for registry in (owner._parameters, owner._buffers):
        if name in registry:
            original = registry[name]
            if tensor is _MISSING:
                del registry[name]
            else:
                registry[name] = tensor
            return original
    original = getattr(owner, name, _MISSING)
    if original is not _MISSING and original is not None and not isinstance(original, Tensor):
        raise TypeError(f"attribute `{name}`: {original} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(owner, name, tensor)  # through Module.__setattr__: a Parameter gets registered
    elif hasattr(owner, name):
        delattr(owner, name)
    return original


def _swap_all(module: Module, tensors: dict) -> dict:
    """Swap every entry in; on an error, swap back what was done and re-raise."""
    originals: dict = {}
    try:
        for path, tensor in tensors.items():
            originals[path] = _swap_tensor(module, path, tensor)
    except Exception:
        for path, tensor in originals.items():
            _swap_tensor(module, path, tensor)
        raise
    return originals


def _check_keys(module: Module, keys) -> None:
    valid, keys = set(_named_tensors(module)), set(keys)
    errors = []
    if keys - valid:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, sorted(keys - valid)))}.")
    if valid - keys:
        errors.append(f"Missing key(s): {', '.join(map(repr, sorted(valid - keys)))}.")
    if errors:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                           + "\n\t".join(errors))


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict, tie_weights: bool = False,
                          strict: bool = False) -> Iterator[None]:
    """Within the block the module holds the given tensors. After it, the originals come back
    and what the module assigned meanwhile (``self.x = ...``) is written into the given dict."""
    values = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    if strict:
        _check_keys(module, values)
    originals: dict = {}
    try:
        originals = _swap_all(module, values)
        yield
    finally:
        latest = _swap_all(module, originals)
        parameters_and_buffers.update({k: latest[k] for k in parameters_and_buffers
                                       if k in latest})


def _functional_call(module: Module, parameters_and_buffers: dict, args: Any = None,
                     kwargs: dict | None = None, *, tie_weights: bool = True,
                     strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by the given
    tensors during the call. ``tie_weights``: a tensor shared under several names is replaced
    under all; ``strict``: every name must be given, and nothing else."""
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _reparametrize_module(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def functional_call(module: Module, parameters_and_buffers: dict, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """:func:`_functional_call`, deprecated in torch (a FutureWarning) for
    torch.func.functional_call."""
    warnings.warn("`gradkit.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`gradkit.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


__all__ = ["functional_call"]
