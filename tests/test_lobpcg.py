"""torch.lobpcg (basic: a dense symmetric 2-D A) against torch and linalg.eigh: the k largest
or smallest eigenvalues, eigenvectors (up to sign), gradients (torch's
LOBPCGAutogradFunction, which equal eigh's) and their derivatives, gradcheck and
gradgradcheck, and torch's errors."""
import doctest

import numpy as np
import pytest

import gradkit
from gradkit import iterative_eigen
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

rng = np.random.default_rng(13)


def _symmetric(m, spread=0.3):
    """A symmetric matrix with known, separated eigenvalues 1 .. m (plus a little noise)."""
    q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    return (q * (np.arange(1.0, m + 1) + rng.random(m) * spread)) @ q.T


def _loss(lib, values, vectors, weights):
    """A loss free of the eigenvectors' signs."""
    return (values ** 2).sum() + ((vectors * lib.tensor(weights)).sum(0) ** 2).sum()


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k, n", [(1, None), (2, None), (3, 4)])
def test_eigenpairs_and_gradients_match_torch(k, n, largest):
    m = 15
    a = _symmetric(m)
    weights = rng.standard_normal((m, k))
    want_values, want_vectors = np.linalg.eigh(a)
    order = np.argsort(-want_values if largest else want_values)[:k]
    found = []
    for lib in (torch, gradkit):
        matrix = lib.tensor(a, requires_grad=True)
        values, vectors = lib.lobpcg(matrix, k=k, n=n, largest=largest, tol=1e-10)
        assert values.shape == (k,) and vectors.shape == (m, k)
        assert values.grad_fn.name() == "LOBPCGAutogradFunctionBackward"
        (grad,) = lib.autograd.grad(_loss(lib, values, vectors, weights), matrix)
        found.append((values.detach().numpy(), vectors.detach().numpy(), grad.numpy()))
    (values, vectors, grad), (t_values, _, t_grad) = found[1], found[0]
    np.testing.assert_allclose(values, want_values[order], rtol=1e-12)
    np.testing.assert_allclose(values, t_values, rtol=1e-12)
    signs = np.sign(np.sum(vectors * want_vectors[:, order], axis=0))
    np.testing.assert_allclose(vectors * signs, want_vectors[:, order], atol=1e-8)
    np.testing.assert_allclose(grad, t_grad, atol=1e-6 * np.abs(t_grad).max())


def test_start_vectors_float32_and_a_diagonal_matrix():
    a = np.diag(np.arange(1.0, 13.0))
    start = rng.standard_normal((12, 2))
    for lib in (torch, gradkit):
        values, vectors = lib.lobpcg(lib.tensor(a, dtype=lib.float32), X=lib.tensor(
            start, dtype=lib.float32), largest=False)
        assert values.dtype == vectors.dtype == lib.float32
        np.testing.assert_allclose(values.numpy(), [1.0, 2.0], rtol=1e-4)
        np.testing.assert_allclose(np.abs(vectors.numpy()[:2]), np.eye(2), atol=1e-3)


def test_gradcheck():
    """On a symmetric A = P + Pᵀ + diag, so every perturbation keeps A symmetric."""
    p = gradkit.tensor(rng.standard_normal((9, 9)) * 0.1, requires_grad=True)
    base = gradkit.tensor(np.diag(np.arange(1.0, 10.0)))
    start = gradkit.tensor(rng.standard_normal((9, 2)))

    def pairs(p):
        values, vectors = gradkit.lobpcg(p + p.mT + base, X=start, tol=1e-13)
        return values, vectors * vectors  # squares: free of the signs
    assert gradcheck(pairs, (p,), atol=1e-6)
    assert gradgradcheck(pairs, (p,), atol=1e-5)


def test_second_derivatives_match_torch():
    """Along symmetric directions (off them torch's first derivative is not eigh's)."""
    m, k = 12, 2
    a, weights = _symmetric(m), rng.standard_normal((m, k))
    direction = rng.standard_normal((m, m))
    direction = direction + direction.T  # A stays symmetric along it
    found = []
    for lib in (torch, gradkit):
        matrix = lib.tensor(a, requires_grad=True)
        values, vectors = lib.lobpcg(matrix, k=k, tol=1e-10)
        (grad,) = lib.autograd.grad(_loss(lib, values, vectors, weights), matrix,
                                    create_graph=True)
        (second,) = lib.autograd.grad((grad * lib.tensor(direction)).sum(), matrix)
        found.append(second.numpy() + second.numpy().T)  # its share along symmetric moves
    np.testing.assert_allclose(found[1], found[0], atol=1e-5 * np.abs(found[0]).max())


@pytest.mark.parametrize("case, error, message", [
    ("tall", AssertionError, r"A must be square, got shape"),
    ("few_rows", ValueError, r"LOBPCG algorithm is not applicable when the number of A rows "
                             r"\(=8\) is smaller than 3 x the number of requested eigenpairs "
                             r"\(=3\)"),
    ("start_shape", AssertionError, r"X shape mismatch: got"),
    ("b_shape", AssertionError, r"A and B must have same shape, got"),
])
def test_errors_match_torch(case, error, message):
    for lib in (torch, gradkit):
        a = lib.eye(8, dtype=lib.float64)
        args, kwargs = {"tall": ((lib.zeros(8, 3, dtype=lib.float64),), {}),
                        "few_rows": ((a,), {"k": 3}),
                        "start_shape": ((a,), {"k": 2, "X": lib.zeros(3, 2, dtype=lib.float64)}),
                        "b_shape": ((a,), {"B": lib.eye(4, dtype=lib.float64)})}[case]
        with pytest.raises(error, match=message):
            lib.lobpcg(*args, **kwargs)


@pytest.mark.parametrize("kwargs", [{"B": "eye"}, {"iK": "eye"}, {"method": "basic"}])
def test_unsupported_arguments_raise(kwargs):
    a = gradkit.eye(9, dtype=gradkit.float64)
    kwargs = {k: a if v == "eye" else v for k, v in kwargs.items()}
    with pytest.raises(NotImplementedError, match="lobpcg takes a real A only, not "
                                                  f"{next(iter(kwargs))}"):
        gradkit.lobpcg(a, **kwargs)


def test_a_batch_is_solved_matrix_by_matrix():
    rng = np.random.default_rng(3)
    r = rng.random((2, 3, 9, 9))
    a = r @ np.swapaxes(r, -1, -2)
    start = rng.random((2, 3, 9, 2))
    results = {}
    for lib in (torch, gradkit):
        values, vectors = lib.lobpcg(lib.tensor(a), k=2, X=lib.tensor(start))
        assert tuple(values.shape) == (2, 3, 2) and tuple(vectors.shape) == (2, 3, 9, 2)
        results[lib.__name__] = values.numpy()
    expected = np.linalg.eigvalsh(a)[..., ::-1][..., :2]
    np.testing.assert_allclose(results["gradkit"], expected, rtol=1e-6)
    np.testing.assert_allclose(results["gradkit"], results["torch"], rtol=1e-6)


def test_a_batch_refuses_starts_of_another_batch():
    a = gradkit.eye(9, dtype=gradkit.float64).expand(2, 9, 9)
    with pytest.raises(AssertionError, match="X shape mismatch: got"):
        gradkit.lobpcg(a, k=1, X=gradkit.ones(3, 9, 1, dtype=gradkit.float64))


def test_docstring_example():
    result = doctest.testmod(iterative_eigen, extraglobs={"gradkit": gradkit})
    assert result.attempted > 0 and result.failed == 0
