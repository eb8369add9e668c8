"""torch.func.functional_call: run a module with some parameters and buffers swapped out.

>>> from gradkit.func import functional_call
>>> layer = gradkit.nn.Linear(2, 1)
>>> params = {"weight": gradkit.ones(1, 2), "bias": gradkit.zeros(1)}
>>> functional_call(layer, params, (gradkit.tensor([[1.0, 2.0]]),))
tensor([[3.]])
"""
from __future__ import annotations

from typing import Any

_ABSENT = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (names as
    in ``named_parameters``/``named_buffers``) in place of the module's own, restored after.

    ``tie_weights``: a parameter registered under several names takes a value given for any of
    them. ``strict``: every parameter and buffer must be given, and nothing else.
    """
    values = _merged(parameter_and_buffer_dicts)
    tied_groups = _tied_groups(module)
    if tie_weights:
        values = _with_tied(values, tied_groups)
    if strict:
        _check_strict(module, values, tied_groups)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    swapped = [_swap(module, name, value) for name, value in values.items()]
    try:
        return module(*args, **(kwargs or {}))
    finally:
        for owner, leaf, registry, old in reversed(swapped):
            _put(owner, leaf, registry, old)


def _merged(dicts) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not (isinstance(dicts, (list, tuple)) and all(isinstance(d, dict) for d in dicts)):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(dicts)}")
    merged: dict = {}
    repeated = sorted({key for d in dicts for key in d if sum(key in e for e in dicts) > 1})
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional "
                         "call is ambiguous")
    for d in dicts:
        merged.update(d)
    return merged


def _tied_groups(module) -> list[list[str]]:
    """The names of every parameter and buffer, grouped by the tensor they hold."""
    groups: dict[int, list[str]] = {}
    for kind in (module.named_parameters, module.named_buffers):
        for name, tensor in kind(remove_duplicate=False):
            groups.setdefault(id(tensor), []).append(name)
    return list(groups.values())


def _with_tied(values: dict, tied_groups: list) -> dict:
    values = dict(values)
    for names in tied_groups:
        given = [name for name in names if name in values]
        if len({id(values[name]) for name in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {given}, which are "
                             "tied. Consider using tie_weights=False")
        for name in names if given else ():
            values.setdefault(name, values[given[0]])
    return values


def _check_strict(module, values: dict, tied_groups: list) -> None:
    expected = {name for names in tied_groups for name in names}
    unexpected = [key for key in values if key not in expected]
    missing = [name for names in tied_groups for name in names if name not in values]
    lines = []
    if unexpected:
        lines.append("Unexpected key(s): " + ", ".join(map(repr, unexpected)) + ".")
    if missing:
        lines.append("Missing key(s): " + ", ".join(map(repr, missing)) + ".")
    if lines:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                           + "\n\t".join(lines))


def _swap(module, name: str, value) -> tuple:
    """Put ``value`` at the dotted ``name``; returns what restores the old one."""
    path, _, leaf = name.rpartition(".")
    owner = module.get_submodule(path)
    for registry in (owner._parameters, owner._buffers):
        if leaf in registry:
            old = registry[leaf]
            registry[leaf] = value
            return owner, leaf, registry, old
    old = owner.__dict__.get(leaf, _ABSENT)  # an unknown name: a plain attribute meanwhile
    object.__setattr__(owner, leaf, value)
    return owner, leaf, None, old


def _put(owner, leaf: str, registry, old) -> None:
    if registry is not None:
        registry[leaf] = old
    elif old is _ABSENT:
        object.__delattr__(owner, leaf)
    else:
        object.__setattr__(owner, leaf, old)
