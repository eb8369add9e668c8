"""torch's argument parser for the tensor parameters of plain-function ops, in one place.

An op written as a plain function (``mm``, ``conv1d``, ``cdist`` ...) reads its tensors'
``.shape`` or ``._data``, so a number, None or a list in their place failed with an
AttributeError (``'int' object has no attribute 'shape'``). torch's parser refuses them before
the op runs: ``mm(): argument 'mat2' (position 2) must be Tensor, not int``.
``tensor_parameters`` declares which parameters take a tensor and checks them so. (Ops declared
with ``@op`` get the same error from their dispatch: ``_check_argument_types``.)
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from gradkit._tensor import Tensor
from gradkit.int_arguments import invalid_combination, type_name
from gradkit.ops.keywords import ALIAS_KEYWORDS, keyword_aliases

# what a tensor parameter refuses (and NumPy scalars); a NumPy array passes (derivative rules
# call ops on arrays)
_NOT_TENSORS = frozenset((bool, int, float, complex, type(None), tuple, list, str))
# what a "Tensor or Scalar" parameter refuses (float_power's exponent, quantile's q)
_NOT_TENSORS_OR_NUMBERS = frozenset((type(None), tuple, list, str))


def tensor_parameters(*names: str, overloaded: bool = False, numbers: bool = False,
                      absent: tuple = (), **renamed: str):
    """Decorator: the parameters ``names`` (or, in ``renamed``, gradkit's name = torch's) of a
    plain-function op take a tensor; anything else is torch's TypeError naming torch's argument
    and its position (none when given by keyword). A parameter whose default is None takes
    None; a ``*tensors`` parameter checks each element. ``overloaded``: torch has other
    signatures, so its error is "received an invalid combination of arguments". ``numbers``:
    they take a Python number too (torch's Tensor and Scalar overloads). ``absent``: the
    parameters whose default None stands for "not given" (torch's signature without them),
    so a None given is refused."""
    refused = _NOT_TENSORS_OR_NUMBERS if numbers else _NOT_TENSORS

    def declare(op_function):
        signature = inspect.signature(op_function)
        positions = list(signature.parameters)
        # more positionals than it takes: Python's TypeError first, as torch counts them first
        most = None if any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values()) \
            else sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())
        title = op_function.__name__
        checks, elements = [], None
        for name, torch_name in {**dict(zip(names, names)), **renamed}.items():
            parameter = signature.parameters[name]
            if parameter.kind is parameter.VAR_POSITIONAL:
                elements = positions.index(name)
            else:
                checks.append((positions.index(name), name, torch_name,
                               parameter.default is None and name not in absent))

        def refuse(value, args, kwargs, index, torch_name, optional) -> None:
            if (type(value) in refused or not numbers and isinstance(value, np.generic)) and \
                    not (optional and value is None) and (most is None or len(args) <= most):
                if overloaded:
                    raise invalid_combination(title, args, kwargs)
                where = f" (position {index + 1})" if index < len(args) else ""
                raise TypeError(f"{title}(): argument '{torch_name}'{where} must be Tensor, "
                                f"not {type_name(value)}")

        @functools.wraps(op_function)
        def call(*args, **kwargs):
            if kwargs and not ALIAS_KEYWORDS.isdisjoint(kwargs):  # x=, axis= ... as torch's
                args, kwargs = keyword_aliases(title, positions, args, kwargs)
            for index, name, torch_name, optional in checks:  # the common call: Tensors
                value = args[index] if index < len(args) else kwargs.get(name, Tensor)
                if type(value) is not Tensor and value is not Tensor:
                    refuse(value, args, kwargs, index, torch_name, optional)
            if elements is not None and not (  # (one sequence of them is the list itself)
                    len(args) == elements + 1 and type(args[elements]) in (tuple, list)):
                _check_elements(args[elements:])
            return op_function(*args, **kwargs)
        call.takes_numpy_keywords = True
        return call
    return declare


def _check_elements(values: tuple) -> None:
    """torch's error for a ``Tensor[]`` given as separate arguments (``broadcast_tensors``)."""
    for i, value in enumerate(values):
        if type(value) in _NOT_TENSORS or isinstance(value, np.generic):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(value)}")
