"""torch's keyword spellings that gradkit accepts at the op boundary, in one place.

torch's argument parser takes NumPy's names for two parameters of every op
(``axis`` for ``dim``, ``keepdims`` for ``keepdim``): ``x.sum(axis=1, keepdims=True)``, and
the tensors by keyword, torch's names or NumPy's: ``torch.add(x1=a, x2=b)``, ``sum(input=a)``.
A ``dtype=`` keyword may be a gradkit dtype, which forwards (written on NumPy/CuPy
arrays) receive as the NumPy dtype it wraps.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from gradkit import backend

NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
# any of these among an op call's keywords sends the call through ``torch_keywords``
SPECIAL_KEYWORDS = frozenset(("axis", "keepdims", "dtype"))
# the first and second tensor's keywords: torch's input and other, and NumPy's names for them
TENSOR_NAMES = (frozenset(("input", "x", "a", "x1")), frozenset(("other", "x2")))
TENSOR_KEYWORDS = TENSOR_NAMES[0] | TENSOR_NAMES[1]


def tensor_keywords(args: tuple, n_inputs: int, params, kwargs: dict) -> tuple[tuple, dict]:
    """``args`` with the first (and second) of ``n_inputs`` tensors given by keyword put in
    place, when the positionals stop just before it; any other keyword stays in ``kwargs``
    for the op's own error."""
    for position, names in enumerate(TENSOR_NAMES[:n_inputs]):
        given = [k for k in kwargs if k in names and k not in params]
        if len(given) == 1 and len(args) == position:
            kwargs = dict(kwargs)
            args = (*args, kwargs.pop(given[0]))
    return args, kwargs


def named_inputs(args: tuple, kwargs: dict, names: tuple) -> tuple[tuple, dict]:
    """``args`` completed by the inputs given by their torch names (``addmm(input=, mat1=,
    mat2=)``), in order, as long as the positionals stop just before each."""
    kwargs = dict(kwargs)
    for name in names[len(args):]:
        if name not in kwargs:
            break
        args = (*args, kwargs.pop(name))
    return args, kwargs


def _is_number(value) -> bool:
    return isinstance(value, (bool, int, float, complex))


def scalar_first(name: str, inputs: tuple, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """torch's deprecated overloads of the scaled products that take ``beta`` (and ``alpha``)
    before the tensors: ``addmm(beta, input, [alpha,] mat1, mat2)``, ``x.addmm(beta, [alpha,]
    mat1, mat2)``; made the keyword call, with torch's deprecation warning. Any other call is
    returned as it is."""
    if len(args) < 4 or not (_is_number(args[0]) or _is_number(args[1])):
        return args, kwargs
    method = not _is_number(args[0])
    first, beta, rest = (args[0], args[1], args[2:]) if method else (args[1], args[0], args[2:])
    alpha = rest[0] if len(rest) == 3 and _is_number(rest[0]) else None
    rest = rest[1:] if alpha is not None else rest
    if len(rest) != 2 or any(_is_number(r) for r in rest):
        return args, kwargs
    if not _DEPRECATION_SHOWN:  # torch warns once per process, for all these overloads
        _DEPRECATION_SHOWN.append(name)
        _warn_deprecated(name, inputs[1:] if method else inputs, alpha is not None)
    kwargs = dict(kwargs, beta=beta, **({} if alpha is None else {"alpha": alpha}))
    return (first, *rest), kwargs


_DEPRECATION_SHOWN: list = []


def _warn_deprecated(name: str, shown: tuple, alpha: bool) -> None:
    old = ["Number beta"] + [f"Tensor {i}" for i in shown[:-2]] + \
        (["Number alpha"] if alpha else []) + [f"Tensor {i}" for i in shown[-2:]]
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}({', '.join(old)})\n"
                  f"Consider using one of the following signatures instead:\n\t{name}("
                  f"{', '.join(f'Tensor {i}' for i in shown)}, *, Number beta = 1, Number "
                  "alpha = 1)", UserWarning, stacklevel=5)


def torch_keywords(name: str, params, kwargs: dict) -> dict:
    """``kwargs`` with NumPy's names renamed to torch's (when ``params`` has them) and a
    gradkit ``dtype`` made a NumPy dtype; torch's TypeError when both spellings are given."""
    kwargs = dict(kwargs)
    for numpy_name, torch_name in NUMPY_NAMES.items():
        if numpy_name in kwargs and torch_name in params:
            if torch_name in kwargs:
                raise TypeError(f"{name}() got an unexpected keyword argument '{numpy_name}'")
            kwargs[torch_name] = kwargs.pop(numpy_name)
    dtype = kwargs.get("dtype")
    if isinstance(dtype, backend.dtype):
        kwargs["dtype"] = dtype.np
    return kwargs


def numpy_keywords(function):
    """Decorator: a plain-function op (not an ``Op``) that also takes ``axis=``/``keepdims=``."""
    params = frozenset(inspect.signature(function).parameters)

    @functools.wraps(function)
    def call(*args, **kwargs):
        if kwargs and not TENSOR_KEYWORDS.isdisjoint(kwargs):
            args, kwargs = tensor_keywords(args, 1, params, kwargs)
        if kwargs and not SPECIAL_KEYWORDS.isdisjoint(kwargs):
            kwargs = torch_keywords(function.__name__, params, kwargs)
        return function(*args, **kwargs)
    return call
