"""Floating-point operation counts of the ops torch's profiler counts (with_flops): matrix
products (``mm``/``addmm``/``bmm``/``baddbmm``, 2·m·k·n) and ``add``/``mul`` (one per element
of the first input); torch counts no other op (a matrix-vector or vector product included)."""
from __future__ import annotations

import math


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _matmul(a, b) -> int:
    if len(b) == 1:  # torch runs mv or dot, which it does not count
        return 0
    m = a[-2] if len(a) > 1 else 1
    k = a[-1]
    n = b[-1]
    batch = _numel(a[:-2]) if len(a) >= len(b) else _numel(b[:-2])
    return 2 * batch * m * k * n


_ELEMENTWISE = {"add", "mul"}


def count_flops(name: str, shapes: list | None) -> int:
    """FLOPs of one call of op ``name`` (e.g. ``gradkit::matmul``) on inputs of ``shapes``."""
    if not shapes:
        return 0
    op = name.rpartition("::")[2]
    if op in ("addmm", "baddbmm") and len(shapes) >= 3 and len(shapes[1]) >= 2 \
            and len(shapes[2]) >= 2:  # torch.addmm(input, mat1, mat2): mat1 @ mat2
        return _matmul(shapes[1], shapes[2])
    if op in ("matmul", "bmm", "mm") and len(shapes) >= 2 and shapes[0] and shapes[1]:
        return _matmul(shapes[0], shapes[1])
    if op == "linear" and len(shapes) >= 2 and shapes[0] and shapes[1]:
        x, w = shapes[0], shapes[1]  # x @ w.T (+ bias): w is (out, in)
        return 2 * _numel(x[:-1]) * x[-1] * w[0]  # the bias add is not counted, as in torch
    if op in _ELEMENTWISE:
        return _numel(shapes[0])  # torch's: the first input's elements, broadcast or not
    return 0
