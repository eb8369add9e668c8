"""torch's argument parser for integer parameters (dims, sizes, indices), in one place.

torch's signatures declare four integer kinds, and each reads a tensor its own way:

- ``int`` (``softmax(dim)``, ``transpose(dim0)``, ``cat(dim)``): a Python int, or a 0-d tensor
  of an integer dtype (bool refused); a 1-element tensor with dimensions is refused.
- ``SymInt`` (``narrow(length)``, ``topk(k)``, ``select(index)``, ``tril(diagonal)``): an int
  or any one-element tensor of an integer or bool dtype (a bool one then fails on reading).
- ``int[]`` (``sum(dim)``, ``permute(dims)``, ``flip(dims)``) and ``SymInt[]`` (sizes:
  ``reshape``, ``view``, ``zeros``): a tuple or list whose FIRST element reads as a SymInt;
  a later element that does not read fails on unpacking. A bare value is taken where torch
  declares a size (``int[1]``, ``x.sum(dim=0)``) or for a method's ``*size``.

Anything else is torch's TypeError (``transpose(): argument 'dim0' (position 1) must be int,
not Tensor``; no position when the argument was given by keyword). A float never reads. The
bool (``keepdim``), dtype and device parameters beside them are checked here too.
"""
from __future__ import annotations

import functools
import inspect
import math
import operator

import numpy as np

from gradkit import backend
from gradkit._tensor import Size, Tensor

# torch's conversion of a bool tensor into a SymInt / SymInt[] element (an internal check)
_BOOL_SYMINT = ('scalar.isIntegral( false) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/'
                'csrc/utils/pybind.cpp":27, please report a bug to PyTorch. ')
_BOOL_SYMINT_LIST = ("Expected scalar.isIntegral( false) to be true, but got false.  (Could this "
                     "error message be improved?  If so, please report an enhancement request "
                     "to PyTorch.)")
_SEQUENCES = (tuple, list, Size)

_UNPACK = "failed to unpack the object"
INT64 = 2 ** 63  # an int torch unpacks lies in [-INT64, INT64)
UNPACK_OVERFLOW = "Overflow when unpacking long long"


def unpack_failed(error: TypeError) -> bool:
    """Whether ``error`` is an int list's later element that did not read: torch has matched
    a signature by then, so an overloaded function gives it too, not its signature listing."""
    return _UNPACK in str(error)


def type_name(value) -> str:
    """The type name torch's messages give ``value`` (its Python type's C name: a NumPy
    scalar's is ``numpy.int64``)."""
    if isinstance(value, (np.generic, np.ndarray)):
        return f"numpy.{type(value).__name__}"
    if type(value).__module__ == "gradkit.backend":  # a dtype or device: torch.dtype in torch's
        return f"gradkit.{type(value).__name__}"
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _where(argument: str, position: int | None) -> str:
    return f"argument '{argument}'" + ("" if position is None else f" (position {position})")


def reads_as_int(value) -> bool:
    """Whether torch's ``int`` parameter takes ``value``: an int (not bool), a NumPy integer,
    or a 0-d integer tensor."""
    if isinstance(value, Tensor):
        return not value._data.ndim and value._data.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def reads_as_symint(value) -> bool:
    """Whether torch's ``SymInt`` parameter takes ``value``: an int, or a one-element tensor
    of an integer or bool dtype (any number of dimensions)."""
    if isinstance(value, Tensor):
        return value._data.size == 1 and value._data.dtype.kind in "iub"
    if isinstance(value, (bool, np.bool_, float, complex)):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _symint_value(value, message: str) -> int:
    if isinstance(value, Tensor):
        if value._data.dtype.kind == "b":
            raise RuntimeError(message)
        return int(value._data.item())
    number = operator.index(value)
    if not -INT64 <= number < INT64:  # torch's unpacking into an int64
        raise ValueError(UNPACK_OVERFLOW)
    return number


def int_argument(value, function: str, argument: str, position: int | None = None,
                 symint: bool = False) -> int:
    """``value`` read as torch reads an ``int`` (``symint``: a ``SymInt``) parameter, or
    torch's TypeError."""
    if type(value) is int and -INT64 <= value < INT64:
        return value
    if not (reads_as_symint if symint else reads_as_int)(value):
        raise TypeError(f"{function}(): {_where(argument, position)} must be int, "
                        f"not {type_name(value)}")
    return _symint_value(value, _BOOL_SYMINT)  # (a bool tensor reads only as a SymInt)


def _all_ints(values) -> bool:
    """Whether every value is an int an int64 holds (one torch unpacks as it is)."""
    for v in values:  # (a loop: cheaper than all() over a generator for a few sizes)
        if type(v) is not int or not -INT64 <= v < INT64:
            return False
    return True


def _element(value, symint: bool) -> int:
    """An int from a value that reads as a SymInt (a bool tensor fails a ``SymInt[]``)."""
    if isinstance(value, Tensor) and not symint:
        return int(value._data.item())
    return _symint_value(value, _BOOL_SYMINT_LIST)


def int_list_argument(value, function: str, argument: str, position: int | None = None,
                      symint: bool = False, single: bool = False):
    """``value`` read as torch reads an ``int[]`` (``symint``: ``SymInt[]``) parameter: a
    tuple of ints, or torch's TypeError. ``single``: a bare int is taken (and kept bare)."""
    if not isinstance(value, _SEQUENCES):
        if single and reads_as_symint(value):  # torch's int[1] reads it as item(): bool too
            return _element(value, False)
        raise TypeError(f"{function}(): {_where(argument, position)} must be tuple of ints, "
                        f"not {type_name(value)}")
    if _all_ints(value):
        return tuple(value)
    if value and not reads_as_symint(value[0]):
        found = (f"not {type_name(value)}" if position is None else
                 f"but found element of type {type_name(value[0])} at pos 0")
        raise TypeError(f"{function}(): {_where(argument, position)} must be tuple of ints, "
                        f"{found}")
    for index, v in enumerate(value):  # (a later Python bool reads: its int check takes it)
        if not (reads_as_symint(v) or index and type(v) is bool):
            raise TypeError(f"{function}(): argument '{argument}' {_UNPACK} at pos "
                            f"{index + 1} with error \"type must be tuple of ints,but got "
                            f"{type_name(v)}\"")
    elements = []
    for index, v in enumerate(value):
        try:
            elements.append(_element(v, symint))
        except ValueError:  # beyond int64 (its message, then torch's C++ trace)
            raise TypeError(f"{function}(): argument '{argument}' {_UNPACK} at pos "
                            f"{index + 1} with error \"{UNPACK_OVERFLOW}\n\"") from None
    return tuple(elements)


def size_varargs(args: tuple, function: str, argument: str, symint: bool = True) -> tuple:
    """A method's ``*size`` (``x.reshape(2, 3)``, ``x.reshape((2, 3))``, ``zeros(n)``) read
    as torch's parser reads it: all the positionals as the list when the first reads as an
    int, else the one positional as the ``int[]`` parameter."""
    if len(args) == 1 and isinstance(args[0], _SEQUENCES):
        return int_list_argument(args[0], function, argument, 1, symint)
    if args and not reads_as_symint(args[0]):
        if len(args) > 1:
            raise TypeError(f"{function}() takes 1 positional argument but {len(args)} were "
                            "given")
        raise TypeError(f"{function}(): {_where(argument, 1)} must be tuple of ints, not "
                        f"{type_name(args[0])}")
    return int_list_argument(args, function, argument, None, symint)


def size_argument(args: tuple, keywords: dict, function: str, argument: str,
                  symint: bool = True) -> tuple:
    """A method's ``*size`` given positionally (``size_varargs``) or as its keyword
    (``x.reshape(shape=(2, 3))``: then a tuple, as torch's ``int[]``)."""
    shape = args[0] if len(args) == 1 and type(args[0]) is tuple else args
    if not keywords and args and _all_ints(shape):
        return shape  # the common call: ints
    if not keywords:
        if not args:
            raise TypeError(f'{function}() missing 1 required positional arguments: '
                            f'"{argument}"')
        return size_varargs(args, function, argument, symint)
    # torch's parser: the parameter given twice, then missing, then an unknown keyword
    if args and argument in keywords:
        raise TypeError(f"{function}() got multiple values for argument '{argument}'")
    if not args and argument not in keywords:
        raise TypeError(f'{function}() missing 1 required positional arguments: "{argument}"')
    unexpected = [k for k in keywords if k != argument]
    if unexpected:
        raise TypeError(f"{function}() got an unexpected keyword argument '{unexpected[0]}'")
    if args:
        return size_varargs(args, function, argument, symint)
    return int_list_argument(keywords[argument], function, argument, None, symint)


def invalid_combination(function: str, positional: tuple, keywords: dict) -> TypeError:
    """torch's TypeError for arguments that match none of an overloaded function's
    signatures (its first line; torch goes on to list the signatures)."""
    got = [type_name(v) for v in positional]
    got += [f"{k}={type_name(v)}" for k, v in reversed(keywords.items())]  # torch's order
    listing = ", ".join(got) + ("" if positional or not keywords else ", ")
    return TypeError(f"{function}() received an invalid combination of arguments - "
                     f"got ({listing}), but expected one of:")


def function_form(error: TypeError, inputs: tuple, method: bool = False) -> TypeError:
    """A parameter's error worded for a method (``method_form``, or any with ``method``: its
    positions and listing do not count self) in the words of the function, which counts its
    ``inputs`` first: "sum(): argument 'keepdim' (position 2)" is "(position 3)", "got (int,
    int)" is "got (Tensor, int, int)". (A method wrapper words it back: _tensor_operators.py.)"""
    if not (method or getattr(error, "method_form", False)):
        return error
    message = str(error)
    function, _, rest = message.partition("(): argument '")
    if rest and "' (position " in rest.split("\n")[0]:
        argument, _, rest = rest.partition("' (position ")
        position, _, rest = rest.partition(")")
        return TypeError(f"{function}(): argument '{argument}' (position {int(position) + 1})"
                         f"{rest}")
    function, found, rest = message.partition("() received an invalid combination of "
                                              "arguments - got (")
    if not found:
        return error
    listing, _, rest = rest.partition(")")
    listing = ", ".join([type_name(v) for v in inputs] + ([listing.removesuffix(", ")]
                                                         if listing else []))
    worded = TypeError(f"{function}{found}{listing}){rest}")
    if hasattr(error, "method_error"):  # (numbers_reader: a method of one signature)
        worded.method_error = error.method_error
    return worded


def bool_argument(value, function: str, argument: str, position: int | None = None) -> bool:
    """``value`` read as torch reads a ``bool`` parameter (keepdim, requires_grad ...): a
    bool, not 0 or 1 (nor a NumPy bool); else torch's TypeError."""
    if type(value) is not bool:
        raise TypeError(f"{function}(): {_where(argument, position)} must be bool, not "
                        f"{type_name(value)}")
    return bool(value)


def str_argument(value, function: str, argument: str, position: int | None = None) -> str:
    """``value`` read as torch reads a ``str`` parameter (a mode, UPLO): a str, else torch's
    TypeError."""
    if not isinstance(value, str):
        raise TypeError(f"{function}(): {_where(argument, position)} must be str, not "
                        f"{type_name(value)}")
    return value


def dtype_argument(value, function: str, argument: str = "dtype", position: int | None = None):
    """``value`` as given where torch takes a dtype (gradkit's, NumPy's, or the Python type
    torch maps: float, int, bool, complex); anything else is torch's TypeError."""
    if isinstance(value, (backend.dtype, np.dtype)) or value in _PYTHON_DTYPES or \
            isinstance(value, type) and issubclass(value, np.generic):
        return value
    raise TypeError(f"{function}(): {_where(argument, position)} must be torch.dtype, not "
                    f"{type_name(value)}")


def device_argument(value, function: str, argument: str = "device",
                    position: int | None = None):
    """``value`` as given where torch takes a device (a device, a str, an index); anything
    else is torch's TypeError."""
    if isinstance(value, (backend.device, str)) or type(value) is int:
        return value
    raise TypeError(f"{function}(): {_where(argument, position)} must be torch.device, not "
                    f"{type_name(value)}")


_PYTHON_DTYPES = (float, int, bool, complex)
_READERS = {
    "int": lambda v, f, a, p: int_argument(v, f, a, p),
    "SymInt": lambda v, f, a, p: int_argument(v, f, a, p, symint=True),
    "int[]": lambda v, f, a, p: int_list_argument(v, f, a, p),
    "int[1]": lambda v, f, a, p: int_list_argument(v, f, a, p, single=True),
    # an "int dim" signature beside an "int[] dim" one (all, any): a bare value must be 0-d
    "int|int[]": lambda v, f, a, p: int_list_argument(v, f, a, p) if isinstance(v, _SEQUENCES)
    else int_argument(v, f, a, p),
    "SymInt[]": lambda v, f, a, p: int_list_argument(v, f, a, p, symint=True),
    "SymInt[1]": lambda v, f, a, p: int_list_argument(v, f, a, p, symint=True, single=True),
    "bool": bool_argument,  # keepdim, descending ...: a bool (torch refuses 0 and 1)
    "str": lambda v, f, a, p: str_argument(v, f, a, p),
    "ScalarType": dtype_argument,
}

_ABSENT = object()  # a parameter the call does not give
_BARE_INT_KINDS = frozenset(("int", "SymInt", "int[1]", "int|int[]", "SymInt[1]"))


def _plain_types(specs: dict) -> dict:
    """Per parameter, the type of the value a call passes unread (int, or bool for a bool
    parameter; None where every value is read: a list or a dtype)."""
    return {name: bool if kind == "bool" else str if kind == "str" else int if
            kind.rstrip("?") in _BARE_INT_KINDS else None for name, (_, kind) in specs.items()}


def ints_reader(function: str, overloaded: bool | str = False, **specs):
    """An op's ``numbers`` hook (ops/_op.py) for its integer parameters: ``specs`` maps a
    parameter to (its position in torch's method, its kind: "int", "SymInt", "int[]",
    "int[1]", "int|int[]", "SymInt[]", "SymInt[1]", or "bool" / "ScalarType" for a keepdim or
    dtype beside them; a "?" after the kind: None is taken, an optional one).
    ``overloaded``: torch has other signatures, so a refusal is its "invalid combination of
    arguments" (``"single"``: only when the call gives that one argument, as ``sum(dim=.)``)."""
    plain = _plain_types(specs)
    entries = tuple((name, position, kind, plain[name], kind[-1] == "?", "[" in kind)
                    for name, (position, kind) in specs.items())

    def read(params: dict, positional=(), inputs=()) -> dict:  # (the op's inputs: unread)
        for name, position, kind, plain_type, optional, takes_list in entries:
            value = params.get(name, _ABSENT)
            if value is _ABSENT or type(value) is plain_type and (
                    plain_type is not int or -INT64 <= value < INT64) or \
                    value is None and optional or \
                    takes_list and type(value) is tuple and _all_ints(value):
                continue  # absent, an int64, a bool keepdim, a tuple of them; an optional None
            try:
                params[name] = _READERS[kind.rstrip("?")](
                    value, function, name, position if name in positional else None)
            except TypeError as error:
                # torch lists its signatures when more than one could take the arguments
                if not overloaded or overloaded == "single" and len(params) > 1 or \
                        unpack_failed(error):
                    error.method_form = True
                    raise
                combination = invalid_combination(
                    function, tuple(params[k] for k in positional),
                    {k: v for k, v in params.items() if k not in positional})
                combination.method_form = True
                raise combination from None
        return params
    read.passes_ints = frozenset(name for name, kind in plain.items() if kind is int)
    return read


def int_parameters(function: str, overloaded: bool | str = False, **specs):
    """Decorator: a plain-function op whose integer parameters ``specs`` (as ``ints_reader``'s;
    a first parameter not among them is the input, and positions count after it, as torch's
    method form counts them) torch's parser reads."""
    reader = ints_reader(function, overloaded, **specs)

    def declare(op_function):
        names = list(inspect.signature(op_function).parameters)
        skipped = 0 if names[0] in specs else 1
        # (position among the arguments, the type passed unread) of each parameter read
        checks = tuple((names.index(name), name, kind)
                       for name, kind in _plain_types(specs).items())

        @functools.wraps(op_function)
        def call(*args, **kwargs):
            for index, name, kind in checks:  # the common call reads nothing: ints, bools
                value = args[index] if index < len(args) else kwargs.get(name, _ABSENT)
                if value is not _ABSENT and (type(value) is not kind or kind is int and
                                             not -INT64 <= value < INT64):
                    break
            else:
                return op_function(*args, **kwargs)
            positional = names[:len(args)]
            params = dict(zip(positional, args))
            params.update(kwargs)
            inputs = {name: params.pop(name) for name in names[:skipped] if name in params}
            params = reader(params, positional[skipped:])
            params.update(inputs)
            return op_function(*(params[name] for name in positional),
                               **{name: params[name] for name in kwargs})
        return call
    return declare


def check_dimensions(shape: tuple, function: str = "") -> None:
    """torch's error for a negative size of a new tensor (``zeros`` words its own)."""
    for s in shape:
        if s < 0:
            if function == "zeros":  # torch's zeros checks its size itself
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")


def factory_size(size, function: str, np_dtype=None, keywords: dict | None = None) -> tuple:
    """``(2, 3)`` from ``(2, 3)``, ``((2, 3),)`` or ``size=(2, 3)`` (a factory's ``*size`` or
    its keyword, read as torch's parser reads it: ``ones()`` gives no size, ``ones(())`` is
    0-d), with torch's errors for a negative size and a storage of more bytes than an int64
    counts (NumPy's would be a ValueError)."""
    shape = size_argument(size, keywords or {}, function, "size")
    check_dimensions(shape, function)
    if np_dtype is not None and math.prod(shape) * np_dtype.itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return shape
