"""Small helpers shared by op forwards: torch's names of dtypes."""
from __future__ import annotations

import functools

import numpy as np

from gradkit.ops.promotion import (
    PY_SCALARS, SCALAR_TYPE_NAMES as _SCALAR_TYPE_NAMES, result_type)

_C_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                 "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
                 "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                 "uint8": "unsigned char", "bool": "bool", "uint16": "short unsigned int",
                 "uint32": "unsigned int", "uint64": "long unsigned int"}


def scalar_type_name(array) -> str:
    """torch's ScalarType name of an array's dtype (``Float``, ``Double``, ...)."""
    name = array.dtype.name
    return _SCALAR_TYPE_NAMES.get(name, name)


def tensor_type_name(array) -> str:
    """torch's legacy type name of a CPU tensor of the array's dtype (``torch.FloatTensor``),
    as its messages print a tensor's type."""
    return f"torch.{scalar_type_name(array)}Tensor"


def c_type_name(array) -> str:
    """The C type torch names in some messages (``float``, ``double``, ...)."""
    name = array.dtype.name
    return _C_TYPE_NAMES.get(name, name)


def cpp_number(number) -> str:
    """A Scalar argument as torch's C++ messages print it (``-1``, ``0.5``); a one-element
    tensor is its number first, as torch converts it to a Scalar. A NaN keeps its sign
    (``-nan``), as C++ streams print it."""
    number = number.item() if hasattr(number, "item") else number
    if isinstance(number, float) and number != number:
        return "-nan" if np.signbit(number) else "nan"
    return f"{number:g}" if isinstance(number, float) else str(number)


def check_bound(number, message: str, low: float = 0.0, strict: bool = False) -> None:
    """torch's ``RuntimeError(message)`` unless ``number >= low`` (``> low`` when ``strict``),
    written as torch's TORCH_CHECK(x >= 0) so that a NaN is refused too; ``{}`` in the
    message is the number as C++ prints it (``-nan`` keeps its sign)."""
    if not (number > low if strict else number >= low):
        raise RuntimeError(message.format(cpp_number(number)))


def require_real_floating(kernel: str, *arrays, half: bool = True) -> None:
    """torch's NotImplementedError when the arrays' common dtype is not a real floating one
    (``kernel`` has no bool, integer or complex CPU kernel), nor float16 with ``half=False``
    (no Half one either)."""
    dtype = result_type(*arrays)
    if dtype.kind != "f" or not half and dtype == np.float16:
        name = _SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def kernel_error(kernel: str):
    """torch's error for a dtype its CPU kernel lacks: ``"kernel" not implemented for 'Type'``."""
    def error(array) -> NotImplementedError:
        return NotImplementedError(
            f'"{kernel}" not implemented for \'{scalar_type_name(array)}\'')
    return error


def kernel_error_after_checks(kernel: str, array) -> NotImplementedError:
    """``kernel_error`` of an op whose own shape checks passed (torch's kernels run after
    them): dispatch keeps it rather than naming a broadcast of the operands."""
    error = kernel_error(kernel)(array)
    error.shapes_checked = True
    return error


def fixed_error(kind: type, message: str):
    """An error of type ``kind`` with one message whatever the array (``kernel_error``'s twin)."""
    def error(array) -> Exception:
        return kind(message)
    return error


CLAMP_COMPLEX = fixed_error(NotImplementedError, "clamp is not supported for complex types")


def reject_complex(array, error) -> None:
    """Raise ``error(array)`` for a complex array: torch has no complex kernel for the op."""
    dtype = getattr(array, "dtype", None)  # a Python number beside a real array: fine
    if dtype is not None and dtype.kind == "c":
        raise error(array)


_NOT_TENSORS = frozenset((tuple, list, str))


def require_tensors(name: str, *operands, names=("input", "other")) -> None:
    """torch's TypeError for a Python number (or None, a tuple, a list, a str: NumPy would
    make an array of them) where the op takes only Tensors."""
    for position, (argument, value) in enumerate(zip(names, operands), 1):
        if type(value) in PY_SCALARS or value is None or type(value) in _NOT_TENSORS:
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")


def invalid_combination(name: str, *operands) -> TypeError:
    """torch's TypeError for operands no overload of ``name`` takes (a number as ``input``,
    None as lerp's weight): its first line (torch goes on to list the signatures)."""
    kinds = ("Tensor" if hasattr(v, "dtype") and type(v) not in PY_SCALARS else
             type(v).__name__ for v in operands)
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({', '.join(kinds)}), but expected one of:")


def half_in_float(forward):
    """A forward that computes float16 inputs in float32 and rounds the result back once, as
    torch's CPU kernels do (their "opmath" type for Half is float)."""
    @functools.wraps(forward)
    def computed(xp, x, *args, **kwargs):
        if x.dtype == np.float16:
            return forward(xp, x.astype(np.float32), *args, **kwargs).astype(np.float16)
        return forward(xp, x, *args, **kwargs)
    return computed


def refuse_half(x, kernel: str) -> None:
    """torch's error for float16 where its CPU kernel (a backward one too) has no Half
    version; ``x`` an array or a tensor."""
    data = getattr(x, "_data", x)
    if data.dtype == np.float16:
        raise kernel_error(kernel)(data)
