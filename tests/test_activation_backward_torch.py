"""tanh's and sigmoid's backward as torch's tanh_backward / sigmoid_backward: the first
derivative's kernel, and under create_graph the TanhBackwardBackward0 /
SigmoidBackwardBackward0 nodes with their saved values and second derivatives, each compared
with torch 2.13 on the same program (skipped without torch)."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_gradient_rounds_as_torchs_kernel(dtype):
    """torch's sigmoid_backward computes g (1 - y) y in that order; gradkit multiplied g by
    y (1 - y), an ulp apart in a third of the entries. Where both forwards agree, every
    gradient is now torch's bit for bit."""
    rng = np.random.default_rng(0)
    x, g = (rng.standard_normal(4000).astype(dtype) for _ in range(2))
    outs, grads = [], []
    for m in (gradkit, torch):
        t = m.tensor(x, requires_grad=True)
        y = t.sigmoid()
        y.backward(m.tensor(g))
        outs.append(y.detach().numpy())
        grads.append(t.grad.numpy())
    same = outs[0] == outs[1]
    assert same.mean() > 0.8
    np.testing.assert_array_equal(grads[0][same], grads[1][same])


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_second_derivative_nodes_and_values_as_torch(name, dtype):
    def second(m):
        x = m.tensor([[0.3 + 0.2j, -1.2 - 0.5j, 2.0 + 0.1j]] if dtype == "complex128" else
                     [[0.3, -1.2, 2.0]], dtype=getattr(m, dtype), requires_grad=True)
        v = m.tensor([[0.5, 1.5, -2.0]], dtype=getattr(m, dtype))
        g, = m.autograd.grad(getattr(x, name)(), x, v, create_graph=True)
        node = g.grad_fn
        saved = [getattr(node, attr).detach().numpy().tolist()
                 for attr in ("_saved_grad_output", "_saved_output")]
        gg, = m.autograd.grad(g, x, m.tensor([[0.7, -0.2, 0.9]], dtype=getattr(m, dtype)))
        return node.name(), saved, gg.numpy()
    (name_k, saved_k, gg_k), (name_t, saved_t, gg_t) = second(gradkit), second(torch)
    assert name_k == name_t == f"{name.capitalize()}BackwardBackward0"
    np.testing.assert_allclose(np.array(saved_k), np.array(saved_t), rtol=1e-15)
    np.testing.assert_allclose(gg_k, gg_t, rtol=1e-13)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_the_backward_ops_pass_gradgradcheck_and_forward_mode(name):
    x = gradkit.tensor([[0.3 + 0.2j, -1.2 - 0.5j]], dtype=gradkit.complex128,
                       requires_grad=True)
    assert gradkit.autograd.gradgradcheck(lambda a: getattr(a, name)(), (x,))
    assert gradkit.autograd.gradcheck(lambda a: getattr(a, name)(), (x,), check_forward_ad=True)
