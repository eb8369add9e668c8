"""Operators across dtypes (bool, uint8, int16/32/64, float, complex) and Python scalars
(int, float, bool, complex, NaN, inf, -0.0) on the left and on the right, in place too.

torch's answer decides: a result dtype, a value, or an error (bool - bool, int // 0,
int ** -1, float << 1, ...), which gradkit must raise as well.
"""
from __future__ import annotations

import math
import operator

from .ops_core import OpSpec

OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
}
IN_PLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul,
            "/": operator.itruediv, "//": operator.ifloordiv, "%": operator.imod,
            "**": operator.ipow, "&": operator.iand, "|": operator.ior, "^": operator.ixor}

SCALARS = (0, 1, 2, 3, -2, 300, 0.5, -1.5, 2.0, 0.0, -0.0, math.inf, -math.inf, math.nan,
           True, False, 1 + 2j, 0.5j)
DTYPE_NAMES = ("bool", "uint8", "int16", "int32", "int64", "float32", "float64",
               "complex64", "complex128")

# functions on one tensor of any dtype (name -> fn(lib, x)); torch refuses some dtypes
UNARY = {
    "neg": lambda lib, x: -x,
    "abs": lambda lib, x: x.abs(),
    "invert": lambda lib, x: ~x,
    "sign": lambda lib, x: x.sign(),
    "sum": lambda lib, x: x.sum(),
    "sum0": lambda lib, x: x.sum(0),
    "prod": lambda lib, x: x.prod(),
    "mean": lambda lib, x: x.mean(),
    "amax": lambda lib, x: x.amax(),
    "max": lambda lib, x: x.max(),
    "min0": lambda lib, x: x.min(0)[0],
    "argmax": lambda lib, x: x.argmax(),
    "cumsum": lambda lib, x: x.cumsum(0),
    "sqrt": lambda lib, x: lib.sqrt(x),
    "exp": lambda lib, x: lib.exp(x),
    "floor": lambda lib, x: x.floor(),
    "round": lambda lib, x: x.round(),
    "trunc": lambda lib, x: x.trunc(),
    "logical_not": lambda lib, x: lib.logical_not(x),
    "isnan": lambda lib, x: lib.isnan(x),
    "any": lambda lib, x: x.any(),
    "all": lambda lib, x: x.all(),
    "float": lambda lib, x: x.float(),
    "double": lambda lib, x: x.double(),
    "long": lambda lib, x: x.long(),
    "bool": lambda lib, x: x.bool(),
    "square": lambda lib, x: x.square(),
    "reciprocal": lambda lib, x: x.reciprocal(),
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "relu": lambda lib, x: lib.relu(x),
    "clamp_min": lambda lib, x: x.clamp(min=1),
    "real": lambda lib, x: x.real,
    "item_add": lambda lib, x: x + x.flatten()[0].item() if x.numel() else x,
}


def _binop(draw, shapes):
    return {"op": draw.choice(tuple(OPERATORS))}


def _scalar_op(draw, shapes):
    return {"op": draw.choice(tuple(OPERATORS)), "scalar": draw.choice(SCALARS),
            "left": draw.boolean()}


def _in_place_op(draw, shapes):
    return {"op": draw.choice(tuple(IN_PLACE))}


def _in_place_scalar(draw, shapes):
    return {"op": draw.choice(tuple(IN_PLACE)), "scalar": draw.choice(SCALARS)}


def _unary(draw, shapes):
    return {"fn": draw.choice(tuple(UNARY))}


def _cast(draw, shapes):
    return {"dtype": draw.choice(DTYPE_NAMES)}


def _scalar_run(lib, x, op, scalar, left):
    return OPERATORS[op](scalar, x) if left else OPERATORS[op](x, scalar)


def _where_scalar(draw, shapes):
    return {"scalar": draw.choice(SCALARS)}


DTYPE_OPS: dict[str, OpSpec] = {
    "binop": OpSpec(2, lambda lib, x, y, op: OPERATORS[op](x, y), _binop),
    "scalar_op": OpSpec(1, _scalar_run, _scalar_op),
    "ibinop": OpSpec(2, lambda lib, x, y, op: IN_PLACE[op](x, y), _in_place_op, inplace=True),
    "iscalar_op": OpSpec(1, lambda lib, x, op, scalar: IN_PLACE[op](x, scalar), _in_place_scalar,
                         inplace=True),
    "unary": OpSpec(1, lambda lib, x, fn: UNARY[fn](lib, x), _unary),
    "cast": OpSpec(1, lambda lib, x, dtype: x.to(getattr(lib, dtype)), _cast),
    "where_scalar": OpSpec(2, lambda lib, x, y, scalar: lib.where(y > 0, x, scalar),
                           _where_scalar),
    "torch_add_scalar": OpSpec(1, lambda lib, x, scalar: lib.add(x, scalar, alpha=2),
                               _where_scalar),
}
