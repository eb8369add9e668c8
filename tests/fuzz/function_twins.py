"""Code of torch's test helpers run as gradkit's: the same function (or custom
``autograd.Function`` class) with ``torch``, ``F`` and ``nn`` bound to gradkit's.

torch's tables hand the scanners lambdas (``lambda x: x.H``), constructors
(``wrap_functional(...)``) and custom Functions (``autograd_function_db``'s ``NumpyCube``, whose
backward calls ``NumpyMul.apply``): their twins read gradkit wherever the original reads torch,
and each other's twins for the Function classes of their module.
"""
from __future__ import annotations

import sys
import types

import gradkit
import torch

_ENVIRONMENTS: dict = {}  # id of a module's globals -> their twin


def twin_globals(names: dict) -> dict:
    """A module's globals as gradkit's: ``torch``/``F`` (and ``nn``) are gradkit's, and its
    custom Function classes their gradkit twins (made once per module)."""
    env = _ENVIRONMENTS.get(id(names))
    if env is None:
        env = _ENVIRONMENTS[id(names)] = dict(names, torch=gradkit, F=gradkit.nn.functional)
        if names.get("nn") is torch.nn:
            env["nn"] = gradkit.nn
        for key, value in names.items():
            if isinstance(value, type) and issubclass(value, torch.autograd.Function) and \
                    value.__module__ == names.get("__name__"):
                env[key] = _function_class_twin(value, env)
    return env


def rebound(f: types.FunctionType, env: dict, closure=None) -> types.FunctionType:
    """``f``'s code over ``env`` (and ``closure``, default f's own cells)."""
    g = types.FunctionType(f.__code__, env, f.__name__, f.__defaults__,
                           f.__closure__ if closure is None else closure)
    g.__kwdefaults__ = f.__kwdefaults__
    return g


def reading_gradkit(f):
    """A function of torch's test helpers, the same code reading gradkit for torch."""
    return rebound(f, twin_globals(f.__globals__))


def function_twin(cls: type):
    """The gradkit twin of a custom ``torch.autograd.Function`` class of torch's tables."""
    return twin_globals(vars(sys.modules[cls.__module__]))[cls.__name__]


def _method_twin(f, env: dict):
    wrapped = getattr(f, "__wrapped__", None)
    if wrapped is not None and f.__code__.co_filename.endswith(
            "autograd/function.py"):  # torch's once_differentiable: gradkit's, around the twin
        return gradkit.autograd.function.once_differentiable(_method_twin(wrapped, env))
    return rebound(f, env)


def _function_class_twin(cls: type, env: dict) -> type:
    """Its staticmethods over ``env``; its other class attributes (``generate_vmap_rule``,
    constants such as ScaleGradGenVmap's ``scale``) as they are."""
    attrs = {key: staticmethod(_method_twin(value.__func__, env))
             if isinstance(value, staticmethod) else value
             for key, value in vars(cls).items() if not key.startswith("_")}
    return type(cls.__name__, (gradkit.autograd.Function,), attrs)
