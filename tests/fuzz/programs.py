"""Random programs over the op tables, generated class by class, replayable from their seed.

A program is a few leaves (shape, dtype, requires_grad, whether it holds NaN/inf/-0.0) plus a
list of steps; each step names an entry of ``OPS`` (one function written against the torch
API, called with ``lib`` = ``gradkit`` or ``torch``), the env slots it reads and its
parameters. Program ``seed`` belongs to class ``CLASS_NAMES[seed % len(CLASS_NAMES)]``; a
class says which ops, dtypes, shapes and values it draws and how the program ends
(``autograd.grad`` or ``.backward()``, with or without ``create_graph``).

Steps are run in torch as they are generated: a step torch refuses is drawn again, or, with
the class's ``keep_error`` probability, kept as the program's last step (an error case:
gradkit must raise too). ``runner.run`` executes a program; ``runner.compare`` diffs results.

>>> prog = generate(RandomDrawer(7))
>>> print(prog.source())           # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .drawers import RandomDrawer
from .ops_breadth import BREADTH_OPS, FUZZNN_OPS, LATER_BREADTH_OPS
from .ops_core import OPS as CORE_OPS, OpSpec
from .ops_dist import DIST_OPS
from .ops_dtypes import DTYPE_NAMES, DTYPE_OPS
from .ops_indexing import INDEXING_OPS
from .ops_numbers import NUMBER_OPS
from .ops_optim import OPTIM_OPS
from .ops_signal import SIGNAL_OPS
from .ops_values import VALUE_OPS
from .ops_views import CONJ_VIEW_OPS, VIEW_OPS
from .ops_wide import WIDE_ELEM_OPS
from .ops_wide_nn import WIDE_NN_OPS
from .runner import LAYOUTS
from .transforms import TRANSFORMS

__all__ = ["OPS", "CLASSES", "CLASS_NAMES", "SEEDED_CLASSES", "Leaf", "Step", "Program",
           "generate", "class_of", "RandomDrawer"]

# the ops of the round-robin classes ("mixed" draws all of them: keep it to these, so old
# seeds still draw what they drew)
_ROUND_ROBIN_OPS = (*CORE_OPS, *VIEW_OPS, *INDEXING_OPS, *DTYPE_OPS, *VALUE_OPS)
OPS: dict[str, OpSpec] = {**CORE_OPS, **VIEW_OPS, **INDEXING_OPS, **DTYPE_OPS, **VALUE_OPS,
                          **BREADTH_OPS, **LATER_BREADTH_OPS, **SIGNAL_OPS, **DIST_OPS,
                          **OPTIM_OPS, **NUMBER_OPS, **CONJ_VIEW_OPS, **WIDE_ELEM_OPS,
                          **WIDE_NN_OPS}

FLOATS = ("float32", "float64", "complex64", "complex128")
_CORE_VIEWS = ("slice", "transpose", "t", "unsqueeze", "select0", "expand", "view_flat",
               "flatten", "permute", "squeeze", "split0", "unbind0", "real")
_CORE_INPLACE = ("mul_", "add_", "copy_", "clamp_", "zero_", "neg_", "setitem", "div_",
                 "exp_", "sigmoid_")
_ELEMENTWISE = ("mul", "add", "sin", "exp", "square", "sum", "sum_dim", "matmul", "clone",
                "where", "relu", "abs")


class ProgramClass(NamedTuple):
    """What one class of programs draws."""
    ops: tuple
    dtypes: tuple = FLOATS
    other_dtypes: tuple = ()      # further leaves may take these (mixing dtypes)
    zero_size: float = 0.0        # chance that a leaf dim is 0 (and that 0-size outputs stay)
    special: float = 0.0          # chance that a float leaf holds NaN / inf / -0.0 / 0
    keep_error: float = 0.0       # chance that a step torch refuses ends the program
    backward: float = 0.3         # chance of ending with .backward() instead of autograd.grad
    create_graph: float = 0.5     # chance of a second derivative
    clone_first: float = 0.0      # chance that step 0 is a clone (a non-leaf to write into)
    max_steps: int = 6            # at most this many steps (fewer where a step is a long run)
    transforms: tuple = ()        # the program runs under one of these (tests/fuzz/transforms.py)
    layouts: tuple = ()           # leaves may be laid out so (runner.LAYOUTS), each with 0.7
    min_dims: int = 0             # the leaves' common shape has at least this many dims


_VIEWS = tuple(VIEW_OPS) + _CORE_VIEWS + _CORE_INPLACE + _ELEMENTWISE
CLASSES: dict[str, ProgramClass] = {
    "core": ProgramClass(tuple(CORE_OPS)),
    "views": ProgramClass(tuple(n for n in _VIEWS if n not in ("hook",)), keep_error=0.3,
                          backward=0.5, create_graph=0.3, clone_first=0.7),
    "indexing": ProgramClass(tuple(INDEXING_OPS) * 3 + ("v_basic_index", "clone", "mul",
                                                        "sum", "i_add_scalar_", "retain_grad"),
                             dtypes=("float64", "float32", "complex128"),
                             other_dtypes=("int64", "bool"), keep_error=0.3, clone_first=0.6,
                             create_graph=0.3),
    "dtypes": ProgramClass(tuple(DTYPE_OPS) * 3 + _ELEMENTWISE, dtypes=DTYPE_NAMES,
                           other_dtypes=DTYPE_NAMES, keep_error=0.4, create_graph=0.3),
    "edge": ProgramClass(tuple(CORE_OPS) + tuple(INDEXING_OPS) + tuple(VIEW_OPS),
                         dtypes=("float64", "float32", "complex64"), zero_size=0.35,
                         keep_error=0.3, clone_first=0.4),
    "special": ProgramClass(tuple(VALUE_OPS) * 4 + _ELEMENTWISE,
                            dtypes=("float64", "float32", "float64", "complex128"),
                            special=0.8, keep_error=0.2, create_graph=0.3),
    "hooks": ProgramClass(("hook",) * 4 + ("retain_grad",) * 2 + _ELEMENTWISE + _CORE_VIEWS
                          + _CORE_INPLACE + ("tanh", "sigmoid", "pow", "div", "gram"),
                          backward=0.6, create_graph=0.7, clone_first=0.3, keep_error=0.2),
    "mixed": ProgramClass(_ROUND_ROBIN_OPS, dtypes=FLOATS + ("float64",) * 2,
                          other_dtypes=DTYPE_NAMES, zero_size=0.1, special=0.2,
                          keep_error=0.3, backward=0.5, create_graph=0.5, clone_first=0.3),
}
CLASS_NAMES = tuple(CLASSES)
# classes added later draw every seed of their own (``run_fuzz.py --classes breadth``): a
# place in the round robin would move every earlier seed to another class
SEEDED_CLASSES: dict[str, ProgramClass] = {
    "breadth": ProgramClass(tuple(BREADTH_OPS) * 3 + _ELEMENTWISE + ("clone", "transpose",
                                                                      "unsqueeze", "cast")
                            + ("num_div", "num_div_") * 10 + ("num_param",) * 20,  # lane fuzzm
                            dtypes=("float64", "float32", "float64", "complex128", "complex64"),
                            other_dtypes=("int64", "bool", "float32"), zero_size=0.15,
                            special=0.15, keep_error=0.25, backward=0.4, create_graph=0.4,
                            clone_first=0.2),
}
# the nn.functional ops the breadth class draws rarely (lane fuzznn), chained with a few others
SEEDED_CLASSES["nn_new"] = SEEDED_CLASSES["breadth"]._replace(
    ops=tuple(FUZZNN_OPS) * 4 + _ELEMENTWISE + ("clone", "transpose", "cast"))
# stft, gradient, index_reduce, histograms, runs and windows (lane signal)
SEEDED_CLASSES["signal"] = SEEDED_CLASSES["breadth"]._replace(
    ops=tuple(SIGNAL_OPS) * 4 + _ELEMENTWISE + ("clone", "transpose", "cast"))
# gradkit.distributions: statistics, KL and reparameterized samples (lane fuzzdist)
SEEDED_CLASSES["dist"] = SEEDED_CLASSES["breadth"]._replace(
    ops=tuple(DIST_OPS) * 4 + ("d_statistic",) * 4 + _ELEMENTWISE + ("clone", "transpose"),
    dtypes=("float64", "float32", "float64"), other_dtypes=("float32", "float64"),
    special=0.08)
# gradkit.optim and lr_scheduler: a program is one whole training run of a leaf's values
# (lane optimfuzz; one step: a run of another run's trace would amplify its rounding)
SEEDED_CLASSES["optim"] = ProgramClass(("o_run",), dtypes=("float64", "float32", "float64"),
                                       zero_size=0.15, special=0.03, keep_error=0.3,
                                       backward=0.5, create_graph=0.2, max_steps=1)
# forward-mode AD and torch.func transforms of the round-robin classes' chains (lane fuzzfwd):
# no hooks or retain_grad (backward-only), no requires_grad_ (transforms own the leaves)
SEEDED_CLASSES["fwd"] = CLASSES["mixed"]._replace(
    ops=tuple(n for n in _ROUND_ROBIN_OPS if n not in ("hook", "retain_grad",
                                                       "i_requires_grad_")),
    keep_error=0.2, backward=0.0, create_graph=0.0, transforms=TRANSFORMS)
# conjugated views, detach()/.data of them, expanded views, written through and read after
# writes into their base (the eleventh session: detach and .data copied conj views' values)
SEEDED_CLASSES["conj_views"] = CLASSES["views"]._replace(
    ops=tuple(CONJ_VIEW_OPS) * 4 + tuple(n for n in _VIEWS if n not in ("hook",)),
    dtypes=("complex128", "complex64", "float64"))
# leaves with transposed, strided, offset or broadcast memory, through views, in-place writes,
# elementwise ops and reductions (the twelfth session: torch computes the same for any layout)
SEEDED_CLASSES["strided"] = CLASSES["mixed"]._replace(
    ops=_ROUND_ROBIN_OPS + _VIEWS + _CORE_INPLACE * 2, layouts=LAYOUTS,
    clone_first=0.5, min_dims=2)
# the breadth class's ops (nn.functional, linalg, special, ...) over such leaves
SEEDED_CLASSES["strided_breadth"] = SEEDED_CLASSES["breadth"]._replace(
    ops=SEEDED_CLASSES["breadth"].ops + tuple(LATER_BREADTH_OPS) * 3,
    layouts=SEEDED_CLASSES["strided"].layouts, min_dims=2)
# the public functions no other table drew (lane fuzzwide: tan, cosh, the in-place unary
# variants, gcd, isin, index_put_, the functional RNN cells, ...) among the breadth class's
# ops, views and in-place writes (a class of its own: in "breadth" they would move its seeds)
SEEDED_CLASSES["wide"] = SEEDED_CLASSES["breadth"]._replace(
    ops=tuple(WIDE_ELEM_OPS) * 16 + ("w_into",) * 24 + tuple(WIDE_NN_OPS) * 5
    + tuple(BREADTH_OPS) + _ELEMENTWISE + _CORE_VIEWS + _CORE_INPLACE
    + ("clone", "transpose", "unsqueeze", "cast"))
CLASSES.update(SEEDED_CLASSES)


def class_of(seed: int) -> str:
    """The round-robin class program ``seed`` belongs to (seeded classes draw every seed)."""
    return CLASS_NAMES[seed % len(CLASS_NAMES)]


class Leaf(NamedTuple):
    shape: tuple
    dtype: str
    requires_grad: bool
    special: bool = False         # holds NaN / inf / -inf / -0.0 / 0.0 among its values
    layout: str = ""              # how its memory is laid out (runner.LAYOUTS; "": contiguous)


class Step(NamedTuple):
    op: str
    inputs: tuple
    params: dict


@dataclass(frozen=True)
class Program:
    klass: str
    leaves: tuple                 # Leaf per input
    steps: tuple
    create_graph: bool
    seed: int
    backward: bool = False        # end with loss.backward() (reads .grad), else autograd.grad
    transform: str = ""           # the fwd class's transform (tests/fuzz/transforms.py)

    def source(self) -> str:
        """The program as readable torch-style lines (for reports and regression tests)."""
        end = self.transform or ("loss.backward" if self.backward else "autograd.grad")
        lines = [f"# class={self.klass} seed={self.seed} end={end} "
                 f"create_graph={self.create_graph}"]
        for i, leaf in enumerate(self.leaves):
            extra = (", special values" if leaf.special else "") + \
                (f", layout={leaf.layout!r}" if leaf.layout else "")
            lines.append(f"v{i} = leaf({leaf.shape}, {leaf.dtype}, "
                         f"requires_grad={leaf.requires_grad}{extra})")
        for k, step in enumerate(self.steps):
            args = ", ".join(f"v{i}" for i in step.inputs)
            kw = "".join(f", {n}={v!r}" for n, v in step.params.items())
            spec = OPS[step.op]
            same = f"  # the same tensor as v{step.inputs[0]}" if spec.inplace or spec.same else ""
            lines.append(f"v{len(self.leaves) + k} = {step.op}({args}{kw}){same}")
        return "\n".join(lines)


def _leaf_shapes(draw, zero_size: float, min_dims: int = 0) -> list:
    """A base shape and leaves whose shapes broadcast to it (some dims 1, some dropped)."""
    base = [0 if draw.chance(zero_size) else draw.integer(1, 3)
            for _ in range(draw.integer(min_dims, 3))]
    shapes = []
    for _ in range(draw.integer(1, 3)):
        drop = draw.integer(0, len(base))
        shapes.append(tuple(1 if draw.integer(0, 3) == 0 else n for n in base[drop:]))
    return shapes


def _leaves(draw, klass: ProgramClass) -> tuple:
    first = draw.choice(klass.dtypes)
    leaves = []
    for i, shape in enumerate(_leaf_shapes(draw, klass.zero_size, klass.min_dims)):
        dtype = draw.choice(klass.other_dtypes) if i and klass.other_dtypes and \
            draw.chance(0.4) else first
        grad_able = dtype.startswith(("float", "complex"))
        rg = grad_able and (i == 0 or draw.boolean())
        special = grad_able and draw.chance(klass.special)
        # drawn only for classes with layouts, so other classes' seeds draw what they drew
        layout = draw.choice(klass.layouts) if klass.layouts and draw.chance(0.7) else ""
        leaves.append(Leaf(shape, dtype, rg, special, layout))
    return tuple(leaves)


def generate(draw, klass: str | None = None, skip=None, max_steps: int = 6) -> Program:
    """Draw one program of class ``klass`` (by default the seed's); each step is first run in
    torch (see the module docstring). ``skip(step, args)``, given the drawn step and its
    (torch) inputs, rejects steps a run must not contain (open bugs, in the fast test)."""
    import torch

    from .runner import leaf_tensors, try_step
    name = klass or class_of(draw.seed)
    spec_of_class = CLASSES[name]
    names = spec_of_class.ops
    leaves = _leaves(draw, spec_of_class)
    # under a transform the leaves do not require grad (in place on them is fine)
    env = leaf_tensors(torch, tuple(leaf._replace(requires_grad=leaf.requires_grad and not
                                                  spec_of_class.transforms)
                                    for leaf in leaves), draw.seed)
    steps = []
    if draw.chance(spec_of_class.clone_first) and not (skip and skip(Step("clone", (0,), {}),
                                                                        env[:1])):
        steps.append(Step("clone", (0,), {}))
        env.append(env[0].clone())
    for _ in range(draw.integer(1, min(max_steps, spec_of_class.max_steps))):
        for _attempt in range(8):
            op = draw.choice(names)
            spec = OPS[op]
            # prefer the latest value, so steps chain into one graph
            inputs = tuple(len(env) - 1 if draw.boolean() else draw.integer(0, len(env) - 1)
                           for _ in range(spec.arity))
            args = [env[i] for i in inputs]
            params = _params(draw, spec, args)
            if params is None or skip and skip(Step(op, inputs, params), args):
                continue
            out = try_step(torch, spec, args, params)
            if out is None:
                if draw.chance(spec_of_class.keep_error):
                    steps.append(Step(op, inputs, params))
                    return _finish(draw, name, spec_of_class, leaves, steps)
                continue
            if out.numel() == 0 and not spec_of_class.zero_size:
                continue
            steps.append(Step(op, inputs, params))
            env.append(out)
            break
    return _finish(draw, name, spec_of_class, leaves, steps)


def _params(draw, spec: OpSpec, args: list) -> dict | None:
    if not spec.params:
        return {}
    try:
        return spec.params(draw, args if spec.wants_tensors else [tuple(a.shape) for a in args])
    except ValueError:  # an empty range to draw from (a 0-size dim): the op does not apply
        return None


def _finish(draw, name, klass: ProgramClass, leaves, steps) -> Program:
    return Program(name, leaves, tuple(steps), draw.chance(klass.create_graph), draw.seed,
                   draw.chance(klass.backward),
                   draw.choice(klass.transforms) if klass.transforms else "")
