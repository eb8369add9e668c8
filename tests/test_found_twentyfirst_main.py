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


def test_a_conj_view_reshaped_then_written_in_place_is_torchs_bug():
    """torch regenerates a conj view's grad_fn from the conj alone after an in-place reshape
    and another in-place write, so its backward expects the old shape (breadth seed 1846247:
    unsqueeze_ and logical_not_ of ifft of a real tensor); gradkit's runs, a documented Known."""
    def program(lib):
        z = lib.tensor([1 + 1j, 2 - 1j], requires_grad=True)
        c = (z * 1).conj()
        c.unsqueeze_(1)
        c.logical_not_()
        c.abs().sum().backward()
        return z.grad
    with pytest.raises(RuntimeError, match="returned an invalid gradient at index 0"):
        program(torch)
    assert program(gradkit).tolist() == [0j, 0j]
    program = Program("breadth", (Leaf((1,), "float64", True),), (
        Step("fft_ifft", (0,), {"dim": 0, "n": 2, "norm": None}),
        Step("fb_unsqueeze_", (1,), {"dim": 1}),
        Step("fb_logical_", (1, 0), {"name": "logical_not"})), False, 1846247, backward=True)
    problems, known = diff_program(program)
    assert problems and known.startswith("torch's backward of a conj view reshaped in place")


def test_an_argument_error_beside_a_stale_view_is_the_documented_order():
    """torch reads a stale multi-output view's grad_fn before its kernel checks the arguments;
    gradkit's kernel checks first (hooks seed 7076118): both raise, with other errors."""
    def program(lib):
        v1 = lib.tensor([0.5], requires_grad=True).clone()
        v2 = v1.unbind(0)[0]
        v1.sigmoid_()
        return v2.unbind(0)
    with pytest.raises(RuntimeError, match="its base or another view of its base has been"):
        program(torch)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dim"):
        program(gradkit)
    program = Program("hooks", (Leaf((1,), "float32", True),), (
        Step("clone", (0,), {}), Step("unbind0", (1,), {}), Step("sigmoid_", (1,), {}),
        Step("unbind0", (2,), {})), True, 7076118, backward=True)
    problems, known = diff_program(program)
    assert problems and known.startswith("an op's argument error where torch first refuses")


@pytest.mark.parametrize("program", [
    lambda m, x, c: m.func.jvp(lambda x: x.sgn() * c, (x,), (x * 0 + 0.3,))[1],
    lambda m, x, c: m.func.jvp(lambda x: x.sgn().exp() * c, (x,), (x * 0 + 0.3,))[1],
    lambda m, x, c: m.func.jvp(lambda x: x.sgn() / c, (x,), (x * 0 + 0.3,))[1],
    lambda m, x, c: m.func.jvp(lambda x: x.sgn() + x, (x,), (x * 0 + 0.3,))[1],
    lambda m, x, c: m.func.jvp(lambda x: x.sign() * c, (x,), (x * 0 + 0.3,))[1],
    lambda m, x, c: m.func.jvp(m.func.grad(lambda x: ((x.abs() + 0.5) ** 1.5).sum()),
                               (c,), (x * 0 + 0.3,))[1]])
def test_a_real_sgn_tangent_is_torchs_efficient_zero(program):
    """torch's tangent of a real sgn is an efficient zero tensor: later tangent rules skip its
    term, so an inf beside it gives 0, not NaN (fwd seed 524665: jvp of grad of
    (|x| + 0.5) ** 1.5 at inf); sign's is a plain zero (NaN)."""
    def run(lib):
        tangent = program(lib, lib.tensor([2.0]), lib.tensor([float("inf")]))
        return (lib.zeros(1) + tangent).tolist()  # (torch's zero tensor has no storage)
    assert str(run(gradkit)) == str(run(torch))


@pytest.mark.parametrize("write", [
    lambda d, x: d.copy_(d), lambda d, x: d.copy_(x * 3), lambda d, x: d[:1].copy_(x[:1]),
    lambda d, x: d.copy_(x.float() * 3)])
def test_copy_backward_materializes_the_written_tensors_zeros(write):
    """torch's CopyBackwards gives the written tensor zeros_like(grad), plain zeros, and src
    the gradient itself: an efficient zero tensor (abs's second derivative) reaches the
    written tensor's history as plain zeros, which meet a NaN there (strided seed 360948:
    v.copy_(v) of v = x * x at a NaN x; gradkit passed a known zero on, giving 0)."""
    def second_derivatives(lib):
        x = lib.tensor([float("inf"), 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([0.5, float("nan")], dtype=lib.float64, requires_grad=True)
        d = (y * x).clone()
        write(d, x)
        weights = lib.tensor([0.3, 0.8], dtype=lib.float64)
        first = lib.autograd.grad((d.abs() * weights).sum(), (x, y), create_graph=True)
        second = lib.autograd.grad(sum((g * 1.7).sum() for g in first), (x, y))
        return [(lib.zeros(2, dtype=lib.float64) + g).tolist() for g in second]
    assert str(second_derivatives(gradkit)) == str(second_derivatives(torch))


@pytest.mark.parametrize("shape", [(2, 1, 1), (2, 3, 2, 1)])
def test_tangent_of_a_batched_matrix_times_vector_gradient_skips_the_missing_one(shape):
    """torch folds a batched matrix times a vector into one mv, whose matrix gradient is
    grad.ger(vec): elementwise products, whose tangent skips the cotangent's missing one.
    gradkit's was a matrix product, whose tangent counts it as zeros: 0 * NaN spread a NaN of
    the vector to every element (fwd seed 538602)."""
    def tangent(lib):
        a = lib.ones(shape, dtype=lib.float64)
        w = lib.ones(shape[:-1], dtype=lib.float64) * 0.3
        grad_a = lib.func.grad(lambda m, v: ((m @ v) * w).sum())
        return lib.func.jvp(lambda v: grad_a(a, v), (lib.tensor([float("nan")] * shape[-1],
                                                                 dtype=lib.float64),),
                            (lib.full((shape[-1],), 0.5, dtype=lib.float64),))[1].tolist()
    assert str(tangent(gradkit)) == str(tangent(torch))
