"""torch's argument parser for a number parameter given a tensor, in one place.

A parameter torch declares ``Scalar`` (its messages say "Number"), ``double`` ("float") or
``int64`` ("int") takes a Python number, or a tensor that it reads as its number: only a 0-d
tensor that does not require grad, and for an ``int`` an integer one (not bool). Anything else
is torch's TypeError, ``full(): argument 'fill_value' (position 2) must be Number, not Tensor``
(no position when the argument was given by keyword). A one-element tensor with dimensions is
refused too, even where NumPy would broadcast it.
"""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.int_arguments import UNPACK_OVERFLOW, invalid_combination, type_name


def python_number(value):
    """A NumPy scalar as torch's parser reads a number: its Python number, a NumPy bool as a
    float (``int64 tensor + np.True_`` is float32 in torch); anything else as it is."""
    if isinstance(value, np.generic):
        return float(value) if isinstance(value, np.bool_) else value.item()
    return value


def number_argument(value, function: str, argument: str, position: int | None = None,
                    kind: str = "Number", optional: bool = True):
    """``value`` as torch's parser reads a ``kind`` parameter ("Number", "float" or "int";
    "double": a Number the op reads as a C++ double, so a complex one gives its real part)
    named ``argument`` of ``function``: a number passes, a tensor gives its number or raises.
    None passes where ``optional`` (an "int" never takes it)."""
    where = "" if position is None else f" (position {position})"
    value = python_number(value)
    if kind == "float" and isinstance(value, complex) or type(value) in _NEVER_NUMBERS or \
            value is None and (kind == "int" or not optional) or \
            kind == "int" and type(value) in (bool, float, complex):
        raise TypeError(f"{function}(): argument '{argument}'{where} must be "
                        f"{'Number' if kind in _SCALARS else kind}, not {type(value).__name__}")
    if isinstance(value, Tensor):
        if not reads_as_number(value, kind):
            raise TypeError(f"{function}(): argument '{argument}'{where} must be "
                            f"{'Number' if kind in _SCALARS else kind}, not Tensor")
        value = number_if_read(value, kind)
    if type(value) is int and not -_INT64 <= value < _INT64:
        value = _big_int(value, kind)
    return _real_part(value) if kind == "double" and isinstance(value, complex) else value


_INT64 = 2 ** 63


def _big_int(value: int, kind: str):
    """An int beyond int64 as torch's parser reads it: a double for a "float" parameter, an
    "int" refused, a Scalar's uint64 up to 2**64 (Python's OverflowErrors past it)."""
    if kind == "float":
        return float(value)
    if kind == "int":
        raise ValueError(UNPACK_OVERFLOW)
    if value >= 2 ** 64:
        raise OverflowError("int too big to convert")
    if value < 0:
        raise OverflowError("can't convert negative int to unsigned")
    return value


# what no number parameter takes (NumPy would make an array of it); an "int" refuses None, a
# bool, a float and a complex too
_NEVER_NUMBERS = frozenset((tuple, list, str, dict, set))
# Scalars (parsed as "Number") that the op converts: to a double, or to its input's dtype
_SCALARS = ("double", "input")
# c10's names of the types a Scalar converts to, in its overflow error
# (half-precision inputs compute in float, so most kernels convert to that; hardshrink does not)
_CPP_TYPES = {"float32": "float", "float16": "float", "bfloat16": "float",
              "bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
              "int32": "int", "int64": "int64_t"}


_FLOAT_MAX = float(np.finfo(np.float32).max)


def _real_part(number: complex, cpp_type: str = "double") -> float:
    """A complex number read as a real ``cpp_type``, as c10::Scalar's conversions read it."""
    if number.imag:
        raise RuntimeError(f"value cannot be converted to type {cpp_type} without overflow")
    return number.real


def scalar_for(value, input):
    """A Scalar as the op converts it to a floating ``input``'s dtype: a complex number is its
    real part (c10's overflow error, naming the type, when its imaginary part is not 0). For
    integer inputs the op's own checks come first (torch's kernels convert last):
    ``scalar_as`` there."""
    if isinstance(input, Tensor) and input._data.dtype.kind == "f":
        return scalar_as(value, input._data.dtype)
    return value


def scalar_as(value, dtype):
    """A Scalar converted to ``dtype`` as c10 converts it (see scalar_for): a complex one to
    its real part, a finite real one beyond float's range (to a float kernel) refused with
    c10's overflow error; infinities and NaN convert."""
    cpp_type = _CPP_TYPES.get(str(dtype), "double")
    if isinstance(value, complex) and dtype.kind != "c":
        value = _real_part(value, cpp_type)  # then checked as a real one
    if cpp_type == "float" and isinstance(value, (int, float)) and math.isfinite(value) \
            and abs(value) > _FLOAT_MAX:
        raise RuntimeError("value cannot be converted to type float without overflow")
    if str(dtype) == "complex64" and isinstance(value, (int, float, complex)) and any(
            math.isfinite(part) and abs(part) > _FLOAT_MAX
            for part in (complex(value).real, complex(value).imag)):
        raise RuntimeError("value cannot be converted to type c10::complex<float> without "
                           "overflow")
    return value


def number_if_read(value, kind: str = "Number"):
    """``value``'s number where torch's parser reads the tensor ``value`` as a ``kind``
    number; anything else unchanged (for the signatures whose refusal is another message)."""
    if not isinstance(value, Tensor) or not reads_as_number(value, kind):
        return value
    number = value._data.item()
    if kind == "float" and isinstance(number, complex):  # its real part, as item<double>()
        return _real_part(number)
    return float(number) if kind == "float" else number


def reads_as_number(value, kind: str = "Number") -> bool:
    """Whether torch's parser takes the tensor ``value`` for a ``kind`` parameter: 0-d, not
    requiring grad, of an integer dtype for an "int"."""
    data = value._data
    return not data.ndim and not value.requires_grad and (
        kind != "int" or data.dtype.kind in "iu")


def numbers_reader(function: str, overloaded: bool = False, **positions):
    """An op's ``numbers`` (ops/_op.py): its parameters named in ``positions`` (their position
    in torch's signature, None for a keyword-only one, or a (position, kind) pair for a
    "float", "int", "double" or "input": a Scalar the op converts to its real input's dtype;
    a "?" after it: torch's optional one, which takes None) read as torch reads a Scalar.
    ``overloaded``: torch has other signatures, so a refusal is its "invalid combination"
    ("function": only the function has, as addmm's out_dtype one; the method's is plain)."""
    kinds = {name: (spec if isinstance(spec, tuple) else (spec, "Number"))
             for name, spec in positions.items()}
    kinds = {name: (position, kind.rstrip("?"), kind.endswith("?"))
             for name, (position, kind) in kinds.items()}

    def read(params: dict, positional=(), inputs=()) -> dict:
        for name, (position, kind, optional) in kinds.items():
            if name in params:
                try:
                    value = number_argument(params[name], function, name,
                                            position if name in positional else None, kind,
                                            optional)
                except TypeError as error:
                    if not overloaded:
                        raise
                    combination = invalid_combination(  # (Op.__call__ lists the inputs)
                        function, tuple(params[k] for k in positional),
                        {k: v for k, v in params.items() if k not in positional})
                    combination.method_form = True
                    if overloaded == "function":  # the method has one signature: its error
                        combination.method_error = error
                    raise combination from None
                params[name] = scalar_for(value, inputs[0]) if kind == "input" and inputs \
                    else value
        return params
    return read


_ABSENT = object()  # a parameter the call does not give


def number_parameters(function: str, overloaded: bool = False, signature=None, **kinds: str):
    """Decorator: torch's parser reads the number parameters ``kinds`` (name: "float",
    "double" or "Number"; "float|Tensor": a tensor passes unread, torch's Tensor signature; a
    "?" after it: torch's optional one, which takes None) of
    a plain-function op before it runs. An ill-typed one (a complex for a float) is torch's
    TypeError naming it and its position (none when given by keyword), or, ``overloaded``
    (torch has other signatures), its "invalid combination" of the arguments as given (then
    passed unread: the op's own checks list them too); ``signature(*args, **kwargs)``: whether
    torch has a signature for the call, else that invalid combination. The first parameter is
    the input: a method's errors do not count it."""
    def declare(op_function):
        names = list(inspect.signature(op_function).parameters)
        checks = tuple((names.index(name), name, kind.rstrip("?").removesuffix("|Tensor"),
                        kind.rstrip("?").endswith("|Tensor"), kind.endswith("?"))
                       for name, kind in kinds.items())

        @functools.wraps(op_function)
        def call(*args, **kwargs):
            read, read_keywords = list(args), dict(kwargs)  # (errors list what was given)
            for index, name, kind, takes_tensor, optional in checks:
                given = index < len(args)
                value = args[index] if given else kwargs.get(name, _ABSENT)
                if type(value) is float or value is _ABSENT or value is None and optional or \
                        takes_tensor and isinstance(value, Tensor):
                    continue  # (the common call: nothing to read)
                try:
                    read_value = number_argument(value, function, name,
                                                 index + 1 if given else None, kind, optional)
                except TypeError:
                    if not overloaded:
                        raise
                    raise invalid_combination(function, args, kwargs) from None
                if overloaded and not (type(value) is int and type(read_value) is float):
                    continue  # (its own checks list the arguments as given, and read them;
                    # a big int read as torch's double is printed so in its messages)
                value = read_value
                if given:
                    read[index] = value
                else:
                    read_keywords[name] = value
            if signature is not None and not signature(*args, **kwargs):
                raise invalid_combination(function, args, kwargs)
            return op_function(*read, **read_keywords)
        call.function_words = True  # (wraps copies it on) its method's errors drop self
        return call
    return declare


def float_list(value, function: str, argument: str) -> list | None:
    """``value`` read as torch's parser reads a ``float[]`` ("tuple of floats"): None where no
    signature takes it (not a tuple or list, or its first element neither a real number nor a
    complex one: the caller's "invalid combination"); else its floats, each element a real
    number or a one-element tensor, or torch's TypeError naming the first that is not."""
    if not isinstance(value, (tuple, list)) or value and not isinstance(
            python_number(value[0]), (int, float, complex)):
        return None
    floats = []
    for index, element in enumerate(value):
        element = python_number(element)
        if isinstance(element, Tensor) and element._data.size == 1:
            element = element._data.item()
        if not isinstance(element, (int, float)):
            raise TypeError(f"{function}(): argument '{argument}' must be tuple of floats, but "
                            f"found element of type {type_name(element)} at pos {index + 1}")
        floats.append(float(element))
    return floats


def hermitian_is_bool(x, first=None, hermitian=False, **tolerances) -> bool:
    """A ``number_parameters`` signature: linalg's ``hermitian`` (its third parameter) is a
    bool, or torch's overloads of matrix_rank and pinv match none."""
    return type(hermitian) is bool
