"""Differences the fuzzer found in the twenty-second session's seeds8 lane (the differential
fuzzer's new seeds), each program run in gradkit and in torch 2.13 (skipped without torch)."""
import numpy as np
import pytest
from fuzz.known import diff_program, known_difference
from fuzz.programs import RandomDrawer, generate
from fuzz.runner import compare, run
from test_breadth_fuzz_found import _outcome

import gradkit

torch = pytest.importorskip("torch")


def _cell_second_derivative(lib, dtype: str) -> float:
    """d2/dy2 of rnn_tanh_cell's sum, its weights, biases and state made of y (wide seed
    190162's shrunk program: the pre-activation is -8.2877, tanh an ulp or two from -1)."""
    d, x = getattr(lib, dtype), 30.9173641204834
    y = lib.tensor([-0.8275285363197327], dtype=d, requires_grad=True)
    inp = lib.tensor([[x], [x]], dtype=d)
    out = lib.rnn_tanh_cell(inp, y.expand(2, 2), y.reshape(1, 1).expand(2, 1) * 0.5,
                            lib.full((2, 2), x, dtype=d) * 0.5, lib.full((2,), x, dtype=d),
                            y.expand(2))
    g, = lib.autograd.grad(out.sum(), y, create_graph=True)
    return lib.autograd.grad(g.sum(), y)[0].item()


def test_second_derivative_of_a_saturated_float32_tanh_is_a_known_rounding():
    """NumPy's float32 tanh(-8.2877) is 1 - 3 ulp, torch's 1 - 2 ulp (float64: 1 - 2.12
    ulp), and the second derivative through 1 - t ** 2 moves by half (0.00099 here, 0.00066
    in torch: wide seed 190162). In float64 both agree; a wrong value is not Known."""
    assert _cell_second_derivative(gradkit, "float64") == pytest.approx(
        _cell_second_derivative(torch, "float64"), rel=1e-9)
    program = generate(RandomDrawer(190162), "wide")
    problems, known = diff_program(program)
    assert known == "a step that turns a rounding difference of its input into another " \
        "number" or not problems
    mine, theirs = run(program, gradkit), run(program, torch)
    out = len(mine.values) - 1
    wrong = mine._replace(values=[v * np.float32(1.01) if i == out else v
                                  for i, v in enumerate(mine.values)])
    assert compare(wrong, theirs) and known_difference(program, wrong, theirs) is None


def test_mask_of_an_fft_of_non_finite_values_is_known_in_the_gradients():
    """A real fft (length 35) of a transposed convolution's output holding inf, -inf and NaN:
    its DC term is nan + 0j in pocketfft, nan + nanj in torch's MKL, so x * isreal(x) keeps
    it here and zeroes it in torch, and the gradient of every input differs by that term's
    weight (wide seed 199852; the values compare equal, NaN to NaN). Known; a wrong value
    of the convolution is not."""
    program = generate(RandomDrawer(199852), "wide")
    problems, known = diff_program(program)
    assert known == "an FFT of non-finite values: pocketfft's inf/NaN, not MKL's" or not problems
    mine, theirs = run(program, gradkit), run(program, torch)
    k = next(k for k, step in enumerate(program.steps) if step.op == "fb_convolution")
    out = len(program.leaves) + k
    wrong = mine._replace(values=[v * 1.01 if i == out else v for i, v in enumerate(mine.values)])
    assert compare(wrong, theirs) and known_difference(program, wrong, theirs) is None


def _norm_then_write(m, norm: str, view: str):
    """A norm of ``x``'s real part (a strided view) or of x's reshape (contiguous), x then
    written in place, and the input's gradient (float64)."""
    leaf = m.tensor([[1 + 2j, 3 - 1j, 0.5 + 0.5j, 2 + 0j]], dtype=m.complex128,
                    requires_grad=True)
    x = leaf.clone() if view == "strided" else leaf.real.clone()
    inp = x.real.reshape(1, 2, 2, 1)
    if norm == "group":
        out = m.nn.functional.group_norm(inp, 1, eps=0.01)
    else:
        out = m.nn.functional.instance_norm(inp)
    x.mul_(2)
    weights = m.arange(1, 5, dtype=m.float64).reshape(1, 2, 2, 1)
    return m.autograd.grad((out ** 3 * weights).sum(), leaf)[0]


@pytest.mark.parametrize("norm", ["group", "instance"])
@pytest.mark.parametrize("view", ["strided", "contiguous"])
def test_group_and_instance_norm_save_a_contiguous_copy_of_a_strided_input(norm, view):
    """ATen's group_norm hands native_group_norm ``input.contiguous(suggested format)`` and
    instance_norm folds ``input.contiguous()``: a strided input (the real part of a complex
    tensor) is copied, the node saves the copy, and a later in-place write of the input
    leaves backward alone; a contiguous input is saved itself and the write refuses backward
    (wide seed 194183: gradkit saved the view and raised in backward, torch computed)."""
    ours, theirs = (_outcome(lambda m=m: _norm_then_write(m, norm, view))
                    for m in (gradkit, torch))
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    else:
        assert ours[1][:60] == theirs[1][:60]


def test_group_norm_of_a_written_complex_real_part_agrees():
    """wide seed 194183: group_norm of a complex leaf's real part, then logical_xor_ of it."""
    assert diff_program(generate(RandomDrawer(194183), "wide")) == ([], None)
