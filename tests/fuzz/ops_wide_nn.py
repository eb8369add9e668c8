"""The wide op table, part 2: public reductions, linear algebra, indexing, shape and
nn.functional spellings no other table draws (nuclear_norm, lu_factor_ex, trapz, bincount,
index_put_, addmv_, split_with_sizes, broadcast_tensors, the *_with_indices pools, 3-d
unpool / lp_pool / conv_transpose, conv_tbc, the functional RNN cells, segment_reduce).

Matrices come from ``ops_breadth``'s helpers (first ``n * n`` values, shifted or made positive
definite); images from ``_layout`` (the input's values as ``(1, C, ...)``); weights from the
second input's values, tiled. A tuple result gives one of its tensors (a view stays a view)
or its parts joined.
"""
from __future__ import annotations

import math

import numpy as np

from .ops_breadth import (
    _hermitian_pd, _joined, _layout, _n, _real, _shifted, _tiled, split_cut)
from .ops_core import OpSpec, _dim
from .ops_wide import _ints


def _mat_params(draw, shapes):
    p = _n(draw, shapes)
    return p and {**p, "flag": draw.boolean()}


def _lu_factor_ex(lib, x, n, flag):
    lu, pivots, info = lib.linalg.lu_factor_ex(_shifted(lib, x, n))
    return _joined(lib, (lu, pivots.to(lu.dtype), info.to(lu.dtype)))


def _ldl_factor_ex(lib, x, n, flag):
    """torch has no derivative of ldl_factor_ex: a program through it raises in backward."""
    ld, pivots, info = lib.linalg.ldl_factor_ex(_hermitian_pd(lib, x, n), hermitian=flag)
    return _joined(lib, (ld, pivots.to(ld.dtype), info.to(ld.dtype)))


def _dims2(draw, shapes):
    nd = len(shapes[0])
    dims = tuple(d - nd if draw.boolean() else d for d in range(nd) if draw.boolean())[:2]
    return {"dim": dims or ((draw.integer(-1, 0),) if nd else (0,)), "keepdim": draw.boolean()}


def _trapz_params(draw, shapes):
    p = _dim(draw, shapes)
    return p and {**p, "how": draw.choice(("dx", "x", "default"))}


def _trapz(lib, x, y, dim, how):
    if how == "x":
        return lib.trapz(x, y.to(x.dtype) if y.is_floating_point() else y, dim=dim)
    return lib.trapz(x, dx=0.5, dim=dim) if how == "dx" else lib.trapz(x, dim=dim)


def _bincount(lib, x, y, weighted, minlength):
    counts = _ints(lib, x).abs().reshape(-1)
    weights = _tiled(y, tuple(counts.shape)) if weighted else None
    return lib.bincount(counts, weights, minlength)


def _addmv_params(draw, shapes):
    if len(shapes[0]) != 1:
        return None
    return {"m": draw.integer(0, 2), "beta": draw.choice((1, 0, 0.5)),
            "alpha": draw.choice((1, -1, 2.5))}


def _addmv_(lib, x, y, m, beta, alpha):
    mat = _tiled(y, (x.shape[0], m)).to(x.dtype) if y.numel() else lib.ones(
        x.shape[0], m, dtype=x.dtype)
    return x.addmv_(mat, mat[0] if x.shape[0] else lib.ones(m, dtype=x.dtype),
                    beta=beta, alpha=alpha)


def _index_put_params(draw, shapes):
    if not shapes[0] or not shapes[0][0]:
        return None
    n = shapes[0][0]
    return {"rows": [draw.integer(-n, n - 1) for _ in range(draw.integer(1, 3))],
            "accumulate": draw.boolean(), "mask": draw.chance(0.3)}


def _index_put_(lib, x, y, rows, accumulate, mask):
    if mask:
        return x.index_put_((x.real > 0,) if x.is_complex() else (x > 0,),
                            _tiled(y, (1,)).to(x.dtype), accumulate)
    values = _tiled(y, (len(rows),) + tuple(x.shape[1:])).to(x.dtype) if y.numel() else y
    return x.index_put_((lib.tensor(rows),), values, accumulate)


def _split_params(draw, shapes):
    cut = split_cut(draw, shapes)
    if cut is None:
        return None
    p, n, first = cut
    return {**p, "sizes": [first, n - first], "k": draw.integer(0, 1)}


def _sections_params(draw, shapes):
    return {"kind": draw.choice(("vsplit", "dsplit")), "k": draw.integer(0, 1),
            "sections": draw.choice((1, 2, [1], [0, 2], [2, 1]))}


def _unflatten_params(draw, shapes):
    p = _dim(draw, shapes)
    if p is None:
        return None
    n = shapes[0][p["dim"]]
    sizes = draw.choice(((n, 1), (1, n), (-1, 1), (1, -1), (n,)))
    return {**p, "sizes": sizes}


def _cat_params(draw, shapes):
    return {"kind": draw.choice(("row_stack", "concat", "concatenate")),
            "dim": draw.integer(-1, 0)}


def _stacked(lib, x, y, kind, dim):
    if kind == "row_stack":
        return lib.row_stack((x, y))
    return getattr(lib, kind)([x, y], dim=dim)


def _pool_params(draw, shapes):
    kind = draw.choice(("max_pool", "adaptive_max_pool", "max_unpool3d", "lp_pool3d"))
    d = 3 if kind in ("max_unpool3d", "lp_pool3d") else draw.integer(1, 3)
    kernel = draw.integer(1, 2)
    return {"kind": kind, "d": d, "shape": _layout(shapes[0], d, draw.integer(1, 2)),
            "kernel": kernel, "stride": draw.choice((None, 1, 2)), "ceil": draw.boolean(),
            "size": draw.integer(1, 3), "norm": draw.choice((1, 2, 1.5, math.inf))}


def _pool(lib, x, kind, d, shape, kernel, stride, ceil, size, norm):
    nnf, image = lib.nn.functional, _real(x).reshape(shape)
    if kind == "lp_pool3d":
        return nnf.lp_pool3d(image.abs() + 0.5, norm, kernel, stride, ceil)
    if kind == "adaptive_max_pool":
        out = getattr(nnf, f"adaptive_max_pool{d}d_with_indices")(image, (size,) * d)
    else:
        out = getattr(nnf, f"max_pool{d}d_with_indices")(image, kernel, stride, 0, 1, ceil)
    if kind != "max_unpool3d":
        return out[0] * 1 + out[1]
    return nnf.max_unpool3d(out[0], out[1], kernel, stride, 0, None if ceil else shape[2:])


def _conv_params(draw, shapes):
    if not int(np.prod(shapes[0])) or not int(np.prod(shapes[1])):
        return None
    return {"kind": draw.choice(("tbc", "transpose3d", "shuffle")), "c": draw.integer(1, 2),
            "k": draw.integer(1, 2), "stride": draw.integer(1, 2), "pad": draw.integer(0, 1),
            "groups": draw.integer(1, 2), "bias": draw.boolean()}


def _conv(lib, x, y, kind, c, k, stride, pad, groups, bias):
    nnf, t = lib.nn.functional, _real(x)
    if kind == "shuffle":
        image = t.reshape(_layout(t.shape, 1, 2 * groups))
        return nnf.native_channel_shuffle(image, groups if image.shape[1] % groups == 0 else 1)
    if kind == "tbc":
        seq = t.reshape(-1, 1, c) if t.numel() % c == 0 else t.reshape(-1, 1, 1)
        c_in = seq.shape[-1]
        weight = _tiled(y, (k, c_in, 2)).to(t.dtype)
        return lib.conv_tbc(seq, weight, _tiled(y, (2,)).to(t.dtype), pad)
    image = t.reshape(_layout(t.shape, 3, groups * c))
    g = groups if image.shape[1] % groups == 0 else 1
    weight = _tiled(y, (image.shape[1], 2, k, k, k)).to(t.dtype)
    b = _tiled(y, (2 * g,)).to(t.dtype) if bias else None
    return nnf.conv_transpose3d(image, weight, b, stride, pad, stride - 1, g)


_CELLS = {"rnn_tanh_cell": 1, "rnn_relu_cell": 1, "gru_cell": 3, "lstm_cell": 4}


def _cell_params(draw, shapes):
    if not int(np.prod(shapes[0])) or not int(np.prod(shapes[1])):
        return None
    return {"kind": draw.choice(tuple(_CELLS)), "size": draw.integer(1, 3),
            "hidden": draw.integer(1, 2), "batch": draw.choice((None, 1, 2)),
            "bias": draw.boolean()}


def _cell(lib, x, y, kind, size, hidden, batch, bias):
    """One step of torch's functional RNN cell on weights tiled from the inputs' values."""
    gates, lead, dtype = _CELLS[kind] * hidden, (batch,) if batch else (), _real(x).dtype
    weights = (_tiled(y, (gates, size)).to(dtype) * 0.5, _tiled(x, (gates, hidden)) * 0.5)
    biases = (_tiled(x, (gates,)), _tiled(y, (gates,)).to(dtype)) if bias else (None, None)
    state = _tiled(y, (*lead, hidden)).to(dtype)
    if kind == "lstm_cell":
        state = (state, _tiled(x, (*lead, hidden)))
    out = getattr(lib, kind)(_tiled(x, (*lead, size)), state, *weights, *biases)
    return _joined(lib, out) if kind == "lstm_cell" else out


def _segment_params(draw, shapes):
    if not shapes[0]:
        return None
    n = shapes[0][0]
    cut = draw.integer(0, n)
    return {"reduce": draw.choice(("sum", "mean", "max", "min", "prod")),
            "lengths": [cut, 0, n - cut] if draw.boolean() else [n],
            "initial": draw.choice((None, 0.5))}


def _segment(lib, x, reduce, lengths, initial):
    return lib.segment_reduce(_real(x), reduce, lengths=lib.tensor(lengths), initial=initial)


WIDE_NN_OPS: dict[str, OpSpec] = {
    "w_nuclear_norm": OpSpec(1, lambda lib, x, n, flag: lib.nuclear_norm(
        _shifted(lib, x, n), keepdim=flag), _mat_params),
    "w_frobenius_norm": OpSpec(1, lambda lib, x, dim, keepdim: lib.frobenius_norm(
        x, dim, keepdim), _dims2),
    "w_matrix_rank": OpSpec(1, lambda lib, x, n, flag: x + lib.matrix_rank(
        _shifted(lib, x, n)), _mat_params),
    "w_lu_factor_ex": OpSpec(1, _lu_factor_ex, _mat_params),
    "w_ldl_factor_ex": OpSpec(1, _ldl_factor_ex, _mat_params),
    "w_trapz": OpSpec(2, _trapz, _trapz_params),
    "w_bincount": OpSpec(2, _bincount, lambda draw, shapes: {
        "weighted": draw.boolean(), "minlength": draw.integer(0, 3)}),
    "w_ger": OpSpec(2, lambda lib, x, y: lib.ger(x.reshape(-1), y.reshape(-1))),
    "w_addmv_": OpSpec(2, _addmv_, _addmv_params, inplace=True),
    "w_index_put_": OpSpec(2, _index_put_, _index_put_params, inplace=True),
    "w_split_with_sizes": OpSpec(1, lambda lib, x, dim, sizes, k: x.split_with_sizes(
        sizes, dim)[k], _split_params),
    "w_sections": OpSpec(1, lambda lib, x, kind, k, sections: getattr(lib, kind)(
        x, sections)[k], _sections_params),
    "w_unflatten": OpSpec(1, lambda lib, x, dim, sizes: x.unflatten(dim, sizes),
                          _unflatten_params),
    "w_broadcast_tensors": OpSpec(2, lambda lib, x, y, k: lib.broadcast_tensors(x, y)[k],
                                  lambda draw, shapes: {"k": draw.integer(0, 1)}),
    "w_stacked": OpSpec(2, _stacked, _cat_params),
    "w_pool": OpSpec(1, _pool, _pool_params),
    "w_conv": OpSpec(2, _conv, _conv_params),
    "w_cell": OpSpec(2, _cell, _cell_params),
    "w_segment_reduce": OpSpec(1, _segment, _segment_params),
}
