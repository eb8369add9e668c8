"""Differential fuzzing, CI-sized: random programs agree with PyTorch (values, grads, 2nd grads).

The long run is ``python tests/fuzz/run_fuzz.py --programs 20000``.
"""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

torch = pytest.importorskip("torch")

from fuzz.programs import (  # noqa: E402
    OPS, HypothesisDrawer, Program, RandomDrawer, Step, check, compare, generate, run)

import gradkit  # noqa: E402


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_programs_agree_with_torch(data):
    program = generate(HypothesisDrawer(data))
    problems = check(program)
    assert not problems, program.source() + "\n" + "\n".join(problems)


def test_generator_covers_every_op_and_dtype():
    programs = [generate(RandomDrawer(seed)) for seed in range(400)]
    used = {step.op for p in programs for step in p.steps}
    assert used == set(OPS)
    assert {p.dtype for p in programs} == {"float32", "float64", "complex64", "complex128"}
    assert {p.create_graph for p in programs} == {True, False}


def test_comparison_catches_a_wrong_gradient(monkeypatch):
    """The harness can fail: a sabotaged vjp rule is reported as a gradient mismatch."""
    program = Program("float64", (((3,), True),), (Step("sin", (0,), {}),), False, 5)
    assert check(program) == []
    monkeypatch.setattr(gradkit.ops.elementwise.sin, "vjps", (lambda g, x: g * 2.0,))
    problems = check(program)
    assert problems and problems[0].startswith("grads[0]: values differ")


def test_comparison_catches_a_missing_error():
    """An error in torch but not in gradkit (or the reverse) is a mismatch."""
    program = Program("float64", (((3,), True),), (Step("exp", (0,), {}),), False, 5)
    mine, theirs = run(program, gradkit), run(program, torch)
    failed = theirs._replace(error=("backward", "RuntimeError"))
    assert compare(mine, failed) == [
        "error: gradkit None != torch ('backward', 'RuntimeError')"]
