"""Second derivatives of torch's OpInfo samples agree with torch for the ops fixed from the
scan (``python tests/fuzz/opinfo_gradgrad.py``): each fixed op runs every sample torch's table
has for it, and a closed form or gradgradcheck pins the derivative without torch."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the ops warn as torch does

from fuzz.opinfo_gradgrad import differing_gradgrad, gradgrad_difference  # noqa: E402
from fuzz.opinfo_samples import op_db  # noqa: E402

# (OpInfo name, reference inputs too): angle differed on its reference inputs only
FIXED = [("linalg.eigvalsh", False), ("linalg.eigh", False), ("angle", True)]


@pytest.mark.parametrize("name, reference", FIXED)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_torch_samples_of_fixed_ops_agree_to_second_order(name, reference, dtype):
    opinfos = [o for o in op_db if o.name == name]
    assert opinfos
    for opinfo in opinfos:
        assert not differing_gradgrad(opinfo, getattr(torch, dtype), reference)


def test_angle_second_derivative_at_zero_is_nan_as_torch():
    """torch's angle_backward is where(x == 0, 0, g i x / |x|^2): the first derivative at 0 is
    0, the second NaN (the unselected 0 / 0). Closed form at x = a + ib: Re g = -b / (a² + b²),
    whose gradient at 1 + 1j is (2ab / r⁴) + i (2b² - r²) / r⁴ = 0.5."""
    results = []
    for lib in (torch, gradkit):
        x = lib.tensor([0j, 1 + 1j], dtype=lib.complex128, requires_grad=True)
        (g,) = lib.autograd.grad(lib.angle(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.real.sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    (tg, tgg), (g, gg) = results
    np.testing.assert_allclose(g, tg, atol=1e-15)
    assert g[0] == 0 and np.isnan(gg[0].real) and np.isnan(tgg[0].real)
    np.testing.assert_allclose(gg[1], tgg[1], atol=1e-15)
    np.testing.assert_allclose(gg[1], 0.5, atol=1e-15)


def _sin_with_no_second(x):
    """sin(x) whose gradient, the cos of x detached, has no derivative of its own."""
    fixed = x.detach()
    return fixed.sin() + fixed.cos() * (x - fixed)


def test_the_comparison_sees_a_missing_second_derivative():
    x = np.array([0.3, -1.2, 2.0])
    tx = torch.tensor(x, requires_grad=True)
    gx = gradkit.tensor(x, requires_grad=True)
    assert gradgrad_difference([tx.sin()], [gx.sin()], [tx], [gx]) is None
    found = gradgrad_difference([tx.sin()], [_sin_with_no_second(gx)], [tx], [gx])
    assert found == "gradgrad of input 0: None in gradkit only"


@pytest.mark.parametrize("dtype", [gradkit.float64, gradkit.complex128])
def test_eigh_double_backward_is_gradgradchecked(dtype):
    """Through torch's Hermitian wrapper (A + A^H) / 2, the numerical second derivative."""
    a = gradkit.randn(4, 4, dtype=dtype, generator=gradkit.Generator().manual_seed(0))
    a.requires_grad_(True)

    def values_and_gauge_free_vectors(x):
        values, vectors = gradkit.linalg.eigh((x + x.mH) / 2)
        return values, (vectors * vectors.conj()).real  # |V|^2: free of each column's phase

    assert gradkit.autograd.gradgradcheck(values_and_gauge_free_vectors, (a,))


def test_eigh_gradient_is_hermitian_as_torch():
    """torch projects V^H gV on the skew-Hermitian matrices: gA = V (skew(V^H gV) / E) V^H is
    symmetric for a real A (before: not symmetric, with the same symmetric part)."""
    x = np.array([[2.0, 0.5, -0.3], [0.5, 1.0, 0.2], [-0.3, 0.2, -1.5]])
    w = np.array([[0.3, -1.0, 0.7], [1.1, 0.4, -0.2], [-0.6, 0.9, 0.5]])
    grads = []
    for lib in (torch, gradkit):
        a = lib.tensor(x, requires_grad=True)
        vectors = lib.linalg.eigh(a)[1]
        (vectors * vectors * lib.tensor(w)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-12)
    np.testing.assert_allclose(grads[1], grads[1].T, atol=1e-12)


def _sinc_second_derivative(lib, xs):
    x = lib.tensor(xs, requires_grad=True)
    (g,) = lib.autograd.grad(lib.sinc(x).sum(), x, create_graph=True)
    return lib.autograd.grad(g.sum(), x)[0].numpy()


def test_known_sinc_second_derivative_cancels_near_zero_as_torchs():
    """Known: torch's sinc_backward (pi x cos(pi x) - sin(pi x)) / (pi x²), differentiated,
    cancels near 0 (the scan's 3.9e-6 between the libraries): gradkit differentiates the same
    formula, so both sit within the cancellation's error of the series -pi²/3 + pi⁴x²/10,
    neither exact, and apart only by the order their graphs sum it."""
    xs = np.array([1e-6, 1e-5, 1e-4, 1e-3, 0.3, 2.5])
    series = -np.pi ** 2 / 3 + np.pi ** 4 * xs ** 2 / 10
    u = np.pi * xs  # away from 0: pi² (-sin u / u - 2 cos u / u² + 2 sin u / u³)
    closed = np.pi ** 2 * (-np.sin(u) / u - 2 * np.cos(u) / u ** 2 + 2 * np.sin(u) / u ** 3)
    exact = np.where(xs < 1e-2, series, closed)
    bound = 1e-15 / xs ** 2 + 1e-7  # eps over (pi x)² relative to the terms' size
    for lib in (torch, gradkit):
        got = _sinc_second_derivative(lib, xs)
        assert (np.abs(got - exact) < bound).all()
    assert np.abs(_sinc_second_derivative(gradkit, xs[:1]) - series[0]) > 1e-6
