"""Shape and layout ops: views (sharing memory and version with their input), flip, repeat.

Joining and splitting (cat, stack, split, chunk, unbind) is in joining.py."""
from __future__ import annotations

import math

from gradkit.memory_format import copy_with_strides, preserved_strides
from gradkit.int_arguments import (check_dimensions, int_list_argument, int_parameters,
                                   ints_reader, size_argument)
from gradkit.numbers_hooks import chain, positional_none_refused
from gradkit.autograd.batching import batch_dim, batch_shape
from gradkit.ops._dispatch_general import broadcast_shape
from gradkit.ops._op import Op, op, seam, sum_to_shape
from gradkit.ops.dims import distinct_dims, normalize_dim
from gradkit.ops.expand_view import expand_geometry, expand_refusal, expanded_view
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.unary_helpers import tensor_type_name
from gradkit.tensor_arguments import tensor_parameters

_normalize_dim = normalize_dim  # the name the op files import from here


def _infer_shape(shape, numel):
    shape = tuple(map(int, shape))
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for index, size in enumerate(shape):
        if size < -1:
            raise RuntimeError(f"invalid shape dimension {size} at index {index} of shape "
                               f"{list(shape)}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:  # any size fits: torch refuses to guess
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value "
                               "and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


# torch's reshape: a view of a contiguous input (ViewBackward0), an alias of another one whose
# memory allows it (_reshape_alias: ReshapeAliasBackward0), else clone + _unsafe_view
@op(save="x.shape", linear=True, view=True, node_name="ViewBackward0", batchable=True)
def _reshape(xp, x, *, shape):
    return x.reshape(_infer_shape(shape, x.size))


# when the memory does not allow a view, torch's reshape copies, and the result is no view
_reshape_copy = Op(_reshape.forward, name="reshape", save="x.shape", linear=True,
                   node_name="UnsafeViewBackward0", batchable=True)
_reshape_alias = Op(_reshape.forward, name="reshape", save="x.shape", linear=True, view=True,
                    node_name="ReshapeAliasBackward0", batchable=True)
for _form in (_reshape, _reshape_copy, _reshape_alias):
    _form.defvjp(lambda g, x_shape, shape: reshape(g, batch_shape() + tuple(x_shape)))
    _form.defjvp(lambda t, x_shape, shape: reshape(t, shape))


def reshape(input, shape):
    """x with a new ``shape`` (one dim may be -1): a view when its memory allows, else a copy."""
    if type(shape) is not tuple:  # (torch's parser: a str, None or float refused)
        shape = int_list_argument(shape, "reshape", "shape", 2, symint=True)
    data = getattr(input, "_data", None)
    if data is None or data.flags.c_contiguous:
        return _reshape(input, shape=shape)
    if _reshapes_in_place(data, shape):
        return _reshape_alias(input, shape=shape)
    return _reshape_copy(input, shape=shape)


def _reshapes_in_place(data, shape) -> bool:
    out = data.view()
    try:
        out.shape = _infer_shape(shape, data.size)  # succeeds only when no copy is needed
    except (AttributeError, ValueError):
        return False
    return True


VIEW_REFUSAL = ("view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


@op(save="x.shape", linear=True, view=True, batchable=True)
def view(xp, x, *, shape):
    """A view of x with a new ``shape``; x must be contiguous enough."""
    shape = _infer_shape(shape, x.size)
    # only size-1 dims added or dropped: always a view (reshape makes it on any array module)
    if not x.flags.c_contiguous and x.size > 1 and _non_one(shape) != _non_one(x.shape):
        out = x.view()
        try:
            out.shape = shape  # succeeds only when no copy is needed, like torch.view
        except AttributeError:
            raise RuntimeError(VIEW_REFUSAL) from None
        return out
    return x.reshape(shape)


def _non_one(shape) -> tuple:
    return tuple(n for n in shape if n != 1)


view.defvjp(lambda g, x_shape, shape: reshape(g, batch_shape() + tuple(x_shape)))
view.defjvp(lambda t, x_shape, shape: reshape(t, shape))


@op(linear=True, view=True, batchable=True)
def permute(xp, x, *, dims):
    """A view of x with its dims reordered as ``dims``."""
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}")  # (torch's words for a dense input too)
    axes = tuple(_normalize_dim(d, x.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return x.transpose(axes)


permute.numbers = ints_reader("permute", dims=(1, "int[]"))


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


@op(linear=True, view=True, batchable=True, method=True)
def transpose(xp, x, *, dim0, dim1):
    """A view of x with dims ``dim0`` and ``dim1`` swapped."""
    if x.ndim == 0:  # dims 0 and -1 only, as torch
        _normalize_dim(dim0, 0), _normalize_dim(dim1, 0)
        return x
    return x.swapaxes(_normalize_dim(dim0, x.ndim), _normalize_dim(dim1, x.ndim))


transpose.numbers = ints_reader("transpose", dim0=(1, "int"), dim1=(2, "int"))


def _transpose_back(g, dim0, dim1):
    if g.ndim == len(batch_shape()):  # a 0-d input: transpose was the identity
        return g
    return transpose(g, batch_dim(dim0), batch_dim(dim1))


transpose.defvjp(_transpose_back)
transpose.defjvp(lambda t, dim0, dim1: transpose(t, dim0, dim1))


@op(linear=True, view=True, batchable=True, node_name="TBackward0", method=True)
def t(xp, x):
    """Transpose of a tensor with at most 2 dimensions: a view, even of a 0-d or 1-d tensor
    (then the identity, but a new tensor, as in torch: a hook on it is not one on x)."""
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T if x.ndim == 2 else x[...]


def _t_back(g):  # torch's TBackward0: grad.t() (t() of a 0-d or 1-d tensor: the identity)
    if not batch_shape():
        return t(g)
    return g if g.ndim - len(batch_shape()) < 2 else transpose(g, batch_dim(0), batch_dim(1))


t.defvjp(_t_back)
t.defjvp(lambda tangent: t(tangent))




@op(save="x.shape", linear=True, view=True, batchable=True)
def expand(xp, x, *, sizes):
    """A view of x with size-1 dims repeated to ``sizes`` (-1 keeps a dim), with torch's
    strides (stride() shows them, and copy_ compares them to tell a copy onto itself from one
    into an expanded tensor)."""
    out = expanded_view(x, sizes)  # a C-contiguous NumPy array: one call
    if out is not None:
        return out
    geometry = expand_geometry(x.shape, x.strides, sizes)
    if geometry is None:  # (torch makes a negative size where another is 0: NumPy cannot)
        raise RuntimeError(expand_refusal(x.shape, sizes, tensor_type_name(x)) or
                           f"expand: negative size in {list(sizes)}")
    target, strides, repeats = tuple(geometry[0]), tuple(geometry[1]), geometry[2]
    try:  # nothing repeated: a writable view, as in torch
        out = xp.broadcast_to(x, target) if repeats else x.reshape(target)
    except ValueError as error:  # more elements than torch counts, or NumPy addresses
        raise RuntimeError(expand_refusal(x.shape, sizes, tensor_type_name(x)) or
                           str(error)) from None
    return xp.lib.stride_tricks.as_strided(out, target, strides)


def _sum_to(g, shape):
    return sum_to_shape(g, shape)


expand.defvjp(lambda g, x_shape, sizes: _sum_to(g, x_shape))
expand.defjvp(lambda t, x_shape, sizes: expand(t, sizes))


def broadcast_to(input, size):
    """A view of input broadcast to ``shape`` (a tuple or list: its method, separate ints too)."""
    return expand(input, tuple(int_list_argument(size, "broadcast_to", "size", 2, symint=True)))


def _broadcast_to_method(self, *size, **keywords):  # input.broadcast_to(2, 3), or one tuple
    return expand(self, size_argument(size, keywords, "broadcast_to", "size"))


register(_broadcast_to_method, "broadcast_to")


@tensor_parameters("tensors")
def broadcast_tensors(*tensors):
    """The tensors broadcast to their common shape (views; torch's error when they do not).
    One of that shape already is returned itself, as torch's expand_outplace does."""
    shape = broadcast_shape(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


@op(save="x.shape", linear=True, view=True, batchable=True, method=True)
def squeeze(xp, x, dim=None):
    """A view of x without its size-1 dims (or only ``dim``)."""
    if dim is None:
        return xp.squeeze(x)
    if x.ndim == 0:  # dims are still checked: in range, none twice
        distinct_dims((dim,) if isinstance(dim, int) else dim, 0)
        return x
    if isinstance(dim, int):
        dim = _normalize_dim(dim, x.ndim)
        return x.squeeze(dim) if x.shape[dim] == 1 else x
    dims = tuple(d for d in distinct_dims(dim, x.ndim) if x.shape[d] == 1)
    return xp.squeeze(x, dims) if dims else x


squeeze.method_varargs = True  # (rules pass dim=None; torch's signatures take no None)
squeeze.numbers = chain(positional_none_refused("squeeze", "dim"),
                        ints_reader("squeeze", True, dim=(1, "int[1]?")))
squeeze.defvjp(lambda g, x_shape, dim: reshape(g, batch_shape() + tuple(x_shape)))
squeeze.defjvp(lambda t, x_shape, dim: squeeze(t, dim=dim))  # (a positional None is refused)


@op(linear=True, view=True, batchable=True, method=True)
def unsqueeze(xp, x, *, dim):
    """A view of x with a size-1 dim inserted at ``dim``."""
    dim = _normalize_dim(dim, x.ndim + 1)
    shape = x.shape  # reshape that inserts a 1 never copies (NumPy's expand_dims, faster)
    out = x.reshape(shape[:dim] + (1,) + shape[dim:])
    stride = x.itemsize if dim == x.ndim else x.strides[dim] * shape[dim]  # torch's stride
    strides = x.strides[:dim] + (stride,) + x.strides[dim:]
    return out if out.strides == strides else xp.lib.stride_tricks.as_strided(out, strides=strides)


unsqueeze.numbers = ints_reader("unsqueeze", dim=(1, "int"))
unsqueeze.defvjp(lambda g, dim: squeeze(g, batch_dim(dim)))
unsqueeze.defjvp(lambda t, dim: unsqueeze(t, dim))


@tensor_method()
@int_parameters("flatten", start_dim=(1, "int"), end_dim=(2, "int"))
def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """Merge dims start_dim..end_dim into one (a view when possible)."""
    if input.ndim == 0:
        return reshape(input, (1,))
    start = _normalize_dim(start_dim, input.ndim)
    end = _normalize_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:  # torch returns the tensor itself, not a view
        return input
    shape = tuple(input.shape)  # the merged size given (-1 is ambiguous where a size is 0)
    return reshape(input, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


@tensor_method()
@int_parameters("unflatten", dim=(1, "int"), sizes=(2, "SymInt[]"))
def unflatten(input, dim: int, sizes):
    """Split dim ``dim`` of x into ``sizes``."""
    dim = _normalize_dim(dim, input.ndim)
    shape, sizes = tuple(input.shape), tuple(map(int, sizes))
    _check_unflatten_sizes(sizes, dim, shape[dim])
    # a -1 is the dim's size over the others' (as torch infers it), not the whole tensor's
    # numel over the rest: that is ambiguous when another dim is 0
    sizes = _infer_shape(sizes, shape[dim])
    return reshape(input, shape[:dim] + tuple(sizes) + shape[dim + 1:])


def _check_unflatten_sizes(sizes: tuple, dim: int, size: int) -> None:
    """torch's unflatten errors, which name the dim rather than the whole shape."""
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = 1
    for s in sizes:
        known *= 1 if s == -1 else s
    if sizes.count(-1) > 1 or min(sizes) < -1 or (-1 in sizes and known == size == 0):
        # reshape's own errors
        try:
            _infer_shape(sizes, size)
        except RuntimeError as error:
            raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
    if (known == 0 or size % known) if -1 in sizes else known != size:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({size}) in the input tensor")


@tensor_method()
def ravel(input):
    """x flattened to 1-D: a view when x is contiguous, else a view of a contiguous copy."""
    data = getattr(input, "_data", None)
    if data is not None and not data.flags.c_contiguous:
        input = input.contiguous()  # torch's contiguous().view(-1): never a strided 1-D view
    return reshape(input, (-1,))


@op(linear=True)
def flip(xp, x, *, dims):
    """x reversed along ``dims``."""
    axes = tuple(distinct_dims(dims, x.ndim))
    # a copy laid out as x, as torch's flip (empty_like(x)): writing to it must not reach x
    return copy_with_strides(xp, xp.flip(x, axis=axes) if x.ndim else x, preserved_strides(
        x.shape, tuple(s // x.itemsize for s in x.strides)))


flip.numbers = ints_reader("flip", dims=(1, "int[1]?"))
flip.defvjp(lambda g, dims: flip(g, dims))
flip.defjvp(lambda t, dims: flip(t, dims))


@op(save="x.shape", linear=True, contiguous=True)
def repeat(xp, x, *, sizes):
    """x tiled ``sizes`` times along each dim (torch's ``repeat``)."""
    sizes = tuple(sizes)
    if len(sizes) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    lead = len(sizes) - x.ndim
    check_dimensions(tuple(r * n for r, n in zip(sizes, (1,) * lead + x.shape)))
    return xp.tile(x.reshape((1,) * lead + x.shape), sizes)


def _repeat_vjp(g, x_shape, sizes):
    lead = len(sizes) - len(x_shape)
    full = (1,) * lead + tuple(x_shape)
    # split every dim into (repeat, size) and sum over the repeats
    interleaved = []
    for r, s in zip(sizes, full, strict=True):
        interleaved += [r, s]
    # reduction.py imports this file: its sum through the seam
    summed = reshape(seam.sum(reshape(g, tuple(interleaved)),
                              tuple(range(0, 2 * len(sizes), 2))), x_shape)
    # torch's repeat_backward: a zero repeat gives zeros with no graph back to g (so a second
    # derivative never reaches what made g: strided_breadth seed 1805653)
    return zeros_like(summed) if 0 in sizes else summed


repeat.defvjp(_repeat_vjp)
repeat.defjvp(lambda t, x_shape, sizes: repeat(t, sizes))
