"""Differences the fuzzer found in the twenty-second session's helper lanes (seeds6: the
differential fuzzer's new seeds), each program run in gradkit and in torch 2.13 (skipped
without torch)."""
import numpy as np
import pytest
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate

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
