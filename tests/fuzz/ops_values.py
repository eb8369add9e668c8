"""Ops at the edges of their domains, unbounded, for inputs holding NaN, inf, -inf, -0.0 and
0: values and gradients there follow torch's conventions (sqrt'(0) = inf, abs'(0) = 0, max's
gradient split over ties, NaN propagation in max/clamp/sort)."""
from __future__ import annotations

from .ops_core import OpSpec


def _dim(draw, shapes):
    nd = len(shapes[0])
    return {"dim": draw.integer(-nd, nd - 1)} if nd else None


RAW_UNARY = {
    "log": lambda lib, x: lib.log(x),
    "log1p": lambda lib, x: lib.log1p(x),
    "sqrt": lambda lib, x: lib.sqrt(x),
    "rsqrt": lambda lib, x: lib.rsqrt(x),
    "reciprocal": lambda lib, x: x.reciprocal(),
    "exp": lambda lib, x: lib.exp(x),
    "tanh": lambda lib, x: lib.tanh(x),
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "relu": lambda lib, x: lib.relu(x),
    "abs": lambda lib, x: x.abs(),
    "sign": lambda lib, x: x.sign(),
    "clamp": lambda lib, x: x.clamp(-1, 1),
    "clamp_min0": lambda lib, x: x.clamp(min=0),
    "pow_half": lambda lib, x: x ** 0.5,
    "pow_zero": lambda lib, x: x ** 0,
    "pow_neg": lambda lib, x: x ** -1,
    "rpow": lambda lib, x: 0.0 ** x,
    "sin": lambda lib, x: lib.sin(x),
    "atan": lambda lib, x: lib.atan(x),
    "asin": lambda lib, x: lib.asin(x),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "isfinite_mul": lambda lib, x: x * lib.isfinite(x),
    "where_nan": lambda lib, x: lib.where(lib.isnan(x), lib.zeros_like(x), x),
    "amax": lambda lib, x: x.amax(),
    "amin0": lambda lib, x: x.amin(0) if x.dim() else x.amin(),
    "max": lambda lib, x: x.max(),
    "min": lambda lib, x: x.min(),
    "logsumexp": lambda lib, x: lib.logsumexp(x.flatten(), 0),
    "softmax": lambda lib, x: lib.softmax(x.flatten(), 0),
    "mean": lambda lib, x: x.mean(),
    "prod": lambda lib, x: x.prod(),
    "var": lambda lib, x: x.var(),
}

RAW_BINARY = {
    "div": lambda lib, x, y: x / y,
    "pow": lambda lib, x, y: x ** y,
    "remainder": lambda lib, x, y: lib.remainder(x, y),
    "floor_divide": lambda lib, x, y: lib.floor_divide(x, y),
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "minimum": lambda lib, x, y: lib.minimum(x, y),
    "mul": lambda lib, x, y: x * y,
}


def _raw_unary(draw, shapes):
    return {"fn": draw.choice(tuple(RAW_UNARY))}


def _raw_binary(draw, shapes):
    return {"fn": draw.choice(tuple(RAW_BINARY))}


VALUE_OPS: dict[str, OpSpec] = {
    "raw_unary": OpSpec(1, lambda lib, x, fn: RAW_UNARY[fn](lib, x), _raw_unary),
    "raw_binary": OpSpec(2, lambda lib, x, y, fn: RAW_BINARY[fn](lib, x, y), _raw_binary),
    "max_dim_raw": OpSpec(1, lambda lib, x, dim: x.max(dim)[0], _dim),
    "amax_dim_raw": OpSpec(1, lambda lib, x, dim: x.amax(dim), _dim),
    "sum_dim_raw": OpSpec(1, lambda lib, x, dim: x.sum(dim), _dim),
}
