"""Finding and counting: nonzero/argwhere, bucketize/searchsorted, unique, histc.

Their results are indices or counts, so none carries a gradient; unique's values do require
grad (as torch's) but their backward raises, as torch has no derivative for it.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.int_arguments import bool_argument, int_argument, invalid_combination
from gradkit.number_arguments import number_argument
from gradkit._tensor import Tensor
from gradkit.ops._op import Op, op
from gradkit.ops.consecutive import unique_slices
from gradkit.ops.dims import existing_dim
from gradkit.ops.grad_edges import no_forward_ad
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.piecewise import where as _select
from gradkit.ops.unary_helpers import c_type_name, cpp_number, scalar_type_name
from gradkit.tensor_arguments import tensor_parameters


# -- nonzero ----------------------------------------------------------------------------------

@op()
def _nonzero(xp, x):
    found = xp.argwhere(x.reshape(1) if x.ndim == 0 else x).astype(xp.int64)
    # torch fills an (ndim, n) tensor and returns its transpose: strides (1, n), (1, 0) for none
    return xp.lib.stride_tricks.as_strided(xp.ascontiguousarray(found.T), found.shape,
                                           (found.itemsize, len(found) * found.itemsize))


_nonzero.name, _nonzero.profiler_name = "nonzero", "gradkit::nonzero"


@tensor_method()
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """The indices of x's nonzero elements: an (n, ndim) int64 tensor, or (as_tuple) one 1-D
    tensor per dim (a 0-d x is read as one element)."""
    found = _nonzero(input)
    if not as_tuple:
        return found if input.ndim else found[:, :0]
    return tuple(found[:, d] for d in range(max(input.ndim, 1)))


_ABSENT = object()  # where's input or other not given
_NOT_SCALARS = frozenset((tuple, list, str))


def where(condition, input=_ABSENT, other=_ABSENT):  # noqa: A002 - torch's names
    """torch.where(condition, input, other): input where condition holds, else other (numbers
    or broadcasting tensors; no gradient to condition); ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``, as torch's."""
    if input is _ABSENT and other is _ABSENT:
        return nonzero(condition, as_tuple=True)
    if input is _ABSENT or other is _ABSENT or input is None or other is None:  # (no None)
        raise invalid_combination("where", tuple(v for v in (condition, input, other)
                                                 if v is not _ABSENT), {})
    if type(input) in _NOT_SCALARS or type(other) in _NOT_SCALARS:  # (Tensor or Scalar)
        raise invalid_combination("where", (condition, input, other), {})
    _check_condition(condition)
    return _select(condition, input, other)


def _check_condition(condition) -> None:
    """torch's where takes a bool condition (uint8, deprecated, too); a derivative rule's
    arrays are not checked."""
    if isinstance(condition, Tensor) and condition._data.dtype.name not in ("bool", "uint8"):
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(condition._data)}")


def _where_method(self: Tensor, condition=_ABSENT, other=_ABSENT) -> Tensor:
    """Tensor.where(condition, other): self where condition holds, else other (torch's order:
    self is the values, not the condition)."""
    if not isinstance(condition, Tensor) or other is _ABSENT or other is None:
        raise invalid_combination("where", tuple(v for v in (condition, other)
                                                 if v is not _ABSENT), {})
    _check_condition(condition)
    return _select(condition, self, other)


register(_where_method, "where")


@tensor_method()
def argwhere(input: Tensor) -> Tensor:
    """``nonzero(x)``: the (n, ndim) indices of x's nonzero elements."""
    return nonzero(input)


# -- bucketize / searchsorted ------------------------------------------------------------------

def _side(right: bool, side: str | None) -> str:
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                           "side of left while right was True")
    return side


@op()
def _search(xp, sequence, values, sorter=None, *, side="left", int32=False):
    """Insertion points of ``values`` in the rows of ``sequence`` (sorted, or via ``sorter``)."""
    if sequence.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if sorter is not None:
        if sorter.shape != sequence.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(sequence.shape)}and got "
                               f"sorter tensor {list(sorter.shape)}")
        if sorter.dtype.name != "int64":
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {scalar_type_name(sorter)}")
        if ((sorter < 0) | (sorter >= sequence.shape[-1])).any():
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        sequence = xp.take_along_axis(sequence, sorter, axis=-1)
    common = xp.result_type(sequence, values) if hasattr(values, "dtype") else sequence.dtype
    if common.kind in "bc" and getattr(values, "size", 1):  # torch's kernel has no such form
        name = scalar_type_name(xp.empty(0, dtype=common))
        raise NotImplementedError(f'"searchsorted_out_cpu" not implemented for \'{name}\'')
    values = xp.asarray(values)
    if sequence.ndim > 1 and (values.ndim == 0 or sequence.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(
            f"torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({sequence.ndim}) and input value's "
            f"dim({values.ndim}) numel({values.size})" if values.ndim == 0 else
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sequence.shape)} and input value tensor "
            f"{list(values.shape)}")
    found = _binary_search(xp, sequence, values, side == "right")
    return found.astype(xp.int32 if int32 else xp.int64)


def _binary_search(xp, sequence, values, right: bool):
    """torch's binary search, step for step, on every value at once: its comparisons decide
    where a NaN in the sequence sends a value (NumPy's searchsorted sorts NaN last instead)."""
    n = sequence.shape[-1]
    # counted, not -1: NumPy cannot infer a dim of a 0-size array
    lead = math.prod(sequence.shape[:-1])
    rows = sequence.reshape(lead, n)
    wanted = values.reshape(lead, values.size // lead if lead else 0)
    start = xp.zeros(wanted.shape, dtype=xp.int64)
    end = xp.full(wanted.shape, n, dtype=xp.int64)
    for _ in range(n.bit_length() + 1):
        open_ = start < end
        mid = (start + end) // 2
        at_mid = xp.take_along_axis(rows, xp.minimum(mid, max(n - 1, 0)), axis=1) if n else mid
        after = ~(at_mid > wanted) if right else ~(at_mid >= wanted)  # go past mid
        start = xp.where(open_ & after, mid + 1, start)
        end = xp.where(open_ & ~after, mid, end)
    return start.reshape(values.shape)


_search.name, _search.profiler_name = "searchsorted", "gradkit::searchsorted"


def searchsorted(sorted_sequence: Tensor, input: Tensor | float, *,  # noqa: A002 - torch's
                 out_int32: bool = False, right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where ``input``'s values would go in the last dim of ``sorted_sequence`` to keep it
    sorted (``right``/``side="right"``: after equal values); int64 (``out_int32``: int32)."""
    if input is None or type(input) in (tuple, list, str):  # (Tensor or Scalar input)
        raise invalid_combination("searchsorted", (sorted_sequence, input), {})
    side = _side(right, side)
    if sorter is None:
        return _search(sorted_sequence, input, side=side, int32=out_int32)
    return _search(sorted_sequence, input, sorter, side=side, int32=out_int32)


@tensor_parameters("boundaries", overloaded=True)
def bucketize(input: Tensor | float, boundaries: Tensor, *,  # noqa: A002 - torch's name
              out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each value among the sorted 1-D ``boundaries``: i with
    boundaries[i-1] < v <= boundaries[i] (``right=True``: boundaries[i-1] <= v < boundaries[i])."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _search(boundaries, input, side="right" if right else "left", int32=out_int32)


# -- unique -----------------------------------------------------------------------------------

@op(outputs=3, differentiable_outputs=(0,), node_name="Unique2Backward0")
def _unique(xp, x, *, dim=None):
    """(sorted unique values, inverse, counts); NaNs stay distinct, as torch's."""
    if dim is None:
        # float16 sorted as float32 (exact): NumPy's float16 sort places NaNs, each its own
        # value, in another order than torch's, which its float32 sort shares
        flat = x.reshape(-1).astype(xp.float32) if x.dtype == xp.float16 else x.reshape(-1)
        values, inverse, counts = xp.unique(flat, return_inverse=True, return_counts=True,
                                            equal_nan=False)
        return values.astype(x.dtype), inverse.reshape(x.shape).astype(xp.int64), \
            counts.astype(xp.int64)
    return unique_slices(xp, x, dim)


# along a dim torch's op is unique_dim (node UniqueDimBackward0), with errors naming it
_unique_dim = Op(_unique.forward, name="unique", outputs=3, differentiable_outputs=(0,),
                 node_name="UniqueDimBackward0")


def _no_derivative(kernel: str):
    """The backward rule of a kernel torch has no derivative for: its error."""
    def refuse(*_, **__):
        raise NotImplementedError(f"the derivative for '{kernel}' is not implemented.")
    return refuse


for _op, _kernel, _profiled in ((_unique, "_unique2", "unique"),
                                (_unique_dim, "unique_dim", "unique_dim")):
    _op.profiler_name = f"gradkit::{_profiled}"
    _op.defvjp_all(_no_derivative(_kernel))
    _op.defjvp_all(no_forward_ad(_kernel))
_unique.name = "unique"


@tensor_method()
def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """The distinct elements of x, sorted (torch sorts on CPU whatever ``sorted`` says), and
    on request the inverse (where each element of x went) and the counts."""
    for name, flag in (("sorted", sorted), ("return_inverse", return_inverse),
                       ("return_counts", return_counts)):
        if type(flag) is not bool:  # torch's Python passes them by keyword to its kernel
            bool_argument(flag, "_unique2" if dim is None else "unique_dim", name)
    if x.is_complex():  # torch checks the dtype first, naming the kernel along a dim
        raise NotImplementedError(f'"{"unique" if dim is None else "unique_dim"}" not '
                                  f"implemented for '{scalar_type_name(x)}'")
    if dim is not None:
        dim = existing_dim(dim, x.dim())
    values, inverse, counts = _unique(x) if dim is None else _unique_dim(x, dim=dim)
    extra = ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return (values, *extra) if extra else values


# -- histc ------------------------------------------------------------------------------------

def _edges(x, low: float, high: float) -> tuple[float, float]:
    """torch's outer bin edges: min/max of x when min == max, widened (``_widened``) when
    still equal."""
    if low == high and x.size:
        low, high = float(x.min()), float(x.max())
        if x.size > 1 and math.isnan(low):  # torch's vectorized min/max give the default NaN
            low = high = -math.nan
    if low == high:
        low, high = _widened(x.dtype, low, high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{cpp_number(float(low))}, "
                           f"{cpp_number(float(high))}] is not finite")
    if not low < high:  # (an integer beyond 2**53: widening by 1 is lost in the double)
        raise RuntimeError("torch.histc: max must be larger than min")
    return low, high


_INTEGER_TYPES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                  "uint8": "uint8_t"}  # as torch's scalar conversion names them


def _widened(dtype, low: float, high: float) -> tuple:
    """torch's bins_edges_correction of an empty range: 1 out on each side, or, for float and
    double, one step of the dtype towards its finite limits where that is wider (an infinity
    or an extreme value: ``[inf]`` gives [3.40282e+38, inf] in float32)."""
    if dtype.kind != "f" or dtype.itemsize < 4:
        return low - 1, high + 1
    cast, info = dtype.type, np.finfo(dtype)
    with np.errstate(over="ignore"):  # a double beyond the dtype is its infinity, as C's cast
        return (min(float(np.nextafter(cast(low), info.min)), low - 1),
                max(float(np.nextafter(cast(high), info.max)), high + 1))


@op()
def _histc(xp, x, *, bins=100, low=0, high=0):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if x.dtype.kind == "c" and low == high and x.size:  # torch's min and max come first
        raise NotImplementedError(f'"aminmax_cpu" not implemented for '
                                  f"'{scalar_type_name(x)}'")
    low, high = _edges(x, float(low), float(high))  # torch checks the range before the dtype
    if x.dtype.kind == "b":  # its bin edges in x's dtype
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    limits = np.iinfo(x.dtype) if x.dtype.kind in "iu" else np.finfo(x.dtype)
    if not float(limits.min) <= low <= high <= float(limits.max):  # the edges in x's dtype
        name = _INTEGER_TYPES.get(x.dtype.name) or c_type_name(x)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{scalar_type_name(x)}'")
    edges = xp.linspace(low, high, bins + 1).astype(x.dtype)
    values = x.reshape(-1)
    values = values[(values >= edges[0]) & (values <= edges[-1])]  # NaN fails both
    # torch's kernel for even bins: the bin computed directly, in x's dtype
    width = edges[-1] - edges[0]
    if not width:  # torch's bin is then a cast of 0/0 (undefined): all go to the middle one
        where = xp.full(values.shape, bins // 2)
    else:
        where = ((values - edges[0]) * x.dtype.type(bins) / width).astype(xp.int64)
    where = xp.minimum(where, bins - 1)  # the last bin is closed on the right
    counts = xp.zeros(bins, dtype=x.dtype)
    xp.add.at(counts, where, 1)
    return counts


_histc.name, _histc.profiler_name = "histc", "gradkit::histc"


@tensor_method()
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of x's values in ``bins`` equal bins over [min, max] (both 0: x's range);
    values outside are left out. Not differentiable, as torch's."""
    bins = int_argument(bins, "histc", "bins", 2)
    min, max = (number_argument(min, "histc", "min", 3, "double", optional=False),  # noqa: A001
                number_argument(max, "histc", "max", 4, "double", optional=False))
    return _histc(input, bins=bins, low=min, high=max)


histc.function_words = True  # its method's errors do not count self
