"""binary_cross_entropy's derivatives as torch's formulas: its backward kernel (EPSILON a
float, the weight and the mean applied after it) and the double backward of that kernel
(FunctionsManual's binary_cross_entropy_double_backward*), which differ from the derivatives
of a clamped quotient where x (1 - x) is below the clamp; each compared with torch 2.13."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

_INPUTS = [0.0, 1e-13, 5e-14, 0.3, 0.75, 1.0 - 1e-13, 1.0, 0.5]
_TARGETS = [0.3, 0.0, 1.0, 0.9, 0.25, 0.6, 0.7, 0.5]


def _derivatives(m, dtype: str, reduction: str, weighted: bool, wrt_target: bool):
    kind = getattr(m, dtype)
    x = m.tensor(_INPUTS, dtype=kind, requires_grad=True)
    t = m.tensor(_TARGETS, dtype=kind, requires_grad=wrt_target)
    w = m.tensor(np.linspace(0.5, 2.0, len(_INPUTS)), dtype=kind) if weighted else None
    loss = m.nn.functional.binary_cross_entropy(x, t, w, reduction=reduction)
    upstream = m.tensor(np.linspace(-1.0, 1.5, loss.numel()).reshape(loss.shape), dtype=kind,
                        requires_grad=True)
    leaves = (x, t) if wrt_target else (x,)
    firsts = m.autograd.grad(loss, leaves, upstream, create_graph=True)
    probe = sum((g * m.linspace(0.2, 1.1, g.numel(), dtype=kind)).sum() for g in firsts)
    seconds = m.autograd.grad(probe, leaves + (upstream,), allow_unused=True)
    return [v.detach().numpy().tolist() for v in (loss,) + firsts + seconds if v is not None]


@pytest.mark.parametrize("wrt_target", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_first_and_second_derivatives_are_torchs(dtype, reduction, weighted, wrt_target):
    ours = _derivatives(gradkit, dtype, reduction, weighted, wrt_target)
    theirs = _derivatives(torch, dtype, reduction, weighted, wrt_target)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == "float32" else 1e-13)


def test_derivatives_at_the_clamp_are_torchs_exactly():
    """At x = 1e-13 the first derivative is -t / EPSILON with EPSILON float32's 1e-12
    (-300000001198.6), and the second (x² - 2xt + t) / ((x + eps)² (1 - x + eps)²), 2.5e23;
    gradkit had -299999999999.9 and 1e12 (the clamp's derivative)."""
    def program(m):
        x = m.tensor([1e-13, 0.0, 1.0], dtype=m.float64, requires_grad=True)
        loss = m.nn.functional.binary_cross_entropy(x, m.tensor([0.3, 0.4, 0.2],
                                                                dtype=m.float64),
                                                    reduction="sum")
        g, = m.autograd.grad(loss, x, create_graph=True)
        return g.tolist(), m.autograd.grad(g.sum(), x)[0].tolist()
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_forward_mode_derivative_is_torchs(dtype):
    def program(m):
        kind = getattr(m, dtype)
        x, t = m.tensor(_INPUTS, dtype=kind), m.tensor(_TARGETS, dtype=kind)
        tangents = (m.linspace(-1, 1, len(_INPUTS), dtype=kind),
                    m.linspace(0.5, -0.5, len(_INPUTS), dtype=kind))
        with m.autograd.forward_ad.dual_level():
            loss = m.nn.functional.binary_cross_entropy(
                m.autograd.forward_ad.make_dual(x, tangents[0]),
                m.autograd.forward_ad.make_dual(t, tangents[1]), reduction="sum")
            return m.autograd.forward_ad.unpack_dual(loss).tangent.item()
    np.testing.assert_allclose(program(gradkit), program(torch),
                               rtol=1e-5 if dtype == "float32" else 1e-13)
