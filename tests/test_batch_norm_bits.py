"""batch_norm in float32 and float64 bit for bit with torch 2.13's CPU kernels (fuzzer class
strided_breadth seed 1468: a 1-ulp difference made a mean -6e-8 instead of 0, its log NaN
instead of -inf), and its derivatives still those of the formula."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

SHAPES = [(1, 1, 2), (4, 3, 5), (2, 3, 4, 5), (8, 5, 7, 9)]


def _inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[1]
    return ((rng.standard_normal(shape) * 3 + 1).astype(dtype),
            rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype),
            rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype))


def _run(m, arrays, training, affine, layout=None):
    x, w, b, rm, rv = (m.tensor(a.copy()) for a in arrays)
    if layout:
        x = x.contiguous(memory_format=getattr(m, layout))
    out = m.nn.functional.batch_norm(x, rm, rv, w if affine else None, b if affine else None,
                                     training, 0.1, 1e-5)
    return [np.ascontiguousarray(t.detach().numpy()) for t in (out, rm, rv)]


def _assert_bits(arrays, training, affine, layout=None):
    got, expected = (_run(m, arrays, training, affine, layout) for m in (gradkit, torch))
    for name, g, e in zip(("output", "running_mean", "running_var"), got, expected):
        assert g.tobytes() == e.tobytes(), name


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_float32_batch_norm_is_torchs_bit_for_bit(shape, training, affine, seed):
    _assert_bits(_inputs(shape, np.float32, seed), training, affine)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", [None, "channels_last"])
@pytest.mark.parametrize("affine", [True, False])
def test_evaluation_batch_norm_is_torchs_bit_for_bit(dtype, layout, affine):
    """Evaluation: ``x * alpha + beta`` fused, with ``invstd = 1 / sqrt(var + eps)`` in the
    input's dtype, as torch's kernel (channels last too)."""
    for seed in range(3):
        _assert_bits(_inputs((2, 3, 4, 5), dtype, seed), False, affine, layout)


@pytest.mark.parametrize("shape,layout", [((6, 4), None), ((3, 7), None), ((2, 5), None),
                                          ((2, 3, 4, 5), "channels_last"),
                                          ((8, 5, 7, 9), "channels_last")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_training_on_rows_of_channels_is_torchs_bit_for_bit(shape, layout, dtype):
    """(N, C) and channels-last inputs: torch's kernel splits the rows among its threads
    (gradkit.get_num_threads(), the machine's cores, as torch's count), each summing into a
    buffer of the input's dtype; gradkit splits them the same way."""
    if gradkit.get_num_threads() != torch.get_num_threads():
        pytest.skip("torch's thread count differs from gradkit's")
    for seed in range(3):
        _assert_bits(_inputs(shape, dtype, seed), True, seed != 1, layout)


def test_the_fuzzers_mean_is_torchs_zero():
    """seed 1468: two values per channel normalize to two opposite numbers, their mean 0
    (gradkit's were 0.9999731 and -0.99997324, mean -6e-8), so its log is -inf as torch's."""
    def program(m):
        x = m.tensor([[[0.3, 0.7]]])
        out = m.nn.functional.batch_norm(x, None, None, training=True)
        return out.numpy().tobytes(), out.mean().log().item()
    assert program(gradkit) == program(torch)
    assert program(gradkit)[1] == -np.inf


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_derivatives_are_the_formulas(training):
    """The forward is torch's arithmetic (casts, a running sum, a fused multiply-add corrected
    by a constant) yet composed of differentiable ops: first and second derivatives pass."""
    x, w, b, rm, rv = (gradkit.tensor(a, requires_grad=i < 3)
                       for i, a in enumerate(_inputs((3, 2, 4), np.float64)))

    def f(x, w, b):
        return gradkit.nn.functional.batch_norm(x, rm.clone(), rv.clone(), w, b, training)
    assert gradkit.autograd.gradcheck(f, (x, w, b))
    assert gradkit.autograd.gradgradcheck(f, (x, w, b))


def test_float32_batch_norm_gradients_match_torch():
    """The derivatives of the new composition are the formula's: close to torch's kernel."""
    arrays = _inputs((4, 3, 5), np.float32)
    grads = []
    for m in (gradkit, torch):
        x, w, b = (m.tensor(a.copy(), requires_grad=True) for a in arrays[:3])
        out = m.nn.functional.batch_norm(x, None, None, w, b, True)
        (out * m.tensor(arrays[0][::-1].copy())).sum().backward()
        grads.append([t.grad.numpy() for t in (x, w, b)])
    for g, e in zip(*grads):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(4, 3, 5), (2, 3, 4, 5), (6, 4)])
def test_native_statistics_and_update_stats_are_torchs_bit_for_bit(shape):
    """native_batch_norm's save_mean and save_invstd, batch_norm_update_stats's mean and
    biased variance and its running statistics: the same kernel arithmetic (float32)."""
    if gradkit.get_num_threads() != torch.get_num_threads():
        pytest.skip("torch's thread count differs from gradkit's")
    x, _, _, rm, rv = _inputs(shape, np.float32, seed=4)

    def program(m):
        running = m.tensor(rm.copy()), m.tensor(rv.copy())
        native = m.native_batch_norm(m.tensor(x), None, None, None, None, True, 0.1, 1e-5)
        stats = m.batch_norm_update_stats(m.tensor(x), *running, 0.1)
        return [np.ascontiguousarray(t.numpy()).tobytes() for t in (*native, *stats, *running)]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("shape", [(4, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("affine", [True, False])
def test_float32_instance_norm_is_torchs_bit_for_bit(shape, affine):
    """instance_norm is batch_norm of the (1, N * C, *) view: the same arithmetic."""
    x, w, b, rm, rv = _inputs(shape, np.float32, seed=5)

    def program(m):
        running = m.tensor(rm.copy()), m.tensor(rv.copy())
        params = (m.tensor(w), m.tensor(b)) if affine else (None, None)
        out = m.nn.functional.instance_norm(m.tensor(x), *running, *params)
        return [np.ascontiguousarray(t.numpy()).tobytes() for t in (out, *running)]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("values", [[1e200, -1e200, 3.0, 1.0], [np.inf, 1.0, 2.0, 3.0],
                                    [3e38, -3e38, 1.0, 2.0]])
@pytest.mark.parametrize("shape", [(4, 1), (2, 1, 2, 1)])
def test_overflowing_and_infinite_batches_are_torchs(dtype, values, shape):
    """A sum of squares that overflows, or an infinite value: the constant that makes the
    fused float64 sums torch's stays out of the way (an infinite sum stays infinite)."""
    def program(m):
        x = m.tensor(np.array(values).reshape(shape), dtype=getattr(m, dtype))
        if len(shape) == 4:
            x = x.contiguous(memory_format=m.channels_last)
        running = m.zeros(1, dtype=x.dtype), m.ones(1, dtype=x.dtype)
        out = m.nn.functional.batch_norm(x, *running, training=True)
        return [np.ascontiguousarray(t.numpy()).tobytes() for t in (out, *running)]
    assert program(gradkit) == program(torch)
