"""Differences the fuzzer found in the twenty-first session (main), each program run in gradkit
and in torch 2.13 (skipped without torch)."""
import pytest
from fuzz.known import diff_program
from fuzz.programs import Leaf, Program, Step

import gradkit

torch = pytest.importorskip("torch")


def test_a_zero_d_steps_last_bit_amplified_is_the_documented_rounding():
    """logit(sigmoid(x)) of a float32 0-d x is x in torch and an ulp off here (NumPy's float32
    exp, docs/numerics.md), so dist(logit(sigmoid(x)), x) is 0 in torch, whose second
    derivative there is NaN, and 1.2e-7 here (breadth seed 1826873). torch's chain from
    gradkit's value gives gradkit's result; the Known replaying it failed on a 0-d step (a
    NumPy scalar difference)."""
    for lib in (gradkit, torch):  # the same NaN at an exact zero
        x = lib.tensor(-0.4989381, requires_grad=True)
        g, = lib.autograd.grad(lib.dist(x * 1.0, x), x, create_graph=True)
        assert lib.autograd.grad(g, x)[0].isnan()
    program = Program("breadth", (Leaf((), "float32", True), Leaf((), "float32", True)), (
        Step("num_param", (1, 1), {"call": "logit", "given": "0d_int", "v": -1.0}),
        Step("s_dist", (2, 1), {"p": 2})), True, 1826873, backward=True)
    problems, known = diff_program(program)
    assert problems and known.startswith("a step's own rounding a few ulps from torch's")
