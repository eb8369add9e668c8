"""Differences the fuzzer found in the twenty-second session's helper lanes (seeds6: the
differential fuzzer's new seeds), each program run in gradkit and in torch 2.13 (skipped
without torch)."""
import numpy as np
import pytest
from fuzz.known import diff_program, known_difference
from fuzz.programs import RandomDrawer, generate
from fuzz.runner import compare, run

import gradkit

torch = pytest.importorskip("torch")
_NAN, _INF = float("nan"), float("inf")

# geqrf's tau is 0 for a column already zero below the diagonal: a diagonal matrix's Q is I
_FACTORED = {"diagonal": [[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -1.0]],
             "one_reflector": [[1.0, 2.0, 0.0], [3.0, 4.0, 0.0], [0.0, 0.0, 5.0]],
             "full": [[1.0, 2.0, 0.5], [3.0, 4.0, -1.0], [0.25, 2.0, 5.0]]}


def _pattern_and_values(t) -> tuple:
    """Where the result is NaN, +inf, -inf, and its finite entries."""
    a = np.asarray(t.detach().numpy())
    return (np.isnan(a).tolist(), np.isposinf(a).tolist(), np.isneginf(a).tolist(),
            np.where(np.isfinite(a), a, 0.0))


@pytest.mark.parametrize("matrix", list(_FACTORED))
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("part", ["value", "grad"])
def test_ormqr_applies_each_reflector_so_a_non_finite_entry_stays_out_of_the_others(
        matrix, left, transpose, part):
    """torch's ormqr is LAPACK's: each reflector H_i changes the rows (left; columns, right)
    from i on, and one whose tau is 0 is skipped; its gradient of ``other`` is ormqr again
    (float64: within the rows a reflector reaches, MKL's float32 kernel spreads an inf
    otherwise). gradkit multiplied by the Q it formed, so an inf or
    NaN of ``other`` (or of the incoming gradient) spread through Q's zeros, 0 * inf
    (strided_breadth seed 1960590: gammaincc's -inf slope at a 0 of grid_sample's padding
    made the whole gradient NaN, 0.93 in torch; 1773947: ormqr of [[inf]] was NaN)."""
    def call(m):
        a, tau = m.geqrf(m.tensor(_FACTORED[matrix], dtype=m.float64))
        other = m.tensor([[1.0, -2.0, 0.5]] * 3, dtype=m.float64)
        special = other.clone()
        special[0, 0], special[2, 2], special[1, 0] = _INF, _NAN, -_INF
        if part == "value":
            return m.ormqr(a, tau, special, left, transpose)
        other.requires_grad_()
        out = m.ormqr(a, tau, other, left, transpose)
        return m.autograd.grad(out, other, special)[0]
    mine, theirs = _pattern_and_values(call(gradkit)), _pattern_and_values(call(torch))
    assert mine[:3] == theirs[:3]
    np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [1960590, 1773947])
def test_ormqr_seeds_agree_with_torch(seed):
    """The fuzzer's programs through ormqr that differed (above) now agree."""
    problems, _ = diff_program(generate(RandomDrawer(seed), "strided_breadth"))
    assert not problems


def test_float32_pinv_of_an_ill_conditioned_matrix_is_known_noise():
    """pinv(hermitian=True) of m m^T + I, m of entries near 209 (condition number 4e5): the two
    products round an ulp apart and torch's float32 eigh is noise of 1% (0.5084 against
    0.5011 in float64; gradkit's 0.4974); a row of the result is within the tolerance of the
    float64 one on each side, not of the other's (strided_breadth seed 1963357). Known: torch's
    own float64 run shows the noise. A wrong row (5% off) is not."""
    program = generate(RandomDrawer(1963357), "strided_breadth")
    problems, known = diff_program(program)
    assert known == "single-precision values that torch's own double-precision ones show " \
        "are noise" or not problems
    theirs = run(program, torch)
    mine = run(program, gradkit)
    row = [i for i, v in enumerate(mine.values) if v.shape == (1, 3) and i > 2]
    wrong = mine._replace(values=[v * 1.05 if i in row else v
                                  for i, v in enumerate(mine.values)])
    assert compare(wrong, theirs) and known_difference(program, wrong, theirs) is None


def test_erfinv_of_a_float32_tanh_near_one_is_a_known_amplified_ulp():
    """erfinv(tanh(7.4376)) in float32: NumPy's tanh is 0.99999934, torch's 0.99999928 (the
    float64 one 0.99999931), and erfinv's slope there (2e5) makes the ulp 3.5172 against
    3.5053 (breadth seed 1995409). Known: torch's erfinv of gradkit's tanh is gradkit's
    value; a wrong erfinv is not."""
    x = np.float32(7.43764591217041)
    assert torch.erfinv(torch.tensor(np.tanh(x))).item() == \
        gradkit.erfinv(gradkit.tensor(x).tanh()).item()
    program = generate(RandomDrawer(1995409), "breadth")
    problems, known = diff_program(program)
    assert known == "a step that turns a rounding difference of its input into another " \
        "number" or not problems
    mine, theirs = run(program, gradkit), run(program, torch)
    k = next(k for k, step in enumerate(program.steps) if step.params.get("fn") == "erfinv")
    out = len(program.leaves) + k
    wrong = mine._replace(values=[v * np.float32(1.01) if i == out else v
                                  for i, v in enumerate(mine.values)])
    assert compare(wrong, theirs) and known_difference(program, wrong, theirs) is None


@pytest.mark.parametrize("a_shape, other_shape, left", [
    ((0, 0), (0, 2), True), ((3, 0), (3, 2), True), ((3, 2), (3, 0), True),
    ((3, 2), (0, 3), False)])
def test_ormqr_of_empty_factors_is_torchs_layout_and_gradients(a_shape, other_shape, left):
    """Without reflectors (tau empty) torch's ormqr gives input and tau no gradient (None,
    an empty one here before); an empty result has torch's strides (by columns)."""
    def call(m):
        rng = np.random.default_rng(0)
        a, tau = m.geqrf(m.tensor(rng.standard_normal(a_shape)))
        a, tau = a.detach().requires_grad_(), tau.detach().requires_grad_()
        other = m.tensor(rng.standard_normal(other_shape), requires_grad=True)
        out = m.ormqr(a, tau, other, left, True)
        grads = m.autograd.grad(out.sum(), (a, tau, other), allow_unused=True)
        return out.stride(), [None if g is None else g.tolist() for g in grads]
    assert call(gradkit) == call(torch)
