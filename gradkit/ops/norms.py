"""Vector p-norms (what ``F.normalize`` and ``clip_grad_norm_`` measure with)."""
from __future__ import annotations

import math

from gradkit.ops._op import op
from gradkit.ops.elementwise import abs, sign, where
from gradkit.ops.reduction import axes, expand_back, sum


@op(save=("x", "result"))
def vector_norm(xp, x, ord=2, dim=None, keepdim=False):  # noqa: A002 - torch's name
    """``sum(|x|**ord) ** (1/ord)`` along ``dim`` (all dims by default); ord may be ±inf or 0."""
    if x.dtype.kind not in "fV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_torch_type_name(x.dtype)}")
    a = axes(dim, x.ndim)
    magnitude = xp.abs(x)
    if ord == math.inf:
        return xp.amax(magnitude, axis=a, keepdims=keepdim)
    if ord == -math.inf:
        return xp.amin(magnitude, axis=a, keepdims=keepdim)
    if ord == 0:
        return xp.sum(magnitude != 0, axis=a, keepdims=keepdim).astype(x.dtype)
    if ord == 1:
        return xp.sum(magnitude, axis=a, keepdims=keepdim)
    if ord == 2:
        return xp.sqrt(xp.sum(magnitude * magnitude, axis=a, keepdims=keepdim))
    return xp.sum(magnitude ** ord, axis=a, keepdims=keepdim) ** (1.0 / ord)


def _torch_type_name(np_dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(str(np_dtype), str(np_dtype))


def _slope(x, out, ord, dim, keepdim):
    """d norm / d x, as torch defines it: 0 where the norm is 0, ties of ±inf norms share."""
    n = expand_back(out, tuple(x.shape), dim, keepdim)
    if ord == 0:
        return x * 0
    if ord == 1:
        return sign(x)
    if ord in (math.inf, -math.inf):
        ties = abs(x) == n
        count = expand_back(sum(ties, dim, keepdim), tuple(x.shape), dim, keepdim)
        return where(ties, sign(x) / count, 0.0)
    zero = n == 0
    safe_n = where(zero, 1.0, n)  # no 0/0 (and no NaN in a double backward) where n is 0
    if ord == 2:
        return where(zero, 0.0, x / safe_n)
    magnitude = abs(x)
    powered = where(magnitude == 0, 0.0, magnitude) ** (ord - 1) if ord >= 1 else \
        where(magnitude == 0, math.inf, magnitude) ** (ord - 1)
    return where(zero, 0.0, sign(x) * powered / safe_n ** (ord - 1))


vector_norm.defvjp(lambda g, x, out, ord, dim, keepdim:
                   expand_back(g, tuple(x.shape), dim, keepdim) * _slope(x, out, ord, dim, keepdim))
vector_norm.defjvp(lambda t, x, out, ord, dim, keepdim:
                   sum(t * _slope(x, out, ord, dim, keepdim), dim, keepdim))
