"""Statistics: nansum, nanmean, quantile, nanquantile, cov and corrcoef.

nansum is an op (NaNs get no gradient); the others are composed of ops the way torch's
composite kernels are (aten/native Sorting.cpp, Correlation.cpp), so their values and
gradients are torch's: quantile sorts, gathers the two neighbouring order statistics and
lerps between them (ties: the gradient goes where the stable sort put it, torch's place for
rows of up to 16 values; q, when it requires grad, gets (above - below) * (n - 1)).
"""
from __future__ import annotations

import warnings

import numpy as np

from gradkit.int_arguments import int_parameters, ints_reader
from gradkit.number_arguments import number_parameters, python_number
from gradkit._tensor import Tensor
from gradkit.creation import full
from gradkit.ops._op import op
from gradkit.ops.binary_math import lerp
from gradkit.ops.clamp import clamp
from gradkit.ops.comparison import isnan, logical_not
from gradkit.ops.complex import conj, imag, real
from gradkit.ops.complex_build import complex_
from gradkit.ops.conversion import astype, clone
from gradkit.ops.elementwise import sqrt
from gradkit.ops.indexing import gather
from gradkit.ops.linalg import mm
from gradkit.ops.methods import tensor_method
from gradkit.ops.piecewise import ceil, floor, round, where, zeros_like  # noqa: A004
from gradkit.ops.promotion import PY_SCALARS
from gradkit.ops.rearrange import movedim
from gradkit.ops.reduction import (_accumulation_dtype, any, axes, expand_back,  # noqa: A004
                                   accumulate, floating_dtype, sum)
from gradkit.ops.shape import (_normalize_dim, expand, reshape, squeeze, t, transpose,
                               unsqueeze)
from gradkit.ops.sorting import sort
from gradkit.ops.triangular import diagonal
from gradkit.ops.unary_helpers import cpp_number, kernel_error, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters

_INT64 = np.dtype(np.int64)


@op(save="x", batchable=True, method=True, contiguous=True)
def nansum(xp, x, dim=None, keepdim=False, dtype=None):
    """The sum along ``dim`` (all dims by default) with NaNs counted as 0."""
    if x.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    dtype = _accumulation_dtype(x, dtype)
    if x.dtype.kind == "f" and dtype is not None and dtype.kind == "c":  # (ints: a plain sum)
        raise kernel_error("nansum_cpu")(np.empty(0, dtype))
    return accumulate(_nan_sum if xp is np else xp.nansum, x, dtype, axis=axes(dim, x.ndim),
                      keepdims=keepdim)


def _nan_sum(x, **options):
    """NumPy's nansum (NaNs made 0, then its add.reduce), called from gradkit's module: an
    overflow's RuntimeWarning is silenced there (quiet_numpy.py), as torch is silent."""
    if x.dtype.kind == "f":
        x = np.where(np.isnan(x), 0, x)
    return np.add.reduce(x, **options)


nansum.numbers = ints_reader("nansum", dim=(1, "int[1]?"), keepdim=(2, "bool"),
                             dtype=(None, "ScalarType?"))


# torch: the gradient spread back times "not NaN" (a product: an infinite gradient gives NaN);
# its jvp selects instead, and sums: a NaN tangent at a number gives NaN, an inf one at a NaN 0
nansum.defvjp(lambda g, x, dim, keepdim, dtype: expand_back(g, x.shape, dim, keepdim)
              * logical_not(isnan(x)))
nansum.defjvp(lambda t, x, dim, keepdim, dtype: sum(where(isnan(x), 0.0, t), dim, keepdim))


@tensor_method()
def nanmean(input: Tensor, dim: int | tuple | None = None, keepdim: bool = False, *,  # noqa: A002
            dtype=None) -> Tensor:
    """The mean of the non-NaN values along ``dim``: nansum over their count (NaN where all
    are NaN)."""
    if input.dtype.np.kind not in "fc":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {scalar_type_name(input._data)}")
    floating_dtype("nanmean", dtype)
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype) / count


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _checked_q(x, q):
    """q as a tensor of x's dtype, after torch's checks (in torch's order)."""
    q = python_number(q)  # NumPy numbers read as Python's
    if type(q) in PY_SCALARS:
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got "
                               f"{cpp_number(float(q))}")
        q = full((), float(q), dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype.np.kind != "f" or x.dtype.np.itemsize < 4:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype != x.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    values = q._data
    if not bool(((values >= 0) & (values <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return q


def _sorted_rows(x, dim, keepdim):
    """x sorted along the reduced dim, viewed as (result shape..., n): a kept dim stays in its
    place with size 1, as torch sorts x.unsqueeze(-1).transpose(dim, -1)."""
    if dim is None:
        reduced = (1,) * x.dim() if keepdim else ()
        return reshape(sort(reshape(x, (-1,))).values, reduced + (-1,))
    if x.dim() == 0:
        _normalize_dim(dim, 0)
        return reshape(x, (1,))
    d = _normalize_dim(dim, x.dim())
    return sort(transpose(unsqueeze(x, -1), d, -1) if keepdim else movedim(x, d, -1)).values


def _quantile(x, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool):
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    q = _checked_q(x, q)
    rows = _sorted_rows(x, dim, keepdim)
    if q.dim():  # a row per q, next to last
        rows = expand(unsqueeze(rows, -2), tuple(rows.shape[:-1]) + (q.shape[0], rows.shape[-1]))
        q = reshape(q, (-1, 1))
    nan = isnan(rows)
    if ignore_nan:  # ranks among the non-NaN values; all NaN: rank 0, a NaN quantile
        count = sum(logical_not(nan), -1, True)
        ranks = q * (count - 1)
        ranks = where(ranks < 0, 0.0, ranks)
    else:  # any NaN: the last rank, a NaN quantile
        last = rows.shape[-1] - 1
        ranks = where(any(nan, -1, True), float(last), q * last)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": floor, "higher": ceil, "nearest": round}[interpolation](ranks)
    below = astype(ranks.detach(), dtype=_INT64)
    values = gather(rows, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = zeros_like(ranks) + 0.5 if interpolation == "midpoint" else ranks - below
        above = gather(rows, -1, astype(ceil(ranks.detach()), dtype=_INT64))
        values = lerp(values, above, weights)
    if q.dim():  # the q dim first, innermost in memory as torch's
        values = clone(movedim(values, -2, 0))
    # torch squeezes its result in place: no view, whose in-place writes would differ
    return values.squeeze_(-1)


@tensor_method()
@int_parameters("quantile", True, dim=(2, "int?"), keepdim=(3, "bool"))
@tensor_parameters("q", overloaded=True, numbers=True)
@number_parameters("quantile", True, q="float|Tensor")
def quantile(input: Tensor, q: Tensor | float, dim: int | None = None,  # noqa: A002
             keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """The q-th quantiles (q a number or a 1-D tensor in [0, 1]) along ``dim`` (all values by
    default), interpolating between order statistics as ``interpolation`` says; NaN where a
    row holds a NaN. With a 1-D q the quantiles are the result's first dim."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


@tensor_method()
@int_parameters("nanquantile", True, dim=(2, "int?"), keepdim=(3, "bool"))
@tensor_parameters("q", overloaded=True, numbers=True)
@number_parameters("nanquantile", True, q="float|Tensor")
def nanquantile(input: Tensor, q: Tensor | float, dim: int | None = None,  # noqa: A002
                keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """``quantile`` of the non-NaN values (NaN where a row is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


def _check_weights(name: str, w, kinds: str, kind_name: str, observations: int) -> None:
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if w.dtype.np.kind not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have {kind_name} dtype but got {name} "
                           f"with {scalar_type_name(w._data)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {observations}")
    if observations and not bool((w._data >= 0).all()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@tensor_method()
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,  # noqa: A002
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in its
    columns; a 1-D input is one variable), weighted by integer frequencies ``fweights`` and
    float ``aweights``; ``correction`` 1 is Bessel's. A 0-d result for one variable."""
    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype.np.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    rows = input if input.dim() == 2 else reshape(input, (1, -1))
    observations = rows.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, "iu", "integral", observations)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, "f", "floating point", observations)
        w = aweights if w is None else w * aweights
    w_sum = observations if w is None else sum(w)
    if w is not None and not bool(w_sum._data != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    average = sum(rows if w is None else rows * w, 1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * sum(w * aweights) / w_sum
    else:
        norm = w_sum - correction
    if bool(getattr(norm, "_data", norm) <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    centered = rows - unsqueeze(average, 1)
    c = mm(centered, conj(t(centered if w is None else centered * w)))
    return squeeze(c / norm)


@tensor_method()
def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """The Pearson correlation coefficients of the variables in the rows of ``input``
    (``cov`` normalized by the standard deviations, clipped to [-1, 1])."""
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:  # one variable: 1, or NaN where its variance is 0, inf or NaN
        return c / c
    d = diagonal(c)
    stddev = sqrt(real(d) if d.is_complex() else d)
    c = c / reshape(stddev, (-1, 1))
    c = c / reshape(stddev, (1, -1))
    if c.is_complex():
        return complex_(clamp(real(c), -1, 1), clamp(imag(c), -1, 1))
    return clamp(c, -1, 1)
