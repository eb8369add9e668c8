"""Random programs over the op table, run the same way in gradkit and in PyTorch.

A program is a few leaves plus a list of steps; each step names an entry of
``OPS`` (one function written against the torch API, called with ``lib`` =
``gradkit`` or ``torch``), the env slots it reads and its parameters. ``run``
executes a program with one library and returns what it computed as NumPy:
values, gradients, second derivatives (create_graph) or the phase that raised.
``compare`` diffs two such results with dtype-aware tolerances.

Generation draws every choice from a ``Drawer``: ``RandomDrawer`` (seeded, for
the long run) or ``HypothesisDrawer`` (shrinking, for the suite). Steps are
run in torch as they are generated, so a program never asks for an op that
torch itself refuses on those shapes and dtypes (gradkit may not refuse more).

>>> prog = generate(RandomDrawer(7))
>>> print(prog.source())           # doctest: +SKIP
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

# -- the op table: name -> (arity, function on lib, parameter drawer) ---------------------------


class OpSpec(NamedTuple):
    arity: int
    fn: Callable
    params: Callable | None = None   # (draw, shapes) -> dict, or None when it does not apply
    inplace: bool = False             # mutates its first input (which stays the same tensor)


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
    return {**p, "index": [draw.integer(0, n - 1) for _ in range(draw.integer(1, 3))]}


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
    index = np.array([draw.integer(0, n - 1) for _ in range(int(np.prod(shape)))])
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


# -- drawing choices --------------------------------------------------------------------------

class RandomDrawer:
    """Choices from a seeded ``random.Random`` (reproducible by seed)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5


class HypothesisDrawer:
    """Choices from hypothesis's ``data`` object, so failing programs shrink."""

    def __init__(self, data) -> None:
        from hypothesis import strategies as st
        self.data, self.st = data, st
        self.seed = data.draw(st.integers(0, 2**16), label="seed")

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))

    def boolean(self) -> bool:
        return self.data.draw(self.st.booleans())


# -- programs ---------------------------------------------------------------------------------

DTYPES = ("float32", "float64", "complex64", "complex128")


class Step(NamedTuple):
    op: str
    inputs: tuple
    params: dict


@dataclass(frozen=True)
class Program:
    dtype: str
    leaves: tuple          # (shape, requires_grad) per leaf
    steps: tuple
    create_graph: bool
    seed: int

    def source(self) -> str:
        """The program as readable torch-style lines (for reports and regression tests)."""
        lines = [f"# dtype={self.dtype} seed={self.seed} create_graph={self.create_graph}"]
        for i, (shape, rg) in enumerate(self.leaves):
            lines.append(f"v{i} = leaf({shape}, requires_grad={rg})")
        for k, step in enumerate(self.steps):
            args = ", ".join(f"v{i}" for i in step.inputs)
            kw = "".join(f", {n}={v!r}" for n, v in step.params.items())
            same = f"  # the same tensor as v{step.inputs[0]}" if OPS[step.op].inplace else ""
            lines.append(f"v{len(self.leaves) + k} = {step.op}({args}{kw}){same}")
        return "\n".join(lines)


def _leaf_shapes(draw) -> list:
    """A base shape and leaves whose shapes broadcast to it (some dims 1, some dropped)."""
    base = [draw.integer(1, 3) for _ in range(draw.integer(0, 3))]
    shapes = []
    for _ in range(draw.integer(1, 3)):
        drop = draw.integer(0, len(base))
        shapes.append(tuple(1 if draw.integer(0, 3) == 0 else n for n in base[drop:]))
    return shapes


def generate(draw, max_steps: int = 6) -> Program:
    """Draw one program; each step is first run in torch and kept only if torch accepts it."""
    import torch
    dtype = DTYPES[draw.integer(0, len(DTYPES) - 1)]
    leaves = tuple((s, i == 0 or draw.boolean()) for i, s in enumerate(_leaf_shapes(draw)))
    env = [torch.tensor(v, requires_grad=rg)
           for v, (_, rg) in zip(_leaf_values(leaves, dtype, draw.seed), leaves)]
    names = sorted(OPS)
    steps = []
    for _ in range(draw.integer(1, max_steps)):
        for _attempt in range(8):
            name = names[draw.integer(0, len(names) - 1)]
            spec = OPS[name]
            # prefer the latest value, so steps chain into one graph
            inputs = tuple(len(env) - 1 if draw.boolean() else draw.integer(0, len(env) - 1)
                           for _ in range(spec.arity))
            params = spec.params(draw, [tuple(env[i].shape) for i in inputs]) \
                if spec.params else {}
            if params is None:
                continue
            out = _try_in_torch(torch, spec, [env[i] for i in inputs], params)
            if out is not None:
                steps.append(Step(name, inputs, params))
                env.append(out)
                break
    return Program(dtype, leaves, tuple(steps), draw.boolean(), draw.seed)


def _try_in_torch(torch, spec, args, params):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = spec.fn(torch, *args, **params)
        except Exception:  # noqa: BLE001 - torch refuses this combination: draw another
            return None
    if spec.inplace:
        return args[0]
    return out if out.numel() > 0 else None


# -- running and comparing --------------------------------------------------------------------

# torch's own internal asserts (e.g. where() mixing complex and real in backward) are
# torch bugs, not a behaviour to copy: programs that hit one are skipped
TORCH_INTERNAL_ERROR = "Could this error message be improved?"


class TorchInternalError(Exception):
    """torch failed an internal assert on this program."""


class Result(NamedTuple):
    error: tuple | None      # (phase, exception type name) when the program raised
    values: list             # NumPy arrays of the program's outputs
    grads: list              # d loss / d leaf (None where unused)
    grads2: list             # d <grads, v> / d leaf with create_graph
    message: str = ""        # the error's text (not compared: only phase and type are)


def _numpy(t) -> np.ndarray:
    t = t.detach()
    if hasattr(t, "resolve_conj"):  # torch: lazy conj bits and ZeroTensors need force
        return np.array(t.numpy(force=True))
    return np.array(t.numpy())


def _leaf_values(leaves: tuple, dtype: str, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for shape, _ in leaves:
        v = rng.uniform(-1, 1, shape)
        if dtype.startswith("complex"):
            v = v + 1j * rng.uniform(-1, 1, shape)
        out.append(np.asarray(v, dtype=dtype))
    return out


def _weights(arrays: list, seed: int) -> list:
    rng = np.random.default_rng(seed + 1)
    return [np.asarray(rng.uniform(-1, 1, a.shape) + (1j * rng.uniform(-1, 1, a.shape)
                                                       if a.dtype.kind == "c" else 0),
                       dtype=a.dtype) for a in arrays]


def _weighted_sum(lib, tensors, weights):
    total = None
    for t, w in zip(tensors, weights):
        if t is None:
            continue
        term = (t * lib.tensor(w)).sum()
        term = term.real if term.is_complex() else term
        total = term if total is None else total + term
    return total


def run(program: Program, lib) -> Result:
    """Execute ``program`` with ``lib`` (gradkit or torch); exceptions become ``error``."""
    import warnings
    phase, values, grads, grads2 = "forward", [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            env = [lib.tensor(v, requires_grad=rg)
                   for v, (_, rg) in zip(_leaf_values(program.leaves, program.dtype, program.seed),
                                        program.leaves)]
            for k, step in enumerate(program.steps):
                phase = f"step {k} ({step.op})"
                spec = OPS[step.op]
                out = spec.fn(lib, *[env[i] for i in step.inputs], **step.params)
                env.append(env[step.inputs[0]] if spec.inplace else out)
            outputs = [env[-1]] if len(env) - len(program.leaves) < 2 else env[-2:]
            values = [_numpy(o) for o in outputs]
            phase = "backward"
            leaves = [t for t, (_, rg) in zip(env, program.leaves) if rg]
            loss = _weighted_sum(lib, outputs, _weights(values, program.seed))
            if not loss.requires_grad:
                return Result(None, values, [], [])
            got = lib.autograd.grad(loss, leaves, create_graph=program.create_graph,
                                    allow_unused=True)
            grads = [None if g is None else _numpy(g) for g in got]
            if not program.create_graph:
                return Result(None, values, grads, [])
            phase = "double backward"
            # weights for every gradient, so they do not depend on which ones carry a graph
            present = [g for g in got if g is not None]
            weights = _weights([_numpy(g) for g in present], program.seed + 7)
            live = [(g, w) for g, w in zip(present, weights) if g.requires_grad]
            second = _weighted_sum(lib, [g for g, _ in live], [w for _, w in live])
            if second is not None:
                got2 = lib.autograd.grad(second, leaves, allow_unused=True)
                grads2 = [None if g is None else _numpy(g) for g in got2]
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            if TORCH_INTERNAL_ERROR in str(e):
                raise TorchInternalError(str(e)) from e
            return Result((phase, type(e).__name__), values, grads, grads2, str(e))
    return Result(None, values, grads, grads2)


def _tolerance(dtype) -> tuple:
    single = dtype in (np.float32, np.complex64)
    return (2e-3, 2e-4) if single else (1e-7, 1e-9)


def _diff(what: str, mine, theirs) -> str | None:
    if mine is None or theirs is None:
        # an unused input: None and all-zero gradients are equivalent
        other = theirs if mine is None else mine
        if other is None or not np.any(other):
            return None
        return f"{what}: one side is None, the other {other}"
    if mine.shape != theirs.shape:
        return f"{what}: shape {mine.shape} != torch {theirs.shape}"
    if (mine.dtype.kind == "c") != (theirs.dtype.kind == "c") or mine.dtype != theirs.dtype:
        return f"{what}: dtype {mine.dtype} != torch {theirs.dtype}"
    rtol, atol = _tolerance(theirs.dtype)
    finite = np.isfinite(theirs)
    scale = max(1.0, float(np.abs(theirs[finite]).max())) if finite.any() else 1.0
    if not np.allclose(mine, theirs, rtol=rtol, atol=atol * scale, equal_nan=True):
        return f"{what}: values differ\n gradkit {mine!r}\n torch   {theirs!r}"
    return None


# Differences found by fuzzing that are reported but not fixed (see docs of each):
# (what, test on the program and both results)
KNOWN_DIFFERENCES = (
    ("an op saves every value its rules may need, where torch saves only what the inputs that "
     "require grad need (x * 2.0 saves x; x ** 2.0 saves its result), so some in-place writes "
     "fail backward in gradkit only",
     lambda program, mine, theirs: theirs.error is None
     and "modified by an inplace operation" in mine.message),
    ("std of values that are equal (repeated, expanded): whether rounding makes their variance "
     "exactly 0 (gradient masked to 0) or tiny (gradient huge) differs between the libraries; "
     "and where it is 0 torch's second derivative is NaN, gradkit's 0",
     lambda program, mine, theirs: "std" in {s.op for s in program.steps}
     and bool({s.op for s in program.steps} & _REPEATING)),
    ("a base modified in place after split/chunk/unbind took views of it: torch refuses to "
     "backward through those views, gradkit gives them a fresh history (and the right gradient)",
     lambda program, mine, theirs: mine.error is None and theirs.error is not None
     and _multi_view_then_write(program)),
    ("gather saves only its input's shape (torch saves the input), so an in-place write to that "
     "input fails backward in torch only",
     lambda program, mine, theirs: mine.error is None
     and "modified by an inplace operation" in theirs.message
     and any(s.op == "gather" for s in program.steps)),
    ("Tensor.real/.imag are not views for autograd (they share memory but not the version "
     "counter or history), so an in-place write through them is missed by backward: no error "
     "where torch raises, or a wrong gradient",
     lambda program, mine, theirs: _writes_through_real(program)),
    ("a write into an expanded (self-overlapping) tensor is refused at the write by gradkit "
     "(NumPy's read-only broadcast); torch may accept it and fail later or not at all",
     lambda program, mine, theirs: mine.error is not None and mine.error[0].startswith("step")
     and "refers to a single memory location" in mine.message),
)


_REPEATING = {"expand", "repeat", "stack", "cat", "index_select", "index_rows", "gather"}


def _multi_view_then_write(program: Program) -> bool:
    steps = [s.op for s in program.steps]
    first = next((k for k, op in enumerate(steps) if op in ("split0", "chunk_last", "unbind0")),
                 None)
    return first is not None and any(OPS[op].inplace for op in steps[first + 1:])


def _writes_through_real(program: Program) -> bool:
    """A complex program that takes .real and later writes in place (to it or to its base)."""
    steps = [s.op for s in program.steps]
    return program.dtype.startswith("complex") and "real" in steps and any(
        OPS[op].inplace for op in steps[steps.index("real") + 1:])


def known_difference(program: Program, mine: Result, theirs: Result) -> str | None:
    """The known, reported difference this mismatch is an instance of, if any."""
    return next((what for what, test in KNOWN_DIFFERENCES if test(program, mine, theirs)), None)


def compare(mine: Result, theirs: Result) -> list:
    """Every difference between gradkit's result and torch's, as readable lines."""
    if mine.error != theirs.error:
        return [f"error: gradkit {mine.error} != torch {theirs.error}"]
    problems = []
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
                     if (p := _diff(f"{kind}[{i}]", x, y)) is not None]
    return problems


def diff_program(program: Program) -> tuple:
    """Run ``program`` in gradkit and torch: (differences, known difference they are or None)."""
    import torch

    import gradkit
    try:
        theirs = run(program, torch)
    except TorchInternalError:
        return [], None
    mine = run(program, gradkit)
    problems = compare(mine, theirs)
    return problems, (known_difference(program, mine, theirs) if problems else None)


def check(program: Program) -> list:
    """The differences between gradkit and torch on ``program``, known differences excepted."""
    problems, known = diff_program(program)
    return [] if known else problems
