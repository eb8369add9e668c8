"""cholesky_ex where the factorization failed: torch 2.13 returns potrf's partial factor and
its LinalgCholeskyExBackward0 differentiates every matrix by cholesky's formula (triangular
solves with that factor), so a failed matrix gets a finite gradient, or inf and NaN where the
partial factor has a zero pivot; compared with torch."""
import numpy as np
import pytest

from tensor_twins import same_as_torch

_MATRICES = {
    "not positive-definite at order 2": [[1.0, 2.0], [2.0, 1.0]],
    "negative first pivot": [[-1.0, 0.0], [0.0, 1.0]],
    "singular positive semi-definite": [[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
}


@pytest.mark.parametrize("name", list(_MATRICES))
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_of_a_failed_cholesky_ex_as_torch(name, upper, dtype):
    def program(m):
        a = m.tensor(_MATRICES[name], dtype=getattr(m, dtype), requires_grad=True)
        factor, info = m.linalg.cholesky_ex(a, upper=upper)
        factor.sum().backward()
        return factor, info, a.grad, factor.grad_fn.name()
    same_as_torch(program, rtol=1e-5)


def test_batch_with_one_failed_matrix_as_torch():
    """The good matrix's gradient is cholesky's; the failed one's from its partial factor."""
    def program(m):
        a = m.tensor(np.array([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]]),
                     requires_grad=True)
        factor, info = m.linalg.cholesky_ex(a)
        (factor * m.tensor([[1.0, 0.0], [2.0, 3.0]])).sum().backward()
        return factor, info, a.grad
    same_as_torch(program)


def test_forward_gradient_of_a_failed_cholesky_ex_as_torch():
    def program(m):
        a = m.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=m.float64)
        tangent = m.tensor([[1.0, 0.5], [0.5, 2.0]], dtype=m.float64)
        return m.func.jvp(lambda x: m.linalg.cholesky_ex(x)[0], (a,), (tangent,))
    same_as_torch(program, count_warnings=False)
