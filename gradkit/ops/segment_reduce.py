"""``segment_reduce``: one reduction per run of consecutive slices of ``data`` along ``axis``,
the runs given by their lengths or offsets. Composed of narrow, the reductions and stack, so
its gradient is theirs (ties of max/min share it, as torch's; a max/min segment's NaN elements
take it, as torch's kernel), recorded as one node, torch's."""
from __future__ import annotations

from functools import partial

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.ops.arithmetic import add, div, mul
from gradkit.ops._op import op
from gradkit.ops.extremes import _first_tied_zero, _nan_aware_mask
from gradkit.ops.grad_edges import no_forward_ad
from gradkit.ops.joining import stack
from gradkit.ops.one_node import one_node
from gradkit.ops.piecewise import where
from gradkit.ops.reduction import expand_back
from gradkit.ops.reduction import sum as _sum
from gradkit.ops.scans import prod
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.slicing import narrow
from gradkit.ops.unary_helpers import scalar_type_name


@op(save=("x", "result"), node_name="SegmentReduceBackward0")
def _segment_extreme(xp, x, axis=0, name="amax", initial=None):
    """A max/min segment's extreme along ``axis`` as torch's kernel folds it from ``initial``
    (or the infinity): NaN where one is NaN, else the first of tied values, so a zero's sign
    is the first zero's, ``initial``'s when it is one (wide seed 57910)."""
    out = _first_tied_zero(xp, x, getattr(xp, name)(x, axis=axis), (axis,))
    if initial is None:
        return out
    initial = xp.asarray(initial, dtype=out.dtype)
    beats = initial < out if name == "amax" else out < initial
    return xp.where(xp.isnan(out) | beats, out, initial)


def _segment_extreme_vjp(g, x, out, axis, name, initial):
    """torch's segment kernel shares the gradient among the elements equal to the extreme
    (the result, ``initial`` joined) and the NaN ones (a NaN extreme's gradient goes to its
    NaNs; amax's would be NaN: wide seed 18493). The others get 0, not 0 times a NaN or inf
    gradient (wide seed 98866)."""
    shape = tuple(x.shape)
    mask = _nan_aware_mask(x, expand_back(out, shape, axis, False))
    # a segment ``initial`` won has no such element: 1, not 0, keeps its second derivative
    count = _sum(mask, axis, True)
    count = count + (count == 0)
    return where(mask, expand_back(g, shape, axis, False), 0.0) / count


_segment_extreme.defvjp(_segment_extreme_vjp)
_segment_extreme.defjvp(no_forward_ad("segment_reduce"))  # torch has no forward formula
_MAX, _MIN = (partial(_segment_extreme, name=name) for name in ("amax", "amin"))

# reduce name -> (reduction over a dim, its value on an empty segment, how initial joins in:
# None where the reduction folds it itself)
_REDUCTIONS = {
    "sum": (_sum, 0.0, add), "prod": (prod, 1.0, mul),
    "mean": (None, float("nan"), None),
    "max": (_MAX, -float("inf"), None), "amax": (_MAX, -float("inf"), None),
    "min": (_MIN, float("inf"), None), "amin": (_MIN, float("inf"), None),
}


def _segment_lengths(lengths: Tensor | None, offsets: Tensor | None) -> np.ndarray:
    """The segments' lengths (from offsets: their differences), with torch's errors."""
    given = lengths if lengths is not None else offsets
    if given is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    values = backend.to_device(given._data, backend.CPU)
    if values.dtype.kind not in "iu":
        kernel = "lengths" if lengths is not None else "offsets"
        raise NotImplementedError(f'"_segment_reduce_{kernel}_cpu_kernel1" not implemented for '
                                  f"'{scalar_type_name(values)}'")
    if values.ndim != 1:
        raise NotImplementedError("gradkit: segment_reduce with batched (more than 1-d) lengths "
                                  "or offsets")
    return values if lengths is not None else np.diff(values)


def _segment(data: Tensor, reduce: str, axis: int, start: int, length: int, initial):
    """One segment's reduction (keeping no ``axis``)."""
    reduction, empty, join = _REDUCTIONS[reduce]
    if length == 0:  # still an output of data's graph, as torch's (wide seed 3323)
        value = empty if initial is None else initial
        nothing = mul(_sum(narrow(data, axis, start, 0), axis), -1)  # -0.0: value + it is value
        return add(nothing, value)
    piece = narrow(data, axis, start, length)
    if reduce == "mean":
        total = _sum(piece, axis)
        return div(total if initial is None else add(total, initial), length)
    if join is None:
        return reduction(piece, axis, initial=initial)
    result = reduction(piece, axis)
    return result if initial is None else join(result, initial)


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None,
                   axis: int = 0, unsafe: bool = False, initial=None) -> Tensor:
    """``reduce`` ("sum", "prod", "mean", "max"/"amax", "min"/"amin") of each segment of
    ``data`` along ``axis`` (0, the last dim of the 1-d ``lengths`` or ``offsets``, which give
    the segments);
    an empty one is ``initial`` or the reduction's identity (NaN for mean). ``initial`` also
    joins each reduction (added for sum and mean's total, multiplied, max/min of it)."""
    if type(reduce) is not str:  # torch's parser, before the op's checks
        raise TypeError(f"segment_reduce(): argument 'reduce' (position 2) must be str, not "
                        f"{type(reduce).__name__}")
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if data._data.dtype.kind != "f":  # torch has no complex kernel either
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{scalar_type_name(data._data)}'")
    sizes = _segment_lengths(lengths, offsets)
    axis = _normalize_dim(axis, data.ndim)
    if axis != 0:  # the last dim of the (1-d) lengths
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of "
                           f"{'lengths' if lengths is not None else 'offsets'} but got {axis}.")
    if sizes.size == 0:  # torch's check of the lengths' minimum
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == "
                           "0. Specify the reduction dim with the 'dim' argument.")
    if (sizes < 0).any():
        raise RuntimeError("lengths contains negative value!")
    if not unsafe and int(sizes.sum()) != data.shape[axis]:
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def segments(data: Tensor) -> Tensor:
        return stack([_segment(data, reduce, axis, int(start), int(length), initial)
                      for start, length in zip(starts, sizes)], axis)
    # one node that saves the data and the result, as torch's: a write into either before
    # backward raises (wide seeds 92, 1037)
    return one_node("SegmentReduceBackward0", segments, (data,),
                    saved={"data": 0, "result": "result"},
                    constants={"axis": axis, "initial": initial, "reduce": reduce},
                    kept={"lengths": lengths, "offsets": offsets})
