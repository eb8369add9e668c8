"""torch.svd_lowrank and torch.pca_lowrank against torch. Both draw a Gaussian test matrix;
the tests hand torch and gradkit the same one (their ``randn`` replaced for the call), so the
factors must agree to rounding (singular vectors up to a sign per column, which LAPACK's
routines choose), and so must the gradients of sign-free results. Drawn normally, the
factorization must still reconstruct a low-rank matrix."""
import numpy as np
import pytest

import gradkit
from gradkit import creation
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)


@pytest.fixture
def fixed_draws(monkeypatch):
    """Make both libraries' randn return the rows x columns block of one fixed matrix."""
    table = rng.standard_normal((8, 8))

    def fixed(lib):
        def randn(*size, dtype=None, device=None, **_):
            return lib.tensor(table[:size[0], :size[1]], dtype=dtype)
        return randn
    monkeypatch.setattr(torch, "randn", fixed(torch))
    monkeypatch.setattr(creation, "randn", fixed(gradkit))


def _assert_same_factors(got, want):
    """U, S, V equal up to one sign per singular triple."""
    u, s, v = (t.detach().numpy() for t in got)
    u_want, s_want, v_want = (t.detach().numpy() for t in want)
    np.testing.assert_allclose(s, s_want, rtol=1e-10, atol=1e-12)
    signs = np.sign(np.sum(u * u_want.conj(), axis=-2, keepdims=True).real)
    np.testing.assert_allclose(u * signs, u_want, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(v * signs, v_want, rtol=1e-8, atol=1e-10)


# (function, A's shape, keyword arguments; "M" stands for a mean-like matrix)
CASES = [("svd_lowrank", (7, 5), {"q": 3}), ("svd_lowrank", (4, 6), {"q": 2}),
         ("svd_lowrank", (7, 5), {"q": 3, "niter": 0}),
         ("svd_lowrank", (6, 5), {"q": 4, "M": (1, 5)}),
         ("svd_lowrank", (5, 7), {"q": 3, "M": (5, 7), "niter": 1}),
         ("svd_lowrank", (2, 6, 4), {"q": 2}), ("pca_lowrank", (7, 5), {}),
         ("pca_lowrank", (6, 4), {"q": 3, "center": False}),
         ("pca_lowrank", (2, 5, 6), {"q": 2, "niter": 3})]


def _arguments(lib, shape, kwargs, data):
    a = lib.tensor(data["A"], requires_grad=True)
    kw = {k: (lib.tensor(data[k], requires_grad=True) if k == "M" else v)
          for k, v in kwargs.items()}
    return a, kw


@pytest.mark.parametrize("case", CASES, ids=str)
def test_factors_and_gradients_match_torch(case, fixed_draws):
    name, shape, kwargs = case
    data = {"A": rng.standard_normal(shape)}
    if "M" in kwargs:
        data["M"] = rng.standard_normal(kwargs["M"])
    found = []
    for lib in (torch, gradkit):
        a, kw = _arguments(lib, shape, kwargs, data)
        u, s, v = getattr(lib, name)(a, **kw)
        weights = lib.tensor(np.cos(np.arange(np.prod(shape))).reshape(shape))
        low_rank = (u * s.unsqueeze(-2)) @ v.mT  # free of the sign choices
        loss = (low_rank * weights).sum() + (s ** 3).sum()
        leaves = [a] + ([kw["M"]] if "M" in kw else [])
        grads = lib.autograd.grad(loss, leaves)
        found.append(((u, s, v), [g.numpy() for g in grads]))
    _assert_same_factors(found[1][0], found[0][0])
    for got, want in zip(found[1][1], found[0][1], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["svd_lowrank", "pca_lowrank"])
def test_gradcheck_and_gradgradcheck(name, fixed_draws):
    a = gradkit.tensor(rng.standard_normal((5, 4)), requires_grad=True)

    def factors(a):
        u, s, v = getattr(gradkit, name)(a, q=2, niter=1)
        return (u * s.unsqueeze(-2)) @ v.mT, s
    assert gradcheck(factors, (a,))
    assert gradgradcheck(factors, (a,))


def test_drawn_factors_reconstruct_a_low_rank_matrix():
    """With gradkit's own draws: a rank-3 matrix is recovered to rounding, the factors are
    orthonormal, and the singular values are torch.linalg's."""
    a = rng.standard_normal((20, 3)) @ rng.standard_normal((3, 12))
    u, s, v = gradkit.svd_lowrank(gradkit.tensor(a), q=5)
    assert u.shape == (20, 5) and s.shape == (5,) and v.shape == (12, 5)
    np.testing.assert_allclose(((u * s) @ v.mT).numpy(), a, atol=1e-10)
    np.testing.assert_allclose((u.mT @ u).numpy(), np.eye(5), atol=1e-10)
    np.testing.assert_allclose(s.numpy()[:3], torch.linalg.svdvals(torch.tensor(a))[:3].numpy(),
                               rtol=1e-10)
    centred = a - a.mean(0)
    u, s, v = gradkit.pca_lowrank(gradkit.tensor(a, dtype=gradkit.float32))
    assert s.dtype == gradkit.float32 and u.shape == (20, 6)
    np.testing.assert_allclose(((u * s) @ v.mT).numpy(), centred, atol=1e-4)


@pytest.mark.parametrize("kwargs, message", [
    ({"q": 6}, r"q\(=6\) must be non-negative integer and not greater than min\(m, n\)=5"),
    ({"q": -1}, r"q\(=-1\) must be non-negative integer"),
    ({"niter": -1}, r"niter\(=-1\) must be non-negative integer"),
])
def test_pca_errors_match_torch(kwargs, message):
    for lib in (torch, gradkit):
        with pytest.raises(ValueError, match=message):
            lib.pca_lowrank(lib.zeros(7, 5, dtype=lib.float64), **kwargs)


def test_docstring_example():
    import doctest

    from gradkit import lowrank
    result = doctest.testmod(lowrank, extraglobs={"gradkit": gradkit})
    assert result.attempted > 0 and result.failed == 0
