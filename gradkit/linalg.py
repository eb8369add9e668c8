"""``gradkit.linalg``: torch.linalg's norms, solvers and decompositions, with their gradients.

>>> import gradkit
>>> a = gradkit.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> gradkit.linalg.det(a).backward()
>>> a.grad
tensor([[3., -1.],
        [-1., 2.]])
"""
from gradkit.ops.keywords import take_numpy_names
from gradkit.ops.linalg import matmul  # noqa: F401
from gradkit.ops.linalg_decompositions import eigh, eigvalsh, qr, svd, svdvals  # noqa: F401
from gradkit.ops.linalg_eig import eig, eigvals  # noqa: F401
from gradkit.ops.linalg_ex import cholesky_ex, inv_ex, solve_ex  # noqa: F401
from gradkit.ops.linalg_householder import householder_product  # noqa: F401
from gradkit.ops.linalg_functions import (  # noqa: F401
    cond, diagonal, matrix_power, matrix_rank, multi_dot, tensorinv, tensorsolve, vander, vecdot)
from gradkit.ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
from gradkit.ops.linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve  # noqa: F401
from gradkit.ops.linalg_norms import linalg_norm as norm  # noqa: F401
from gradkit.ops.linalg_norms import matrix_norm, vector_norm  # noqa: F401
from gradkit.ops.linalg_pinv import lstsq, matrix_exp, pinv  # noqa: F401
from gradkit.ops.linalg_slogdet import linalg_slogdet as slogdet  # noqa: F401
from gradkit.ops.linalg_det import det  # noqa: F401
from gradkit.ops.linalg_solvers import LinAlgError, cholesky, inv, solve  # noqa: F401
from gradkit.ops.linalg_triangular_solve import solve_triangular  # noqa: F401
from gradkit.ops.cross import linalg_cross as cross  # noqa: F401

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
           "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]
take_numpy_names(globals(), __all__)  # x=, axis= ... as torch's parser takes them
