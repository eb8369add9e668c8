"""Distances and norm-scaling: cdist (pairwise p-norm distances, CdistBackward0, or for large
Euclidean problems torch's matmul form, EuclideanDistBackward0), pdist (cdist's upper
triangle), dist (the p-norm of a
difference, DistBackward0) and renorm (sub-tensors scaled down to a maximum norm,
RenormBackward0), each with torch's derivative formulas, zero distances included."""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import number_argument, number_parameters, numbers_reader
from gradkit._tensor import Tensor
from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import op
from gradkit.ops.arithmetic import _check_not_bool, pow, sub
from gradkit.ops.comparison import isnan
from gradkit.ops.grad_edges import reads_input
from gradkit.ops.indexing import getitem
from gradkit.ops.complex import conj, real
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_norms import _norm_grad, _norm_jvp, vector_norm
from gradkit.ops.one_node import one_node
from gradkit.ops.promotion import result_type
from gradkit.ops.piecewise import abs, ceil, sign, where, zeros_like
from gradkit.ops.reduction import sum, unsqueeze_back
from gradkit.ops.shape import _normalize_dim, transpose, unsqueeze, view
from gradkit.ops.unary_helpers import c_type_name, check_bound, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters

_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


# -- cdist ----------------------------------------------------------------------------------------

def _pairs(xp, x1, x2):
    """|x1_i - x2_j| for every pair of rows, batch dims broadcast: shape (..., P, R, M)."""
    return xp.abs(x1[..., :, None, :] - x2[..., None, :, :])


@op(save=("x1", "x2", "result"), broadcast=True, node_name="CdistBackward0",
    contiguous=True)
def _cdist(xp, x1, x2, *, p, _nan_max=False):
    """``_nan_max``: p=inf's maximum is NaN at a NaN difference, as torch's pdist kernel
    (a leading ``_`` keeps it out of the node's ``_saved_`` names: torch has no such name)."""
    diff = _pairs(xp, x1, x2)
    if diff.shape[-1] == 0 or diff.size == 0:
        return xp.zeros(diff.shape[:-1], dtype=x1.dtype)
    if p == 0:  # a NaN difference counts NaN, as torch's min(ceil(|d|), 1)
        return xp.sum(xp.minimum(xp.ceil(diff), 1), axis=-1)
    if p == 1:
        return xp.sum(diff, axis=-1)
    if p == 2:
        return xp.sqrt(xp.sum(diff * diff, axis=-1))
    if p == math.inf:  # torch's cdist's running max from 0 passes over a NaN difference
        return xp.max(diff if _nan_max else xp.where(xp.isnan(diff), 0, diff), axis=-1)
    return xp.sum(diff ** p, axis=-1) ** (1.0 / p)


def _sign(diff):
    """torch's sign in its cdist kernels, made of clamps: NaN for a NaN difference."""
    return where(isnan(diff), diff, sign(diff))


def _cdist_part(g, diff, dist, p):
    """torch's _cdist_backward per coordinate: ``g`` times d dist(a_i, b_j) / d a_i for
    ``diff`` = a_i - b_j (..., P, R, M), g and dist (..., P, R, 1). After the product, a zero
    distance gives zero, and so does a zero difference for p < 1 (an infinite g included)."""
    if p == 1:
        return g * _sign(diff)
    if p == math.inf:  # the coordinates at the maximum (every one of a tie), NaN at a NaN
        off_max = ceil(abs(abs(diff) - dist))  # 0 at the maximum, >= 1 elsewhere, NaN kept
        return g * _sign(diff) * (1 - where(off_max > 1, 1.0, off_max))
    zero = dist == 0
    safe = where(zero, 1.0, dist)  # no 1/0 in the branch that where() drops
    if p == 2:
        part = g * diff / safe
    elif p < 2:
        nonzero = where(diff == 0, 1.0, abs(diff))
        part = _sign(diff) * pow(nonzero, p - 1) * g / pow(safe, p - 1)
        if p < 1:
            part = where(diff == 0, 0.0, part)
    else:
        part = diff * pow(abs(diff), p - 2) * g / pow(safe, p - 1)
    return where(zero, 0.0, part)


def _cdist_grad(g, a, b, dist, p):
    """The gradient for ``a`` of the distances of its rows to b's, summed over b's rows."""
    diff = unsqueeze(a, -2) - unsqueeze(b, -3)
    return sum(_cdist_part(unsqueeze(g, -1), diff, unsqueeze(dist, -1), p), -2)


def _mT(x):
    return transpose(x, -1, -2)


def _cdist_vjps(g, x1, x2, result, p, _nan_max=False):
    # each gradient one node on a graph, as torch's _cdist_backward (CdistBackwardBackward0;
    # gradkit's differentiates again through the composite, where torch's refuses)
    if p == 0 or 0 in g.shape:  # zeros, on a graph too
        return (reads_input(zeros_like(x1), x1, _node="CdistBackwardBackward0"),
                reads_input(zeros_like(x2), x2, _node="CdistBackwardBackward0"))
    return (one_node("CdistBackwardBackward0", lambda g, a, b, d: _cdist_grad(g, a, b, d, p),
                     (g, x1, x2, result)),
            one_node("CdistBackwardBackward0", lambda g, a, b, d: _cdist_grad(
                _mT(g), b, a, _mT(d), p), (g, x1, x2, result)))


_cdist.defvjp_all(_cdist_vjps)


def _pair_tangent(t1, t2):
    """t1_i - t2_j for every pair of rows (a missing tangent is zero)."""
    left = None if t1 is None else unsqueeze(t1, -2)
    right = None if t2 is None else unsqueeze(t2, -3)
    return right * -1 if left is None else left if right is None else left - right


@_cdist.defjvp_all
def _cdist_jvp(tangents, x1, x2, result, p, _nan_max=False):
    if p == 0:
        return zeros_like(result)
    diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    return sum(_cdist_part(_pair_tangent(*tangents), diff, unsqueeze(result, -1), p), -1)


_cdist.name, _cdist.profiler_name = "_cdist_forward", "gradkit::_cdist_forward"


@op(save=("x1", "x2", "result"), broadcast=True, node_name="EuclideanDistBackward0")
def _euclidean_dist(xp, x1, x2):
    """torch's matmul form of Euclidean distances: |a|^2 - 2 a.b + |b|^2, clamped at 0 (a
    zero distance then gets the zero subgradient, as torch, instead of a huge ratio)."""
    x1_norm = xp.sum(x1 * x1, axis=-1, keepdims=True)
    x2_norm = xp.sum(x2 * x2, axis=-1, keepdims=True)
    x1_ = xp.concatenate([-2 * x1, x1_norm, xp.ones_like(x1_norm)], axis=-1)
    x2_ = xp.concatenate([x2, xp.ones_like(x2_norm), x2_norm], axis=-1)
    return xp.sqrt(xp.maximum(xp.matmul(x1_, xp.swapaxes(x2_, -1, -2)), 0.0))


def _nonzero(result):
    """``result`` with its zero distances replaced by 1, so a masked ratio divides by no zero."""
    return where(result == 0, 1.0, result)


def _euclidean_vjps(g, x1, x2, result):
    ratio = where(result == 0, 0.0, g / _nonzero(result))
    return (x1 * sum(ratio, -1, True) - matmul(ratio, x2),
            x2 * unsqueeze(sum(ratio, -2), -1) - matmul(_mT(ratio), x1))


_euclidean_dist.defvjp_all(_euclidean_vjps)


@_euclidean_dist.defjvp_all
def _euclidean_jvp(tangents, x1, x2, result):
    diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    inner = sum(diff * _pair_tangent(*tangents), -1)
    return where(result == 0, 0.0, inner / _nonzero(result))


def _check_cdist(x1: Tensor, x2: Tensor, p: float) -> tuple:
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    batch1, batch2 = tuple(x1.shape[:-2]), tuple(x2.shape[:-2])
    try:
        batch = np.broadcast_shapes(batch1, batch2)
    except ValueError:
        raise RuntimeError(_broadcast_message([np.empty(batch1), np.empty(batch2)])) from None
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{scalar_type_name(x)}")
    check_bound(p, "cdist only supports non-negative p values")
    return batch + (x1.shape[-2], x2.shape[-2])


def _check_cdist_kernel(x1: Tensor, x2: Tensor, use_mm: bool) -> None:
    """The refusals of the kernel torch runs where both inputs have elements: the matmul
    form's dtype check, or the direct kernel's (no float16 one; x2 read as x1's dtype)."""
    if use_mm and x1.dtype != x2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{c_type_name(x1._data)} != {c_type_name(x2._data)}")
    if not use_mm and x1.dtype.itemsize == 2:
        raise NotImplementedError(f"\"cdist\" not implemented for '{scalar_type_name(x1)}'")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(x1)} but found "
                           f"{scalar_type_name(x2)}")


@tensor_parameters("x2")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance of every row of x1 to every row of x2 (batch dims broadcast).
    For p=2 with more than 25 rows (or ``compute_mode="use_mm_for_euclid_dist"``) it is
    computed through a matrix product, as torch, which is faster and less exact."""
    p = number_argument(p, "cdist", "p", 3, "float", optional=False)
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _COMPUTE_MODES[compute_mode]
    shape = _check_cdist(x1, x2, p)
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25)))
    if x1.numel() == 0 or x2.numel() == 0:  # torch's empty or zero result, in x1's dtype
        return _cdist(x1, x2.to(x1.dtype), p=float(p))
    _check_cdist_kernel(x1, x2, use_mm)
    if not use_mm:
        return _cdist(x1, x2, p=float(p))
    return view(_euclidean_dist(x1, x2), shape=shape)



@number_parameters("pdist", p="float")
def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002 - torch's name
    """The p-norm distances between the rows of a 2-D input, pair (i, j) for i < j in row
    order (the upper triangle of cdist(input, input)), with cdist's derivative (torch's
    pdist backward, zero distances included)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    check_bound(p, "pdist only supports non-negative p values")
    if input.dtype.itemsize == 2 and input.shape[0] > 1 and input.shape[1]:  # torch's kernel
        raise NotImplementedError(f"\"pdist\" not implemented for '{scalar_type_name(input)}'")
    rows, cols = np.triu_indices(input.shape[0], 1)
    return one_node("PdistBackward0", lambda x: _pair_distances(x, rows, cols, float(p)),
                    (input,), {"self": 0, "result": "result"}, {"p": float(p)})


def _pair_distances(x: Tensor, rows, cols, p: float) -> Tensor:
    """The distance of each pair of rows x[rows[k]], x[cols[k]]: a batch of 1 x 1 cdists, so
    that, as torch's pdist backward, no row meets itself (a row holding inf would give the
    diagonal's inf - inf, NaN in the gradient: strided seed 27820)."""
    first, second = (unsqueeze(getitem(x, index), -2) for index in (rows, cols))
    return view(_cdist(first, second, p=p, _nan_max=True), shape=(len(rows),))

# -- dist ----------------------------------------------------------------------------------------

@op(save=("x", "y", "result"), broadcast=True, method=True, node_name="DistBackward0")
def dist(xp, x, y, p=2):
    """The p-norm of ``x - y`` (broadcasting), as a 0-d tensor."""
    if type(y) is bool:  # (a Python number reads as a tensor, a bool does not)
        raise TypeError("dist(): argument 'other' (position 2) must be Tensor, not bool")
    _check_not_bool(x, y)  # torch subtracts first
    dtype = result_type(x, y)
    try:
        # torch's sub: x - 1 * y, so a complex y with a NaN part is NaN + NaN j
        diff = sub.forward(xp, x.astype(dtype), y.astype(dtype))
    except ValueError:
        raise RuntimeError(_broadcast_message([x, y])) from None
    if dtype.kind not in "fc":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {scalar_type_name(diff)} instead.")
    return vector_norm.forward(xp, diff, p)


def _dist_grad(g, x, y, result, p):
    if p == 0:
        return None
    diff = x - y
    return _norm_grad(unsqueeze_back(g, tuple(diff.shape), None, False), diff, result, p, None,
                      False)


def _dist_grad_other(g, x, y, result, p):
    grad = _dist_grad(g, x, y, result, p)
    return None if grad is None else -grad


dist.defvjp(_dist_grad, _dist_grad_other)
dist.numbers = numbers_reader("dist", p=3)


@dist.defjvp_all
def _dist_jvp(tangents, x, y, result, p):
    """torch's norm_jvp of x - y with tangent tx - ty (its sums before the scale by the norm:
    a tangent of 1e308 overflows to NaN as torch's, where the slope first gave a finite)."""
    return _norm_jvp(_pair_difference(*tangents), x - y, result, p, None, False, None)


def _pair_difference(tx, ty):
    return -ty if tx is None else tx if ty is None else tx - ty


# -- renorm --------------------------------------------------------------------------------------

def _check_renorm(x, p, dim, maxnorm) -> tuple:
    for name, number in (("p", p), ("maxnorm", maxnorm)):
        if isinstance(number, complex):
            raise RuntimeError(f"renorm: {name} must be real-valued")
    check_bound(p, "renorm: non-positive-norm not supported", strict=True)
    check_bound(maxnorm, "renorm: expected maxnorm to be >= 0 but got {}")
    if x.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    dim = _normalize_dim(dim, x.ndim)
    return tuple(d for d in range(x.ndim) if d != dim)


@op(save="x", method=True, inplace=True)
def renorm(xp, x, *, p, dim, maxnorm):
    """x with each sub-tensor along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to
    norm ``maxnorm`` (times 1 / (1 + 1e-7 / norm), as torch)."""
    others = _check_renorm(x, p, dim, maxnorm)
    norm = vector_norm.forward(xp, x, p, others, True)
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(norm.dtype)
    return x * factor


# torch's CPU accumulate types (toAccumulateType), which renorm_backward computes in
_ACCUMULATE = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float64,
               np.dtype(np.complex64): np.complex128}


def _renorm_grad(g, x, p, dim, maxnorm):
    """torch's renorm_backward, ``factor * (g - slope / (norm + 1e-7))`` where it scales, g
    elsewhere, with the norm and the sum in the accumulate type (float64 for float32 and
    complex64; the gradient is rounded to x's dtype after). An inf-norm's slope finds its
    maximum with the norm in x's own dtype: torch's compares complex64 |x| with the float64
    norm, finds none and gives NaN (a documented wart, breadth seed 11017)."""
    others = _check_renorm(x, p, dim, maxnorm)
    dtype = getattr(x, "_data", x).dtype
    acc = _ACCUMULATE.get(dtype, dtype)
    norm = vector_norm(x, p, others, True, dtype=acc)
    products = conj(x) * g
    if dtype.kind == "c":
        products = real(products)
    slope = _norm_grad(sum(products, others, True, dtype=np.finfo(acc).dtype), x,
                       vector_norm(x, p, others, True) if math.isinf(p) else norm, p, others,
                       True)
    inverse = 1 / (norm + 1e-7)
    factor = inverse * maxnorm
    return where(norm > maxnorm, factor * (g - inverse * slope), g)


renorm.defvjp(_renorm_grad)
renorm.numbers = numbers_reader("renorm", p=2, maxnorm=4)


@renorm.defjvp_all
def _renorm_jvp(tangents, x, p, dim, maxnorm):
    t = tangents[0]
    others = _check_renorm(x, p, dim, maxnorm)
    norm = vector_norm(x, p, others, True)
    inverse = 1 / (norm + 1e-7)
    norm_tangent = sum(real(conj(_norm_grad(1.0, x, norm, p, others, True)) * t), others, True)
    return where(norm > maxnorm,
                 maxnorm * inverse * t - x * (maxnorm * inverse * inverse * norm_tangent), t)

