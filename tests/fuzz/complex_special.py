"""Complex infinities, NaNs and signed zeros through gradkit and torch, part by part.

    python tests/fuzz/complex_special.py [--only mul,dot] [--dtypes complex64,complex128]
                                         [--size 2] [--scalar] [--no-grads] [--show 3]

The grid is every complex number whose real and imaginary parts are among ``PARTS`` (49
values). Unary ops read the grid, binary ops every pair of it (2401), reductions each pair as
one row of two, products each pair as the first entries of two operands of ``--size`` whose
other entries are finite (``--size 64``: the sizes at which torch's BLAS changes kernel).
``--scalar`` runs the elementwise ops one element at a time too (torch's scalar loop, not its
vector one). Values and the gradients of ``out.backward(ones)`` are compared part by part:
NaN where NaN, the same infinity, the sign of a zero; finite numbers within rounding. Prints
each op's differing grid points (``--show`` of them) and exits 1 when any differ.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import gradkit  # noqa: E402

INF, NAN = float("inf"), float("nan")
PARTS = (0.0, -0.0, 1.0, -1.5, INF, -INF, NAN)
GRID = [complex(re, im) for re in PARTS for im in PARTS]
# the finite fillers of the products' other entries
FILL = (1 + 2j, 0.5 - 1j, -0.75 + 0.25j, 2 - 0.5j)


UNARY = {
    "neg": lambda lib, x: -x, "reciprocal": lambda lib, x: lib.reciprocal(x),
    "sqrt": lambda lib, x: lib.sqrt(x), "exp": lambda lib, x: lib.exp(x),
    "log": lambda lib, x: lib.log(x), "abs": lambda lib, x: lib.abs(x),
    "sgn": lambda lib, x: lib.sgn(x), "square": lambda lib, x: x * x,
    "pow2": lambda lib, x: x ** 2, "pow_half": lambda lib, x: x ** 0.5,
    "pow_neg1": lambda lib, x: x ** -1, "rsqrt": lambda lib, x: lib.rsqrt(x),
}
BINARY = {
    "add": lambda lib, x, y: x + y, "sub": lambda lib, x, y: x - y,
    "mul": lambda lib, x, y: x * y, "div": lambda lib, x, y: x / y,
    "pow": lambda lib, x, y: x ** y,
}
REDUCE = {
    "sum": lambda lib, x: x.sum(-1), "mean": lambda lib, x: x.mean(-1),
    "prod": lambda lib, x: x.prod(-1), "cumprod": lambda lib, x: x.cumprod(-1),
    "cumsum": lambda lib, x: x.cumsum(-1),
}
# products: (operand shapes from size n, the call); the special values go to entry 0 of each
PRODUCTS = {
    "dot": ((lambda n: (n,), lambda n: (n,)), lambda lib, x, y: lib.dot(x, y)),
    "vdot": ((lambda n: (n,), lambda n: (n,)), lambda lib, x, y: lib.vdot(x, y)),
    "matmul_1d": ((lambda n: (n,), lambda n: (n,)), lambda lib, x, y: x @ y),
    "einsum_dot": ((lambda n: (n,), lambda n: (n,)), lambda lib, x, y: lib.einsum("i,i->", x, y)),
    "inner": ((lambda n: (n,), lambda n: (n,)), lambda lib, x, y: lib.inner(x, y)),
    "outer": ((lambda n: (n,), lambda n: (n,)), lambda lib, x, y: lib.outer(x, y)),
    "mv": ((lambda n: (n, n), lambda n: (n,)), lambda lib, x, y: lib.mv(x, y)),
    "vm": ((lambda n: (n,), lambda n: (n, n)), lambda lib, x, y: x @ y),
    "mm": ((lambda n: (n, n), lambda n: (n, n)), lambda lib, x, y: lib.mm(x, y)),
    "mm_t": ((lambda n: (n, n), lambda n: (n, n)), lambda lib, x, y: x.t() @ y.t()),
    "bmm": ((lambda n: (2, n, n), lambda n: (2, n, n)), lambda lib, x, y: lib.bmm(x, y)),
    "matmul_batched": ((lambda n: (2, n, n), lambda n: (n, n)), lambda lib, x, y: x @ y),
    "einsum_mm": ((lambda n: (n, n), lambda n: (n, n)),
                  lambda lib, x, y: lib.einsum("ij,jk->ik", x, y)),
    "tensordot": ((lambda n: (n, n), lambda n: (n, n)),
                  lambda lib, x, y: lib.tensordot(x, y, dims=1)),
    "addmm": ((lambda n: (n, n), lambda n: (n, n)),
              lambda lib, x, y: lib.addmm(lib.zeros(x.shape[0], y.shape[1], dtype=x.dtype), x, y)),
    "addmv": ((lambda n: (n, n), lambda n: (n,)),
              lambda lib, x, y: lib.addmv(lib.zeros(x.shape[0], dtype=x.dtype), x, y)),
    "baddbmm": ((lambda n: (2, n, n), lambda n: (2, n, n)),
                lambda lib, x, y: lib.baddbmm(lib.zeros(2, n_rows(x), y.shape[-1],
                                                        dtype=x.dtype), x, y)),
}


def n_rows(x) -> int:
    return x.shape[-2]


def _operand(shape: tuple, value: complex, dtype, offset: int) -> np.ndarray:
    """A ``shape`` array of finite fillers with ``value`` at its first entry."""
    size = int(np.prod(shape))
    out = np.array([FILL[(i + offset) % len(FILL)] for i in range(size)], dtype=dtype)
    out[0] = value
    return out.reshape(shape)


def cases(kind: str, dtype) -> list:
    """``(label, [arrays])`` of one op kind over the grid."""
    grid = np.array(GRID, dtype=dtype)
    pairs_x = np.repeat(grid, len(GRID))
    pairs_y = np.tile(grid, len(GRID))
    if kind == "unary":
        return [("grid", [grid])]
    if kind == "binary":
        return [("pairs", [pairs_x, pairs_y])]
    return [("rows", [np.stack([pairs_x, pairs_y], axis=-1)])]


def _parts_differ(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    """Where two arrays differ in a NaN, an infinity, a zero's sign or a finite value."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return np.ones(max(a.size, b.size, 1), bool)
    differ = np.zeros(a.shape, bool)
    for part in ((np.real, np.imag) if a.dtype.kind == "c" or b.dtype.kind == "c" else (np.real,)):
        p, q = part(a).astype(float), part(b).astype(float)
        nan = np.isnan(p) | np.isnan(q)
        differ |= np.isnan(p) != np.isnan(q)
        infinite = ~nan & (np.isinf(p) | np.isinf(q))
        differ |= infinite & (p != q)
        zeros = (p == 0) & (q == 0)
        differ |= zeros & (np.signbit(p) != np.signbit(q))
        close = ~nan & ~infinite & ~zeros  # (rounding noise for an exact 0 is no difference)
        with np.errstate(all="ignore"):
            differ |= close & (np.abs(p - q) > rtol * np.maximum(np.abs(q), 1.0))
    return differ


def _run(lib, fn, arrays: list, grads: bool):
    """The op's value and its inputs' gradients (``out.backward(ones)``) in ``lib``."""
    leaves = [lib.tensor(a.copy(), requires_grad=grads) for a in arrays]
    try:
        out = fn(lib, *leaves)
    except Exception as e:  # noqa: BLE001 - both may refuse
        return type(e).__name__, []
    values = out.detach().numpy().copy()
    if not grads:
        return values, []
    try:
        out.backward(lib.ones_like(out))
    except Exception as e:  # noqa: BLE001
        return values, [type(e).__name__]
    return values, [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


def compare(fn, arrays: list, grads: bool, rtol: float) -> list:
    """``(what, mask)`` for each of value and gradients where torch and gradkit differ."""
    with np.errstate(all="ignore"):
        theirs = _run(torch, fn, arrays, grads)
        mine = _run(gradkit, fn, arrays, grads)
    found = []
    for what, a, b in [("value", theirs[0], mine[0])] + [
            (f"grad{i}", a, b) for i, (a, b) in enumerate(zip(theirs[1], mine[1]))]:
        if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
            if not (a is None and b is None) and (type(a) is not type(b) or a != b):
                found.append((what, f"{a!r:.40} vs {b!r:.40}", None))
            continue
        mask = _parts_differ(a, b, rtol)
        if mask.any():
            found.append((what, (a, b), mask))
    return found


def scan_elementwise(name: str, fn, kind: str, dtype, grads: bool, scalar: bool) -> list:
    """Differences of an elementwise op or a reduction: ``(label, inputs, torch, gradkit)``."""
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    out = []
    for _, arrays in cases(kind, dtype):
        runs = [arrays] if not scalar else [
            [a[i:i + 1] for a in arrays] for i in range(len(arrays[0]))]
        for arrays_i in runs:
            for what, pair, mask in compare(fn, arrays_i, grads, rtol):
                if mask is None:
                    out.append((f"{name} {what}", "all", *pair.split(" vs ")))
                    continue
                rows = np.argwhere(mask.reshape(mask.shape[0], -1).any(-1))[:, 0]
                out.extend((f"{name} {what}", [a[r] for a in arrays_i], pair[0][r], pair[1][r])
                           for r in rows)
    return out


def scan_product(name: str, dtype, grads: bool, size: int, grid=GRID) -> list:
    """Differences of a product over the pairs of ``grid`` (one call per pair)."""
    (shape_x, shape_y), fn = PRODUCTS[name]
    rtol = 1e-4 if dtype == np.complex64 else 1e-10
    out = []
    for a in grid:
        for b in grid:
            arrays = [_operand(shape_x(size), a, dtype, 0), _operand(shape_y(size), b, dtype, 1)]
            for what, pair, mask in compare(fn, arrays, grads, rtol):
                out.append((f"{name} {what}", [a, b], *(pair.split(" vs ") if mask is None else
                                                         (x[mask] for x in pair))))
    return out


def kinds(only: set) -> list:
    """``(name, kind)`` of the ops chosen (all when ``only`` is empty)."""
    table = [(n, "unary") for n in UNARY] + [(n, "binary") for n in BINARY] + \
        [(n, "reduce") for n in REDUCE] + [(n, "product") for n in PRODUCTS]
    return [(n, k) for n, k in table if not only or n in only]


def scan(only: set, dtypes: list, grads: bool = True, size: int = 2,
         scalar: bool = False) -> dict:
    """``{(op, dtype): [differences]}`` of the ops chosen."""
    found = {}
    for dtype in dtypes:
        for name, kind in kinds(only):
            if kind == "product":
                diffs = scan_product(name, dtype, grads, size)
            else:
                fn = {**UNARY, **BINARY, **REDUCE}[name]
                diffs = scan_elementwise(name, fn, kind, dtype, grads, scalar)
            found[(name, np.dtype(dtype).name)] = diffs
    return found


def grid_points(only: set, dtypes: list) -> int:
    """How many grid points (op, dtype, inputs) a scan compares."""
    sizes = {"unary": len(GRID), "binary": len(GRID) ** 2, "reduce": len(GRID) ** 2,
             "product": len(GRID) ** 2}
    return len(dtypes) * sum(sizes[k] for _, k in kinds(only))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--dtypes", default="complex64,complex128")
    parser.add_argument("--size", type=int, default=2)
    parser.add_argument("--scalar", action="store_true")
    parser.add_argument("--no-grads", action="store_true")
    parser.add_argument("--show", type=int, default=3)
    args = parser.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    dtypes = [np.dtype(d).type for d in args.dtypes.split(",")]
    found = scan(only, dtypes, not args.no_grads, args.size, args.scalar)
    total = 0
    for (name, dtype), diffs in found.items():
        points = {(d[0], repr(d[1])) for d in diffs}
        total += len(points)
        if diffs:
            print(f"{name} {dtype}: {len(points)} differing")
            for d in diffs[:args.show]:
                print(f"   {d[0]} at {d[1]}: torch {d[2]!r} gradkit {d[3]!r}")
    print(f"{grid_points(only, dtypes)} grid points, {total} differing")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
