"""The core op table: float and complex ops written once against the torch API.

Each entry names one function called with ``lib`` = ``gradkit`` or ``torch``; its parameter
drawer gets the input shapes and returns the keyword parameters (or None: not applicable).
Domain-restricted ops are bounded here (``log(|x| + 0.5)``); the unbounded forms, where NaN,
inf and -0.0 matter, are in ``ops_values.py``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class OpSpec(NamedTuple):
    arity: int
    fn: Callable
    params: Callable | None = None   # (draw, shapes) -> dict, or None when it does not apply
    inplace: bool = False             # mutates its first input (which stays the same tensor)
    same: bool = False                # returns its first input itself (in-place, hooks)
    wants_tensors: bool = False       # the parameter drawer gets the (torch) tensors, not shapes


def _dim(draw, shapes):
    nd = len(shapes[0])
    return {"dim": draw.integer(-nd, nd - 1)} if nd else None


def _dim_keep(draw, shapes):
    p = _dim(draw, shapes)
    return p and {**p, "keepdim": draw.boolean()}


def _var_dim(draw, shapes):
    """var over a dim of one element is NaN by definition (tested in test_regressions.py)."""
    p = _dim_keep(draw, shapes)
    return p if p and shapes[0][p["dim"]] > 1 else None


def _perm(draw, shapes):
    dims = list(range(len(shapes[0])))
    for i in range(len(dims) - 1, 0, -1):  # Fisher-Yates with drawn indices
        j = draw.integer(0, i)
        dims[i], dims[j] = dims[j], dims[i]
    return {"dims": tuple(dims)}


def _index_select(draw, shapes):
    p = _dim(draw, shapes)
    if p is None:
        return None
    n = shapes[0][p["dim"]]
    low, high = (-1, n) if draw.chance(0.05) else (0, n - 1)  # out of range now and then
    return {**p, "index": [draw.integer(low, high) for _ in range(draw.integer(1, 3))]}


def _repeat(draw, shapes):
    return {"sizes": tuple(draw.integer(1, 2) for _ in shapes[0]) or (2,)}


def _two_dims(draw, shapes):
    nd = len(shapes[0])
    return {"d0": draw.integer(0, nd - 1), "d1": draw.integer(0, nd - 1)} if nd >= 2 else None


def _slice(draw, shapes):
    nd = len(shapes[0])
    if not nd:
        return None
    dim = draw.integer(0, nd - 1)
    n = shapes[0][dim]
    start = draw.integer(0, n - 1)
    return {"dim": dim, "start": start, "stop": draw.integer(start + 1, n),
            "step": draw.integer(1, 2)}


def _pick(draw, shapes):
    """Advanced index along dim 0, with repeats (gradients must accumulate)."""
    if not shapes[0] or shapes[0][0] == 0:
        return None
    n = shapes[0][0]
    return {"rows": tuple(draw.integer(0, n - 1) for _ in range(draw.integer(1, 4)))}


def _gather(draw, shapes):
    p = _dim(draw, shapes)
    if p is None:
        return None
    shape = list(shapes[0])
    n = shape[p["dim"]]
    shape[p["dim"]] = draw.integer(1, 3)
    # now and then an index out of range (-1 or n): torch refuses it, NumPy would wrap -1
    low, high = (-1, n) if draw.chance(0.05) else (0, n - 1)
    index = np.array([draw.integer(low, high) for _ in range(int(np.prod(shape)))])
    return {**p, "index": index.reshape(shape).tolist()}


def _unsqueeze(draw, shapes):
    nd = len(shapes[0])
    return {"dim": draw.integer(-nd - 1, nd)}


def _expand(draw, shapes):
    shape = tuple(n if n != 1 else draw.integer(1, 3) for n in shapes[0])
    return {"shape": (draw.integer(1, 2),) + shape if draw.boolean() else shape}


def _set_slice(draw, shapes):
    p = _slice(draw, shapes)
    return p and {**p, "step": 1}


def _slice_key(x, dim, start, stop, step):
    return (slice(None),) * dim + (slice(start, stop, step),)


def _bounded_pow(lib, x, y):
    return (x.abs() + 0.5) ** (y * 0.5)


OPS: dict[str, OpSpec] = {
    # elementwise, unary
    "neg": OpSpec(1, lambda lib, x: -x),
    "exp": OpSpec(1, lambda lib, x: lib.exp(x * 0.5)),
    "tanh": OpSpec(1, lambda lib, x: lib.tanh(x)),
    "sigmoid": OpSpec(1, lambda lib, x: lib.sigmoid(x)),
    "sin": OpSpec(1, lambda lib, x: lib.sin(x)),
    "cos": OpSpec(1, lambda lib, x: x.cos()),
    "square": OpSpec(1, lambda lib, x: x.square()),
    "abs": OpSpec(1, lambda lib, x: x.abs()),
    "relu": OpSpec(1, lambda lib, x: lib.relu(x)),
    "log": OpSpec(1, lambda lib, x: lib.log(x.abs() + 0.5)),
    "sqrt": OpSpec(1, lambda lib, x: (x * x + 0.25).sqrt()),
    "rsqrt": OpSpec(1, lambda lib, x: lib.rsqrt(x.abs() + 0.5)),
    "reciprocal": OpSpec(1, lambda lib, x: (x.abs() + 0.5).reciprocal()),
    "clamp": OpSpec(1, lambda lib, x: x.clamp(-0.5, 0.7)),
    "gelu": OpSpec(1, lambda lib, x: lib.nn.functional.gelu(x)),
    "silu": OpSpec(1, lambda lib, x: lib.nn.functional.silu(x)),
    "softplus": OpSpec(1, lambda lib, x: lib.nn.functional.softplus(x)),
    "conj": OpSpec(1, lambda lib, x: x.conj() * 1.0),
    "real": OpSpec(1, lambda lib, x: x.real if x.is_complex() else x * 2.0),
    "pow_scalar": OpSpec(1, lambda lib, x: (x.abs() + 0.5) ** 1.5),
    # elementwise, binary (broadcasting)
    "add": OpSpec(2, lambda lib, x, y: x + y),
    "sub": OpSpec(2, lambda lib, x, y: lib.sub(x, y)),
    "mul": OpSpec(2, lambda lib, x, y: x * y),
    "div": OpSpec(2, lambda lib, x, y: x / (y.abs() + 0.5)),
    "maximum": OpSpec(2, lambda lib, x, y: lib.maximum(x, y)),
    "minimum": OpSpec(2, lambda lib, x, y: lib.minimum(x, y)),
    "where": OpSpec(2, lambda lib, x, y: lib.where(x.real > 0, x, y)),
    "pow": OpSpec(2, _bounded_pow),
    # reductions
    "sum": OpSpec(1, lambda lib, x: x.sum()),
    "sum_dim": OpSpec(1, lambda lib, x, dim, keepdim: x.sum(dim, keepdim=keepdim), _dim_keep),
    "mean_dim": OpSpec(1, lambda lib, x, dim, keepdim: x.mean(dim, keepdim=keepdim), _dim_keep),
    "prod_dim": OpSpec(1, lambda lib, x, dim, keepdim: x.prod(dim, keepdim=keepdim), _dim_keep),
    "amax": OpSpec(1, lambda lib, x, dim, keepdim: x.amax(dim, keepdim=keepdim), _dim_keep),
    "max_dim": OpSpec(1, lambda lib, x, dim, keepdim: x.max(dim, keepdim=keepdim)[0], _dim_keep),
    "var": OpSpec(1, lambda lib, x, dim, keepdim: x.var(dim, keepdim=keepdim), _var_dim),
    "logsumexp": OpSpec(1, lambda lib, x, dim, keepdim: lib.logsumexp(x, dim, keepdim=keepdim),
                        _dim_keep),
    "softmax": OpSpec(1, lambda lib, x, dim: lib.softmax(x, dim), _dim),
    "log_softmax": OpSpec(1, lambda lib, x, dim: lib.log_softmax(x, dim), _dim),
    "cumsum": OpSpec(1, lambda lib, x, dim: lib.cumsum(x, dim), _dim),
    # linear algebra
    "matmul": OpSpec(2, lambda lib, x, y: x @ y),
    "gram": OpSpec(1, lambda lib, x: x @ x.transpose(-1, -2)),
    # views and shape
    "transpose": OpSpec(1, lambda lib, x, d0, d1: x.transpose(d0, d1), _two_dims),
    "flatten": OpSpec(1, lambda lib, x: x.reshape(-1)),
    "unsqueeze": OpSpec(1, lambda lib, x, dim: x.unsqueeze(dim), _unsqueeze),
    "squeeze": OpSpec(1, lambda lib, x, dim: x.squeeze(dim), _dim),
    "expand": OpSpec(1, lambda lib, x, shape: x.expand(*shape), _expand),
    "slice": OpSpec(1, lambda lib, x, **k: x[_slice_key(x, **k)], _slice),
    "select0": OpSpec(1, lambda lib, x: x[0]),
    "index_rows": OpSpec(1, lambda lib, x, rows: x[list(rows)], _pick),
    "gather": OpSpec(1, lambda lib, x, dim, index: lib.gather(x, dim, lib.tensor(index)), _gather),
    "cat": OpSpec(2, lambda lib, x, y, dim: lib.cat([x, y], dim), _dim),
    "stack": OpSpec(2, lambda lib, x, y: lib.stack([x, y])),
    # in-place (on the tensor itself: a view mutates its base, a saved tensor fails backward)
    "mul_": OpSpec(2, lambda lib, x, y: x.mul_(y), inplace=True),
    "add_": OpSpec(2, lambda lib, x, y: x.add_(y), inplace=True),
    "sigmoid_": OpSpec(1, lambda lib, x: x.sigmoid_(), inplace=True),
    "setitem": OpSpec(2, lambda lib, x, y, **k: x.__setitem__(_slice_key(x, **k), y[..., :1]),
                      _set_slice, inplace=True),
    "clone": OpSpec(1, lambda lib, x: x.clone()),
    # more views, shape ops, reductions and indexing
    "permute": OpSpec(1, lambda lib, x, dims: x.permute(*dims), _perm),
    "flip": OpSpec(1, lambda lib, x, dim: lib.flip(x, [dim]), _dim),
    "view_flat": OpSpec(1, lambda lib, x: x.view(-1)),   # torch refuses non-contiguous input
    "t": OpSpec(1, lambda lib, x: x.t()),
    "split0": OpSpec(1, lambda lib, x, dim: lib.split(x, 1, dim)[0], _dim),
    "chunk_last": OpSpec(1, lambda lib, x, dim: x.chunk(2, dim)[-1], _dim),
    "unbind0": OpSpec(1, lambda lib, x: x.unbind(0)[-1]),
    "repeat": OpSpec(1, lambda lib, x, sizes: x.repeat(*sizes), _repeat),
    "index_select": OpSpec(1, lambda lib, x, dim, index:
                           lib.index_select(x, dim, lib.tensor(index)), _index_select),
    "masked_fill": OpSpec(1, lambda lib, x: x.masked_fill(x.real > 0.2, 0.5)),
    "std": OpSpec(1, lambda lib, x, dim, keepdim: x.std(dim, keepdim=keepdim), _var_dim),
    "mean": OpSpec(1, lambda lib, x: x.mean()),
    "dot_last": OpSpec(2, lambda lib, x, y: lib.einsum("...i,...i->...", x, y)),
    "matvec": OpSpec(2, lambda lib, x, y: x @ y[(0,) * (y.dim() - 1)] if y.dim() else x @ y),
    "detach": OpSpec(1, lambda lib, x: x.detach() * 1.0),
    "no_grad_mul": OpSpec(2, lambda lib, x, y: _no_grad(lib, lambda: x * y)),
    # more in-place ops
    "div_": OpSpec(2, lambda lib, x, y: x.div_(y.abs() + 0.5), inplace=True),
    "exp_": OpSpec(1, lambda lib, x: x.mul_(0.5).exp_(), inplace=True),
    "clamp_": OpSpec(1, lambda lib, x: x.clamp_(-0.5, 0.6), inplace=True),
    "neg_": OpSpec(1, lambda lib, x: x.neg_(), inplace=True),
    "zero_": OpSpec(1, lambda lib, x: x.zero_(), inplace=True),
    "copy_": OpSpec(2, lambda lib, x, y: x.copy_(y), inplace=True),
}


def _no_grad(lib, compute):
    with lib.no_grad():
        return compute()

