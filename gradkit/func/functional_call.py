"""torch.func.functional_call: run a module with some parameters and buffers swapped out.

>>> from gradkit.func import functional_call
>>> layer = gradkit.nn.Linear(2, 1)
>>> params = {"weight": gradkit.ones(1, 2), "bias": gradkit.zeros(1)}
>>> functional_call(layer, params, (gradkit.tensor([[1.0, 2.0]]),))
tensor([[3.]])
"""
from __future__ import annotations

from typing import Any

from gradkit.nn.utils.stateless import _functional_call


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (names as
    in ``named_parameters``/``named_buffers``; a dict or a list/tuple of dicts) in place of the
    module's own, restored after.

    ``tie_weights``: a parameter registered under several names takes a value given for any of
    them. ``strict``: every parameter and buffer must be given, and nothing else.
    """
    return _functional_call(module, _merged(parameter_and_buffer_dicts), args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _merged(dicts) -> dict:
    # a single dict goes on as it is: what the module assigns during the call lands in it
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, (list, tuple)):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(dicts)}")
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    keys = [key for d in dicts for key in d]
    repeated = list(dict.fromkeys(key for key in keys if keys.count(key) > 1))
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional "
                         "call is ambiguous")
    return {key: value for d in dicts for key, value in d.items()}
