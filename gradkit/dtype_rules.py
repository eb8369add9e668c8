"""torch's dtype questions: promote_types, result_type and can_cast, answered with the
promotion rules the ops use (gradkit/ops/promotion.py)."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import dtype, from_numpy_dtype
from gradkit.number_arguments import python_number
from gradkit.ops import promotion

_NUMBERS = (bool, int, float, complex)


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both ``type1`` and ``type2`` convert to (torch's lattice)."""
    for position, (name, value) in enumerate((("type1", type1), ("type2", type2)), 1):
        if not isinstance(value, dtype):
            raise TypeError(f"promote_types(): argument '{name}' (position {position}) must be "
                            f"torch.dtype, not {type(value).__name__}")
    return from_numpy_dtype(promotion.promote_types(type1.np, type2.np))


def _operand(value):
    """What promotion ranks: a tensor's array (dimensioned or 0-d) or the Python number."""
    value = python_number(value)
    if isinstance(value, Tensor):
        return value._data
    if type(value) in _NUMBERS:
        return value
    raise TypeError(f"result_type() received an invalid combination of arguments - got "
                    f"({type(value).__name__}), but expected one of: (Tensor tensor, Tensor "
                    "other) (Tensor tensor, Number other) (Number scalar, Tensor tensor) "
                    "(Number scalar1, Number scalar2)")


def result_type(tensor, other) -> dtype:
    """The dtype an arithmetic op on these two operands (tensors or numbers) gives."""
    return from_numpy_dtype(promotion.result_type(_operand(tensor), _operand(other)))


_CATEGORIES = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether torch's casting rules allow ``from_`` into ``to`` implicitly: never to a lower
    category (complex > floating > integer > bool), any size within one."""
    for position, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {position}) must be "
                            f"torch.dtype, not {type(value).__name__}")
    return _CATEGORIES[np.dtype(from_.np).kind] <= _CATEGORIES[np.dtype(to.np).kind]
