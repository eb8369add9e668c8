"""torch's layout and memory-format objects (``gradkit.strided``, ``gradkit.channels_last``
...) and the strides each memory format gives a shape.

Every gradkit tensor is strided (a NumPy array); a memory format names an order of its
elements in memory: C order (``contiguous_format``), channels last for 4-d (N, C, H, W) and
5-d (N, C, D, H, W) shapes, or "keep the input's" (``preserve_format``).
"""
from __future__ import annotations

import functools

from gradkit.backend import device_context


def _refuse_instances(cls, *args, **kwargs):
    """torch's TypeError: its layouts and memory formats are fixed objects."""
    raise TypeError(f"cannot create 'torch.{cls.__name__}' instances")


def _fixed(cls, **attributes):
    """One of ``cls``'s module-level objects (its constructor refuses, as torch's)."""
    instance = object.__new__(cls)
    instance.__dict__.update(attributes)
    return instance


class layout:  # noqa: N801 - torch's class name
    """How a tensor's elements are stored; gradkit has only ``strided``."""

    __new__ = _refuse_instances

    def __repr__(self) -> str:
        return f"gradkit.{self.name}"

    def __reduce__(self) -> str:  # pickled as the one module-level object
        return self.name


class memory_format:  # noqa: N801 - torch's class name
    """An order of a strided tensor's elements in memory (``contiguous(memory_format=)``)."""

    __new__ = _refuse_instances

    def __repr__(self) -> str:
        return f"gradkit.{self.name}"

    def __reduce__(self) -> str:
        return self.name


strided = _fixed(layout, name="strided")
_LAYOUT = layout  # (the name ``layout`` is also a keyword below)
contiguous_format = _fixed(memory_format, name="contiguous_format", rank=None,
                           physical_order=None)
preserve_format = _fixed(memory_format, name="preserve_format", rank=None, physical_order=None)
# the dims in memory order, outermost first: N, H, W, C (and N, D, H, W, C)
channels_last = _fixed(memory_format, name="channels_last", rank=4, physical_order=(0, 2, 3, 1))
channels_last_3d = _fixed(memory_format, name="channels_last_3d", rank=5,
                          physical_order=(0, 2, 3, 4, 1))


def check_format(value, function: str, position: int = 1) -> memory_format:
    """torch's TypeError for a ``memory_format=`` that is not one."""
    if not isinstance(value, memory_format):
        raise TypeError(f"{function}(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(value).__name__}")
    return value


def physical_order(shape: tuple, fmt: memory_format) -> tuple[int, ...] | None:
    """The dims of ``shape`` in memory order for ``fmt``: None for C order; torch's error for
    a channels-last format on a shape of another rank."""
    if fmt.physical_order is None:
        return None
    if len(shape) != fmt.rank:
        raise RuntimeError(f"required rank {fmt.rank} tensor to use {fmt.name} format")
    return fmt.physical_order


def format_strides(shape: tuple, fmt: memory_format) -> tuple[int, ...]:
    """torch's strides (in elements) of a dense ``shape`` laid out in ``fmt`` (size-0 dims
    count as written, as torch's get_channels_last_strides)."""
    order = physical_order(shape, fmt) or tuple(range(len(shape)))
    strides = [0] * len(shape)
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= shape[dim] if fmt.physical_order else max(shape[dim], 1)
    return tuple(strides)


def is_in_format(shape: tuple, strides: tuple, fmt: memory_format) -> bool:
    """torch's is_contiguous(memory_format=fmt): dense in ``fmt``'s order (size-1 dims and
    empty tensors do not count); False for a channels-last format of another rank."""
    if fmt.physical_order is not None and len(shape) != fmt.rank:
        return False
    if 0 in shape:
        return True
    expected = format_strides(shape, fmt)
    return all(n == 1 or s == e for n, s, e in zip(shape, strides, expected))


def stride_order(shape: tuple, strides: tuple) -> tuple[int, ...]:
    """The dims in memory order (outermost first) by decreasing stride, as torch's
    ``preserve_format`` and ``dim_order`` sort them (its insertion sort with ambiguous
    comparisons: a stride 0 decides nothing; equal strides put the larger dim outside)."""
    return iterator_order(shape, (strides,))


def iterator_order(shape: tuple, operands) -> tuple[int, ...]:
    """TensorIterator's reorder_dimensions: the dims outermost first, sorted by the strides of
    the first operand that tells two dims apart (a stride 0 decides nothing; equal strides put
    the larger dim outside, else ask the next operand); dims no operand orders keep theirs."""
    def should_swap(a: int, b: int) -> int:
        for strides in operands:
            if strides[a] == 0 or strides[b] == 0:
                continue
            if strides[a] != strides[b]:
                return -1 if strides[a] < strides[b] else 1
            if shape[a] > shape[b]:
                return 1
        return 0

    perm = list(reversed(range(len(shape))))  # innermost first while sorting
    for i in range(1, len(perm)):
        inner = i
        for outer in reversed(range(i)):
            comparison = should_swap(perm[outer], perm[inner])
            if comparison > 0:
                perm[outer], perm[inner] = perm[inner], perm[outer]
                inner = outer
            elif comparison < 0:
                break
    return tuple(reversed(perm))


def lay_out(xp, array, order: tuple[int, ...] | None):
    """A copy of ``array`` whose dims lie in memory in ``order`` (outermost first; None: C
    order), with torch's strides: each dim's the product of the sizes inside it, a size-1
    dim's too (NumPy's ascontiguousarray kept a size-1 dim's stride, and returned its input
    uncopied when that made it contiguous already)."""
    if order is None:
        return array.copy()
    strides = [0] * array.ndim
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= array.shape[dim]
    return copy_with_strides(xp, array, tuple(strides))


def is_non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    """torch's is_non_overlapping_and_dense: some order of the dims (one-element dims left
    out) is C-contiguous; an empty tensor is (torch counts it contiguous, whatever its
    strides, so its copies keep them)."""
    if 0 in shape:
        return True
    require = 1
    for stride, n in sorted((s, n) for n, s in zip(shape, strides) if n != 1):
        if stride != require:
            return False
        require *= n
    return True


def preserved_strides(shape: tuple, strides: tuple) -> tuple[int, ...]:
    """The strides torch's ``preserve_format`` gives a copy: the source's own when it is
    dense and non-overlapping, else dense ones in the order of its strides (torch's
    infer_dense_strides: a one-element dim takes the stride of the dims inside it)."""
    if is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    dense, step = [0] * len(shape), 1
    for dim in reversed(stride_order(shape, strides)):
        dense[dim] = step
        step *= max(shape[dim], 1)
    return tuple(dense)


def copy_with_strides(xp, array, strides: tuple):
    """A copy of ``array`` in fresh memory (on its device) laid out with ``strides`` (in
    elements, dense)."""
    with device_context(array):
        memory = xp.empty(array.size, dtype=array.dtype)  # (an empty one holds no bytes)
        out = xp.lib.stride_tricks.as_strided(memory, array.shape,
                                              tuple(s * array.itemsize for s in strides))
        out[...] = array
    return out


def preserved_copy(xp, array, dtype=None):
    """A copy of ``array`` (cast to ``dtype``) laid out as torch's ``clone()``
    (``preserve_format``): its own strides when dense (or empty), else dense in the order of
    its strides (an expanded array C order)."""
    return copy_with_strides(xp, array if dtype is None else array.astype(dtype),
                             preserved_strides(array.shape, _element_strides(array)))


def in_preserved_layout(xp, array, like):
    """``array`` (of ``like``'s shape) laid out as torch's ``clone()`` of ``like``: itself when
    it already is, else a copy (an op that writes into torch's clone computes in C order)."""
    strides = preserved_strides(like.shape, _element_strides(like))
    if all(n == 1 or a == b for n, a, b in zip(array.shape, _element_strides(array), strides)):
        return array
    return copy_with_strides(xp, array, strides)


def _element_strides(array) -> tuple[int, ...]:
    return tuple(s // array.itemsize for s in array.strides)


def in_grad_layout(xp, grad, leaf):
    """``grad`` laid out as torch's AccumulateGrad lays out a new ``.grad`` of ``leaf`` (its
    layout contract): in the leaf's stride order when the leaf is dense and non-overlapping
    (channels last stays channels last), else C order. ``grad`` itself when already so."""
    shape, leaf_strides = leaf.shape, _element_strides(leaf)
    if not is_non_overlapping_and_dense(shape, leaf_strides):
        return grad if grad.flags.c_contiguous else xp.ascontiguousarray(grad)
    if all(n == 1 or a == b for n, a, b in zip(shape, _element_strides(grad), leaf_strides)):
        return grad
    return lay_out(xp, grad, stride_order(shape, leaf_strides))


# the dims torch's is_channels_last_strides_2d/_3d walk, innermost first
_CHANNELS_LAST_WALK = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def suggested_order(array) -> tuple[int, ...] | None:
    """torch's suggest_memory_format as a physical order: channels-last's when a 4-d (5-d)
    array's strides read as channels last (ambiguous cases fall back to contiguous, as
    torch's), else None (contiguous)."""
    walk = _CHANNELS_LAST_WALK.get(array.ndim)
    strides = _element_strides(array)
    if walk is None or strides[1] == 0:
        return None
    low = 0
    for d in walk:
        if array.shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return None
        low = strides[d] * max(array.shape[d], 1)
    return (0, *range(2, array.ndim), 1)


def suggested_format(array) -> memory_format:
    """torch's suggest_memory_format of an array."""
    if suggested_order(array) is None:
        return contiguous_format
    return channels_last if array.ndim == 4 else channels_last_3d


def takes_layout(factory):
    """``factory`` with torch's ``layout=`` keyword, which takes ``strided`` (gradkit's one
    layout; None means it) and refuses what is not a layout, as torch's parser."""
    @functools.wraps(factory)
    def with_layout(*args, layout=None, **kwargs):
        if layout is not None and not isinstance(layout, _LAYOUT):
            raise TypeError(f"{factory.__name__}(): argument 'layout' must be torch.layout, not "
                            f"{type(layout).__name__}")
        return factory(*args, **kwargs)
    return with_layout
