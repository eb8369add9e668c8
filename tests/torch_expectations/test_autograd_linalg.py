"""torch's linear-algebra autograd tests (test_autograd.py: test_slogdet_sign, test_cholesky,
test_triangular_solve, test_pinverse, test_chain_matmul, test_eig, test_eig_complex_eigenvalues)
on the ``torch.linalg`` functions that replaced the old ones (``torch.cholesky`` ->
``linalg.cholesky``, ``torch.triangular_solve`` -> ``linalg.solve_triangular``, ``pinverse``
-> ``linalg.pinv``, the removed ``torch.eig`` -> ``linalg.eig``): gradcheck and gradgradcheck
in float64, and the same program's values and gradients as torch's."""
import numpy as np
import pytest

from .twin import data, leaf, like_torch, raises_like_torch


def _checks(lib, fn, inputs):
    """gradcheck and gradgradcheck of ``fn``; then its value and the gradient of the sum of the
    real parts of its outputs, for comparing with torch."""
    assert lib.autograd.gradcheck(fn, inputs)
    assert lib.autograd.gradgradcheck(fn, inputs)
    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = sum(lib.real(o).sum() if o.is_complex() else o.sum() for o in outs)
    return [o.detach() for o in outs], list(lib.autograd.grad(total, inputs))


@pytest.mark.parametrize("sign", [-1, 1])
def test_slogdet_sign_times_logdet_is_differentiable(sign):
    # torch: test_slogdet_sign (a matrix built from an SVD with the last singular value's sign
    # chosen, so det has that sign). The old test said the sign does not require grad; in
    # torch 2.13 it does (linalg.slogdet differentiates the sign of complex matrices), with a
    # zero gradient for real ones: we follow torch 2.13.
    u, s, vt = np.linalg.svd(data(3, 3))
    s = np.clip(np.abs(s), 1e-4, None)
    s[-1] = sign

    def program(lib):
        mat = lib.tensor(u @ np.diag(s) @ vt, requires_grad=True)
        s_, logdet = mat.slogdet()

        def sign_mul_logdet(m):
            sgn, value = lib.linalg.slogdet(m)
            return sgn * value

        return s_.requires_grad, logdet.requires_grad, s_, _checks(lib, sign_mul_logdet, (mat,))

    sign_requires_grad, logdet_requires_grad, got_sign, _ = like_torch(program)
    assert sign_requires_grad and logdet_requires_grad
    assert got_sign.item() == sign


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("dims", [(3, 3), (4, 3, 2, 2)])
def test_cholesky_gradients(upper, dims):
    # torch: test_cholesky (on linalg.cholesky; torch.cholesky is deprecated for it)
    def program(lib):
        def func(root):
            x = lib.matmul(root, root.transpose(-1, -2)) + 1e-05
            return lib.linalg.cholesky(x, upper=upper)

        checked = _checks(lib, func, (leaf(lib, *dims, positive=True),))
        base = data(*dims, seed=1)
        spd = lib.tensor(base @ np.swapaxes(base, -1, -2) + 3 * np.eye(dims[-1]),
                         requires_grad=True)
        lib.linalg.cholesky(spd, upper=upper).sum().backward()
        return checked, spd.grad

    _, grad = like_torch(program)
    np.testing.assert_allclose(grad.numpy(), np.swapaxes(grad.numpy(), -1, -2))  # symmetric


@pytest.mark.parametrize("a_dims, b_dims", [((3, 3), (3, 4)), ((2, 3, 3), (2, 3, 2))])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_triangular_solve_gradients(a_dims, b_dims, upper, transpose, unitriangular):
    # torch: test_triangular_solve (torch.triangular_solve(b, A, upper, transpose, unit) is
    # linalg.solve_triangular(A^T if transpose, b, upper=upper ^ transpose, unitriangular))
    def program(lib):
        def func(a, b):
            matrix = a.transpose(-1, -2) if transpose else a
            return lib.linalg.solve_triangular(matrix, b, upper=upper != transpose,
                                               unitriangular=unitriangular)

        a = leaf(lib, *a_dims, positive=True)
        return _checks(lib, func, (a, leaf(lib, *b_dims, seed=1, positive=True)))

    like_torch(program)


@pytest.mark.parametrize("shift", [1, 10])
def test_pinv_of_a_constant_rank_matrix(shift):
    # torch: test_pinverse (M = U diag(x, 0) V^T with orthonormal U, V: its rank stays m under
    # small changes of x, where the pseudo-inverse is differentiable)
    m, n = 5, 10
    u = np.linalg.qr(data(n, m, seed=1))[0].T
    v = np.linalg.qr(data(n, m, seed=2))[0].T

    def program(lib):
        big_u, big_v = lib.tensor(u), lib.tensor(v)

        def func(x):
            s = lib.cat([x, lib.zeros(n - m, dtype=lib.float64)], 0)
            return lib.linalg.pinv(big_u.mm(lib.diag(s)).mm(big_v.t()))

        x = lib.tensor(np.random.default_rng(3).random(m) + shift, requires_grad=True)
        return _checks(lib, func, (x,))

    like_torch(program, rtol=1e-6)


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("sizes", [[5, 10, 15, 5], [3, 5, 2, 6], [6, 2, 4, 8, 10]])
def test_chain_matmul_gradients(sizes):
    # torch: test_chain_matmul (and linalg.multi_dot, which replaces it)
    def program(lib):
        mats = tuple(leaf(lib, p, q, seed=i) for i, (p, q) in enumerate(zip(sizes, sizes[1:])))
        return (_checks(lib, lib.chain_matmul, mats),
                _checks(lib, lambda *ms: lib.linalg.multi_dot(list(ms)), mats))

    chain, multi = like_torch(program, rtol=1e-6)
    np.testing.assert_allclose(chain[0][0].numpy(), multi[0][0].numpy())


def _real_spectrum(dims):
    """B = U^-1 A U with A symmetric: real, distinct eigenvalues that stay real under the small
    changes of gradcheck (torch's test_eig builds its matrix so)."""
    a = data(*dims)
    a = a + np.swapaxes(a, -1, -2)
    u = np.random.default_rng(1).random(dims) + np.eye(dims[-1])
    return np.linalg.solve(u, a @ u)


@pytest.mark.parametrize("dims", [(3, 3), (5, 5)])
def test_eig_gradients_of_eigenvalues_and_eigenvectors(dims):
    # torch: test_eig (torch.eig was removed; linalg.eig returns complex tensors). The
    # eigenvectors are defined up to a phase per column, so they are checked through
    # |v|^2, which does not depend on it.
    def program(lib):
        b = lib.tensor(_real_spectrum(dims), requires_grad=True)
        values = _checks(lib, lambda m: lib.linalg.eigvals(m), (b,))
        vectors = _checks(lib, lambda m: lib.linalg.eig(m)[1].abs() ** 2, (b,))
        return values, vectors

    (values, _), _ = like_torch(program, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(values[0].numpy().imag, 0, atol=1e-12)


def test_eig_refuses_a_loss_that_depends_on_the_eigenvectors_phase():
    # torch: the backward of test_eig's eigenvectors, as linalg.eig now defines it (the
    # imaginary parts of real eigenvectors change with their phase)
    def program(lib):
        b = lib.tensor(_real_spectrum((3, 3)), requires_grad=True)
        lib.imag(lib.linalg.eig(b)[1]).sum().backward()

    raises_like_torch(program, RuntimeError, "specified up to multiplication by e\\^\\{i phi\\}")


def test_eig_differentiates_complex_eigenvalues():
    # torch: test_eig_complex_eigenvalues (torch.eig's backward refused complex eigenvalues;
    # linalg.eig differentiates them)
    def program(lib):
        a = lib.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=lib.float64, requires_grad=True)
        checked = _checks(lib, lambda m: lib.linalg.eigvals(m), (a,))
        w, v = lib.linalg.eig(a)
        (w.abs().sum() + (v.abs() ** 2).sum()).backward()
        return checked, a.grad

    (values, _), _ = like_torch(program)
    np.testing.assert_allclose(np.sort_complex(values[0].numpy()), [-1j, 1j], atol=1e-12)
