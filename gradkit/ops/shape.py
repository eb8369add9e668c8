"""Shape and layout ops: views (sharing memory and version with their input) and joins."""
from __future__ import annotations

import functools

from gradkit.autograd.batching import batch_dim, batch_shape
from gradkit.ops._op import Op, op
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.promotion import promote_types


def _normalize_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _infer_shape(shape, numel):
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


# torch names a viewing reshape's node ViewBackward0 (reshape is view or clone+_unsafe_view)
@op(save="x.shape", linear=True, view=True, node_name="ViewBackward0", batchable=True)
def _reshape(xp, x, *, shape):
    return xp.reshape(x, _infer_shape(shape, x.size))


# when the memory does not allow a view, torch's reshape copies, and the result is no view
_reshape_copy = Op(_reshape.forward, name="reshape", save="x.shape", linear=True,
                   node_name="UnsafeViewBackward0", batchable=True)
for _form in (_reshape, _reshape_copy):
    _form.defvjp(lambda g, x_shape, shape: reshape(g, batch_shape() + tuple(x_shape)))
    _form.defjvp(lambda t, x_shape, shape: reshape(t, shape))


def reshape(x, shape):
    """x with a new ``shape`` (one dim may be -1): a view when its memory allows, else a copy."""
    data = getattr(x, "_data", None)
    if data is None or data.flags.c_contiguous or _reshapes_in_place(data, shape):
        return _reshape(x, shape=shape)
    return _reshape_copy(x, shape=shape)


def _reshapes_in_place(data, shape) -> bool:
    out = data.view()
    try:
        out.shape = _infer_shape(shape, data.size)  # succeeds only when no copy is needed
    except (AttributeError, ValueError):
        return False
    return True


@op(save="x.shape", linear=True, view=True, batchable=True)
def view(xp, x, *, shape):
    """A view of x with a new ``shape``; x must be contiguous enough."""
    shape = _infer_shape(shape, x.size)
    if not x.flags.c_contiguous and x.size > 1 and shape != x.shape:
        out = x.view()
        try:
            out.shape = shape  # succeeds only when no copy is needed, like torch.view
        except AttributeError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.") from None
        return out
    return xp.reshape(x, shape)


view.defvjp(lambda g, x_shape, shape: reshape(g, batch_shape() + tuple(x_shape)))
view.defjvp(lambda t, x_shape, shape: reshape(t, shape))


@op(linear=True, view=True, batchable=True)
def permute(xp, x, *, dims):
    """A view of x with its dims reordered as ``dims``."""
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}".replace("(sparse_coo)", ""))
    return xp.transpose(x, tuple(_normalize_dim(d, x.ndim) for d in dims))


def _batch_first(dims):
    """A vjp rule's permutation, keeping a vectorized batched backward's batch dim in front."""
    return (0, *(d + 1 for d in dims)) if batch_shape() else dims


def _inverse_permutation(dims):
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d % ndim] = i
    return tuple(inverse)


permute.defvjp(lambda g, dims: permute(g, _batch_first(_inverse_permutation(dims))))
permute.defjvp(lambda t, dims: permute(t, dims))


@op(linear=True, view=True, batchable=True)
def transpose(xp, x, *, dim0, dim1):
    """A view of x with dims ``dim0`` and ``dim1`` swapped."""
    dim0, dim1 = _normalize_dim(dim0, x.ndim), _normalize_dim(dim1, x.ndim)  # 0-d: -1 and 0
    return x if x.ndim == 0 else xp.swapaxes(x, dim0, dim1)


def _transpose_back(g, dim0, dim1):
    if g.ndim == len(batch_shape()):  # a 0-d input: transpose was the identity
        return g
    return transpose(g, batch_dim(dim0), batch_dim(dim1))


transpose.defvjp(_transpose_back)
transpose.defjvp(lambda t, dim0, dim1: transpose(t, dim0, dim1))


@op(linear=True, view=True, batchable=True, node_name="TBackward0")
def t(xp, x):
    """Transpose of a tensor with at most 2 dimensions: a view, even of a 0-d or 1-d tensor
    (then the identity, but a new tensor, as in torch: a hook on it is not one on x)."""
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T if x.ndim == 2 else x[...]


def _t_back(g):
    if g.ndim - len(batch_shape()) < 2:  # t() of a 0-d or 1-d tensor is the identity
        return g
    return transpose(g, batch_dim(0), batch_dim(1))


t.defvjp(_t_back)
t.defjvp(lambda tangent: t(tangent))


swapaxes = swapdims = transpose


@op(save="x.shape", linear=True, view=True, batchable=True)
def expand(xp, x, *, sizes):
    """A view of x with size-1 dims repeated to ``sizes`` (-1 keeps a dim)."""
    sizes = tuple(sizes)
    if len(sizes) < x.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(x.shape)}}}, size=[{', '.join(map(str, sizes))}]): "
            "the number of sizes provided must be greater or equal to the number of dimensions "
            "in the tensor".replace("torch.FloatTensor", "gradkit.Tensor"))
    lead = len(sizes) - x.ndim
    target = tuple(x.shape[i - lead] if s == -1 and i >= lead else s
                   for i, s in enumerate(sizes))
    if target[lead:] == x.shape and all(s == 1 for s in target[:lead]):
        return x.reshape(target)  # nothing repeated: a writable view, as in torch
    try:
        return xp.broadcast_to(x, target)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor ({list(target)}) must match the existing size "
            f"({list(x.shape)}) at non-singleton dimensions") from None


def _sum_to(g, shape):
    from gradkit.ops._op import sum_to_shape
    return sum_to_shape(g, shape)


expand.defvjp(lambda g, x_shape, sizes: _sum_to(g, x_shape))
expand.defjvp(lambda t, x_shape, sizes: expand(t, sizes))


def broadcast_to(x, shape):
    """A view of x broadcast to ``shape``."""
    return expand(x, tuple(shape))


def broadcast_tensors(*tensors):
    """The tensors broadcast to their common shape (views)."""
    import numpy as np
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


@op(save="x.shape", linear=True, view=True, batchable=True)
def squeeze(xp, x, dim=None):
    """A view of x without its size-1 dims (or only ``dim``)."""
    if dim is None:
        return xp.squeeze(x)
    if x.ndim == 0:
        _normalize_dim(dim if isinstance(dim, int) else 0, 0)
        return x
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(d for d in (_normalize_dim(d, x.ndim) for d in dims) if x.shape[d] == 1)
    return xp.squeeze(x, dims) if dims else x


squeeze.defvjp(lambda g, x_shape, dim: reshape(g, batch_shape() + tuple(x_shape)))
squeeze.defjvp(lambda t, x_shape, dim: squeeze(t, dim))


@op(linear=True, view=True, batchable=True)
def unsqueeze(xp, x, *, dim):
    """A view of x with a size-1 dim inserted at ``dim``."""
    return xp.expand_dims(x, _normalize_dim(dim, x.ndim + 1))


unsqueeze.defvjp(lambda g, dim: squeeze(g, batch_dim(dim)))
unsqueeze.defjvp(lambda t, dim: unsqueeze(t, dim))


def flatten(x, start_dim: int = 0, end_dim: int = -1):
    """Merge dims start_dim..end_dim into one (a view when possible)."""
    if x.ndim == 0:
        return reshape(x, (1,))
    start = _normalize_dim(start_dim, x.ndim)
    end = _normalize_dim(end_dim, x.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(x.shape)
    return reshape(x, shape[:start] + (-1,) + shape[end + 1:])


def unflatten(x, dim: int, sizes):
    """Split dim ``dim`` of x into ``sizes``."""
    dim = _normalize_dim(dim, x.ndim)
    shape = tuple(x.shape)
    return reshape(x, shape[:dim] + tuple(sizes) + shape[dim + 1:])


def ravel(x):
    """x flattened to 1-D."""
    return reshape(x, (-1,))


@op(save="inputs.shape", linear=True)
def _cat(xp, *xs, dim=0):
    return xp.concatenate(xs, axis=dim, dtype=_common_dtype(xs))


def _split_grads(g, shapes, dim):
    sizes = [s[dim] for s in shapes]
    return tuple(split(g, sizes, dim))


_cat.defvjp_all(lambda g, shapes, dim: _split_grads(g, shapes, _normalize_dim(dim, len(shapes[0]))))
_cat.name = "cat"
_cat.profiler_name = "gradkit::cat"
_cat.node_name = "CatBackward0"


def cat(tensors, dim: int = 0):
    """Concatenate a sequence of tensors along an existing dim."""
    tensors = _check_sequence("cat", tensors)
    ref = tensors[0]
    ndim = ref.ndim
    for i, other in enumerate(tensors[1:], 1):
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


concat = concatenate = cat


@op(save="inputs.shape", linear=True)
def _stack(xp, *xs, dim=0):
    return xp.stack(xs, axis=dim, dtype=_common_dtype(xs))


def _common_dtype(arrays):
    """torch.promote_types over all inputs of cat/stack (int64 with float16 is float16)."""
    return functools.reduce(promote_types, (a.dtype for a in arrays))


_stack.defvjp_all(lambda g, shapes, dim: unbind(g, dim))
_stack.name = "stack"
_stack.profiler_name = "gradkit::stack"
_stack.node_name = "StackBackward0"


def stack(tensors, dim: int = 0):
    """Stack tensors of equal shape along a new dim."""
    tensors = _check_sequence("stack", tensors)
    for i, other in enumerate(tensors[1:], 1):
        if tuple(other.shape) != tuple(tensors[0].shape):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                f"entry 0 and {list(other.shape)} at entry {i}")
    return _stack(*tensors, dim=_normalize_dim(dim, tensors[0].ndim + 1))


def _check_sequence(name, tensors):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")
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


def split(x, split_size_or_sections, dim: int = 0):
    """Split into chunks of a given size (last may be smaller) or of the given sizes."""
    dim = _normalize_dim(dim, x.ndim)
    length = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {length}" if step == 0 else
                               "split expects split_size be non-negative, but got split_size="
                               f"{step}")
        sections = [min(step, length - i) for i in range(0, length, step)] or [0]
        return _split_equal(x, sections=tuple(sections), dim=dim)
    sections = [int(s) for s in split_size_or_sections]
    if sum(sections) != length:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={sections}")
    return _split(x, tuple(sections), dim)


def chunk(x, chunks: int, dim: int = 0):
    """Split into ``chunks`` pieces of (nearly) equal size, as torch.chunk."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    length = x.shape[_normalize_dim(dim, x.ndim)]
    step = -(-length // chunks) if length else 1
    return split(x, step, dim)


@numpy_keywords
def unbind(x, dim: int = 0):
    """Tuple of slices along ``dim`` with that dim removed."""
    dim = _normalize_dim(dim, x.ndim)
    return _unbind(x, dim=dim) if x.shape[dim] else ()


@op(linear=True)
def flip(xp, x, *, dims):
    """x reversed along ``dims``."""
    axes = tuple(_normalize_dim(d, x.ndim) for d in dims)
    # a copy, as torch's flip: writing to the result must not write to x
    return (xp.flip(x, axis=axes) if x.ndim else x).copy()


flip.defvjp(lambda g, dims: flip(g, dims))
flip.defjvp(lambda t, dims: flip(t, dims))


@op(save="x.shape", linear=True)
def repeat(xp, x, *, sizes):
    """x tiled ``sizes`` times along each dim (torch's ``repeat``)."""
    sizes = tuple(sizes)
    if len(sizes) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    lead = len(sizes) - x.ndim
    return xp.tile(x.reshape((1,) * lead + x.shape), sizes)


def _repeat_vjp(g, x_shape, sizes):
    lead = len(sizes) - len(x_shape)
    full = (1,) * lead + tuple(x_shape)
    # split every dim into (repeat, size) and sum over the repeats
    interleaved = []
    for r, s in zip(sizes, full, strict=True):
        interleaved += [r, s]
    from gradkit.ops.reduction import sum as _sum
    summed = _sum(reshape(g, tuple(interleaved)), tuple(range(0, 2 * len(sizes), 2)))
    return reshape(summed, x_shape)


repeat.defvjp(_repeat_vjp)
repeat.defjvp(lambda t, x_shape, sizes: repeat(t, sizes))
