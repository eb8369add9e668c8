"""torch.histogram and torch.histogramdd: counts (or summed weights) of values in bins.

Bin edges are either counts of equal bins over a range (the input's own range by default) or
given edge tensors. A value is placed as torch's CPU kernel places it: equal bins by
interpolation then a look at the neighbouring edges, given edges by binary search; every bin is
closed on the left, the last one on both sides, and values outside (and NaN) are left out.
Like torch, the outputs of inputs that require grad have a node whose backward raises.
"""
from __future__ import annotations

import math

from gradkit import return_types
from gradkit._tensor import Tensor
from gradkit.int_arguments import invalid_combination, reads_as_int
from gradkit.memory_format import contiguous_format
from gradkit.number_arguments import float_list
from gradkit.ops._op import op
from gradkit.ops.spaced_values import linspace_values
from gradkit.ops.methods import tensor_method
from gradkit.ops.unary_helpers import c_type_name, cpp_number, scalar_type_name

HistogramResult = return_types.histogram
HistogramddResult = return_types.histogramdd


def _outer_edges(xp, values, dim: int, bounds):
    """(leftmost, rightmost) edge of one dimension: the range asked for or the values'."""
    if bounds is not None:
        low, high = float(bounds[0]), float(bounds[1])
    elif values.size:
        low, high = float(values.min()), float(values.max())
    else:
        low, high = 0.0, 1.0
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{cpp_number(float(low))}, "
                           f"{cpp_number(float(high))}] is not finite")
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                           f"{cpp_number(float(low))} max {cpp_number(float(high))} for "
                           f"dimension {dim}")
    return (low - 0.5, high + 0.5) if low == high else (low, high)


def _bin_of(xp, values, edges, equal_bins: bool):
    """The bin of each value (-1: outside the edges, or NaN)."""
    n = edges.shape[0]
    left, right = edges[0], edges[-1]
    inside = (values >= left) & (values <= right)
    if equal_bins:  # interpolate, in the values' dtype as torch, then search the edges nearby
        guess = (values - left) * values.dtype.type(n - 1) / (right - left)
        # edges that rounding made equal give 0/0: searched from the first edge, as torch's
        # search ends up doing from its cast of NaN
        guess = xp.clip(xp.where(inside & (guess == guess), guess, 0), 0, n - 1)
        guess = guess.astype(xp.int64)
        low, high = xp.maximum(guess - 1, 0), xp.minimum(guess + 2, n)
        found = low  # std::upper_bound over edges[low:high]: low + how many are <= the value
        for offset in range(3):
            k = low + offset
            found = found + ((k < high) & (edges[xp.minimum(k, n - 1)] <= values))
        position = found - 1
    else:
        position = xp.searchsorted(edges, values, side="right") - 1
    position = xp.where(position == n - 1, n - 2, position)
    return xp.where(inside, position, -1)


@op(outputs=-1, node_name="NotImplemented")
def _histogramdd(xp, x, weight, *, bins=(), bounds=None, density=False, name="histogramdd"):
    """(hist, *edges) of the rows of x (points of x.shape[-1] coordinates)."""
    points = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])  # -1 fails for a last dim of 0
    hist_shape, all_edges, where = [], [], []
    for dim, spec in enumerate(bins):
        if isinstance(spec, int):
            if spec <= 0:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {spec} for "
                                   f"dimension {dim}")
            low, high = _outer_edges(xp, points[:, dim], dim,
                                     None if bounds is None else bounds[2 * dim:2 * dim + 2])
            edges = linspace_values(xp, low, high, spec + 1, x.dtype)
        else:
            edges = spec
        all_edges.append(edges)
        hist_shape.append(edges.shape[0] - 1)
        where.append(_bin_of(xp, points[:, dim], edges, isinstance(spec, int)))
    kept = xp.full(points.shape[0], bool(where))  # no dimension: nothing is counted, as torch
    for position in where:
        kept &= position >= 0
    flat = xp.zeros(math.prod(hist_shape), dtype=x.dtype)
    index = xp.ravel_multi_index(tuple(p[kept] for p in where), hist_shape) if where else \
        xp.zeros(0, dtype=xp.int64)
    contributions = xp.ones(int(kept.sum()), x.dtype) if weight is None else \
        weight.reshape(-1)[kept]
    xp.add.at(flat, index, contributions)
    hist = flat.reshape(hist_shape)
    if density:
        with xp.errstate(invalid="ignore"):  # all out of range: 0 / 0, NaN as torch
            hist = hist / hist.sum()
        for dim, edges in enumerate(all_edges):
            shape = [1] * len(all_edges)
            shape[dim] = -1
            hist = hist / xp.diff(edges).reshape(shape)
    return (hist.astype(x.dtype), *all_edges)


def _no_derivative(*_, name="histogramdd", **__):
    raise RuntimeError(f"derivative for aten::{name} is not implemented")


_histogramdd.defvjp_all(_no_derivative)
_histogramdd.defjvp_all(_no_derivative)
_histogramdd.name, _histogramdd.profiler_name = "histogramdd", "gradkit::histogramdd"


def _checked(x: Tensor, weight: Tensor | None, edge_tensors: list, shown_shape: list) -> None:
    """torch's checks of the dtypes and the weight's shape."""
    for dim, edges in enumerate(edge_tensors):
        if edges is None:
            continue
        if edges.dim() != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {edges.dim()} dimensions in the bins tensor for dimension "
                               f"{dim}")
        if edges.dtype != x.dtype:
            raise RuntimeError(
                f"torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {c_type_name(x)} and bins for dimension {dim} with "
                f"dtype {c_type_name(edges)}")
        if edges.shape[0] == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, "
                               f"but got 0 elements in the bins tensor for dimension {dim}")
        if edges.shape[0] < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got "
                               f"{edges.shape[0] - 1} for dimension {dim}")
    counts_only = all(e is None for e in edge_tensors)
    # torch's kernels: float32/float64 for bin counts, any floating dtype for given edges
    if not x.is_floating_point() or counts_only and x.dtype.name == "float16":
        kernel = "histogramdd" if counts_only else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(x)}'")
    if weight is not None and weight.dtype != x.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({c_type_name(x)}), and "
            f"weight({c_type_name(weight)})")
    if weight is not None and list(weight.shape) != shown_shape[:-1]:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{shown_shape} and weight with shape {list(weight.shape)}")


def _specs(edge_tensors: list, counts: list) -> tuple:
    """Each dimension's bins for the forward: a count, or the raw edge array."""
    return tuple(count if edges is None else edges._data
                 for edges, count in zip(edge_tensors, counts))


def _count(bins, function: str, input: Tensor) -> int:
    """A bin count as torch's parser reads ``int bins`` (a NumPy integer too; not a bool or a
    float: no signature takes those)."""
    if isinstance(bins, Tensor) or not reads_as_int(bins):
        raise invalid_combination(function, (input, bins), {})
    return int(bins)


def _check_range(range, d: int) -> None:  # noqa: A002
    if len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should "
                           f"have {2 * d} elements, but got {len(range)}")


@tensor_method()
def histogram(input: Tensor, bins: int | Tensor = 100, *, range=None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> HistogramResult:
    """(hist, bin_edges): the histogram of all of input's values, in ``bins`` equal bins over
    ``range`` (default: the values' min and max) or between the given edges."""
    edges = bins if isinstance(bins, Tensor) else None
    bins = bins if edges is not None else _count(bins, "histogram", input)
    if edges is not None and range is not None:  # torch's overloads: a range with a count only
        raise TypeError(
            "histogram() received an invalid combination of arguments - got (Tensor, Tensor, "
            "range=tuple), but expected one of:\n * (Tensor input, Tensor bins, *, Tensor weight "
            "= None, bool density = False, tuple of Tensors out = None)\n * (Tensor input, int "
            "bins = 100, *, tuple of floats range = None, Tensor weight = None, bool density = "
            "False, tuple of Tensors out = None)\n")
    bounds = None if range is None else float_list(range, "histogram", "range")
    if range is not None:
        if bounds is None:
            raise invalid_combination("histogram", (input, bins), {"range": range})
        _check_range(bounds, 1)
    flat = input.reshape(-1, 1)
    if weight is not None:  # a weight per value, in any shape of as many elements
        weight = weight.reshape(-1)
    _checked(input, weight, [edges], list(flat.shape))
    hist, bin_edges = _histogramdd(flat, weight, bins=_specs([edges], [bins]),
                                   bounds=None if bounds is None else tuple(bounds),
                                   density=density, name="histogram")
    if edges is not None:  # torch's histogram copies the edges given (histogramdd keeps them)
        bin_edges = bin_edges.clone(memory_format=contiguous_format)
    return HistogramResult(hist, bin_edges)


def histogramdd(input: Tensor, bins, range=None, weight: Tensor | None = None,  # noqa: A002
                density: bool = False) -> HistogramddResult:
    """(hist, bin_edges): the D-dimensional histogram of input's rows (points of D =
    input.shape[-1] coordinates); ``bins`` is a count, a count per dimension or the edges of
    each dimension, ``range`` the flat (min, max) pairs of the dimensions."""
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    d = input.shape[-1]
    if not isinstance(bins, (list, tuple)):
        bins = [_count(bins, "histogramdd", input)] * d
    bins = [b if isinstance(b, Tensor) else _count(b, "histogramdd", input) for b in bins]
    edge_tensors = [b if isinstance(b, Tensor) else None for b in bins]
    if all(e is not None for e in edge_tensors) and len(bins) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for a "
                           f"{d}-dimensional histogram but got {len(bins)}")
    if len(bins) != d:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None:
        _check_range(range, d)
    _checked(input, weight, edge_tensors, list(input.shape))
    # torch's kernel, named in errors
    given = "tensors" if edge_tensors and edge_tensors[0] is not None else "cts"
    hist, *bin_edges = _histogramdd(input, weight, bins=_specs(edge_tensors, bins),
                                    bounds=None if range is None else tuple(range),
                                    density=density, name=f"_histogramdd_from_bin_{given}")
    return HistogramddResult(hist, tuple(bin_edges))
