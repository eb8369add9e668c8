"""Advanced indexing: int lists, index tensors (0-d, 1-d, 2-d; int64/int32), bool and uint8
masks, Python bools, advanced indices separated by slices, out-of-range indices; read and
written (``x[key] = value``)."""
from __future__ import annotations

import warnings

from .ops_core import OpSpec
from .ops_views import build_key


def _positions(draw, n: int, count: int, unique: bool) -> list:
    """``count`` indices into a dim of size ``n``, negative ones too; rarely one out of range."""
    if n == 0 or (unique and count > n):
        return [] if n == 0 or not draw.chance(0.1) else [0]
    if draw.chance(0.03):
        return [draw.choice((n, -n - 1))] * count
    pool = list(range(n))
    picked = []
    for _ in range(count):
        p = pool.pop(draw.integer(0, len(pool) - 1)) if unique else draw.integer(0, n - 1)
        picked.append(p - n if draw.chance(0.3) else p)
    return picked


def _mask(draw, dims: list, dtype: str) -> tuple:
    flat = [draw.boolean() for _ in range(_numel(dims))]
    values = _nest(flat if dtype == "bool" else [int(b) for b in flat], dims)
    return ("tensor", values, dtype)


def _numel(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _nest(flat: list, dims: list):
    if not dims:
        return flat[0]
    step = _numel(dims[1:])
    return [_nest(flat[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]


def advanced_key(draw, shape, unique: bool = False) -> tuple:
    """A key mixing advanced and basic indices; ``unique``: no element named twice (writes)."""
    dims, key = list(shape), []
    count = draw.integer(0, 3)          # length shared by the 1-d advanced indices
    while dims and len(key) < 4:
        n = dims[0]
        kind = draw.choice(("list", "tensor", "tensor0", "mask", "slice", "int", "none",
                            "bool", "tensor2"))
        if kind == "mask":
            k = draw.integer(1, min(2, len(dims)))
            key.append(_mask(draw, dims[:k], "uint8" if draw.chance(0.1) else "bool"))
            del dims[:k]
            continue
        if kind in ("none", "bool"):
            key.append(("none",) if kind == "none" else ("bool", draw.boolean()))
            continue
        del dims[0]
        if kind == "slice":
            key.append(("slice", draw.choice((None, 1)), None, draw.choice((None, 2))))
        elif kind == "int":
            key.append(("int", (_positions(draw, n, 1, False) or [0])[0]))
        elif kind == "tensor0":
            key.append(("tensor", (_positions(draw, n, 1, False) or [0])[0], "int64"))
        elif kind == "tensor2" and not unique:
            flat = _positions(draw, n, 2 * count, False)
            key.append(("tensor", _nest(flat, [2, count]) if len(flat) == 2 * count else flat,
                        "int64"))
        else:
            flat = _positions(draw, n, count, unique)
            key.append(("list", flat) if kind == "list" else
                       ("tensor", flat, draw.choice(("int64", "int64", "int32"))))
        if draw.chance(0.3):
            break
    return tuple(key)


def _getitem(draw, shapes):
    return {"key": advanced_key(draw, shapes[0])}


def _setitem(draw, args):
    import torch
    x = args[0]
    key = advanced_key(draw, tuple(x.shape), unique=True)
    try:
        with warnings.catch_warnings():   # uint8 masks are deprecated: that is the point
            warnings.simplefilter("ignore")
            target = tuple(x[build_key(torch, key)].shape)
    except Exception:  # noqa: BLE001 - the key is wrong for torch: keep it, an error case
        target = ()
    return {"key": key, "value": draw.choice(("scalar", "sum", "full", "full_cast")),
            "shape": target}


def _value(lib, x, y, value, shape):
    if value == "scalar":
        return -1.5 if x.is_floating_point() or x.is_complex() else 3
    total = y.sum()
    if value == "sum":
        return total
    n = _numel(shape)
    full = (lib.arange(n, dtype=lib.float64) * 0.25).reshape(shape).to(total.dtype) + total
    return full.to(x.dtype) if value == "full_cast" else full


def _setitem_run(lib, x, y, key, value, shape):
    x[build_key(lib, key)] = _value(lib, x, y, value, shape)
    return x


INDEXING_OPS: dict[str, OpSpec] = {
    "getitem": OpSpec(1, lambda lib, x, key: x[build_key(lib, key)], _getitem),
    "setitem_adv": OpSpec(2, _setitem_run, _setitem, inplace=True, wants_tensors=True),
    "take_along": OpSpec(1, lambda lib, x: x.flatten()[lib.tensor([0, -1, 0])]),
}
