"""Rearranging ops composed of the shape ops, with torch's views and gradients: meshgrid
(expanded views), tile (repeat), movedim (a permuted view), diff (slices subtracted), and
rot90 (a rotated copy)."""
from __future__ import annotations


from gradkit._user_frames import warn_once_at_user
from gradkit.int_arguments import (
    int_list_argument, int_parameters, ints_reader, invalid_combination, size_argument)
from gradkit.backend import bool_
from gradkit.ops._op import op
from gradkit.ops.arithmetic import sub
from gradkit.ops.comparison import logical_xor
from gradkit.ops.joining import cat
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.shape import _normalize_dim, expand, flip, permute, repeat, reshape
from gradkit.ops.slicing import narrow
from gradkit.tensor_arguments import tensor_parameters


@tensor_parameters("tensors")
def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids of 0-d/1-d tensors, expanded views: ``indexing="ij"`` (the default,
    with torch's warning when not given) takes the grid's dims in order, ``"xy"`` swaps the
    first two."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warn_once_at_user("torch.meshgrid: in an upcoming release, it will be required to pass "
                          "the indexing argument.")  # torch's TORCH_WARN_ONCE
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    swap = indexing == "xy" and len(tensors) >= 2  # torch: "xy" is "ij" of the first two swapped
    order = (1, 0, *range(2, len(tensors))) if swap else tuple(range(len(tensors)))
    shape = tuple(tensors[i].numel() for i in order)
    grids = []
    for position, i in enumerate(order):
        line = tuple(-1 if d == position else 1 for d in range(len(order)))
        grids.append(expand(reshape(tensors[i], line), shape))
    return tuple(grids[order.index(i)] for i in range(len(tensors)))


_MISSING = object()  # tile's dims not given


def tile(input, dims=_MISSING, *extra):
    """input repeated ``dims`` times along each dim; fewer dims than input has are padded with 1s in
    front (``repeat`` otherwise). ``input.tile(2, 2)`` and ``tile(input, (2, 2))`` are the same (the
    function takes a tuple, as torch's: ``tile(input, 2)`` is refused)."""
    if dims is _MISSING or extra:  # (torch's messages, not Python's)
        raise TypeError('tile() missing 1 required positional arguments: "dims"' if not extra
                        else f"tile() takes 2 positional arguments but {2 + len(extra)} were given")
    dims = int_list_argument(dims, "tile", "dims", 2, symint=True)
    dims = (1,) * (input.ndim - len(dims)) + dims
    negative = next((d for d in dims if d < 0), None)
    if negative is not None:
        shape = (1,) * (len(dims) - input.ndim) + tuple(input.shape)
        sizes = [n * d for n, d in zip(shape, dims)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(sizes)}: {sizes}")
    return repeat(input, dims)


def _tile_method(self, *dims, **keywords):
    """Tensor.tile(*dims): the dims as separate arguments or one tuple (or ``dims=``)."""
    return tile(self, size_argument(dims, keywords, "tile", "dims"))


register(_tile_method, "tile")


def _dim_sequence(dims) -> list:
    return [dims] if isinstance(dims, int) else [int(d) for d in dims]


@tensor_method(("movedim", "moveaxis"))
@int_parameters("movedim", True, source=(1, "int|int[]"), destination=(2, "int|int[]"))
def movedim(input, source, destination):
    """A view of x with the dims ``source`` moved to ``destination`` (the others keep their
    order)."""
    if isinstance(source, int) != isinstance(destination, int):  # torch: (int, int), (list, list)
        raise invalid_combination("movedim", (source, destination), {})
    source, destination = _dim_sequence(source), _dim_sequence(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({source} dims) "
                           f"should contain the same number of dims as destination "
                           f"({destination} dims)")
    ndim = input.ndim
    if ndim == 0:  # dims 0 and -1 name the one "dim" of a 0-d tensor
        for d in source + destination:
            _normalize_dim(d, 0)
        return permute(input, ())
    moved = [_normalize_dim(d, ndim) for d in source]
    target = [_normalize_dim(d, ndim) for d in destination]
    for name, dims, given in (("source", moved, source), ("destination", target, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    order = [None] * ndim
    for s, d in zip(moved, target):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in moved)
    return permute(input, tuple(d if d is not None else next(rest) for d in order))


moveaxis = movedim


@tensor_method()
@int_parameters("diff", n=(1, "int"), dim=(2, "int"))
@tensor_parameters("prepend", "append")
def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None):
    """The n-th forward difference along ``dim`` (``xor`` for bools), after joining
    ``prepend`` and ``append`` to x along it."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _normalize_dim(dim, input.ndim)
    joined = [t for t in (prepend, input, append) if t is not None]
    for t in joined:
        if t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for axis in range(input.ndim):
            if axis != dim and t.shape[axis] != input.shape[axis]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({axis}) = "
                    f"{input.shape[axis]}, but got tensor.size({axis}) = {t.shape[axis]}")
    if n == 0:  # torch: the input copied into zeros (CopyBackwards), prepend/append ignored
        return zeros_like(input).copy_(input)
    if len(joined) > 1:
        input = cat(joined, dim)
    difference = logical_xor if input.dtype == bool_ else sub
    for _ in range(min(n, input.shape[dim])):
        length = input.shape[dim] - 1
        input = difference(narrow(input, dim, 1, length), narrow(input, dim, 0, length))
    return input


diff.function_words = True  # its method's tensor errors do not count self


@op(linear=True, method=True)
def rot90(xp, x, k=1, dims=(0, 1)):
    """x rotated by k quarter turns from dim ``dims[0]`` towards ``dims[1]`` (a copy)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    axes = tuple(_normalize_dim(d, x.ndim) for d in dims)
    if axes[0] == axes[1]:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k %= 4  # torch's: flips laid out as x (then a transposed view of that), or a C copy
    if k == 0:
        return x.copy()
    flipped = flip.forward(xp, x, dims=axes if k == 2 else (axes[1] if k == 1 else axes[0],))
    return flipped if k == 2 else xp.swapaxes(flipped, *axes)


rot90.numbers = ints_reader("rot90", k=(1, "int"), dims=(2, "int[]"))


rot90.defvjp(lambda g, k, dims: rot90(g, -k, dims))
rot90.defjvp(lambda t, k, dims: rot90(t, k, dims))
