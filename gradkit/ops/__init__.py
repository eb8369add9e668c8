"""Every differentiable op, declared once (see ``_op.py`` for the mechanism).

Files group op families; this package re-exports their public functions, which
are also the ``gradkit.*`` functions and, where their declaration says
``method=True`` / ``inplace=True`` (``ops/methods.py``), Tensor methods.
"""
import types as _types

from gradkit.ops import _op
from gradkit.ops import keywords as _keywords
from gradkit.ops._op import Op, dispatch, op, sum_to_shape  # noqa: F401
from gradkit.ops.arithmetic import (  # noqa: F401
    add, div, floor_divide, mul, neg, pow, remainder, sub)
from gradkit.ops import pow_rules as _pow_rules  # noqa: F401 - pow's derivatives
from gradkit.ops.comparison import (  # noqa: F401
    allclose, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,
    bitwise_xor, eq, ge, gt, isclose, isfinite, isinf, isnan, le, logical_and, logical_not,
    logical_or, logical_xor, lt, ne)
from gradkit.ops.binary_math import (  # noqa: F401
    addcdiv, addcmul, arctan2, atan2, fmod, hypot, lerp, logaddexp, logaddexp2, xlogy)
from gradkit.ops.binary_breadth import (  # noqa: F401
    copysign, float_power, fmax, fmin, gcd, heaviside, lcm, ldexp, nextafter, rsub)
from gradkit.ops.clamp import clamp, clip  # noqa: F401
from gradkit.ops.complex import conj, conj_physical, imag, real  # noqa: F401
from gradkit.ops.conversion import astype, clone, copy_from, fill, to_device, zeros_like_op  # noqa: F401
from gradkit.ops.einsum import einsum  # noqa: F401 - the function, not the module
from gradkit.ops.activations import (  # noqa: F401
    elu, gelu, leaky_relu, relu, sigmoid, silu, softplus)
from gradkit.ops.activations_more import celu, hardshrink, selu, threshold  # noqa: F401
from gradkit.ops.activations_gated import prelu, rrelu  # noqa: F401
from gradkit.ops.activations_inplace import celu_, relu_, rrelu_, selu_, threshold_  # noqa: F401
from gradkit.ops.losses_margin import cosine_similarity, pairwise_distance  # noqa: F401
from gradkit.ops.elementwise import (  # noqa: F401
    acos, acosh, asin, asinh, atan, atanh, cos, cosh, erf, exp, exp2, expm1, log, log1p, log2,
    log10, reciprocal, rsqrt, sin, sinh, sqrt, square, tan, tanh)
from gradkit.ops.elementwise_special import (  # noqa: F401
    erfc, erfinv, frac, logit, nan_to_num, sinc)
from gradkit.ops.gamma import digamma, i0, lgamma, mvlgamma, polygamma  # noqa: F401
from gradkit.ops.piecewise import (  # noqa: F401
    abs, ceil, floor, maximum, minimum, ones_like, round, sgn, sign, trunc, zeros_like)
from gradkit.ops.indexing import (  # noqa: F401
    gather, getitem, index_select, scatter, scatter_add)
from gradkit.ops.setitem import setitem_  # noqa: F401
from gradkit.ops.masked_fill import masked_fill  # noqa: F401
from gradkit.ops.index_put import index_put  # noqa: F401
from gradkit.ops.padding import pad  # noqa: F401
from gradkit.ops.inplace import inplace  # noqa: F401
from gradkit.ops.index_ops import (  # noqa: F401
    index_add, index_copy, index_fill, masked_scatter, masked_select, put, take, take_along_dim)
from gradkit.ops.scatter_reduce import scatter_reduce  # noqa: F401
from gradkit.ops.searching import (  # noqa: F401
    argwhere, bucketize, histc, nonzero, searchsorted, unique, where)
from gradkit.ops.complex_build import complex_ as complex  # noqa: F401
from gradkit.ops.complex_views import view_as_complex, view_as_real  # noqa: F401
from gradkit.ops.joining import cat, chunk, concat, split, stack, unbind  # noqa: F401
from gradkit.ops.linalg import bmm, dot, matmul, mm, mv, outer, vdot  # noqa: F401
from gradkit.ops.extremes import amax, amin, argmax, argmin, max, min  # noqa: F401
from gradkit.ops.reduction import (  # noqa: F401
    all, any, cumsum, log_softmax, logsumexp, mean, softmax, sum)
from gradkit.ops import softmax_backward as _softmax_backward  # noqa: F401 - softmax's rule
from gradkit.ops import activation_backward as _activation  # noqa: F401 - tanh's, sigmoid's
from gradkit.ops.variance import std, std_mean, var, var_mean  # noqa: F401
from gradkit.ops.linalg_norms import norm  # noqa: F401
from gradkit.ops.linalg_det import det  # noqa: F401
from gradkit.ops.linalg_solvers import inv as inverse  # noqa: F401
from gradkit.ops.linalg_slogdet import logdet, slogdet  # noqa: F401
from gradkit.ops.linalg_lu import lu_unpack  # noqa: F401
from gradkit.ops.linalg_norms import frobenius_norm, nuclear_norm  # noqa: F401
from gradkit.ops.linalg_cholesky_solve import cholesky_inverse, cholesky_solve  # noqa: F401
from gradkit.ops.linalg_householder import geqrf, orgqr, ormqr  # noqa: F401
from gradkit.ops.linalg_legacy import (  # noqa: F401
    cholesky, eig, lstsq, lu, lu_solve, matrix_exp, matrix_power, matrix_rank, pinverse, qr, solve,
    svd, symeig, triangular_solve)
from gradkit.ops.polar import angle, polar  # noqa: F401
from gradkit.ops.products import (  # noqa: F401
    addbmm, addmm, addmv, baddbmm, inner, tensordot, trace)
from gradkit.ops.kron import kron  # noqa: F401
from gradkit.ops.cross import cross  # noqa: F401
from gradkit.ops.rearrange import diff, meshgrid, moveaxis, movedim, rot90, tile  # noqa: F401
from gradkit.ops.shape import (  # noqa: F401
    broadcast_tensors, broadcast_to, expand, flatten, flip, permute, ravel, repeat, reshape,
    squeeze, t, transpose, unflatten, unsqueeze, view)
from gradkit.ops.slicing import narrow, roll, select  # noqa: F401
from gradkit.ops.sorting import argsort, sort, topk  # noqa: F401
from gradkit.ops.scans import cumprod, logcumsumexp, prod  # noqa: F401
from gradkit.ops.running_extremes import cummax, cummin  # noqa: F401
from gradkit.ops.order_statistics import (  # noqa: F401
    aminmax, count_nonzero, equal, kthvalue, median, mode, msort, nanmedian)
from gradkit.ops.statistics import (  # noqa: F401
    corrcoef, cov, nanmean, nanquantile, nansum, quantile)
from gradkit.ops.unary_breadth import (  # noqa: F401
    clamp_max, clamp_min, deg2rad, frexp, isin, isneginf, isposinf, isreal, positive, rad2deg,
    signbit)
from gradkit.ops.triangular import diag, diag_embed, diagonal, tril, triu  # noqa: F401
from gradkit.ops.stacking import (  # noqa: F401
    atleast_1d, atleast_2d, atleast_3d, block_diag, cartesian_prod, column_stack, combinations,
    dsplit, dstack, fliplr, flipud, hsplit, hstack, row_stack, tensor_split, vsplit, vstack)
from gradkit.ops.view_scatter import (  # noqa: F401
    diagonal_scatter, expand_copy, narrow_copy, permute_copy, select_scatter, slice_scatter)
from gradkit.ops.strided import as_strided, as_strided_copy, unfold_copy  # noqa: F401
from gradkit.ops.strided_scatter import as_strided_scatter  # noqa: F401
from gradkit.ops.view_copies import (  # noqa: F401
    alias_copy, detach_copy, diagonal_copy, select_copy, slice_copy, split_copy,
    split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy, unbind_copy, unsafe_chunk,
    unsafe_split, unsafe_split_with_sizes, unsqueeze_copy, view_as_complex_copy,
    view_as_real_copy, view_copy)
from gradkit.ops.patterns import diagflat, repeat_interleave, vander  # noqa: F401
from gradkit.ops.distances import cdist, dist, pdist, renorm  # noqa: F401
from gradkit.ops.integrals import (  # noqa: F401
    bincount, cumulative_trapezoid, trapezoid, trapz)
from gradkit.ops.matrix_products import addr, chain_matmul  # noqa: F401
from gradkit.ops.aliases import (  # noqa: F401
    adjoint, split_with_sizes, subtract, swapaxes, swapdims, true_divide)
from gradkit.ops.binomial_norms import norm_except_dim  # noqa: F401
from gradkit.ops.segment_reduce import segment_reduce  # noqa: F401
from gradkit.ops.special_functions import igamma, igammac  # noqa: F401
from gradkit.ops import inplace_variants as _inplace_variants  # noqa: F401 - x.eq_(y) & co.
from gradkit.ops import inplace_views as _inplace_views  # noqa: F401 - x.t_() & co.
from gradkit.ops.stft import istft, stft  # noqa: F401
from gradkit.ops.histograms import histogram, histogramdd  # noqa: F401
from gradkit.ops.numerical_gradient import gradient  # noqa: F401
from gradkit.ops.consecutive import unique_consecutive  # noqa: F401
from gradkit.ops.index_reduce import index_reduce  # noqa: F401
from gradkit.ops import python_map as _python_map  # noqa: F401 - Tensor.apply_, map_

absolute = abs
negative = neg
multiply = mul
divide = div
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh
# torch's C++-parsed functions take NumPy's names too: the same wrappers gradkit's namespaces use
_keywords.take_numpy_names(globals())


# the seam (ops/_op.py): the ops the mechanism uses, declared above it
_op.seam.conj, _op.seam.real, _op.seam.sum, _op.seam.astype = conj, real, sum, astype


# the ops and their aliases, not the op-family modules (``from gradkit.ops import *``)
__all__ = sorted(name for name, value in globals().items()
                 if not name.startswith("_") and not isinstance(value, _types.ModuleType))

from gradkit.ops import node_names as _node_names  # noqa: E402,F401 - torch's node names
from gradkit.ops import legacy_overloads as _legacy_overloads  # noqa: E402,F401 - add_(alpha, other)
from gradkit.ops import torch_saved as _torch_saved  # noqa: E402,F401 - torch's _saved_ names
from gradkit.ops import torch_input_names as _torch_input_names  # noqa: E402,F401
from gradkit.ops import rounding_division as _rounding_division  # noqa: E402,F401 - div(rounding_mode=)
