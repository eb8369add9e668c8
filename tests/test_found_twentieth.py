"""Differences the fuzzer found in the twentieth session, each program run in gradkit and in
torch 2.13 (skipped without torch)."""
import warnings

import numpy as np
import pytest
from cpu_kernels import torch_runs_avx512_kernels
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate

import gradkit

torch = pytest.importorskip("torch")


def _outcome(call):
    """("ok", value as a list, its bits) or (error type name, message)."""
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return type(error).__name__, str(error).replace("gradkit", "LIB").replace("torch", "LIB")
    array = np.asarray(value.detach().numpy())
    signs = [np.signbit(part).tolist() for part in (array.real, array.imag)]
    return "ok", repr(array.tolist()), signs


_SINGULAR = [
    [[-0.784577390139372] * 2] * 2,  # OpenBLAS's LU: det 8.7e-17; MKL's: -0.0
    [[0.3, 0.7, 0.1], [0.6, 1.4, 0.2], [1.0, 2.0, 3.0]],  # MKL's: -0.0 of A, -9.4e-17 of A^T
    [[0.1, 0.3], [0.2, 0.6]],
    [[1.0, 2.0], [2.0, 4.0]]]
_LAYOUTS = {"contiguous": lambda t: t, "column_major": lambda t: t.mT.contiguous().mT,
            "batch": lambda t: t.expand(2, *t.shape)}


@pytest.mark.parametrize("entries", _SINGULAR)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("name", ["det", "slogdet"])
def test_det_of_a_singular_matrix_is_torchs_bits_and_its_backward_computes(entries, dtype,
                                                                           layout, name):
    """torch's det is its LU's pivot sign times its diagonal's product (slogdet: the signs'
    product and the sum of log magnitudes), MKL's rounding of A^T for a contiguous A, of A
    otherwise: a singular matrix whose NumPy (OpenBLAS) LU left noise for a pivot has det ±0
    and logabsdet -inf there, or the noise of the transposed matrix's pivots; gradkit's det
    backward then solved with a matrix its own getrf found singular, and raised
    (strided_breadth seed 1751279). det's gradient there is the documented adjugate (torch's
    is zeros)."""
    def call(m):
        result = getattr(m.linalg, name)(_LAYOUTS[layout](m.tensor(entries,
                                                                   dtype=getattr(m, dtype))))
        return m.stack(list(result)) if name == "slogdet" else result
    ours, theirs = _outcome(lambda: call(gradkit)), _outcome(lambda: call(torch))
    if ours != theirs and not torch_runs_avx512_kernels():  # (where the replay was read)
        pytest.skip("this CPU's MKL getrf rounds this matrix otherwise than its AVX-512 one")
    assert ours == theirs
    grads = []
    for m in (gradkit, torch):
        a = m.tensor(entries, dtype=getattr(m, dtype), requires_grad=True)
        det = m.linalg.det(_LAYOUTS[layout](a))
        det.sum().backward()
        grads.append(a.grad.numpy())
    assert np.isfinite(grads[0]).all()
    if det.detach().ne(0).all():  # torch's plain backward through its LU, as gradkit's now
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def test_the_fuzzers_singular_det_is_known_or_agrees():
    problems, known = diff_program(generate(RandomDrawer(1751279), "strided_breadth"))
    assert not problems or known is not None and "adjugate" in known


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_of_the_det_of_an_empty_matrix_has_no_graph_as_torch(dtype, create_graph):
    """torch's det backward of a 0 x 0 matrix gives empty zeros with no graph back to the
    incoming gradient, so a second derivative through it is 0 (strided_breadth seed
    1758105: gradkit's carried inf * 0 = NaN from an addcmul by inf)."""
    def second(m):
        value = 0.19521095766536822 + (0.7679096160217347j if dtype == "complex128" else 0)
        x = m.tensor([value], dtype=getattr(m, dtype), requires_grad=True)
        d = m.linalg.det(x.reshape(-1)[:0].reshape(0, 0))
        y = m.addcmul(x, d, x, value=float("inf"))
        loss = (d * 0.2).real + (y * 0.7).sum().real
        g, = m.autograd.grad(loss, x, create_graph=create_graph)
        empty, = m.autograd.grad(m.linalg.det(x[:0].reshape(0, 0)).real, x,
                                 create_graph=True)
        assert not empty.requires_grad
        return m.autograd.grad((g * 0.6).sum().real, x)[0] if create_graph else g
    assert _outcome(lambda: second(gradkit)) == _outcome(lambda: second(torch))


def test_second_derivative_of_an_empty_convolution_is_zeros_where_torch_refuses():
    """Documented (docs/numerics.md, "convolution whose output is empty"; strided_breadth
    seed 1761222): a grouped, strided conv_transpose1d of width 0 differentiates twice to
    zeros here; torch's double backward convolves the empty gradient and raises."""
    def second(m):
        x = m.tensor([[0.18372906744480133, -0.13058847188949585]], requires_grad=True)
        y = m.nn.functional.conv_transpose1d(x.reshape(1, 2, 1), x.reshape(2, 1, 1), stride=2,
                                             padding=1, dilation=2, groups=2, output_padding=1)
        assert y.shape == (1, 2, 0)
        g, = m.autograd.grad(x.sum() + y.sum(), x, create_graph=True)
        return m.autograd.grad(g.sum(), x, allow_unused=True, materialize_grads=True)[0]
    assert _outcome(lambda: second(gradkit))[0] == "ok"
    assert not second(gradkit).any()
    assert "Only zero batch or zero channel inputs" in _outcome(lambda: second(torch))[1]
    problems, known = diff_program(generate(RandomDrawer(1761222), "strided_breadth"))
    assert not problems or known.startswith("a convolution's second derivative where its")


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (2, 3)), ((1, 3), (1,)),
                                    ((2, 1), (1, 3))])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_second_derivative_with_a_broadcast_target_as_torch(shapes, reduction):
    """mse_loss's double backward divides a mean by the broadcast count (torch's functional
    expands input and target first); gradkit divided the target's part by the target's own
    count (breadth seed 1761764: a second derivative 12 % off, silently)."""
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(shape) for shape in shapes]

    def second(m):
        x, y = (m.tensor(v, requires_grad=True) for v in values)
        loss = m.nn.functional.mse_loss(x, y, reduction=reduction)
        weights = m.linspace(0.3, 1.1, loss.numel(), dtype=m.float64).reshape(loss.shape)
        gx, gy = m.autograd.grad((loss * weights).sum(), (x, y), create_graph=True)
        probe = (gx * m.linspace(-1, 1, gx.numel(), dtype=m.float64).reshape(gx.shape)).sum() \
            + (gy * m.linspace(0.5, -0.2, gy.numel(), dtype=m.float64).reshape(gy.shape)).sum()
        return m.cat([g.reshape(-1) for g in m.autograd.grad(probe, (x, y))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a broadcast target's warning)
        ours, theirs = (second(m).numpy() for m in (gradkit, torch))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    inputs = tuple(gradkit.tensor(v, requires_grad=True) for v in values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradkit.autograd.gradgradcheck(
            lambda x, y: gradkit.nn.functional.mse_loss(x, y, reduction=reduction), inputs)


@pytest.mark.parametrize("sizes", [(0, 2), (2, 0), (0,)])
def test_gradient_through_a_zero_repeat_has_no_graph_as_torch(sizes):
    """torch's repeat_backward gives zeros with no graph back to the incoming gradient when a
    repeat is 0, so a second derivative never reaches what made that gradient (strided_breadth
    seed 1805653: a multi_margin_loss of an empty tile, whose backward has no derivative,
    refused the double backward here)."""
    def second(m):
        x = m.tensor([[0.3, -0.8]] if len(sizes) == 2 else [0.3, -0.8], dtype=m.float64,
                     requires_grad=True)
        tiled = x.tile(sizes).reshape(-1, 2)
        loss = m.nn.functional.multi_margin_loss(tiled, m.zeros(0, dtype=m.int64),
                                                 reduction="sum") + (x * x).sum()
        g, = m.autograd.grad(loss, x, create_graph=True)
        repeated, = m.autograd.grad(x.repeat(sizes).sum(), x, create_graph=True)
        assert not repeated.requires_grad
        return m.autograd.grad(g.sum(), x)[0]
    assert _outcome(lambda: second(gradkit)) == _outcome(lambda: second(torch))


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_variance_of_single_precision_values_is_torchs_double_welford(name, dtype):
    """torch's CPU var/std of real tensors accumulate a Welford pass in double and round once
    (std after its square root): float32 values of 7.7e26 have a finite std (3.3e26) though
    their variance overflows (strided_breadth seed 1807543: gradkit's was inf), and every
    float32 result is torch's bit for bit (61-79 % before: NumPy's var in float32)."""
    rng = np.random.default_rng(1)
    for shape, dim in (((1000,), None), ((64, 37), 1), ((64, 37), 0), ((3, 4, 5), (0, 2))):
        x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
        for correction in (0, 1):
            ours, theirs = (getattr(m, name)(m.tensor(x), dim=dim, correction=correction)
                            for m in (gradkit, torch))
            for a, b in zip(*((r if isinstance(r, tuple) else (r,)) for r in (ours, theirs))):
                np.testing.assert_array_equal(a.numpy(), b.numpy())
    if dtype == "float32":
        huge = [1.0, 9.16e8, 8.39e17, 7.686352e26]
        values = [m.tensor(huge, dtype=m.float32).std(correction=0).item()
                  for m in (gradkit, torch)]
        assert values[0] == values[1] == pytest.approx(3.328288e26, rel=1e-6)
