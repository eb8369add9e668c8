"""Known, reported differences from torch, and the one-call diff of a program.

Only behaviour that docs/ documents as a deliberate departure from torch belongs in
``KNOWN_DIFFERENCES``: each entry names the docs page and a phrase on it (checked by
tests/test_fuzz_vs_torch.py), so an undocumented difference can never be silenced here.
Everything else a program shows is a mismatch.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .programs import OPS
from .runner import Result, TorchInternalError, compare, run


class Known(NamedTuple):
    what: str
    doc: str                      # docs page, relative to the repository root
    phrase: str                   # text on that page that documents the difference
    applies: Callable             # (program, mine, theirs) -> bool


def _only_flags_differ(mine: Result, theirs: Result, dtype_kinds: str) -> bool:
    """Only requires_grad differs, on tensors of ``dtype_kinds`` torch marks and gradkit not."""
    if len(mine.flags) != len(theirs.flags):
        return False
    differ = [i for i, (a, b) in enumerate(zip(mine.flags, theirs.flags)) if a != b]
    return bool(differ) and all(
        theirs.flags[i] and mine.values[i].dtype.kind in dtype_kinds for i in differ) and not \
        compare(mine, theirs._replace(flags=mine.flags))


def _integer_tensor_requires_grad(program, mine: Result, theirs: Result) -> bool:
    """Integer/bool tensors torch marks as requiring grad and gradkit does not."""
    return _only_flags_differ(mine, theirs, "biu")


def _view_before_requires_grad(program, mine: Result, theirs: Result) -> bool:
    """Float views made before their base's requires_grad_(): torch says True for a view with
    no history whose gradients go nowhere."""
    return any(s.op == "i_requires_grad_" for s in program.steps) and _only_flags_differ(
        mine, theirs, "fc")


def _view_of_detached_base(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, and a base was written in place and then detach_()ed: torch's
    view (rebuilt lazily from the detached base) passes no gradient, gradkit's keeps its path."""
    ops = [s.op for s in program.steps]
    if "i_detach_" not in ops or mine.error is not None or theirs.error is not None:
        return False
    last_detach = len(ops) - 1 - ops[::-1].index("i_detach_")
    written = any(OPS[o].inplace and o not in ("i_detach_", "i_requires_grad_")
                  for o in ops[:last_detach])
    return written and not compare(mine, theirs._replace(grads=mine.grads, grads2=mine.grads2))


_BOOL_SUBTRACTION = "Subtraction, the `-` operator, with a bool tensor is not supported"


def _pow_by_bool_backward(program, mine: Result, theirs: Result) -> bool:
    """torch's pow backward computes ``exponent - 1``, which it refuses for a bool exponent."""
    return (mine.error is None and theirs.error is not None and theirs.error[0] == "backward"
            and theirs.message.startswith(_BOOL_SUBTRACTION)
            and any(s.params.get("op") == "**" for s in program.steps))


def _pow_result_written(program, mine: Result, theirs: Result) -> bool:
    """torch's pow(tensor, tensor) always saves its result, so a later in-place write of it
    fails torch's backward; gradkit saves it only for the exponent's gradient (all else must
    agree)."""
    return (mine.error is None and theirs.error is not None and theirs.error[0] == "backward"
            and "which is output 0 of Pow1, is at version" in theirs.message
            and not compare(mine._replace(grads=[], grads2=[]),
                            theirs._replace(error=None, grads=[], grads2=[])))


KNOWN_DIFFERENCES: tuple[Known, ...] = (
    Known("an integer tensor written with a value that requires grad does not require grad",
          "docs/numerics.md", "leaves the integer tensor not requiring grad",
          _integer_tensor_requires_grad),
    Known("a view made before its base's requires_grad_() does not require grad",
          "docs/autograd.md", "made before its base's `requires_grad_()`) has",
          _view_before_requires_grad),
    Known("a view of a base written in place, then detach_()ed, keeps its history",
          "docs/autograd.md", "gradkit keeps the view's history as of the write",
          _view_of_detached_base),
    Known("x ** bool tensor differentiates (torch's backward raises)", "docs/numerics.md",
          "raises computing `exponent - 1`", _pow_by_bool_backward),
    Known("x ** tensor written in place afterwards differentiates (torch saved its result)",
          "docs/autograd.md", "saves its result only when `y` requires grad", _pow_result_written),
)


def known_difference(program, mine: Result, theirs: Result) -> str | None:
    """The documented difference this mismatch is an instance of, if any."""
    return next((k.what for k in KNOWN_DIFFERENCES if k.applies(program, mine, theirs)), None)


def diff_program(program) -> tuple:
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


def check(program) -> list:
    """The differences between gradkit and torch on ``program``, known differences excepted."""
    problems, known = diff_program(program)
    return [] if known else problems
