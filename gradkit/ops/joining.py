"""Joining and splitting ops: cat, stack, split, chunk, unbind (the split outputs are views)."""
from __future__ import annotations

import functools

from gradkit._tensor import Tensor
from gradkit.int_arguments import (
    int_argument, int_list_argument, int_parameters, invalid_combination, reads_as_int,
    type_name)
from gradkit.memory_format import lay_out, suggested_order
from gradkit.ops.piecewise import zeros_like
from gradkit.ops._op import Op, op
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.promotion import promote_types
from gradkit.ops.shape import _normalize_dim


def _skipped(shape) -> bool:
    """torch's cat skips 1-d empty tensors (its legacy "empty tensor"), whatever the other
    tensors' dims, but promotes their dtype."""
    return tuple(shape) == (0,)


@op(save="inputs.shape", linear=True)
def _cat(xp, *xs, dim=0):
    joined = [x for x in xs if not _skipped(x.shape)] or xs
    out = xp.concatenate(joined, axis=dim, dtype=_common_dtype(xs))
    # torch lays the result out channels last when every input suggests that format
    orders = {suggested_order(x) for x in xs}
    order = orders.pop() if len(orders) == 1 else None
    return xp.ascontiguousarray(out) if order is None else lay_out(xp, out, order)


def _split_grads(g, shapes, dim):
    """g split along ``dim`` into the inputs' parts; a legacy empty input gets new zeros, off
    the graph of g, as torch's cat backward (so a second derivative does not reach them)."""
    kept = [s for s in shapes if not _skipped(s)]
    if len(kept) == len(shapes):
        return tuple(split(g, [s[dim] for s in kept], dim))
    parts = iter(split(g, [s[dim] for s in kept], dim) if kept else ())
    empty = zeros_like(g.reshape(-1)[:0])  # g's kind (array or Tensor), dtype and device
    return tuple(next(parts) if not _skipped(s) else empty for s in shapes)


def _cat_grads(g, shapes, dim):
    kept = [s for s in shapes if not _skipped(s)] or shapes
    return _split_grads(g, shapes, _normalize_dim(dim, len(kept[0])))


_cat.defvjp_all(_cat_grads)


@int_parameters("cat", dim=(2, "int"))
def cat(tensors, dim: int = 0):
    """Concatenate a sequence of tensors along an existing dim."""
    tensors = _check_sequence("cat", tensors)
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    ref = next((t for t in tensors if not _skipped(t.shape)), None)
    if ref is None:  # only legacy empty tensors: any dim joins them into one
        return _cat(*tensors, dim=0)
    ndim = ref.ndim
    for i, other in enumerate(tensors):
        if _skipped(other.shape) or other is ref:
            continue
        if other.ndim != ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ndim} and "
                               f"{other.ndim}")
        d = _normalize_dim(dim, ndim)
        for axis in range(ndim):
            if axis != d and other.shape[axis] != ref.shape[axis]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[axis]} but got size {other.shape[axis]} for tensor number {i} "
                    "in the list.")
    return _cat(*tensors, dim=_normalize_dim(dim, ndim))


@int_parameters("concat", dim=(2, "int"))
def concat(tensors, dim: int = 0):
    """``cat`` under its alias (torch's argument errors name it)."""
    return cat(_check_sequence("concat", tensors, arrays=False), dim)


@op(save="inputs.shape", linear=True, contiguous=True)
def _stack(xp, *xs, dim=0):
    return xp.stack(xs, axis=dim, dtype=_common_dtype(xs))


def _common_dtype(arrays):
    """torch.promote_types over all inputs of cat/stack (int64 with float16 is float16)."""
    return functools.reduce(promote_types, (a.dtype for a in arrays))


_stack.defvjp_all(lambda g, shapes, dim: unbind(g, dim))


@int_parameters("stack", dim=(2, "int"))
def stack(tensors, dim: int = 0):
    """Stack tensors of equal shape along a new dim."""
    tensors = _check_sequence("stack", tensors)
    for i, other in enumerate(tensors[1:], 1):
        if tuple(other.shape) != tuple(tensors[0].shape):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                f"entry 0 and {list(other.shape)} at entry {i}")
    return _stack(*tensors, dim=_normalize_dim(dim, tensors[0].ndim + 1))


def _check_sequence(name, tensors, arrays: bool = True):
    """The tensors of a joining function, with torch's errors for a non-list, an empty list
    (cat's own ValueError; stack, hstack & co. share one text) and a non-tensor element. A
    NumPy array passes only among arrays, and only where ``arrays`` (cat and stack: derivative
    rules join raw arrays)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type_name(tensors)}")
    if not tensors:
        if name in ("cat", "concat", "concatenate"):
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    arrays = arrays and not any(isinstance(t, Tensor) for t in tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) and not (arrays and hasattr(t, "dtype")):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(t)}")
    return tuple(tensors)


@op(save="x.shape", view=True, outputs=-1, node_name="SplitWithSizesBackward0")
def _split(xp, x, *, sections, dim=0):
    bounds = []
    total = 0
    for s in sections[:-1]:
        total += s
        bounds.append(total)
    return tuple(xp.split(x, bounds, axis=dim))


# split(x, int) is the same op under torch's other name (SplitBackward0), which its errors
# about in-place writes into the outputs quote
_split_equal = Op(_split.forward, name="split", save="x.shape", view=True, outputs=-1)


def _split_vjp(grads, x_shape, sections, dim):
    return (_cat(*grads, dim=dim),)


for _op_form in (_split, _split_equal):
    _op_form.name, _op_form.profiler_name = "split", "gradkit::split"
    _op_form.defvjp_all(_split_vjp)
    _op_form.defjvp_all(lambda tangents, x_shape, sections, dim:
                        _split(tangents[0], sections=sections, dim=dim))


@op(view=True, outputs=-1)
def _unbind(xp, x, *, dim=0):
    lead = (slice(None),) * dim
    return tuple(x[lead + (i, Ellipsis)] for i in range(x.shape[dim]))  # views, even 0-d


_unbind.defvjp_all(lambda grads, dim: (_stack(*grads, dim=dim),))
_unbind.defjvp_all(lambda tangents, dim: _unbind(tangents[0], dim=dim))


def split(tensor, split_size_or_sections, dim: int = 0):
    """Split into chunks of a given size (last may be smaller) or of the given sizes."""
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if not reads_as_int(dim) or isinstance(split_size_or_sections, bool):
        # torch's Tensor.split calls torch's overloaded split, which takes no bool size
        raise invalid_combination("split", (tensor, split_size_or_sections, dim), {})
    dim = _normalize_dim(int_argument(dim, "split", "dim"), tensor.ndim)
    length = tensor.shape[dim]
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections.numel() == 1:
        split_size_or_sections = int(split_size_or_sections)  # torch's Tensor.split: int(t)
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step == 0 and length == 0:  # torch's one empty piece
            return _split_equal(tensor, sections=(0,), dim=dim)
        if step <= 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {length}" if step == 0 else
                               "split expects split_size be non-negative, but got split_size="
                               f"{step}")
        sections = [min(step, length - i) for i in range(0, length, step)] or [0]
        return _split_equal(tensor, sections=tuple(sections), dim=dim)
    sections = list(int_list_argument(split_size_or_sections, "split_with_sizes", "split_sizes",
                                      2, symint=True))
    if sum(sections) != length:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={sections}")
    return _split(tensor, tuple(sections), dim)


def _split_method(self, split_size, dim: int = 0):
    """``x.split``: torch's Tensor.split names its size ``split_size``."""
    return split(self, split_size, dim)


_split_method.__name__ = "split"
register(_split_method, "split")


@tensor_method()
@int_parameters("chunk", chunks=(1, "int"), dim=(2, "int"))
def chunk(input, chunks: int, dim: int = 0):
    """Split into ``chunks`` pieces of (nearly) equal size, as torch.chunk."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    length = input.shape[_normalize_dim(dim, input.ndim)]
    if not length:  # torch's ``chunks`` empty pieces (split_with_sizes)
        return split(input, [0] * chunks, dim)
    return split(input, -(-length // chunks), dim)


@tensor_method()
@numpy_keywords
@int_parameters("unbind", dim=(1, "int"))
def unbind(x, dim: int = 0):
    """Tuple of slices along ``dim`` with that dim removed."""
    dim = _normalize_dim(dim, x.ndim)
    if x.ndim == 0:  # torch checks the range first, as for a 1-D tensor
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _unbind(x, dim=dim) if x.shape[dim] else ()
