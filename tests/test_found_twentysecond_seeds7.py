"""Differences the fuzzer found in the twenty-second session (seeds7 lane), each program run in
gradkit and in torch 2.13 (skipped without torch)."""
import math

import numpy as np
import pytest
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate
from test_found_twentieth import _outcome  # with the signs of zeros

import gradkit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1, 1), (4, 2), (3, 20), (20, 3)])
@pytest.mark.parametrize("layout", ["row", "column"])
@pytest.mark.parametrize("alpha", [-1, 2.5, 1])
@pytest.mark.parametrize("fill", [0.0, -0.0])
def test_addmv_with_beta_zero_gives_no_negative_zero(dtype, shape, layout, alpha, fill):
    """torch's real addmv at beta = 0 is BLAS gemv's: y zeroed, then alpha * M v added to
    it, so a zero result is +0.0 whatever the product's sign (-1 * (M @ 0): wide seed 128898,
    -0.0 here before); at other betas the product's zero keeps its sign."""
    def call(m):
        d = getattr(m, dtype)
        mat = m.zeros(*shape, dtype=d) if layout == "row" else m.zeros(*shape[::-1], dtype=d).t()
        mat[0, 0] = -1.0
        vec = m.zeros(shape[1], dtype=d)
        return m.addmv(m.full((shape[0],), fill, dtype=d), mat, vec, beta=0, alpha=alpha)
    assert _outcome(lambda: call(gradkit)) == _outcome(lambda: call(torch))


@pytest.mark.parametrize("seed", [33822, 37308, 128898])
def test_addmv_seeds_at_beta_zero_agree(seed):
    """addmv_ (beta 0, alpha -1) of zeros written into its input: +0.0 as torch's gemv (wide
    seeds 33822 and 37308 were a Known, the sign of a zero sum of products)."""
    assert diff_program(generate(RandomDrawer(seed), "wide")) == ([], None)


def test_comparison_of_values_equal_but_for_rounding_is_known():
    """attention over value rows all equal: torch's CPU flash kernel divides the weighted
    sum by the weights' sum, (v + v + v) * (1 / 3), here bitwise v; gradkit weighs by
    softmax's rounded 1 / 3, an ulp off. greater_ of those rows against their mean then
    answers by the rounding (wide seed 123108): a documented difference."""
    def attend(m):
        q = m.tensor([[[[0.3, -0.2], [0.1, 0.4], [0.5, 0.5]]]], dtype=m.float64)
        v = m.full((1, 1, 3, 2), 0.19834064396480103, dtype=m.float64)
        return m.nn.functional.scaled_dot_product_attention(q, v, v).numpy()
    ours, torchs = attend(gradkit), attend(torch)
    assert (torchs == 0.19834064396480103).all()
    assert abs(ours - torchs).max() <= 4e-17
    problems, known = diff_program(generate(RandomDrawer(123108), "wide"))
    assert problems and known == ("a step that turns a rounding difference of its input into "
                                  "another number")


def test_poisson_loss_of_a_bool_input_carries_float32_exp_rounding_and_is_known():
    """poisson_nll_loss (log rates) of a bool input and a float64 target: both libraries take
    exp(True) in float32, NumPy's an ulp from torch's (2.718282 here, 2.7182817), and the
    float64 loss exp(input) - target * input keeps it: 1.2e-7 relative (strided_breadth seed
    2004606). gradkit keeps NumPy's float32 exp (docs/numerics.md): a documented difference."""
    def loss(m):
        target = m.tensor([0.67879497], dtype=m.float64)
        return m.nn.functional.poisson_nll_loss(m.tensor([True]), target, full=True).item()
    e32 = float(np.spacing(np.float32(math.e)))
    assert abs(loss(gradkit) - loss(torch)) <= e32
    assert loss(torch) == float(np.float32(math.e)) - 0.67879497  # torch's correctly rounded e
    problems, known = diff_program(generate(RandomDrawer(2004606), "strided_breadth"))
    assert problems and known == ("a float64 poisson_nll_loss of an integer input: its float32 "
                                  "exp an ulp from torch's")
