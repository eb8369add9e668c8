"""Order statistics: kthvalue, median, nanmedian, mode, msort, aminmax, count_nonzero, equal.

The index picked among equal values is torch's CPU one: kthvalue's quickselect and mode's
std::sort are replayed for rows where it is ambiguous (``cpu_order.py``); median along a dim
orders by (value, index), so it is the stable sort's. Gradients go to the picked index
(median and nanmedian of all elements: shared among the elements equal to the result).
"""
from __future__ import annotations


import numpy as np

from gradkit import return_types
from gradkit.int_arguments import int_parameters, ints_reader
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.ops import cpu_order
from gradkit.ops._op import op
from gradkit.ops.extremes import (
    _check_nonempty, _evenly, _evenly_all, _evenly_all_jvp, _evenly_jvp, _first_tied_zero,
    _all_reduced_tied_zero, _select_grad, _select_jvp)
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import tensor_method
from gradkit.ops.reduction import axes
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.sorting import sort
from gradkit.ops.unary_helpers import kernel_error, reject_complex, scalar_type_name
from gradkit.signature_errors import missing_arguments

kthvalue_result = return_types.kthvalue
median_result = return_types.median
nanmedian_result = return_types.nanmedian
mode_result = return_types.mode
aminmax_result = return_types.aminmax


def refuse_complex_grad(name: str, x, result: tuple) -> tuple:
    """``result``, unless its values are complex and x records a gradient: torch has no complex
    derivative for these ops (only a 0-d or empty complex x gets past their kernels' dtype
    checks)."""
    if result[0].is_complex() and x.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return result


def _reject(x, kernel: str) -> None:
    """torch's CPU kernels of these ops have no bool nor complex version."""
    if x.dtype.kind in "bc":
        raise kernel_error(kernel)(x)


def _host(a):
    return a.get() if hasattr(a, "get") else a  # a CuPy array's values, for the replays


def _along(xp, x, dim, keepdim, pick):
    """(values, indices) along ``dim``, ``pick(rows)`` giving each row's index (rows: the
    slices along dim as a 2-d NumPy array)."""
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=xp.int64)
    moved = xp.moveaxis(x, dim, -1)
    rows = _host(moved).reshape(-1, x.shape[dim])
    # (a column of a sorting order is strided: the indices are a dense copy, as torch's)
    picked = np.ascontiguousarray(pick(rows), dtype=np.int64) if rows.shape[0] else \
        np.zeros(0, np.int64)
    indices = xp.expand_dims(xp.asarray(picked.reshape(moved.shape[:-1])), dim)
    values = xp.take_along_axis(x, indices, axis=dim)
    if not keepdim:
        values, indices = xp.squeeze(values, dim), xp.squeeze(indices, dim)
    return values, indices


def _kth_picks(rows, k):
    """The stable sort's k-th index where the k-th value is unique in its row, else the index
    ATen's quickselect leaves (NaN sorts last in both)."""
    order = np.argsort(rows, axis=-1, kind="stable")
    ranked = np.take_along_axis(rows, order, -1)
    picks, value = order[:, k], ranked[:, k]
    tied = np.zeros(len(rows), dtype=bool)
    if k > 0:
        tied |= cpu_order.same_or_both_nan(ranked[:, k - 1], value)
    if k + 1 < rows.shape[1]:
        tied |= cpu_order.same_or_both_nan(ranked[:, k + 1], value)
    for r in np.flatnonzero(tied):
        picks[r] = cpu_order.quick_select(rows[r].tolist(), k)
    return picks


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,), name="kthvalue")
def _kthvalue(xp, x, *, k, dim, keepdim):
    _check_nonempty("kthvalue", x, dim)
    if not 1 <= k <= (x.shape[dim] if x.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if x.ndim:  # torch copies a 0-d x of any dtype
        _reject(x, "kthvalue_cpu")
    return _along(xp, x, dim, keepdim, lambda rows: _kth_picks(rows, k - 1))


def _median_picks(rows, ignore_nan):
    """torch orders by (value, index): the stable sort's middle index. median gives a row's
    first NaN; nanmedian the middle of the numbers, or, for a row of NaN, std::nth_element's
    pick among them (all equivalent)."""
    n = rows.shape[1]
    nan = rows != rows
    order = np.argsort(rows, axis=-1, kind="stable")
    if not ignore_nan:
        return np.where(nan.any(-1), np.argmax(nan, -1), order[:, (n - 1) // 2])
    numbers = n - nan.sum(-1)
    picks = np.take_along_axis(order, np.maximum(numbers - 1, 0)[:, None] // 2, -1)[:, 0]
    for r in np.flatnonzero(numbers == 0):
        picks[r] = cpu_order.nth_element(rows[r].tolist(), 0, cpu_order.less_nan_largest)
    return picks


def _to_picked(g, x_shape, indices, dim, keepdim, **_):
    """The values' gradient at the picked indices, zeros elsewhere (kthvalue's k aside)."""
    return (_select_grad(g, x_shape, indices, dim, keepdim),)


def _from_picked(tangents, x_shape, indices, dim, keepdim, **_):
    return _select_jvp(tangents, x_shape, indices, dim, keepdim)


def _median_along(name: str, ignore_nan: bool):
    def forward(xp, x, *, dim, keepdim):
        _check_nonempty("median", x, dim)
        _reject(x, "median_out")
        return _along(xp, x, dim, keepdim, lambda rows: _median_picks(rows, ignore_nan))
    forward.__name__ = name
    declared = op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,),
                  name=name, node_name=name.capitalize() + "Backward1")(forward)
    declared.defvjp_all(_to_picked)
    declared.defjvp_all(_from_picked)
    return declared


def _median_value(xp, x, ignore_nan):
    """The lower median of all elements (NaN for an empty x, in x's dtype as torch casts it;
    median: NaN if any; nanmedian: of the numbers). A zero median takes the sign of the zero
    std::nth_element leaves there."""
    if x.size:  # torch casts an empty x's NaN to any dtype, bool and complex too
        _reject(x, "median_cpu")
    flat = x.reshape(-1)
    nan = flat != flat
    numbers = flat.size - int(nan.sum())
    if not flat.size or numbers == 0 or (nan.any() and not ignore_nan):
        with np.errstate(invalid="ignore"):  # NaN cast to an integer dtype: its minimum, as torch
            return xp.asarray(np.nan).astype(x.dtype)
    value = xp.sort(flat)[(numbers - 1) // 2]
    if value == 0 and x.dtype.kind == "f":
        values = _host(flat).tolist()
        value = flat[cpu_order.nth_element(values, (numbers - 1) // 2, cpu_order.less_nan_largest)]
    return xp.asarray(value)


@op(save=("x", "result"), name="median")
def _median_all(xp, x):
    return _median_value(xp, x, ignore_nan=False)


@op(save=("x", "result"), name="nanmedian")
def _nanmedian_all(xp, x):
    return _median_value(xp, x, ignore_nan=True)


for _whole in (_median_all, _nanmedian_all):
    _whole.defvjp(_evenly_all)
    _whole.defjvp(_evenly_all_jvp)
    _whole.no_complex_grad = _whole.name  # an empty or 0-d complex x passes the kernel
_median_dim = _median_along("median", ignore_nan=False)
_nanmedian_dim = _median_along("nanmedian", ignore_nan=True)


def _mode_picks(rows):
    """mode's index: the smallest most frequent value, at the last position std::sort leaves
    it; up to 16 elements without NaN that sort is an insertion sort (the last index)."""
    picks = np.zeros(len(rows), dtype=np.int64)
    for r, row in enumerate(rows):
        if len(row) <= 16 and not (row != row).any():
            unique, inverse, counts = np.unique(row, return_inverse=True, return_counts=True)
            picks[r] = np.flatnonzero(inverse.reshape(-1) == np.argmax(counts))[-1]
            continue
        values = row.tolist()
        order = cpu_order.std_sort(values)
        best, run = 0, 0
        for position, i in enumerate(order):
            run += 1
            if position + 1 == len(order) or values[i] != values[order[position + 1]]:
                if run > best:
                    best, picks[r] = run, i
                run = 0
    return picks


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,), name="mode")
def _mode(xp, x, *, dim, keepdim):
    _check_nonempty("mode", x, dim)
    if x.ndim and x.size:  # torch copies a 0-d x, passes an empty one, of any dtype
        reject_complex(x, kernel_error("mode_cpu"))
    return _along(xp, x, dim, keepdim, _mode_picks)


for _picking in (_kthvalue, _mode):
    _picking.defvjp_all(_to_picked)
    _picking.defjvp_all(_from_picked)


@tensor_method()
@numpy_keywords
@int_parameters("kthvalue", k=(1, "SymInt"), dim=(2, "int"), keepdim=(3, "bool"))
def kthvalue(x, k: int, dim: int = -1, keepdim: bool = False):
    """(values, indices) of the k-th smallest element along ``dim`` (NaN counts as largest)."""
    dim = _normalize_dim(dim, x.ndim)
    return kthvalue_result(*refuse_complex_grad("kthvalue", x, _kthvalue(x, k=k, dim=dim,
                                                                        keepdim=keepdim)))


def _median_function(name: str, whole, along, result):
    @numpy_keywords
    @int_parameters(name, dim=(1, "int"), keepdim=(2, "bool"))
    def reduce_along(x, dim: int, keepdim: bool = False):
        return result(*along(x, dim=_normalize_dim(dim, x.ndim), keepdim=keepdim))

    def median(x, *args, **kwargs):
        if not args and not kwargs:
            return whole(x)
        if not args and "dim" not in kwargs and "axis" not in kwargs:
            raise missing_arguments(name, ("dim",))  # torch's signature with a dim: no None
        return reduce_along(x, *args, **kwargs)
    median.__name__ = name
    return tensor_method()(numpy_keywords(median))


median = _median_function("median", _median_all, _median_dim, median_result)
median.__doc__ = ("median(x): the lower median of all elements (NaN if any); median(x, dim): "
                  "(values, indices) along dim.")
nanmedian = _median_function("nanmedian", _nanmedian_all, _nanmedian_dim, nanmedian_result)
nanmedian.__doc__ = "median that ignores NaN (NaN only where every element is NaN)."


@tensor_method()
@numpy_keywords
@int_parameters("mode", dim=(1, "int"), keepdim=(2, "bool"))
def mode(x, dim: int = -1, keepdim: bool = False):
    """(values, indices) of the most frequent value along ``dim`` (the smallest among equally
    frequent ones)."""
    dim = _normalize_dim(dim, x.ndim)
    return mode_result(*refuse_complex_grad("mode", x, _mode(x, dim=dim, keepdim=keepdim)))


@tensor_method()
def msort(input):
    """x sorted along its first dim (the values of ``sort(x, 0)``)."""
    return sort(input, 0).values


@op(save=("x", "result0", "result1"), outputs=2, name="aminmax")
def _aminmax(xp, x, *, dim, keepdim):
    if not x.size:
        if dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        if x.ndim and x.shape[dim] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    if x.ndim == 0 and dim is not None:  # torch's 0-d path has its own words
        reject_complex(x, lambda a: RuntimeError(
            f"aminmax not implemented for {scalar_type_name(a)}"))
    reject_complex(x, kernel_error("aminmax_cpu"))
    reduced = axes(dim, x.ndim)
    out = (xp.amin(x, axis=reduced, keepdims=keepdim),
           xp.amax(x, axis=reduced, keepdims=keepdim))
    if dim is None:  # torch's all-element kernel keeps a tied zero by its vector lanes
        return tuple(_all_reduced_tied_zero(xp, x, extreme) for extreme in out)
    return tuple(_first_tied_zero(xp, x, extreme, reduced) for extreme in out)


_aminmax.defvjp_all(lambda g, x, low, high, dim, keepdim:
                    (_evenly(g[0], x, low, dim, keepdim) + _evenly(g[1], x, high, dim, keepdim),))
_aminmax.defjvp_all(lambda tangents, x, low, high, dim, keepdim:
                    (_evenly_jvp(tangents[0], x, low, dim, keepdim),
                     _evenly_jvp(tangents[0], x, high, dim, keepdim)))


@tensor_method()
def aminmax(input, *, dim: int | None = None, keepdim: bool = False):
    """(min, max) of x, along ``dim`` when given; each shares its gradient among ties."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    dim = None if dim is None else _normalize_dim(dim, input.ndim)
    return aminmax_result(*_aminmax(input, dim=dim, keepdim=keepdim))


@op(method=True, contiguous=True)
def count_nonzero(xp, x, dim=None):
    """The number of nonzero elements (along ``dim``: an int or a tuple), as int64."""
    reduced = None if dim is None else axes(dim, x.ndim) or None  # () on a 0-d x: all
    return xp.asarray(xp.count_nonzero(x, axis=reduced), dtype=xp.int64)


count_nonzero.numbers = ints_reader("count_nonzero", True, dim=(1, "int[1]?"))
count_nonzero.method_varargs = True


@tensor_method()
def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002 - torch's argument name
    """True if both tensors have the same shape and equal elements (NaN equals nothing)."""
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"equal(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    if input.shape != other.shape:
        return False
    return bool((input._data == other._data).all())
