"""Sorting along a dim: sort, argsort, topk (values carry gradients, indices do not)."""
from __future__ import annotations

import functools

import numpy as np

from gradkit import return_types
from gradkit.int_arguments import int_parameters, invalid_combination
from gradkit.ops._op import Op, op
from gradkit.ops.indexing import gather, scatter_into_zeros
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.unstable_order import torchs_sort, torchs_topk
from gradkit.ops.result_layout import preserved_layout


def _order(xp, x, dim, descending):
    """Stable sorting indices along ``dim``; descending keeps equal elements in their order and
    puts NaN first, as torch (a stable ascending sort of the reversed x, reversed back)."""
    if not descending:
        return xp.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    reversed_order = xp.argsort(xp.flip(x, dim), axis=dim, kind="stable")
    return xp.flip(n - 1 - reversed_order, dim)


def _sorted(xp, x, dim, descending, k=None):
    """(values, indices) of x sorted along ``dim``, the first ``k`` of them when given."""
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=xp.int64)
    indices = _order(xp, x, dim, descending)
    if k is not None:
        indices = xp.take(indices, xp.arange(k), axis=dim)
    return xp.take_along_axis(x, indices, axis=dim), indices.astype(xp.int64)


def _check_sortable(x, name: str) -> None:
    """torch's CPU sort and topk have no complex kernel (topk none for bool either)."""
    if x.is_complex():
        raise RuntimeError(f" {name} does not support complex dtypes on CPU")
    if name == "topk" and x._data.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")


def _torchs_sorted(xp, x, dim, descending, stable):
    """(values, indices) of x sorted along ``dim`` as torch orders them: its CPU sort is
    std::sort unless ``stable`` (torch's CUDA sort is another algorithm: a stable order)."""
    if stable or xp is not np or x.ndim == 0 or x.size == 0:
        return _sorted(xp, x, dim, descending)
    return torchs_sort(x, _order(xp, x, dim, descending), dim, descending)


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,), name="sort")
@preserved_layout  # (torch's results are laid out as x: empty_like(x))
def _sort(xp, x, *, dim, descending, _stable):
    return _torchs_sorted(xp, x, dim, descending, _stable)


# torch's sort.stable overload (``stable=`` given, any value) names its node SortBackward1
_sort_stable = Op(_sort.forward, name="sort", save=("x.shape", "result1"), outputs=2,
                  differentiable_outputs=(0,), node_name="SortBackward1")


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,), name="topk")
def _topk(xp, x, *, k, dim, largest, sorted):  # noqa: A002
    if xp is not np or x.ndim == 0 or k == 0:  # (torch's CUDA topk is another algorithm)
        return _sorted(xp, x, dim, largest, k)
    return torchs_topk(x, _order(xp, x, dim, largest), k, dim, largest, sorted)


def _scatter_back(g, x_shape, indices, dim, **_):
    """The values' gradient put back where they came from (zeros for dropped elements)."""
    if not x_shape:
        return (g,)
    return (scatter_into_zeros(g, indices, x_shape, dim),)


def _gather_tangent(tangents, x_shape, indices, dim, **_):
    t = tangents[0]
    return (t if not x_shape else gather(t, dim, indices)), None


for _op in (_sort, _sort_stable, _topk):
    _op.defvjp_all(_scatter_back)
    _op.defjvp_all(_gather_tangent)


def _stable_by_keywords(function):
    """torch's overload with ``stable=`` takes dim and descending by keyword only: stable
    beside a positional dim is its TypeError (the message's first line)."""
    @functools.wraps(function)
    def call(x, *args, **kwargs):
        if args and "stable" in kwargs:
            raise invalid_combination(function.__name__, args, kwargs)
        return function(x, *args, **kwargs)
    return call


@tensor_method()
@numpy_keywords
@int_parameters("sort", True, dim=(1, "int"), descending=(2, "bool"))
@_stable_by_keywords
def sort(x, dim: int = -1, descending: bool = False, *, stable: bool | None = None):
    """(values, indices) of x sorted along ``dim``; equal elements keep their order where
    ``stable=True`` (else torch's CPU order among them)."""
    _check_sortable(x, "Sort")
    form = _sort if stable is None else _sort_stable
    return return_types.sort(*form(x, dim=_normalize_dim(dim, x.ndim), descending=descending,
                                   _stable=stable is True))


@op()
@preserved_layout
def _argsort(xp, x, *, dim, descending, _stable):
    return _torchs_sorted(xp, x, dim, descending, _stable)[1]


_argsort.name, _argsort.profiler_name = "argsort", "gradkit::argsort"


@tensor_method()
@numpy_keywords
@int_parameters("argsort", True, dim=(1, "int"), descending=(2, "bool"))
@_stable_by_keywords
def argsort(x, dim: int = -1, descending: bool = False, *, stable: bool = False):
    """The indices that sort x along ``dim`` (no gradient)."""
    _check_sortable(x, "Sort")
    return _argsort(x, dim=_normalize_dim(dim, x.ndim), descending=descending,
                    _stable=stable is True)


@tensor_method()
@numpy_keywords
@int_parameters("topk", k=(1, "SymInt"), dim=(2, "int"), largest=(3, "bool"),
                sorted=(4, "bool"))
def topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """(values, indices) of the ``k`` largest (``largest=False``: smallest) elements along dim."""
    _check_sortable(x, "topk")
    dim = _normalize_dim(dim, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    return return_types.topk(*_topk(x, k=k, dim=dim, largest=largest, sorted=sorted))
