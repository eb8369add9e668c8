"""torch.linalg functions that torch composes from other ops (so do we, and their gradients
follow): vecdot, multi_dot, matrix_power, cond, matrix_rank, tensorinv, tensorsolve, vander,
diagonal, matmul."""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import hermitian_is_bool, number_parameters
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import reciprocal
from gradkit.ops.elementwise_special import nan_to_num
from gradkit.ops.joining import cat
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_decompositions import eigvalsh, svdvals
from gradkit.ops.linalg_ex import inv_ex
from gradkit.ops.linalg_norms import matrix_norm
from gradkit.ops.linalg_pinv import default_rtol, tolerance
from gradkit.ops.linalg_solvers import LinAlgError, inv, solve
from gradkit.ops.piecewise import abs, ones_like, where
from gradkit.ops.reduction import sum
from gradkit.ops.scans import cumprod
from gradkit.ops.rearrange import movedim
from gradkit.ops.shape import expand, reshape, squeeze, unsqueeze, view
from gradkit.ops.triangular import diag_embed, diagonal as _diagonal
from gradkit.ops.unary_helpers import c_type_name, scalar_type_name

__all__ = ["cond", "diagonal", "matmul", "matrix_power", "matrix_rank", "multi_dot",
           "tensorinv", "tensorsolve", "vander", "vecdot"]


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):  # noqa: N803 - torch's name
    """The ``offset`` diagonal of the matrices in dims ``dim1``, ``dim2`` (a view)."""
    return _diagonal(A, offset, dim1, dim2)


def vecdot(x, y, *, dim: int = -1):
    """sum(conj(x) * y) over ``dim``, broadcasting the other dims."""
    for t in (x, y):
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as "
                               f"input. Got {scalar_type_name(t._data)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {scalar_type_name(x._data)} and y of type "
                           f"{scalar_type_name(y._data)} instead")
    return sum((conj(x) if x.is_complex() else x) * y, dim)


def _check_multi_dot(tensors) -> None:
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        if i in (0, n - 1) and t.ndim not in (1, 2):
            where_ = "first" if i == 0 else "last"
            raise RuntimeError(f"multi_dot(): the {where_} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
        if 0 < i < n - 1 and t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {c_type_name(tensors[0]._data)} and tensor {i} "
                               f"{c_type_name(t._data)}")


def _chain_order(sizes):
    """The split of each chain with the fewest multiplications (the classic dynamic program)."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors):
    """The product of a chain of matrices (first/last may be vectors), in the cheapest order."""
    tensors = list(tensors)
    _check_multi_dot(tensors)
    first_vector, last_vector = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = [unsqueeze(tensors[0], 0) if first_vector else tensors[0], *tensors[1:-1],
            unsqueeze(tensors[-1], -1) if last_vector else tensors[-1]]
    for i in range(len(mats) - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:  # torch prints the shapes as given
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} cannot "
                               "be multiplied")
    sizes = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    split = _chain_order(sizes)
    if len(mats) == 3:  # torch's own rule for three: (AB)C unless A(BC) is cheaper
        a, b, c, d = sizes
        split[0][2] = 0 if (a * c) * (b + d) > (b * d) * (a + c) else 1
    out = _product(mats, split, 0, len(mats) - 1)
    shape = tuple(out.shape)[1 if first_vector else 0:len(out.shape) - (1 if last_vector else 0)]
    return view(out, shape)  # torch ends in a view of the product, vectors or not


def _product(mats: list, split: list, i: int, j: int):
    """mats[i] @ ... @ mats[j] in the order ``split`` chose (a module-level function: a nested
    one that calls itself is a reference cycle, holding the matrices until the cyclic GC)."""
    if i == j:
        return mats[i]
    return matmul(_product(mats, split, i, split[i][j]), _product(mats, split, split[i][j] + 1, j))


def _check_square(name: str, x) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{x.shape[-2]} by {x.shape[-1]} matrices")


def matrix_power(input, n: int):
    """x^n for square matrices x (n < 0: the inverse's power; n = 0: the identity), by
    repeated squaring as torch multiplies."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    _check_square("linalg.matrix_power", input)
    if n == 0:  # the identity written over a copy, as torch (a zero gradient for input)
        out = input.clone()
        out.copy_(diag_embed(ones_like(_diagonal(input, 0, -2, -1))))
        return out
    if n == -1:  # torch returns the inverse itself (LinalgInvExBackward0 saves it)
        return inv(input)
    if n < 0:
        input, n = inv(input), -n
    if n == 1:
        return input.clone()
    result, power = None, None
    while n > 0:
        bit, n = n % 2, n // 2
        power = input if power is None else matmul(power, power)
        if bit:
            result = power if result is None else matmul(result, power)
    return result


_COND_ORDERS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def cond(x, p=None):
    """The condition number of x in the matrix norm ``p`` (default 2: s_max / s_min)."""
    if p in ("fro", "nuc"):  # torch's string overload checks the square matrix first
        _check_square(f"linalg.cond(ord={p})", x)
    if x.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p not in _COND_ORDERS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if x.numel() == 0:  # torch: zeros in x's real dtype, before checking other orders' squares
        return x.new_zeros(x.shape[:-2], dtype=x.real.dtype if x.is_complex() else x.dtype)
    if p in (None, 2, -2):
        values = svdvals(x)
        high, low = values[..., :1], values[..., -1:]
        return squeeze(low / high if p == -2 else high / low, -1)  # as torch computes it
    name = f"linalg.cond(ord={_order_text(p)})"
    _check_square(name, x)
    if p == "nuc":  # torch's: sum(s) * sum(1 / s), inf for a singular matrix (no inverse)
        values = svdvals(x)
        with np.errstate(divide="ignore"):
            return sum(values, -1) * sum(reciprocal(values), -1)
    inverse, info = inv_ex(x)
    inverse = where(unsqueeze(unsqueeze(info > 0, -1), -1), math.inf, inverse)
    with np.errstate(invalid="ignore"):  # a singular matrix's 0 * inf, silent as torch's
        out = matrix_norm(x, p) * matrix_norm(inverse, p)
    return nan_to_num(out, math.inf, math.inf, -math.inf)  # and infinite, as NumPy


def _order_text(p) -> str:
    if isinstance(p, str):
        return p
    return str(int(p)) if math.isfinite(p) else f"{p:f}"


@number_parameters("linalg_matrix_rank", True, tol="float|Tensor", atol="float|Tensor?",
                   rtol="float|Tensor?", signature=hermitian_is_bool)
def matrix_rank(x, tol=None, hermitian: bool = False, *, atol=None, rtol=None):
    """The number of singular values (``hermitian``: |eigenvalues|) of each matrix above
    max(atol, rtol * largest); ``tol`` (torch's older form) is atol with rtol 0."""
    if x.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if x.dtype.itemsize == 2 and not x.is_complex():  # no half SVD (torch's message)
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol = None if atol is None else np.asarray(getattr(atol, "_data", atol))
    rtol = default_rtol(x._data, atol) if rtol is None else \
        np.asarray(getattr(rtol, "_data", rtol))
    if x.numel() == 0:
        return sum(x.detach() != 0, (-2, -1))  # zeros: no element, no rank
    values = abs(eigvalsh(x)) if hermitian else svdvals(x)
    values = values.detach()
    largest = values._data.max(-1, keepdims=True)
    bound = tolerance(atol, rtol, np.asarray(largest.get() if hasattr(largest, "get") else
                                             largest))
    return sum(values > values.new_tensor(bound), -1)


def tensorinv(x, ind: int = 2):
    """The inverse of x seen as a linear map from its first ``ind`` dims to the rest: shape
    ``x.shape[ind:] + x.shape[:ind]``."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(x.shape[ind:]), tuple(x.shape[:ind])
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {rows} != {cols}")
    try:
        inverse = inv(reshape(x, (rows, rows)))
    except LinAlgError as error:  # torch names the op "inv" here
        raise LinAlgError(str(error).replace("linalg.inv: ", "inv: ", 1)) from None
    return reshape(inverse, out_shape + in_shape)


def tensorsolve(input, other, dims=None):  # noqa: A002 - torch's parser's names
    """X with ``tensordot(A, X, X.ndim) = B`` (A ``input``, B ``other``); ``dims``: A's dims
    moved to the end first."""
    if dims is not None:
        dims = tuple(dims)
        input = movedim(input, dims, tuple(range(input.ndim - len(dims), input.ndim)))
    result_shape = tuple(input.shape[other.ndim:])
    rows, size = math.prod(result_shape), math.prod(other.shape)
    if rows != size:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {rows} != {size}")
    return reshape(solve(reshape(input, (rows, rows)), reshape(other, (size,))), result_shape)


def vander(x, *, N: int | None = None):  # noqa: N803 - torch's name
    """The Vandermonde matrix of x's last dim: powers x^0 ... x^(N-1) along a new last dim."""
    if x._data.dtype.kind == "b":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           "but got Bool")
    x = unsqueeze(x, -1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    shape = tuple(x.shape) + (n - 1,)
    powers = cumprod(expand(unsqueeze(x, -1), shape), dim=-1)
    ones = ones_like(powers[..., :1])
    return cat([ones, powers], -1)
