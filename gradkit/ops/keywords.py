"""torch's keyword spellings that gradkit accepts at the op boundary, in one place.

torch's C++ argument parser takes NumPy's names for four parameters of every function and
method it binds (``x``/``a``/``x1`` for ``input``, ``x2`` for ``other``, ``axis`` for ``dim``,
``keepdims`` for ``keepdim``): ``x.sum(axis=1, keepdims=True)``, ``torch.add(x1=a, x2=b)``,
``fft.fft(x=t)``; its functions written in Python take none (``PYTHON_FUNCTIONS``).
A ``dtype=`` keyword may be a gradkit dtype, which forwards (written on NumPy/CuPy
arrays) receive as the NumPy dtype it wraps.
"""
from __future__ import annotations

import functools
import inspect
import types
import warnings

from gradkit import backend

# torch's parser takes NumPy's names for these parameters (python_arg_parser.cpp); x, a and x1
# for input are the first tensor's (``TENSOR_NAMES``)
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x2": "other"}
# any of these among an op call's keywords sends the call through ``torch_keywords``
SPECIAL_KEYWORDS = frozenset(("axis", "keepdims", "dtype"))
# the first and second tensor's keywords: torch's input and other, and NumPy's names for them
TENSOR_NAMES = (frozenset(("input", "x", "a", "x1")), frozenset(("other", "x2")))
TENSOR_KEYWORDS = TENSOR_NAMES[0] | TENSOR_NAMES[1]
# a plain function's keywords that ``keyword_aliases`` reads
ALIAS_KEYWORDS = TENSOR_KEYWORDS | frozenset(NUMPY_NAMES)
# torch's functions and methods written in Python (torch/functional.py, torch/_tensor.py): its
# C++ parser's NumPy names do not reach them (``torch.norm(x=t)`` is a TypeError)
PYTHON_FUNCTIONS = frozenset((
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
    "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "lobpcg", "lu",
    "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
    "unique", "unique_consecutive", "unravel_index"))
PYTHON_METHODS = frozenset((
    "istft", "lu", "norm", "resize", "resize_as", "split", "stft", "unflatten", "unique",
    "unique_consecutive"))


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
    mat2=)``, the first also by NumPy's: ``x=``), in order, as long as the positionals stop
    just before each."""
    if not args:
        args, kwargs = tensor_keywords(args, 1, names, kwargs)
    kwargs = dict(kwargs)
    for name in names[len(args):]:
        if name not in kwargs:
            break
        args = (*args, kwargs.pop(name))
    return args, kwargs


def keyword_aliases(name: str, params, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A plain function's call with NumPy's spellings torch's parser takes made its own: the
    first tensor as ``x=``/``a=``/``x1=`` (or ``input=`` where its name is another),
    ``x2=`` for ``other``, ``axis=``, ``keepdims=``."""
    if not params or params[0] in ("input", "x"):  # (not linalg.svd's A, isin's elements)
        args, kwargs = tensor_keywords(args, 1, params, kwargs)
    elif "input" in params and "input" not in kwargs:  # polygamma(n, x=), where(c, x=, other=)
        given = [k for k in kwargs if k in TENSOR_NAMES[0] and k not in params]
        if len(given) == 1:
            kwargs = dict(kwargs)
            kwargs["input"] = kwargs.pop(given[0])
    return args, _renamed(name, params, kwargs)


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
    kwargs = _renamed(name, params, kwargs)
    dtype = kwargs.get("dtype")
    if isinstance(dtype, backend.dtype):
        kwargs["dtype"] = dtype.np
    return kwargs


def _renamed(name: str, params, kwargs: dict) -> dict:
    kwargs = dict(kwargs)
    for numpy_name, torch_name in NUMPY_NAMES.items():
        if numpy_name in kwargs and torch_name in params and numpy_name not in params:
            if torch_name in kwargs:
                raise TypeError(f"{name}() got an unexpected keyword argument '{numpy_name}'")
            kwargs[torch_name] = kwargs.pop(numpy_name)
    return kwargs


def numpy_keywords(function, dtypes: bool = True):
    """Decorator: a plain-function op (not an ``Op``) that also takes NumPy's names torch's
    parser takes (``x=``, ``x2=``, ``axis=``, ``keepdims=``; ``keyword_aliases``) and, with
    ``dtypes``, a gradkit ``dtype=`` as the NumPy dtype it wraps."""
    parameters = inspect.signature(function).parameters
    params = tuple(parameters)
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):  # (it passes them on)
        params += tuple(NUMPY_NAMES.values())

    @functools.wraps(function)
    def call(*args, **kwargs):
        if kwargs and not ALIAS_KEYWORDS.isdisjoint(kwargs):
            args, kwargs = keyword_aliases(function.__name__, params, args, kwargs)
        if dtypes and kwargs and "dtype" in kwargs:
            kwargs = torch_keywords(function.__name__, params, kwargs)
        return function(*args, **kwargs)
    call.takes_numpy_keywords = True
    return call


def numpy_names(function):
    """Decorator: ``numpy_keywords`` without the dtype conversion (a function that reads
    gradkit's dtypes), once: a function already taking them is returned as it is, and every
    namespace gets the same wrapper of a function (``gradkit.ops.X is gradkit.linalg.X``)."""
    if getattr(function, "takes_numpy_keywords", False):
        return function
    if function not in _WRAPPERS:
        _WRAPPERS[function] = numpy_keywords(function, dtypes=False)
    return _WRAPPERS[function]


_WRAPPERS: dict = {}


def take_numpy_names(namespace: dict, names=None) -> None:
    """Rebind the plain functions of a module's ``namespace`` among ``names`` to their
    ``numpy_names`` form; with no ``names`` (gradkit's own), every public one that takes
    the input, but torch's Python ones (``PYTHON_FUNCTIONS``)."""
    for name in list(namespace) if names is None else names:
        function = namespace[name]
        if isinstance(function, types.FunctionType) and (names is not None or not (
                name.startswith("_") or name in PYTHON_FUNCTIONS) and _takes_input(function)):
            namespace[name] = numpy_names(function)


def _takes_input(function) -> bool:
    """Whether torch's parser would bind ``x=`` here: an ``input`` (or ``x``) parameter, first
    or not (``polygamma(n, input)``, ``where(condition, input, other)``)."""
    parameters = inspect.signature(function).parameters
    return "input" in parameters or "x" in parameters
