"""torch's type promotion, on NumPy dtypes: the one helper every op's forward uses.

torch ranks operands in three tiers: tensors with dimensions, 0-d tensors, and Python
numbers. The result dtype is that of the highest tier, unless a lower tier brings a higher
*category* (bool < integer < floating < complex); a lower tier never widens within a
category (float32 vector * float64 0-d tensor is float32; uint8 + 300 stays uint8 and wraps).
Python floats count as the default dtype, Python complex numbers as its complex twin, ints
as int64. Dispatch makes a user's 0-d NumPy array a dimensioned operand (NumPy computes it in
torch) and a NumPy scalar a Python number (torch reads it so); here, NumPy scalars are 0-d
arrays, as NumPy returns them from 0-d arithmetic inside derivative rules.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.backend import SCALAR_TYPE_NAMES, get_default_dtype
from gradkit.ops.memory_overlap import has_internal_overlap

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # V: bfloat16 (ml_dtypes)
PY_SCALARS = frozenset({bool, int, float, complex})
_FLOAT32 = np.dtype(np.float32)
_INT64 = np.dtype(np.int64)
_UINT64 = np.dtype(np.uint64)
_INT64_BOUND = 2 ** 63  # a Python int in [-bound, bound) is torch's int64 Scalar
_BOOL = np.dtype(np.bool_)
# torch promotes uint16/32/64 only with themselves and floating types
WIDE_UNSIGNED = frozenset(np.dtype(t) for t in (np.uint16, np.uint32, np.uint64))
UNSIGNED_PROMOTION = "Promotion for uint16, uint32, uint64"  # how torch's refusal begins


def _type_name(dtype: np.dtype) -> str:
    return SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)


class NumpyOperand(np.ndarray):
    """A 0-d NumPy array given to a Tensor op: dispatch marks it so promotion ranks it with
    the dimensioned operands (a 0-d tensor's data would rank lower)."""


def category(dt: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    return _CATEGORY[dt.kind]


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """``torch.promote_types``: NumPy's lattice, except that an integer meeting a floating
    type takes that floating type (int64 + float16 is float16) and float16 + bfloat16 is
    float32."""
    if a == b:
        return a
    if (a in WIDE_UNSIGNED or b in WIDE_UNSIGNED) and a.kind != "f" and b.kind != "f":
        raise RuntimeError(f"{UNSIGNED_PROMOTION} types is not supported, "
                           f"attempted to promote {_type_name(a)} and {_type_name(b)}")
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca != cb and min(ca, cb) <= 1:  # bool/integer meets a higher category: it wins
        return a if ca > cb else b
    if a.kind == "V" or b.kind == "V":  # bfloat16: not in NumPy's own lattice
        other = b if a.kind == "V" else a
        if other.kind == "c" or other.itemsize > 2:
            return other
        return _FLOAT32  # float16 and bfloat16 meet in float32
    return np.result_type(a, b)


def _scalar_dtype(v) -> np.dtype:
    """The dtype a Python number stands for in promotion."""
    kind = type(v)
    if kind is float:
        return get_default_dtype().np
    if kind is complex:
        return get_default_dtype().to_complex().np
    return _BOOL if kind is bool else int_scalar_dtype(v)


def int_scalar_dtype(v: int) -> np.dtype:
    """The dtype of a Python int as torch reads it into a Scalar: int64, uint64 beyond it;
    past uint64, Python's own OverflowErrors (torch's parser lets them through)."""
    if -_INT64_BOUND <= v < _INT64_BOUND:
        return _INT64
    if v < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 2 ** 64:
        raise OverflowError("int too big to convert")
    return _UINT64


def _combine(higher, lower):
    """The dtype of a higher tier met by a lower one (c10's combine_categories)."""
    if higher is None:
        return lower
    if lower is None or higher.kind == "c":
        return higher
    if lower.kind == "c":
        if higher.kind in "fV":  # keep the floating precision: float64 + 1j is complex128
            return np.result_type(_FLOAT32 if higher.kind == "V" else higher, np.complex64)
        return lower
    if higher.kind in "fV":
        return higher
    if higher.kind == "b" or lower.kind in "fV":
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> np.dtype:
    """The dtype torch gives an elementwise op on these arrays and numbers (None ignored)."""
    dims = zero = scalars = None
    for v in operands:
        if v is None:
            continue
        if type(v) in PY_SCALARS:
            dt = _scalar_dtype(v)
            scalars = dt if scalars is None else promote_types(scalars, dt)
        elif not hasattr(v, "dtype"):  # dispatch turns this into torch's argument error
            raise TypeError(f"cannot promote an operand of type {type(v).__name__}")
        elif v.ndim or type(v) is NumpyOperand:
            dims = v.dtype if dims is None else promote_types(dims, v.dtype)
        else:
            zero = v.dtype if zero is None else promote_types(zero, v.dtype)
    return _combine(dims, _combine(zero, scalars))


def as_dtype(xp, v, dt: np.dtype):
    """``v`` (array or Python number) as an array of dtype ``dt``; integers wrap like torch's
    casts (uint8 + 300 is uint8 44), where NumPy would raise."""
    if type(v) in PY_SCALARS:
        if dt.kind in "biu" and type(v) is int:
            return xp.asarray(v).astype(dt)  # a C cast wraps; asarray(300, uint8) raises
        return xp.asarray(v, dtype=dt)
    if v.dtype == dt and type(v) is not NumpyOperand:
        return v
    return cast(v, dt) if type(v) is not NumpyOperand else np.asarray(v, dtype=dt)


def cast(array, dt: np.dtype):
    """``array`` in dtype ``dt`` laid out as torch's ``to`` (which its CPU kernels use to
    promote their inputs): C order for an expanded array, where NumPy's K order would lay the
    stride-0 dims out innermost; the input's own order otherwise."""
    order = "C" if has_internal_overlap(array) else "K"
    if dt == np.float16 and array.dtype == np.float64:
        array = array.astype(np.float32, order=order)  # torch's double to half goes via float
    elif dt == np.uint8 and array.dtype.kind in "fc":  # c10's float to uint8 goes via int64
        with np.errstate(invalid="ignore"):  # (NumPy's via int32: 0 past its range)
            array = array.real.astype(np.int64, order=order)
    return array.astype(dt, order=order)


def promote(xp, x, y, true_division: bool = False):
    """``x`` and ``y`` in their torch result dtype (the default float for integer true
    division). Same-dtype arrays and a float array with a real number pass untouched."""
    tx, ty = type(x), type(y)
    if tx is np.ndarray:  # the common cases first: nothing to do
        if ty is np.ndarray:
            if x.dtype == y.dtype and (not true_division or x.dtype.kind in "fcV"):
                return x, y
        elif (ty is float or ty is int) and x.dtype.kind in "fcV":
            if ty is int and not -_INT64_BOUND <= y < _INT64_BOUND:
                int_scalar_dtype(y)  # torch's parse refuses an int past uint64
            return x, y  # NumPy keeps the array's dtype, as torch does
    elif ty is np.ndarray and (tx is float or tx is int) and y.dtype.kind in "fcV":
        if tx is int and not -_INT64_BOUND <= x < _INT64_BOUND:
            int_scalar_dtype(x)
        return x, y
    dt = result_type(x, y)
    if true_division and dt.kind in "biu":
        dt = get_default_dtype().np
    return as_dtype(xp, x, dt), as_dtype(xp, y, dt)


# c10's names in "value cannot be converted to type T without overflow"
OVERFLOW_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                   "int64": "int64_t", "float32": "float", "float64": "double",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
                   "float16": "c10::Half", "uint16": "uint16_t", "uint32": "uint32_t",
                   "uint64": "uint64_t"}


def overflow(dtype: np.dtype):
    """c10's refusal of a number that does not fit ``dtype``."""
    raise RuntimeError(f"value cannot be converted to type {OVERFLOW_NAMES[dtype.name]} "
                       "without overflow")


def check_fits(value, dt: np.dtype, half: bool = False) -> None:
    """torch's check that a Python number fits ``dt`` where it is converted checked (``where``'s
    scalar, pow's exponent): an int into an integer dtype (unsigned types take negatives down
    to -max, as two's complement), a finite number into float32 within its range (``half``:
    float16's too, which ``where`` takes unchecked)."""
    if type(value) in (int, float) and dt.kind == "f":
        if (dt == np.float32 or half and dt == np.float16) and math.isfinite(value) and \
                abs(value) > float(np.finfo(dt).max):
            overflow(dt)
        return
    if type(value) is not int or dt.kind not in "iu":
        return
    info = np.iinfo(dt)
    low = -int(info.max) if dt.kind == "u" else int(info.min)
    if not low <= value <= info.max:
        overflow(dt)


def array_of(x, y):
    """The array among promoted operands (promote leaves at most one Python number)."""
    return y if type(x) in PY_SCALARS else x


def result_kind(x, y) -> str:
    """The dtype kind of a binary op's result, from its promoted operands."""
    return array_of(x, y).dtype.kind
