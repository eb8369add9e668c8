"""Small helpers shared by op forwards (dtype promotion as torch does it)."""
from __future__ import annotations

import numpy as np

from gradkit.backend import get_default_dtype



def promote(xp, x, y, true_division: bool = False):
    """torch's promotion where NumPy's differs.

    - integer arrays meet Python floats (and true division) in the default float dtype,
      where NumPy gives float64;
    - an integer array meeting a float array takes the float's dtype (int64 * float32 is
      float32 in torch, float64 in NumPy);
    - a 0-d tensor does not widen a dimensioned one of the same or a higher category
      (float32 vector + float64 0-d tensor is float32).
    """
    x_kind, y_kind = _kind(x), _kind(y)
    if x_kind in _ARRAY_KINDS and y_kind in _ARRAY_KINDS and x.dtype != y.dtype:
        x, y = _promote_arrays(xp, x, y, x.dtype, y.dtype)
        x_kind, y_kind = x.dtype.kind, y.dtype.kind
    x_int = x_kind in _INTEGRAL
    y_int = y_kind in _INTEGRAL
    if not (x_int or y_int):  # the common case: nothing to do
        return x, y
    if x_int and (y_kind in _PY_FLOAT_KINDS or true_division and y_int):
        x = _to_default_float(xp, x, y)
    if y_int and (x_kind in _PY_FLOAT_KINDS or true_division and x_int):
        y = _to_default_float(xp, y, x)
    return x, y


# dtype kinds of arrays, plus our codes for Python scalars: F float, C complex, I int/bool
_ARRAY_KINDS = frozenset("biufc")
_INTEGRAL = frozenset("biuI")
_PY_FLOAT_KINDS = frozenset("FC")
_PY_KINDS = {float: "F", complex: "C", int: "I", bool: "I"}


def _kind(v) -> str:
    kind = _PY_KINDS.get(type(v))
    if kind is not None:
        return kind
    dtype = getattr(v, "dtype", None)
    return dtype.kind if dtype is not None else "O"


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _promote_arrays(xp, x, y, x_dtype, y_dtype):
    x_cat, y_cat = _CATEGORY[x_dtype.kind], _CATEGORY[y_dtype.kind]
    x_0d, y_0d = x.ndim == 0, y.ndim == 0
    if x_0d != y_0d and (x_cat <= y_cat if x_0d else y_cat <= x_cat):
        # a 0-d operand of no higher category adopts the dimensioned operand's dtype
        return (x.astype(y_dtype), y) if x_0d else (x, y.astype(x_dtype))
    if x_cat < 2 <= y_cat:
        return x.astype(y_dtype), y
    if y_cat < 2 <= x_cat:
        return x, y.astype(x_dtype)
    return x, y


def _to_default_float(xp, v, other):
    dtype = get_default_dtype().np
    if isinstance(other, complex):
        dtype = np.result_type(dtype, np.complex64)
    return xp.asarray(v, dtype=dtype)


_SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double",
                      "complex64": "ComplexFloat", "complex128": "ComplexDouble",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                      "uint8": "Byte", "bool": "Bool"}
_C_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                 "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
                 "int64": "long int", "int32": "int", "bool": "bool"}


def scalar_type_name(array) -> str:
    """torch's ScalarType name of an array's dtype (``Float``, ``Double``, ...)."""
    name = array.dtype.name
    return _SCALAR_TYPE_NAMES.get(name, name)


def c_type_name(array) -> str:
    """The C type torch names in some messages (``float``, ``double``, ...)."""
    name = array.dtype.name
    return _C_TYPE_NAMES.get(name, name)
