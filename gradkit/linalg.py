"""``gradkit.linalg``: torch.linalg's norms, solvers and decompositions, with their gradients.

>>> import gradkit
>>> a = gradkit.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> gradkit.linalg.det(a).backward()
>>> a.grad
tensor([[3., -1.],
        [-1., 2.]])
"""
from gradkit.ops.linalg_decompositions import eigh, eigvalsh, qr, svd, svdvals  # noqa: F401
from gradkit.ops.linalg_norms import linalg_norm as norm  # noqa: F401
from gradkit.ops.products import linalg_cross as cross  # noqa: F401
from gradkit.ops.linalg_norms import matrix_norm, vector_norm  # noqa: F401
from gradkit.ops.linalg_solvers import (  # noqa: F401
    LinAlgError, cholesky, det, inv, slogdet, solve)

__all__ = ["LinAlgError", "cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "matrix_norm",
           "norm", "qr", "slogdet", "solve", "svd", "svdvals", "vector_norm"]
