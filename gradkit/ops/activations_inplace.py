"""torch's in-place activation functions (``F.elu_``, ``torch.celu_``, ``F.rrelu_`` ...).

They are C++ functions of one signature each, so their arguments are read as torch's parser
reads them (signature_errors.bind): by position or by name (``input=``), with torch's errors
for a missing, extra, unknown or ill-typed one, and with the parameters the Python-level
activations lack (``elu_``'s ``scale`` and ``input_scale``, ``rrelu_``'s ``generator``).
"""
from __future__ import annotations

import inspect

from gradkit._tensor import Tensor
from gradkit.generator import Generator
from gradkit.int_arguments import type_name
from gradkit.number_arguments import number_argument
from gradkit.ops import activations_gated, activations_more
from gradkit.ops.activations import relu
from gradkit.ops.inplace import inplace as write_inplace
from gradkit.signature_errors import bind

_REQUIRED = inspect.Parameter.empty
_INPUT = ("input", "Tensor", _REQUIRED)


def _read(function: str, name: str, kind: str, value, position: int | None):
    """``value`` as torch reads a parameter of ``kind``, or its TypeError."""
    if kind == "Number":
        return number_argument(value, function, name, position, optional=False)
    if kind == "Tensor" and isinstance(value, Tensor) or kind == "bool" and type(value) is bool \
            or kind == "Generator" and (value is None or isinstance(value, Generator)):
        return value
    where = "" if position is None else f" (position {position})"
    kind = "torch.Generator" if kind == "Generator" else kind
    raise TypeError(f"{function}(): argument '{name}'{where} must be {kind}, not "
                    f"{type_name(value)}")


def _parsed(function: str, parameters: tuple, run):
    """``function(*args, **kwargs)`` bound to ``parameters`` ((name, kind, default), ...) as
    torch binds them, then ``run(*values)``."""
    names = tuple(name for name, _, _ in parameters)
    required = sum(default is _REQUIRED for _, _, default in parameters)
    kinds = {name: kind for name, kind, _ in parameters}

    def call(*args, **kwargs) -> Tensor:
        bound = bind(function, names, required, args, kwargs,
                     lambda name, value, position: _read(function, name, kinds[name], value,
                                                         position))
        return run(*(bound.get(name, default) for name, _, default in parameters))
    call.__name__ = call.__qualname__ = function
    call.__doc__ = f"{function.rstrip('_')}, in place (torch's signature {names})."
    call.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
         for name, _, default in parameters])
    return call


relu_ = _parsed("relu_", (_INPUT,), lambda input: write_inplace(input, relu))
selu_ = _parsed("selu_", (_INPUT,), lambda input: activations_more.selu(input, inplace=True))
celu_ = _parsed("celu_", (_INPUT, ("alpha", "Number", 1.0)),
                lambda input, alpha: activations_more.celu(input, alpha, inplace=True))
elu_ = _parsed("elu_", (_INPUT, ("alpha", "Number", 1.0), ("scale", "Number", 1.0),
                        ("input_scale", "Number", 1.0)),
               lambda input, *numbers: write_inplace(input, activations_more.elu_in_place,
                                                     *numbers))
leaky_relu_ = _parsed(
    "leaky_relu_", (_INPUT, ("negative_slope", "Number", 0.01)),
    lambda input, slope: write_inplace(input, activations_more.leaky_relu_in_place, slope))
hardtanh_ = _parsed("hardtanh_", (_INPUT, ("min_val", "Number", -1.0),
                                  ("max_val", "Number", 1.0)), activations_more.hardtanh_)
threshold_ = _parsed("threshold_", (_INPUT, ("threshold", "Number", _REQUIRED),
                                    ("value", "Number", _REQUIRED)), activations_more.threshold_)
rrelu_ = _parsed(
    "rrelu_", (_INPUT, ("lower", "Number", 1.0 / 8), ("upper", "Number", 1.0 / 3),
               ("training", "bool", False), ("generator", "Generator", None)),
    lambda input, lower, upper, training, generator: activations_gated.rrelu_drawing(
        input, lower, upper, training, True, generator))
