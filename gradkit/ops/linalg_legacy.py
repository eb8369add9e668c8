"""torch's top-level linear algebra (``torch.svd``, ``torch.qr``, ``torch.cholesky``, ``torch.lu``,
``torch.triangular_solve``, ...): the older spellings of torch.linalg's functions, with their
conventions (V rather than Vh, ``some`` rather than ``mode``, B before A), deprecation warnings
and errors. They compose gradkit.linalg's ops, so their gradients are those ops' (torch's
formulas); the functions torch 2.13 keeps only to raise raise its errors."""
from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from gradkit import return_types
from gradkit._tensor import Tensor
from gradkit.creation import zeros
from gradkit.int_arguments import bool_argument, int_parameters
from gradkit.memory_format import contiguous_format as _contiguous_format
from gradkit.number_arguments import number_argument
from gradkit.ops.linalg_cholesky_solve import check_linear_solve
from gradkit.ops.linalg_decompositions import qr as linalg_qr, svd as linalg_svd, svdvals
from gradkit.ops.linalg_lu import lu_factor_ex, lu_solve as linalg_lu_solve
from gradkit.ops.linalg_pinv import matrix_exp, pinv
from gradkit.ops.linalg_functions import matrix_power
from gradkit.ops._op import op
from gradkit.ops.linalg_solvers import _cholesky, _cholesky_jvp, _cholesky_vjp, mH
from gradkit.ops.linalg_triangular_solve import triangular_solve_saving_b
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.shape import broadcast_to, transpose
from gradkit.ops.unary_helpers import kernel_error
from gradkit.tensor_arguments import tensor_parameters

SvdResult = return_types.svd
QrResult = return_types.qr
TriangularSolveResult = return_types.triangular_solve
LuWithInfoResult = namedtuple("_lu_with_info", ["LU", "pivots", "info"])

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_QR_WARNING = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
_CHOLESKY_WARNING = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
    "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
    "all valid (symmetric positive definite) inputs.")
_LU_WARNING = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
_LU_SOLVE_WARNING = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")
_TRIANGULAR_SOLVE_WARNING = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\n"
    "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B).")


def _deprecated(message: str) -> None:
    # torch warns once per process (TORCH_WARN_ONCE); Python's default filter shows a
    # UserWarning once per calling line
    warnings.warn(message, UserWarning, stacklevel=3)


@tensor_method()
@int_parameters("svd", some=(1, "bool"), compute_uv=(2, "bool"))
def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SvdResult:  # noqa: A002
    """(U, S, V) with input = U diag(S) V^H (V, not linalg.svd's Vh); ``some=False``: square
    U and V; ``compute_uv=False``: only S, with zero-filled square U and V, as torch."""
    if input.ndim < 2:
        raise RuntimeError("linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead")
    if compute_uv:
        u, s, vh = linalg_svd(input, full_matrices=not some)
        return SvdResult(u, s, mH(vh))
    s = svdvals(input)
    batch, (m, n) = tuple(input.shape[:-2]), tuple(input.shape[-2:])
    return SvdResult(zeros(batch + (m, m), dtype=input.dtype, device=input.device), s,
                     zeros(batch + (n, n), dtype=input.dtype, device=input.device))


@tensor_method()
@int_parameters("qr", some=(1, "bool"))
def qr(input: Tensor, some: bool = True) -> QrResult:  # noqa: A002
    """(Q, R) of input: ``linalg.qr`` in mode 'reduced' (``some``) or 'complete'."""
    _deprecated(_QR_WARNING)
    return QrResult(*linalg_qr(input, "reduced" if some else "complete"))


def _renamed(error: Exception, old: str, new: str) -> Exception:
    """``error`` (same type) with torch's name for the function that raised it."""
    return type(error)(str(error).replace(old, new, 1))


# torch.cholesky is its own node over linalg.cholesky's forward and rules
_cholesky_node = op(name="cholesky", save="result", node_name="CholeskyBackward0")(
    _cholesky.forward)
_cholesky_node.defvjp(_cholesky_vjp)
_cholesky_node.defjvp(_cholesky_jvp)


def _no_cholesky_kernel(input: Tensor) -> bool:  # noqa: A002 - torch's name
    """True for an empty batch of matrices of a dtype LAPACK lacks; a nonempty one is refused.
    The older cholesky checks the shape before the dtype, which only its kernel refuses."""
    data = input._data
    if data.ndim < 2 or (data.dtype.kind in "fc" and data.dtype != np.float16):
        return False
    if data.shape[-1] != data.shape[-2]:
        raise RuntimeError(f"cholesky: A must be batches of square matrices, but they are "
                           f"{data.shape[-2]} by {data.shape[-1]} matrices")
    if data.size:
        raise kernel_error("cholesky_cpu")(data)
    return True


@tensor_method()
def cholesky(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """``linalg.cholesky(input, upper=upper)`` under torch's older name (errors say
    ``cholesky:``)."""
    upper = bool_argument(upper, "cholesky", "upper", 2)  # (torch's parser, first)
    _deprecated(_CHOLESKY_WARNING)
    if _no_cholesky_kernel(input):  # an empty batch: no kernel runs to refuse the dtype
        return input.clone()
    try:
        return _cholesky_node(input, upper=upper)
    except RuntimeError as error:
        raise _renamed(error, "linalg.cholesky:", "cholesky:") from None


cholesky.function_words = True  # its method's errors do not count self


@tensor_method()
@tensor_parameters("A")
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True,  # noqa: A002, N803
                     transpose: bool = False, unitriangular: bool = False
                     ) -> TriangularSolveResult:
    """(X, a copy of A) with A X = B (``input``) for triangular A (``transpose``: A^T X = B),
    batch dims broadcast; only A's ``upper`` (or lower) triangle is read."""
    _deprecated(_TRIANGULAR_SOLVE_WARNING)
    for label, m in (("b", input), ("A", A)):
        if m.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {label} to have at least 2 "
                               f"dimensions, but it has {m.ndim} dimensions instead")
    batch = check_linear_solve("triangular_solve", input, A, "triangular_solve_cpu")
    solution = triangular_solve_saving_b(input, _transposed(A) if transpose else A,
                                         upper=upper != transpose, unitriangular=unitriangular)
    # torch's copy of A is LAPACK's, by columns
    copy = _transposed(broadcast_to(A, batch + tuple(A.shape[-2:]))).clone(
        memory_format=_contiguous_format)
    return TriangularSolveResult(solution, _transposed(copy))


def _transposed(a):
    return transpose(a, -1, -2)


@tensor_method()
def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):  # noqa: N803
    """(LU, pivots) of A as ``linalg.lu_factor_ex`` packs them, and with ``get_infos`` the
    ``info`` of each matrix (no error for a singular one either way, as torch)."""
    _deprecated(_LU_WARNING)
    # torch's Python passes pivot by keyword to _lu_with_info, whose parser reads it
    pivot = bool_argument(pivot, "_lu_with_info", "pivot")
    lu_data, pivots, info = lu_factor_ex(A, pivot=pivot)
    return LuWithInfoResult(lu_data, pivots, info) if get_infos else (lu_data, pivots)


@tensor_method()
@tensor_parameters("LU_data", "LU_pivots")
def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: A002, N803
    """X with A X = B (``input``) for A given by ``torch.lu``'s (LU_data, LU_pivots)."""
    _deprecated(_LU_SOLVE_WARNING)
    return linalg_lu_solve(LU_data, LU_pivots, input)


@tensor_method()
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002
    """``linalg.pinv`` with ``rcond`` its relative tolerance (atol 0)."""
    return pinv(input, rcond=number_argument(rcond, "pinverse", "rcond", 2, "float",
                                             optional=False))


pinverse.function_words = True  # its method's errors do not count self


register(matrix_exp, "matrix_exp")
register(matrix_power, "matrix_power")


# -- what torch 2.13 keeps only to raise ---------------------------------------------------------

def _removed(name: str, message: str, method: bool = True, required: tuple = ("input",),
             optional: int = 0, method_optional: int | None = None):
    """torch.<name> (and Tensor.<name>), which only raises torch's RuntimeError, once Python
    has bound its arguments to torch's def (its ``required`` parameters and ``optional``
    others, positionally; ``method_optional``: the method's, where they differ): Python's
    TypeError first."""
    most = len(required) + optional

    def removed(*args, **kwargs):
        if len(args) > most:
            takes = f"{most} positional arguments" if not optional else \
                f"from {len(required)} to {most} positional arguments"
            raise TypeError(f"{removed.__qualname__}() takes {takes} but {len(args)} were "
                            "given")
        missing = [p for p in required[len(args):] if p not in kwargs]
        if missing:
            listing = " and ".join(f"'{p}'" for p in missing)
            plural = "s" if len(missing) > 1 else ""
            raise TypeError(f"{name}() missing {len(missing)} required positional "
                            f"argument{plural}: {listing}")
        raise RuntimeError(message)
    removed.__name__ = removed.__qualname__ = name
    removed.__doc__ = (f"``torch.{name}``, removed from torch: raises torch's RuntimeError, which "
                       "names the torch.linalg replacement.")
    if method:
        register(_as_method(_removed(name, message, False, required, optional if
                                     method_optional is None else method_optional)), name)
    return removed


def _as_method(removed):
    """A removed function named as the Tensor method (its own def in torch)."""
    removed.__qualname__ = f"Tensor.{removed.__name__}"
    return removed


solve = _removed("solve", required=("input", "A"), message=_REMOVED + (
    "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
    "arguments reversed and does not return the LU factorization.\n\nTo get the LU "
    "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
    "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
    "X = torch.linalg.solve(A, B)"))
lstsq = _removed("lstsq", required=("input", "A"), message=_REMOVED + (
    "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
    "reversed arguments and does not return the QR decomposition in the returned tuple "
    "(although it returns other information about the problem).\n\nTo get the QR "
    "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
    "`torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
    "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
    "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\n"
    "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\n"
    "X = torch.linalg.lstsq(A, B).solution"))
eig = _removed("eig", required=("self",), optional=1, message=_REMOVED + (
    "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
    "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
    "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)"))
symeig = _removed("symeig", optional=2, method_optional=1, message=_REMOVED + (
    "The default behavior has changed from using the upper triangular portion of the matrix by "
    "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) "
    "should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
    "and\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
    "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"))
matrix_rank = _removed("matrix_rank", optional=2, message=_REMOVED.rstrip() + (
    "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' "
    "was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."), method=False)
