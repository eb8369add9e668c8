"""numpy-style joining and splitting, composed as torch composes them: atleast_1d/2d/3d,
hstack/vstack/dstack/column_stack (cat), tensor_split and hsplit/vsplit/dsplit (slice views),
flipud/fliplr (flip), cartesian_prod and combinations (meshgrid + stack); and block_diag, an
op of its own (BlockDiagBackward0)."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.int_arguments import (
    int_list_argument, int_parameters, invalid_combination, unpack_failed)
from gradkit.creation import empty, tensor
from gradkit.ops._op import op
from gradkit.ops.index_ops import masked_select
from gradkit.ops.indexing import getitem
from gradkit.ops.joining import _check_sequence, _common_dtype, cat, stack
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.rearrange import meshgrid
from gradkit.ops.shape import _normalize_dim, flip, reshape, unsqueeze
from gradkit.ops.slicing import _slice
from gradkit.ops.unary_helpers import scalar_type_name
from gradkit.tensor_arguments import tensor_parameters


# -- atleast_Nd ---------------------------------------------------------------------------------

def _each(name: str, tensors: tuple, make):
    """torch's calling forms: one tensor gives one tensor, a list or several give a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return make(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(t).__name__}), but expected one of: (Tensor input) "
                            "(tuple of Tensors tensors)")
    return tuple(make(t) for t in tensors)


def _at_least(x: Tensor, ndim: int) -> Tensor:
    """x itself when it has ``ndim`` dims; a 0-d x viewed as ones; a 1-d x as a row (and
    for 3 dims a row with a trailing 1); a 2-d x with a trailing 1, as torch's unsqueezes."""
    if x.ndim >= ndim:
        return x
    if x.ndim == 0:
        return reshape(x, (1,) * ndim)
    if x.ndim == 1 and ndim == 3:
        return unsqueeze(unsqueeze(x, 0), -1)
    return unsqueeze(x, 0) if x.ndim == 1 else unsqueeze(x, -1)


def atleast_1d(*tensors) -> Tensor | tuple:
    """Each tensor with at least 1 dim (a 0-d one becomes shape (1,))."""
    return _each("atleast_1d", tensors, lambda t: _at_least(t, 1))


def atleast_2d(*tensors) -> Tensor | tuple:
    """Each tensor with at least 2 dims (a 1-d one becomes a row)."""
    return _each("atleast_2d", tensors, lambda t: _at_least(t, 2))


def atleast_3d(*tensors) -> Tensor | tuple:
    """Each tensor with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _each("atleast_3d", tensors, lambda t: _at_least(t, 3))


# -- stacking -----------------------------------------------------------------------------------

def hstack(tensors) -> Tensor:
    """Concatenate column-wise: along dim 1, or dim 0 when the tensors are 1-d."""
    tensors = atleast_1d(_check_sequence("hstack", tensors, arrays=False))
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Concatenate row-wise (along dim 0), 0-d and 1-d tensors taken as rows."""
    return cat(atleast_2d(_check_sequence("vstack", tensors, arrays=False)), 0)


def row_stack(tensors) -> Tensor:
    """``vstack`` under its older name (torch's argument error says row_stack)."""
    if not isinstance(tensors, (list, tuple)):
        _check_sequence("row_stack", tensors, arrays=False)
    return vstack(tensors)


def dstack(tensors) -> Tensor:
    """Concatenate depth-wise (along dim 2), each tensor taken with at least 3 dims."""
    return cat(atleast_3d(_check_sequence("dstack", tensors, arrays=False)), 2)


def column_stack(tensors) -> Tensor:
    """Concatenate along dim 1, 0-d and 1-d tensors taken as columns."""
    tensors = _check_sequence("column_stack", tensors, arrays=False)
    return cat([reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors], 1)


# -- splitting ----------------------------------------------------------------------------------

def _clamped_slice(x: Tensor, dim: int, start: int, end: int) -> Tensor:
    """torch's ``x.slice(dim, start, end)``: negative bounds wrap once, then clamp."""
    size = x.shape[dim]
    start, end = (min(max(b + size if b < 0 else b, 0), size) for b in (start, end))
    return _slice(x, dim=dim, start=start, end=max(end, start), step=1)


def _split_points(x: Tensor, indices_or_sections, dim: int) -> list:
    """The index list a tensor_split argument means: given, or the bounds of n sections (the
    first ``size % n`` one longer)."""
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype.name != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {scalar_type_name(t)}")
        if t.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {t.ndim} dims")
        indices_or_sections = t.item() if t.ndim == 0 else t.tolist()
    if not isinstance(indices_or_sections, (int, np.integer)):
        return [int(i) for i in indices_or_sections]
    sections = int(indices_or_sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = x.shape[dim]
    base, extra = divmod(size, sections)
    points, start = [], 0
    for i in range(sections - 1):
        start += base + (i < extra)
        points.append(start)
    return points


def _sections(name: str, value, listed: tuple):
    """A split's ``sections`` (an int) or ``indices`` (an int list; a tensor for tensor_split)
    as torch's parser reads them; anything else (a bool, a float, None) is its "invalid
    combination", listing ``listed`` (the arguments as given)."""
    if isinstance(value, Tensor) or type(value) is int or isinstance(value, np.integer):
        return value
    if isinstance(value, (tuple, list)):
        try:
            return list(int_list_argument(value, name, "indices", None, symint=True))
        except TypeError as error:
            if unpack_failed(error):
                raise
    raise invalid_combination(name, listed, {})


_ABSENT = object()  # a split's sections not given


@tensor_method()
@int_parameters("tensor_split", True, dim=(2, "int"))
def tensor_split(input: Tensor, indices_or_sections=_ABSENT, dim: int = 0, *, sections=None,
                 indices=None, tensor_indices_or_sections=None) -> tuple:
    """Views of x split along ``dim`` into n near-equal sections, or at the given indices
    (positional, or under one of torch's keywords)."""
    given = [v for v in (indices_or_sections, sections, indices, tensor_indices_or_sections)
             if v is not None and v is not _ABSENT]
    if len(given) != 1 and indices_or_sections is not None:
        raise TypeError("tensor_split() missing required argument 'indices_or_sections' (or "
                        "one of the keywords sections=, indices=, tensor_indices_or_sections=)")
    indices_or_sections = _sections("tensor_split", given[0] if given else None,
                                    (input, indices_or_sections) + ((dim,) if dim else ()))
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = _normalize_dim(dim, input.ndim)
    points = _split_points(input, indices_or_sections, dim)
    bounds = [0, *points, input.shape[dim]]
    return tuple(_clamped_slice(input, dim, start, end) for start, end in zip(bounds, bounds[1:]))


tensor_split.function_words = True  # its method's errors do not list self


def _numpy_split(name: str, x: Tensor, sections, dim: int, min_ndim: int, listed: tuple) -> tuple:
    """hsplit/vsplit/dsplit: tensor_split along ``dim``, an int dividing the dim exactly."""
    sections = _sections(name, sections, listed)
    if x.ndim < min_ndim:
        needed = "1 dimension" if min_ndim == 1 else f"{min_ndim} dimension"
        raise RuntimeError(f"torch.{name} requires a tensor with at least {needed}, but got a "
                           f"tensor with {x.ndim} dimensions!")
    if isinstance(sections, (int, np.integer)):
        size = x.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{sections}!")
    return tensor_split(x, sections, dim)


def _numpy_splitter(name: str, dim_of, min_ndim: int, doc: str):
    """The function ``name`` (hsplit, vsplit, dsplit) and its method, whose int list may come
    as separate ints (``input.hsplit(1, 2)``); their errors list what was given."""
    def function(input: Tensor, indices_or_sections=_ABSENT, *extra,  # noqa: A002
                 sections=_ABSENT, indices=_ABSENT) -> tuple:
        if indices_or_sections is _ABSENT:  # torch's names, one per signature
            indices_or_sections = sections if indices is _ABSENT else indices
        given = () if indices_or_sections is _ABSENT else (indices_or_sections, *extra)
        sections = _ABSENT if extra else indices_or_sections  # (no signature takes more)
        return _numpy_split(name, input, sections, dim_of(input), min_ndim, (input, *given))

    def method(self: Tensor, *args, sections=_ABSENT, indices=_ABSENT) -> tuple:
        named = sections if indices is _ABSENT else indices
        args = args or (() if named is _ABSENT else (named,))
        sections = args if len(args) > 1 else args[0] if args else _ABSENT
        return _numpy_split(name, self, sections, dim_of(self), min_ndim, args)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__ = doc
    register(method, name)
    return function


hsplit = _numpy_splitter("hsplit", lambda input: 1 if input.ndim > 1 else 0, 1,
                         "Split column-wise: tensor_split along dim 1 (dim 0 for a 1-d tensor).")
vsplit = _numpy_splitter("vsplit", lambda input: 0, 2,
                         "Split row-wise: tensor_split along dim 0 of a tensor of at least 2 dims.")
dsplit = _numpy_splitter("dsplit", lambda input: 2, 3,
                         "Split depth-wise: tensor_split along dim 2 of a tensor of at least 3 "
                         "dims.")


@tensor_method()
def flipud(input: Tensor) -> Tensor:
    """x reversed along dim 0 (a copy, FlipBackward0)."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@tensor_method()
def fliplr(input: Tensor) -> Tensor:
    """x reversed along dim 1 (a copy, FlipBackward0)."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


# -- products of 1-d tensors ----------------------------------------------------------------------

def _vector(x: Tensor) -> None:
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")


@tensor_parameters("tensors")
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The rows of every combination of one element from each 1-d tensor, in order (one
    tensor: that tensor itself)."""
    for t in tensors:
        _vector(t)
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], 1)


@int_parameters("combinations", r=(2, "int"), with_replacement=(3, "bool"))
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of x's elements as rows, as itertools.combinations (or
    combinations_with_replacement), picked from x's meshgrid by a mask as torch does."""
    _vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    grids = np.meshgrid(*[np.arange(input.shape[0])] * r, indexing="ij")
    mask = np.ones(grids[0].shape, dtype=bool)
    for lower, upper in zip(grids, grids[1:]):
        mask &= lower <= upper if with_replacement else lower < upper
    mask = tensor(mask, device=input.device)
    return stack([masked_select(g, mask) for g in meshgrid(*[input] * r, indexing="ij")], 1)


# -- block_diag ---------------------------------------------------------------------------------

def _block_shape(shape) -> tuple:
    """A block's (rows, cols): a 0-d tensor is 1x1, a 1-d one a row."""
    return tuple(shape) if len(shape) == 2 else (1, shape[0]) if len(shape) == 1 else (1, 1)


@op(save="inputs.shape", linear=True, node_name="BlockDiagBackward0")
def _block_diag(xp, *xs):
    blocks = [_block_shape(x.shape) for x in xs]
    out = xp.zeros((sum(b[0] for b in blocks), sum(b[1] for b in blocks)),
                   dtype=_common_dtype(xs))
    row = col = 0
    for x, (rows, cols) in zip(xs, blocks):
        out[row:row + rows, col:col + cols] = x.reshape(rows, cols)
        row, col = row + rows, col + cols
    return out


def _block_diag_grads(g, shapes):
    grads, row, col = [], 0, 0
    for shape in shapes:
        rows, cols = _block_shape(shape)
        grads.append(reshape(getitem(g, (slice(row, row + rows), slice(col, col + cols))),
                             tuple(shape)))
        row, col = row + rows, col + cols
    return tuple(grads)


_block_diag.defvjp_all(_block_diag_grads)
_block_diag.name, _block_diag.profiler_name = "block_diag", "gradkit::block_diag"


@tensor_parameters("tensors")
def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the tensors (0-d: 1x1, 1-d: a row), zeros elsewhere."""
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
    if not tensors:
        return empty(1, 0)
    return _block_diag(*tensors)
