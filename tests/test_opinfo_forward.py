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
# norms) or lost the gradient of a tangent with no graph; householder_product's jvp raised
# for a matrix with no columns, lstsq's gave no tangent for empty residuals, the norms'
# gradient of the tangent at 0; the rest are a spread of kinds
CHECKED = ("nn.functional.cosine_similarity", "lu_solve", "quantile", "gradient", "cumsum",
           "exp", "mul", "max", "sin", "linalg.householder_product", "linalg.lstsq",
           "linalg.vector_norm", "linalg.norm")


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


def _tangent(lib, fwad, f, x, t):
    with fwad.dual_level():
        return fwad.unpack_dual(f(lib, fwad.make_dual(lib.tensor(x), lib.tensor(t)))).tangent


def test_lstsq_residuals_not_computed_have_an_empty_tangent_as_torch():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    for dtype in ("float64", "complex128"):
        got, expected = (_tangent(lib, fwad, lambda lib, v: lib.linalg.lstsq(
            v, lib.tensor(b).to(v.dtype), driver="gels").residuals,
            a.astype(dtype), a.astype(dtype)) for lib, fwad in ((gradkit, gradkit_fwad),
                                                                (torch, torch_fwad)))
        assert got is not None and tuple(got.shape) == tuple(expected.shape) == (0,)
        assert str(got.dtype)[8:] == str(expected.dtype)[6:] == "float64"


def _logcumsumexp(lib, v):
    return lib.logcumsumexp(v, 0)


def test_known_logcumsumexp_tangent_does_not_underflow():
    """Known: torch's jvp weighs by exp(x - max), 0 / 0 where a prefix is far below the max
    (and exp(x) overflows for complex x); gradkit's is the closed form, t_0 first."""
    x, t = np.array([-800.0, -740.0, 0.0]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(_tangent(gradkit, gradkit_fwad, _logcumsumexp, x, t).numpy(),
                               [1.0, 2.0, 3.0])
    assert _tangent(torch, torch_fwad, _logcumsumexp, x, t)[0] == 0  # torch: not t_0 = 1
    x, t = np.array([1000 + 1j, 0j]), np.array([1 + 0j, 1j])
    np.testing.assert_allclose(_tangent(gradkit, gradkit_fwad, _logcumsumexp, x, t).numpy(),
                               [1, 1], atol=1e-15)
    assert _tangent(torch, torch_fwad, _logcumsumexp, x, t).isnan().all()


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_logcumsumexp_tangents_of_torchs_samples_are_the_closed_form(dtype):
    """On the table's samples (entries of 1e4 among ones) gradkit's tangent is the weighted
    cumsum sum_j<=i t_j exp(x_j - out_i) within 1e-11 (torch's is 2e-6 off, NaN for complex);
    the gradient of the tangent is torch's where torch's tangent is right."""
    opinfo = _opinfo("logcumsumexp")
    for sample in opinfo.sample_inputs("cpu", dtype):
        x, dim = np.atleast_1d(sample.input.numpy()), sample.args[0]
        t = np.random.default_rng(0).standard_normal(x.shape).astype(x.dtype)
        got = _tangent(gradkit, gradkit_fwad, lambda lib, v, d=dim: lib.logcumsumexp(v, d), x, t)
        rows, tangents = np.moveaxis(x, dim, -1), np.moveaxis(t, dim, -1)
        n = rows.shape[-1]
        out = np.logaddexp.accumulate(rows, -1) if x.dtype.kind == "f" else \
            np.log(np.cumsum(np.exp(rows - rows.real.max(-1, keepdims=True)), -1)) + \
            rows.real.max(-1, keepdims=True)
        weights = np.exp(rows[..., None, :] - out[..., :, None]) * np.tri(n)  # [i, j]
        expected = np.moveaxis((weights * tangents[..., None, :]).sum(-1), -1, dim)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-11, atol=1e-11)
    rng = np.random.default_rng(1)
    x, t, w = (rng.standard_normal((3, 4)) for _ in range(3))
    leaf = gradkit.tensor(x, requires_grad=True)
    with gradkit_fwad.dual_level():
        tangent = gradkit_fwad.unpack_dual(gradkit.logcumsumexp(
            gradkit_fwad.make_dual(leaf, gradkit.tensor(t)), 1)).tangent
    got = gradkit.autograd.grad((tangent * gradkit.tensor(w)).sum(), leaf)[0].numpy()

    def weighted(values):  # torch's own reverse-over-forward raises here (an in-place exp)
        return (_tangent(torch, torch_fwad, lambda lib, v: lib.logcumsumexp(v, 1), values,
                         t).numpy() * w).sum()
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = 1e-6
        assert abs((weighted(x + step) - weighted(x - step)) / 2e-6 - got[idx]) < 1e-7


def test_known_cholesky_inverse_tangent_is_the_closed_form():
    """Known: for C = (L L^H)^-1, dC = -C (dL L^H + L dL^H) C; torch's jvp is far from it
    off the identity (its jacrev and finite differences agree with the closed form)."""
    rng = np.random.default_rng(1)
    lower = np.tril(rng.standard_normal((5, 5))) * 0.3 + np.eye(5)
    t = np.tril(rng.standard_normal((5, 5)))
    inverse = np.linalg.inv(lower @ lower.T)
    expected = -inverse @ (t @ lower.T + lower @ t.T) @ inverse

    def f(lib, v):
        return lib.cholesky_inverse(v)
    np.testing.assert_allclose(_tangent(gradkit, gradkit_fwad, f, lower, t).numpy(), expected,
                               rtol=1e-10, atol=1e-10)
    jacobian = torch.func.jacrev(torch.cholesky_inverse)(torch.tensor(lower)).numpy()
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", jacobian, t), expected, atol=1e-10)
    assert np.abs(_tangent(torch, torch_fwad, f, lower, t).numpy() - expected).max() > 1


def _cumprod_gradient_of_tangent(lib, fwad, x, t, w):
    leaf = lib.tensor(x, requires_grad=True)
    with fwad.dual_level():
        tangent = fwad.unpack_dual(lib.cumprod(fwad.make_dual(leaf, lib.tensor(t)), 1)).tangent
    return lib.autograd.grad((tangent * lib.tensor(w)).sum(), leaf)[0].numpy()


def test_cumprod_gradient_of_tangent_at_zeros_is_the_finite_difference():
    """The tangent sum_j t_j prod_{i<=k, i!=j} x_i is a polynomial: gradkit's gradient of it
    is its finite difference at zeros too (before: 0 where the first zero is; Known: torch's
    reads that zero as a constant, NaN); without zeros it is torch's."""
    x = np.array([[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 1.5, 2.0]])
    t = np.array([[1.0, -1.0, 0.5, 2.0], [0.3, 1.0, 2.0, -1.0]])
    w = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 1.0, 2.0]])
    got = _cumprod_gradient_of_tangent(gradkit, gradkit_fwad, x, t, w)

    def weighted(values):
        return (_tangent(gradkit, gradkit_fwad, lambda lib, v: lib.cumprod(v, 1), values,
                         t).numpy() * w).sum()
    expected = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = 1e-6
        expected[idx] = (weighted(x + step) - weighted(x - step)) / 2e-6
    np.testing.assert_allclose(got, expected, atol=1e-8)
    np.testing.assert_allclose(expected[[0, 1], [1, 0]], [70.0, 6.5])
    assert np.isnan(_cumprod_gradient_of_tangent(torch, torch_fwad, x, t, w)[0, 1])
    x = x + 1.0  # no zeros: torch's
    np.testing.assert_allclose(_cumprod_gradient_of_tangent(gradkit, gradkit_fwad, x, t, w),
                               _cumprod_gradient_of_tangent(torch, torch_fwad, x, t, w),
                               rtol=1e-12)


def test_vector_norm_gradient_of_tangent_at_zero_is_nan_as_torch():
    """Past order 2 the tangent (a slope divided by norm^(p-1), masked at 0) has no limit at
    a zero norm: torch's gradient of it is NaN (gradkit's was 0)."""
    for ord in (3.5, 2.0, 1.5):
        for lib, fwad in ((torch, torch_fwad), (gradkit, gradkit_fwad)):
            leaf = lib.tensor(np.zeros(3), requires_grad=True)
            with fwad.dual_level():
                dual = fwad.make_dual(leaf, lib.tensor([1.0, 2.0, 3.0]))
                tangent = fwad.unpack_dual(lib.linalg.vector_norm(dual, ord)).tangent
            assert tangent.item() == 0
            assert np.isnan(lib.autograd.grad(tangent, leaf)[0].numpy()).all()


def test_known_max_unpool2d_tangent_follows_its_primal_at_duplicate_indices():
    """Known: with duplicate indices the copy torch's channels-last unpooling keeps varies
    from one process to the next (primal and tangent); gradkit's is the last in logical order,
    for the value and its tangent alike: the tangent is the primal's finite difference."""
    indices = gradkit.tensor(np.array([0, 9, 5, 5, 13, 9, 11, 11, 7, 7, 4, 11, 7, 7, 11, 11])
                             .reshape(1, 2, 2, 4))
    x = gradkit.tensor(np.arange(1.0, 17.0).reshape(1, 2, 4, 2)).permute(0, 3, 1, 2)
    t = np.arange(101.0, 117.0).reshape(1, 2, 2, 4)

    def unpool(v):
        return gradkit.nn.functional.max_unpool2d(v, indices, kernel_size=3, stride=2,
                                                  padding=1, output_size=(1, 2, 3, 6))
    with gradkit_fwad.dual_level():
        tangent = gradkit_fwad.unpack_dual(unpool(gradkit_fwad.make_dual(
            x, gradkit.tensor(t)))).tangent.numpy()
    step = (unpool(x + 1e-3 * gradkit.tensor(t)) - unpool(x)).numpy() / 1e-3
    np.testing.assert_allclose(tangent, step, rtol=1e-9, atol=1e-9)
    assert tangent[0, 0, 1, 3] == 106  # index 9 of the first plane: the later of 102 and 106
