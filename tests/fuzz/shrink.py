"""Shrinking a mismatching program: drop steps while the same kind of mismatch remains."""
from __future__ import annotations

from dataclasses import replace

from .known import diff_program
from .programs import Program, Step
from .runner import problem_kind


def _drop(program: Program, k: int) -> Program:
    """``program`` without step ``k``; later reads of its output read its first input."""
    gone = len(program.leaves) + k
    source = program.steps[k].inputs[0] if program.steps[k].inputs else 0

    def slot(i: int) -> int:
        if i == gone:
            i = source
        return i - 1 if i > gone else i
    steps = tuple(Step(s.op, tuple(slot(i) for i in s.inputs), s.params)
                  for j, s in enumerate(program.steps) if j != k)
    return replace(program, steps=steps)


def mismatch_kind(program: Program) -> str | None:
    """The kind of the program's first unexplained mismatch, or None when it agrees."""
    try:
        problems, known = diff_program(program)
    except Exception:  # noqa: BLE001 - a shrunk program may break the harness: not smaller
        return None
    return None if known or not problems else problem_kind(problems[0])


def shrink(program: Program) -> Program:
    """The smallest program, by dropping steps, with the same kind of mismatch."""
    kind = mismatch_kind(program)
    if kind is None:
        return program
    shrinking = True
    while shrinking:
        shrinking = False
        for k in reversed(range(len(program.steps))):
            smaller = _drop(program, k)
            if mismatch_kind(smaller) == kind:
                program, shrinking = smaller, True
                break
    return program
