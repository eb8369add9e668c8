"""Views, in-place writes through views and on bases, hooks and retain_grad.

Every view op here returns a tensor sharing memory with its input; the in-place ops write
through whatever tensor they get (a base, a view of it, a view of a view), so a program mixes
both orders. Hooks change the gradient (``g * 2``, ``g + 1``) or only look at it.
"""
from __future__ import annotations

from .ops_core import OpSpec


def _nd(shapes):
    return len(shapes[0])


def _strided(draw, shapes):
    """A basic-indexing key: ints, slices (negative bounds, steps), None and Ellipsis."""
    key, dims = [], list(shapes[0])
    if draw.chance(0.2):
        key.append(("ellipsis",))
        dims = dims[-1:] if dims and draw.boolean() else []
    for n in dims[:draw.integer(0, len(dims))]:
        kind = draw.choice(("int", "slice", "slice", "none"))
        if kind == "int":
            key.append(("int", draw.integer(-n, n - 1) if n else 0))
        elif kind == "slice":
            key.append(("slice", draw.integer(-n - 1, n), draw.choice((None, n, -1, 1)),
                        draw.choice((None, 1, 2, 3))))
        else:
            key.append(("none",))
    return {"key": tuple(key)}


def _view_shape(draw, shapes):
    """view/reshape to a shape with the same number of elements (split or merged dims)."""
    shape = list(shapes[0])
    if shape and draw.boolean():
        return {"shape": (-1,) + tuple(shape[2:])} if len(shape) >= 2 else {"shape": (1, -1)}
    return {"shape": tuple(shape[::-1]) if draw.boolean() else (-1,)}


def _scalar(draw, shapes):
    return {"value": draw.choice((2, -1, 0.5, -1.5, True, 1e-3))}


def _clamp_bounds(draw, shapes):
    lo = draw.choice((None, -0.5, 0, -1))
    return {"lo": lo, "hi": draw.choice((0.3, 1, None) if lo is not None else (0.3, 1))}


def _hook(draw, shapes):
    return {"kind": draw.choice(("double", "plus_one", "observe", "negate"))}


def _broadcast_copy(draw, shapes):
    return {"reduce": draw.boolean()}


def build_key(lib, items):
    """A torch-style indexing key from its plain description (see ``ops_indexing``)."""
    out = []
    for item in items:
        kind, *rest = item
        if kind == "int":
            out.append(rest[0])
        elif kind == "slice":
            out.append(slice(*rest))
        elif kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        elif kind == "bool":
            out.append(rest[0])
        elif kind == "list":
            out.append(list(rest[0]))
        elif kind == "tensor":
            out.append(lib.tensor(rest[0], dtype=getattr(lib, rest[1])))
        else:
            raise ValueError(f"unknown index kind {kind}")
    return tuple(out)


_HOOKS = {
    "double": lambda g: g * 2,
    "plus_one": lambda g: g + 1,
    "observe": lambda g: None,
    "negate": lambda g: -g,
}


def _register(x, kind):
    x.register_hook(_HOOKS[kind])
    return x


def _retain(x):
    x.retain_grad()
    return x


def _copy_from(lib, x, y, reduce):
    # reduce: copy a 0-d (or broadcast) source, else the whole other tensor
    return x.copy_(y.sum() if reduce else y)


def _as_complex(lib, x):
    """A complex view of x's memory: of its (re, im) pairs when complex, else of its last dim
    (torch refuses one not of size 2, stride 1)."""
    return lib.view_as_complex(lib.view_as_real(x) if x.is_complex() else x)


def _clamp_(x, lo, hi):
    return x.clamp_(lo, hi)


VIEW_OPS: dict[str, OpSpec] = {
    "v_basic_index": OpSpec(1, lambda lib, x, key: x[build_key(lib, key)], _strided),
    "v_view": OpSpec(1, lambda lib, x, shape: x.view(*shape), _view_shape),
    "v_reshape": OpSpec(1, lambda lib, x, shape: x.reshape(*shape), _view_shape),
    "v_squeeze_all": OpSpec(1, lambda lib, x: x.squeeze()),
    "v_view_as": OpSpec(2, lambda lib, x, y: x.view_as(y)),
    "v_expand_as": OpSpec(2, lambda lib, x, y: x.expand_as(y)),
    "v_view_as_real": OpSpec(1, lambda lib, x: lib.view_as_real(x)),
    "v_view_as_complex": OpSpec(1, _as_complex),
    "i_add_scalar_": OpSpec(1, lambda lib, x, value: x.add_(value), _scalar, inplace=True),
    "i_mul_scalar_": OpSpec(1, lambda lib, x, value: x.mul_(value), _scalar, inplace=True),
    "i_sub_": OpSpec(2, lambda lib, x, y: x.sub_(y, alpha=2), inplace=True),
    "i_iadd": OpSpec(2, lambda lib, x, y: x.__iadd__(y), inplace=True),
    "i_imul": OpSpec(2, lambda lib, x, y: x.__imul__(y), inplace=True),
    "i_clamp_": OpSpec(1, lambda lib, x, lo, hi: _clamp_(x, lo, hi), _clamp_bounds,
                       inplace=True),
    "i_copy_": OpSpec(2, _copy_from, _broadcast_copy, inplace=True),
    "i_fill_": OpSpec(1, lambda lib, x, value: x.fill_(value), _scalar, inplace=True),
    "i_masked_fill_": OpSpec(1, lambda lib, x: x.masked_fill_(x.real > 0, -2.0), inplace=True),
    "i_pow_": OpSpec(1, lambda lib, x: x.pow_(2), inplace=True),
    "i_tanh_": OpSpec(1, lambda lib, x: x.tanh_(), inplace=True),
    "i_detach_": OpSpec(1, lambda lib, x: x.detach_(), inplace=True),
    "i_requires_grad_": OpSpec(1, lambda lib, x: x.requires_grad_(), same=True),
    "hook": OpSpec(1, lambda lib, x, kind: _register(x, kind), _hook, same=True),
    "retain_grad": OpSpec(1, lambda lib, x: _retain(x), same=True),
}


def _expand(lib, x):
    return x.expand(2, *x.shape)


# views that share memory through a conj step (the conj bit in torch; computed values kept in
# step by writes in gradkit) and the tensors sharing it without history (lane conj views)
CONJ_VIEW_OPS: dict[str, OpSpec] = {
    "v_conj": OpSpec(1, lambda lib, x: x.conj()),
    "v_imag": OpSpec(1, lambda lib, x: x.imag if x.is_complex() else x),
    "v_detach": OpSpec(1, lambda lib, x: x.detach()),
    "v_data": OpSpec(1, lambda lib, x: x.data),
    "v_expand": OpSpec(1, _expand),
    "v_diagonal": OpSpec(1, lambda lib, x: x.diagonal(0, -2, -1) if x.ndim >= 2 else x),
}
