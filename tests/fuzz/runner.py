"""Running a program in one library and diffing two runs.

``run`` executes a program with ``lib`` (gradkit or torch) and returns what it computed as
NumPy: the final value of every tensor it made (so a write through a view must show in its
base), which of them require grad, which are the same object, the gradients of a weighted sum
of them with respect to
the leaves (``autograd.grad`` or ``.backward()``), the ``.grad`` of tensors that called
``retain_grad()``, and second derivatives (``create_graph``); or the phase that raised.
"""
from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

# torch's own internal asserts (e.g. where() mixing complex and real in backward, or a bool
# Python number in a backward formula: "INTERNAL ASSERT FAILED ... unknown ivalue tag") are
# torch bugs, not a behaviour to copy: programs that hit one are skipped
TORCH_INTERNAL_ERRORS = ("Could this error message be improved?", "INTERNAL ASSERT FAILED")

_SPECIAL = (math.nan, math.inf, -math.inf, -0.0, 0.0)


class TorchInternalError(Exception):
    """torch failed an internal assert on this program."""


class Result(NamedTuple):
    error: tuple | None      # (phase, exception family, type name) when the program raised
    values: list             # NumPy arrays: every env slot's final value
    flags: list              # requires_grad of each env slot
    slots: list              # per env slot, which distinct tensor it is (aliasing)
    grads: list              # d loss / d leaf (None where unused), then retained .grad
    grads2: list             # d <grads, v> / d leaf with create_graph
    message: str = ""        # the error's text (not compared)


def error_family(e: BaseException) -> str:
    """Exceptions compared loosely: an index error, a type error, or any other failure."""
    if isinstance(e, LookupError):
        return "LookupError"
    if isinstance(e, TypeError):
        return "TypeError"
    return "RuntimeError"


def leaf_values(leaves: tuple, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for leaf in leaves:
        shape, dtype = leaf.shape, leaf.dtype
        if dtype == "bool":
            v = rng.uniform(0, 1, shape) < 0.5
        elif dtype.startswith(("int", "uint")):
            v = rng.integers(0 if dtype == "uint8" else -4, 6, shape)
        else:
            v = rng.uniform(-1, 1, shape)
            if dtype.startswith("complex"):
                v = v + 1j * rng.uniform(-1, 1, shape)
            if leaf.special:
                picks = rng.integers(0, len(_SPECIAL), shape)
                where = rng.uniform(0, 1, shape) < 0.4
                v = np.where(where, np.array(_SPECIAL)[picks], v)
        out.append(np.asarray(v, dtype=dtype))
    return out


def _nudged(v: np.ndarray, direction: float) -> np.ndarray:
    """v with every finite nonzero float (each part of a complex) one ulp toward
    ``direction`` (+inf or -inf)."""
    if v.dtype.kind == "c":
        return _nudged(v.real, direction) + 1j * _nudged(v.imag, direction)
    if v.dtype.kind != "f":
        return v
    return np.where(np.isfinite(v) & (v != 0), np.nextafter(v, v.dtype.type(direction)), v)


def leaf_tensors(lib, leaves: tuple, seed: int, nudge: float = 0.0) -> list:
    """The program's leaves in ``lib``; ``nudge`` (+inf or -inf): each float one ulp that way
    (how far a result moves then says how much rounding noise it carries)."""
    values = leaf_values(leaves, seed)
    if nudge:
        values = [np.asarray(_nudged(v, nudge), dtype=v.dtype) for v in values]
    return [_laid_out(lib, v, leaf.layout).requires_grad_(leaf.requires_grad)
            for v, leaf in zip(values, leaves)]


LAYOUTS = ("transposed", "stepped", "offset", "broadcast")


def _laid_out(lib, v: np.ndarray, layout: str):
    """A tensor of ``v``'s values in memory laid out as ``layout`` says: its last two dims
    swapped in memory, every other element of a wider buffer, after one element of another
    buffer, or read from one row with stride 0 (for the dims of size 1 only, so that the
    values stay ``v``'s). A layout a shape cannot take gives a contiguous tensor."""
    if layout == "transposed" and v.ndim >= 2:
        return lib.tensor(np.ascontiguousarray(np.swapaxes(v, -1, -2))).transpose(-1, -2)
    if layout == "stepped" and v.ndim >= 1:
        wide = np.repeat(v, 2, axis=-1)
        return lib.tensor(wide)[..., ::2]
    if layout == "offset":
        return lib.tensor(np.concatenate([v.ravel()[:1], v.ravel()]))[1:].view(v.shape)
    if layout == "broadcast" and 1 in v.shape:
        t = lib.tensor(v)
        return t.as_strided(v.shape, [0 if n == 1 else s for n, s in zip(v.shape, t.stride())])
    return lib.tensor(v)


def try_step(lib, spec, args, params):
    """The step's output in ``lib``, or None when it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = spec.fn(lib, *args, **params)
        except Exception:  # noqa: BLE001 - torch refuses this combination
            return None
    return args[0] if spec.inplace or spec.same else out


def _numpy(t) -> np.ndarray:
    t = t.detach()
    if hasattr(t, "resolve_conj"):  # torch: lazy conj bits and ZeroTensors need force
        return np.array(t.numpy(force=True))
    return np.array(t.numpy())


def _weights(arrays: list, seed: int) -> list:
    rng = np.random.default_rng(seed + 1)
    return [np.asarray(rng.uniform(-1, 1, a.shape) + (1j * rng.uniform(-1, 1, a.shape)
                                                       if a.dtype.kind == "c" else 0),
                       dtype=a.dtype) for a in arrays]


def _weighted_sum(lib, tensors, weights):
    total = None
    for t, w in zip(tensors, weights):
        term = (t * lib.tensor(w)).sum()
        term = term.real if term.is_complex() else term
        total = term if total is None else total + term
    return total


def _differentiable(t) -> bool:
    return bool(t.requires_grad) and (t.is_floating_point() or t.is_complex())


def _distinct(tensors: list) -> list:
    seen, out = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def run(program, lib, nudge: float = 0.0, scale: int = 0) -> Result:
    """Execute ``program`` with ``lib`` (gradkit or torch); exceptions become ``error``.
    ``nudge``: its float leaves one ulp toward +inf or -inf. ``scale``: the loss's weights
    times 2**scale, which scales every derivative by exactly that (but for underflow)."""
    from .programs import OPS
    from .transforms import run_transform
    if program.transform:
        return run_transform(program, lib, nudge)
    phase, values, flags, slots, grads, grads2 = "forward", [], [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            env = leaf_tensors(lib, program.leaves, program.seed, nudge)
            retained = []
            for k, step in enumerate(program.steps):
                phase = f"step {k} ({step.op})"
                spec = OPS[step.op]
                args = [env[i] for i in step.inputs]
                out = spec.fn(lib, *args, **step.params)
                env.append(args[0] if spec.inplace or spec.same else out)
                if step.op == "retain_grad":
                    retained.append(args[0])
            phase = "values"
            tensors = _distinct(env)
            slots = [next(i for i, t in enumerate(tensors) if t is e) for e in env]
            values = [_numpy(t) for t in env]      # per slot: aligned whatever aliases what
            flags = [bool(t.requires_grad) for t in env]
            phase = "backward"
            leaves = [t for t, leaf in zip(env, program.leaves) if leaf.requires_grad]
            outputs = [t for t in env if _differentiable(t)]   # per slot, as values
            if not outputs or not leaves:
                return Result(None, values, flags, slots, [], [])
            # a weight per slot, so they do not depend on which tensors require grad
            weights = _weights(values, program.seed)
            if scale:  # in each weight's dtype: single-precision ones may underflow to 0
                weights = [np.ldexp(w.real, scale) + 1j * np.ldexp(w.imag, scale)
                           if w.dtype.kind == "c" else np.ldexp(w, scale) for w in weights]
            loss = _weighted_sum(lib, outputs, [w for t, w in zip(env, weights)
                                                if _differentiable(t)])
            if program.backward:
                loss.backward(create_graph=program.create_graph)
                got = [t.grad for t in leaves]
            else:
                got = list(lib.autograd.grad(loss, leaves, create_graph=program.create_graph,
                                             allow_unused=True))
            got += [t.grad for t in _distinct(retained) if not t.is_leaf]
            grads = [None if g is None else _numpy(g) for g in got]
            if not program.create_graph:
                return Result(None, values, flags, slots, grads, [])
            phase = "double backward"
            present = [g for g in got if g is not None]
            # weights for every gradient, so they do not depend on which ones carry a graph
            weights = _weights([_numpy(g) for g in present], program.seed + 7)
            live = [(g, w) for g, w in zip(present, weights) if g.requires_grad]
            second = _weighted_sum(lib, [g for g, _ in live], [w for _, w in live])
            if second is not None:
                got2 = lib.autograd.grad(second, leaves, allow_unused=True)
                grads2 = [None if g is None else _numpy(g) for g in got2]
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            if any(text in str(e) for text in TORCH_INTERNAL_ERRORS):
                raise TorchInternalError(str(e)) from e
            return Result((phase, error_family(e), type(e).__name__), values, flags, slots,
                          grads, grads2, str(e))
    return Result(None, values, flags, slots, grads, grads2)


_SINGLE = (np.float32, np.complex64)


def _tolerance(dtype, single_inputs: bool = False) -> tuple:
    """Single precision's tolerance for single results, and for double results of a program
    that computed in single precision first (float32 matmul, then .double())."""
    single = single_inputs or dtype in _SINGLE
    return (2e-3, 2e-4) if single else (1e-7, 1e-9)


def _signed_zeros_differ(mine: np.ndarray, theirs: np.ndarray) -> bool:
    """A -0.0 against a 0.0 (values only: gradients' zero signs are not part of torch's API)."""
    if mine.dtype.kind != "f":
        return False
    zeros = (mine == 0) & (theirs == 0)
    return bool(np.any(np.signbit(mine[zeros]) != np.signbit(theirs[zeros])))


def _close(mine: np.ndarray, theirs: np.ndarray, rtol: float, atol: float) -> bool:
    """allclose, with NaN equal; complex numbers part by part where neither is NaN (NumPy
    would need an infinite part's partner to match exactly)."""
    if mine.dtype.kind != "c":
        return np.allclose(mine, theirs, rtol=rtol, atol=atol, equal_nan=True)
    numbers = ~np.isnan(mine) & ~np.isnan(theirs)
    return all(np.allclose(part(mine[numbers]), part(theirs[numbers]), rtol=rtol, atol=atol)
               for part in (np.real, np.imag))


def _diff(what: str, mine, theirs, single_inputs: bool = False) -> str | None:
    if mine is None or theirs is None:
        # an unused input: None and all-zero gradients are equivalent
        other = theirs if mine is None else mine
        if other is None or not np.any(other):
            return None
        return f"{what}: one side is None, the other {other}"
    if mine.shape != theirs.shape:
        return f"{what}: shape {mine.shape} != torch {theirs.shape}"
    if mine.dtype != theirs.dtype:
        return f"{what}: dtype {mine.dtype} != torch {theirs.dtype}"
    if theirs.dtype.kind in "biu":
        if not np.array_equal(mine, theirs):
            return f"{what}: values differ\n gradkit {mine!r}\n torch   {theirs!r}"
        return None
    rtol, atol = _tolerance(theirs.dtype, single_inputs)
    finite = np.isfinite(theirs)
    scale = max(1.0, float(np.abs(theirs[finite]).max())) if finite.any() else 1.0
    if not _close(mine, theirs, rtol, atol * scale) or \
            not np.array_equal(np.isnan(mine), np.isnan(theirs)):
        return f"{what}: values differ\n gradkit {mine!r}\n torch   {theirs!r}"
    if what.startswith("values") and _signed_zeros_differ(mine, theirs):
        return f"signed zero in {what}: gradkit {mine!r}\n torch   {theirs!r}"
    return None


def _unsupported(error: tuple | None, message: str) -> bool:
    """gradkit's clear "not supported": a missing method/function or operator."""
    return error is not None and (error[2] == "AttributeError" or (
        error[2] == "TypeError" and "unsupported operand type" in message))


def _error_problem(mine: tuple | None, theirs: tuple | None, unsupported: bool) -> str | None:
    if mine is None and theirs is None:
        return None
    if unsupported and (theirs is None or theirs[0] != mine[0]):
        return f"unsupported: gradkit raised {mine} (not supported), torch {theirs or 'computed'}"
    if mine is None:
        return f"missing error: torch raised {theirs}, gradkit computed"
    if theirs is None:
        return f"extra error: gradkit raised {mine}, torch computed"
    if mine[0] != theirs[0]:
        return f"error phase: gradkit {mine} != torch {theirs}"
    if mine[1] != theirs[1]:
        return f"error type: gradkit {mine} != torch {theirs}"
    return None


def compare(mine: Result, theirs: Result) -> list:
    """Every difference between gradkit's result and torch's, as ``"kind: detail"`` lines."""
    problem = _error_problem(mine.error, theirs.error, _unsupported(mine.error, mine.message))
    if problem:
        return [problem]
    problems = []
    if mine.flags != theirs.flags and mine.values and theirs.values:
        problems.append(f"requires_grad: gradkit {mine.flags} != torch {theirs.flags}")
    single = any(v.dtype in _SINGLE for v in theirs.values)
    for kind in ("values", "grads", "grads2"):
        a, b = getattr(mine, kind), getattr(theirs, kind)
        if not a or not b:
            # no second derivative on one side: torch keeps a graph through derivatives that
            # are constant (relu's mask), so its second derivatives are zeros where ours are none
            a, b = a or [None] * len(b), b or [None] * len(a)
        if len(a) != len(b):
            problems.append(f"{kind}: gradkit has {len(a)}, torch {len(b)}")
            continue
        problems += [p for i, (x, y) in enumerate(zip(a, b))
                     if (p := _diff(f"{kind}[{i}]", x, y, single)) is not None]
    if mine.slots != theirs.slots:   # after the numbers: those say more
        problems.append(f"identity: env slots are tensors {mine.slots} in gradkit, torch "
                        f"{theirs.slots} (a result that is its input itself, or the reverse)")
    # a signed zero is reported only when nothing else differs
    real = [p for p in problems if not p.startswith("signed zero")]
    return real or problems


def problem_kind(problem: str) -> str:
    """``"values"``, ``"missing error"``, ... : the class of one problem line."""
    head = problem.split(":")[0]
    return head.split("[")[0] if not head.startswith("signed zero") else "signed zero"
