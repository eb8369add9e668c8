"""Forward-mode AD on torch's own OpInfo samples (`tests/fuzz/opinfo_forward.py`): the ops
whose tangents were fixed or checked run every sample torch's table has for them."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the ops warn as torch does

import gradkit  # noqa: E402
import gradkit.autograd.forward_ad as gradkit_fwad  # noqa: E402
from fuzz.opinfo_forward import compare_forward, differing_forward  # noqa: E402
from fuzz.opinfo_samples import op_db  # noqa: E402

import torch.autograd.forward_ad as torch_fwad  # noqa: E402

# reverse-over-forward: these write in place under no_grad (cosine_similarity's clamped
# norms) or lost the gradient of a tangent with no graph; the rest are a spread of kinds
CHECKED = ("nn.functional.cosine_similarity", "lu_solve", "quantile", "gradient", "cumsum",
           "exp", "mul", "max", "sin")


def _opinfo(name):
    return next(o for o in op_db if o.name == name)


@pytest.mark.parametrize("name", CHECKED)
def test_torch_samples_forward_mode_agree(name):
    differing = differing_forward(_opinfo(name), [torch.float64, torch.complex128], fwbw=True)
    assert not differing, differing


def test_the_comparison_sees_a_wrong_tangent():
    """The oracle can fail: torch's op with its tangent changed (the primal kept) differs."""
    opinfo = _opinfo("sin")
    sample = next(iter(opinfo.sample_inputs("cpu", torch.float64, requires_grad=True)))
    assert compare_forward(opinfo, sample) is None
    broken = type(opinfo)("sin", op=lambda x: torch.sin(x) + (x - x.detach()),
                          sample_inputs_func=opinfo.sample_inputs_func, dtypes=opinfo.dtypes)
    assert compare_forward(broken, sample).startswith("tangent[0] values")


def _tangent_after_inplace_under_no_grad(lib, fwad, first=1.5):
    x = lib.tensor([first, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    with fwad.dual_level():
        dual = fwad.make_dual(x, lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64))
        y = (dual * dual).clone()
        with lib.no_grad():  # cosine_similarity's floor of its norms
            y.clamp_(min=2.0)
        tangent = fwad.unpack_dual(y).tangent
    return tangent, lib.autograd.grad(tangent.sum(), x)[0]


def test_in_place_tangent_under_no_grad_is_recorded_as_torch():
    """torch records an in-place write's new tangent even under no_grad (not the value's):
    the gradient of the tangent reaches the input through the tangent before the write."""
    expected = _tangent_after_inplace_under_no_grad(torch, torch_fwad)
    got = _tangent_after_inplace_under_no_grad(gradkit, gradkit_fwad)
    assert got[0].grad_fn is not None
    for a, b in zip(expected, got):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12)
    # Known: where the floor holds, torch writes the new tangent into the old one unrecorded,
    # its gradient the old tangent's (2 t = 1); gradkit's is the derivative of the new one
    assert _tangent_after_inplace_under_no_grad(torch, torch_fwad, 1.0)[1][0] == 1.0
    assert _tangent_after_inplace_under_no_grad(gradkit, gradkit_fwad, 1.0)[1][0] == 0.0


def _triangular_solve_tangent(lib, fwad, a, b, t):
    with fwad.dual_level():
        dual = fwad.make_dual(lib.tensor(a), lib.tensor(t))
        return fwad.unpack_dual(lib.triangular_solve(lib.tensor(b), dual)[0]).tangent.numpy()


def test_known_triangular_solve_tangent_reads_one_triangle():
    """Known (docs/torch_expectations.md): the value reads A's upper triangle, so a tangent in
    the strict lower triangle changes nothing; torch's jvp pushes it anyway (its own reverse
    mode and finite differences say zero)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 1))
    lower = np.tril(np.ones((3, 3)), -1)
    assert np.abs(_triangular_solve_tangent(torch, torch_fwad, a, b, lower)).max() > 0.01
    np.testing.assert_array_equal(_triangular_solve_tangent(gradkit, gradkit_fwad, a, b, lower),
                                  0)


def test_known_layer_norm_gradient_of_tangent_is_the_finite_difference():
    """Known: torch's layer_norm tangent reads its saved mean and rstd as constants; gradkit's
    gradient of the tangent is the finite difference of torch's own tangent."""
    rng = np.random.default_rng(0)
    a, t, w = (rng.standard_normal((2, 4)) for _ in range(3))
    x = gradkit.tensor(a, requires_grad=True)
    with gradkit_fwad.dual_level():
        y = gradkit.nn.functional.layer_norm(gradkit_fwad.make_dual(x, gradkit.tensor(t)), (4,))
        tangent = gradkit_fwad.unpack_dual(y).tangent
    got = gradkit.autograd.grad((tangent * gradkit.tensor(w)).sum(), x)[0].numpy()

    def torch_tangent(values):
        return torch.func.jvp(lambda v: torch.nn.functional.layer_norm(v, (4,)),
                              (torch.tensor(values),), (torch.tensor(t),))[1].numpy()
    expected = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[idx] = 1e-5
        expected[idx] = ((torch_tangent(a + step) - torch_tangent(a - step)) * w).sum() / 2e-5
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
