"""Floating-point operation counts for the ops whose cost they describe (torch's with_flops)."""
from __future__ import annotations

import math


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _broadcast_numel(shapes) -> int:
    ndim = max(len(s) for s in shapes)
    dims = [max((s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1) for s in shapes)
            for i in range(ndim)]
    return _numel(dims)


def _matmul(a, b) -> int:
    if len(a) == 1 and len(b) == 1:
        return 2 * a[0]
    m = a[-2] if len(a) > 1 else 1
    k = a[-1]
    n = b[-1] if len(b) > 1 else 1
    batch = _numel(a[:-2]) if len(a) >= len(b) else _numel(b[:-2])
    return 2 * batch * m * k * n


_ELEMENTWISE = {"add", "sub", "mul", "div", "neg", "exp", "relu"}


def count_flops(name: str, shapes: list | None) -> int:
    """FLOPs of one call of op ``name`` (e.g. ``gradkit::matmul``) on inputs of ``shapes``."""
    if not shapes:
        return 0
    op = name.rpartition("::")[2]
    tensors = [s for s in shapes if s]
    if op in ("matmul", "bmm", "mm") and len(shapes) >= 2 and shapes[0] and shapes[1]:
        return _matmul(shapes[0], shapes[1])
    if op == "addmm" and len(shapes) >= 3 and shapes[1] and shapes[2]:
        return _matmul(shapes[1], shapes[2])  # (input, mat1, mat2): the add is not counted
    if op in _ELEMENTWISE and tensors:
        return _broadcast_numel(tensors)
    return 0
