"""Indexing: ``x[key]``, ``x[key] = v``, gather/scatter, index_select."""
from __future__ import annotations

from gradkit._user_frames import warn_once_at_user
from gradkit.creation import zeros
from gradkit.memory_format import preserved_copy
from gradkit.ops._op import op, sum_to_shape
from gradkit.ops.index_keys import (
    _dims_consumed, _is_basic, _is_bool_scalar, _is_int, _located, _raw_key, _split_key,
    check_masks, clipped_key, index_tensors, save_index_tensors, selects_all)
from gradkit.ops.conversion import real_if_cast_to_real
from gradkit.ops.index_layout import in_torch_layout, index_layout
from gradkit.ops.masked_fill import warn_index_put_expanded
from gradkit.ops.setitem_checks import NUMPY_SHAPES, value_shape_refusal
from gradkit.ops.dims import dim_among_inputs
from gradkit.ops.scatter_checks import check_scatter, refuse_outside
from gradkit.ops.shape import _normalize_dim, reshape


ZERO_DIM_INDEX = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                  "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")

# x[key] of a basic key: torch's chain of views (ops/slicing.py sets it: its view ops'
# rules are written with this module's index_put_into_zeros)
basic_index = None


@op(save="x.shape", linear=True, node_name="IndexBackward0")
def _index(xp, x, *, key):
    check_masks(x.shape, key)
    try:
        out = x[key]
    except IndexError as error:
        return _empty_region_or_raise(xp, x, key, error)
    return in_torch_layout(xp, out, index_layout(x, key))


def _empty_region_or_raise(xp, x, key, error: IndexError):
    """An index out of range: the region ``key`` selects when it is empty (torch then reads or
    writes nothing, so it checks no bound), else torch's IndexError."""
    if " is out of bounds for axis " not in str(error):
        raise _in_torch_words(error) from None
    clipped, message = clipped_key(xp, x, key)
    try:
        region = x[clipped]
    except IndexError:  # a dim of size 0 cannot be clipped into
        region = None
    if region is not None and region.size == 0:
        return region
    raise IndexError(message or _in_torch_words(error)) from None


def _in_torch_words(error: IndexError) -> IndexError:
    """NumPy's "indexing arrays could not be broadcast" and "out of bounds for axis" in torch's
    words; others unchanged."""
    message = str(error)
    if " is out of bounds for axis " in message:
        return IndexError(message.replace(" for axis ", " for dimension "))
    if not message.startswith("shape mismatch: indexing arrays could not be broadcast"):
        return error
    shapes = ", ".join(str([int(n) for n in found.replace(",", " ").split()])
                       for found in NUMPY_SHAPES.findall(message))
    return IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                      f"shapes {shapes}")


def _getitem_vjp(g, x_shape, *indices, key):
    _ = indices  # the saved index tensors: unpacked (their versions checked), not read
    return index_put_into_zeros(g, x_shape, key)


_index.defvjp(_getitem_vjp)
_index.defjvp(lambda t, x_shape, key: _index(t, key))


def getitem(x, key):
    """``x[key]`` with torch's basic (a view) and advanced (a copy) indexing."""
    if type(key) is int and not x.ndim:
        raise IndexError(ZERO_DIM_INDEX)
    if type(key) is int and -x.shape[0] <= key < x.shape[0]:  # x[t], in bounds: as below
        return basic_index(x, key)
    tensors = ()
    if type(key) is not int and not (type(key) is tuple and _is_basic(key)):
        tensors = index_tensors(key)  # (saved by the node, as torch's)
        key = _raw_key(key)  # (x[i], x[:, i]...: ints, slices, None and ... need no reading)
    _check_bounds(x, key)
    if _is_basic(key):
        return basic_index(x, key)
    parts = _split_key((key,) if _is_bool_scalar(key) else key, x.ndim)
    if parts is not None and not selects_all(x.shape, parts[0]):
        # the basic indices first, as torch: x[0, :, [0, 1]] is x[0][:, [0, 1]]
        return save_index_tensors(_index(basic_index(x, parts[0]), parts[1]), tensors, _index)
    return save_index_tensors(_index(x, key), tensors, _index)


def _check_bounds(x, key):
    keys = key if isinstance(key, tuple) else (key,)
    dim = 0
    for k in keys:
        if type(k) is slice:  # the commonest: one dim, nothing to check
            if not x.ndim and keys is not key:  # a bare slice; in a tuple: too many indices
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            dim += 1
            continue
        if isinstance(k, float):  # NumPy's message names its own index types
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got float)")
        if k is None or _dims_consumed(k) == 0:  # None and boolean scalars add a dim
            continue
        if k is Ellipsis:
            # the dims the others leave, none when they already ask too many (a 0-d x[..., ::2])
            dim += max(0, x.ndim - sum(_dims_consumed(j) for j in keys if j is not Ellipsis))
            continue
        if _is_int(k):
            if not -2 ** 63 <= k < 2 ** 63:
                raise ValueError("Overflow when unpacking long long")
            if dim >= x.ndim:
                raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
            size = x.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
        dim += _dims_consumed(k)
    if dim > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")


@op(linear=True)
def index_put_into_zeros(xp, g, shape=None, key=None):
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices accumulate)."""
    out = xp.zeros(shape, dtype=g.dtype)
    if _is_basic(key):
        out[key] = g
    elif g.size:  # an empty g adds nothing (its key may hold indices out of range)
        xp.add.at(*_located(out, key), g)
    return out


index_put_into_zeros.defvjp(lambda g, shape, key: getitem(g, key))
index_put_into_zeros.defjvp(lambda t, shape, key: index_put_into_zeros(t, shape, key))


@op(save=("x.shape", "value.shape"), name="index_put", node_name="IndexPutBackward0")
def index_put_key(xp, x, value, key=None):
    """Out-of-place ``x[key] = value`` for any indexing key (the in-place form is
    ``x[key] = value``)."""
    # a copy laid out as torch's clone, and a 0-d array where a backward passes a NumPy scalar
    out = preserved_copy(xp, xp.asarray(x))
    target, key = _located(out, key)
    check_masks(target.shape, key)
    if hasattr(value, "dtype"):
        value = real_if_cast_to_real(value, out.dtype)
    shape = getattr(value, "shape", ())
    while shape and shape[0] == 1:  # torch drops a value's leading size-1 dims (NumPy's masks
        shape = shape[1:]           # take no 2-d value of one element)
    try:
        target[key] = value.reshape(shape) if shape != getattr(value, "shape", ()) else value
    except IndexError as error:
        _empty_region_or_raise(xp, target, key, error)
    except (ValueError, TypeError) as error:
        refusal = value_shape_refusal(str(error), shape, target, key)
        if refusal is None:
            raise
        raise RuntimeError(refusal) from None
    return out


def _value_grad(g, value_shape, key):
    region = getitem(g, key)
    extra = len(value_shape) - region.ndim
    if extra > 0:  # the value had leading size-1 dims, which assignment drops
        region = reshape(region, (1,) * extra + tuple(region.shape))
    return sum_to_shape(region, value_shape)


index_put_key.defvjp(lambda g, x_shape, value_shape, key: index_put_key(g, 0.0, key),
                     lambda g, x_shape, value_shape, key: _value_grad(g, value_shape, key))
index_put_key.profiled_params = ()  # torch lists its indices before the value: not its key
index_put_key.number_edges = True  # torch makes a number value a 0-d tensor: a (None, 0) edge
index_put_key.defjvp(lambda t, x_shape, value_shape, key: index_put_key(t, 0.0, key),
                     lambda t, x_shape, value_shape, key: index_put_into_zeros(t, x_shape, key))


def _warn_expanded(target, value, key=None) -> bool:
    """``x[advanced key] = v`` into an expanded tensor warns, as torch (basic keys: setitem_)."""
    return warn_index_put_expanded(key, value)


index_put_key.check_overlap = _warn_expanded


def _along_axis_key(xp, index, dim):
    """A full advanced-index tuple that addresses ``index`` along ``dim`` (gather/scatter)."""
    grids = list(xp.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


@op(save=("dim", "index", "x"), method=True)  # x itself, as torch: writing it fails backward
def gather(xp, x, dim, index, *, sparse_grad=False):
    """Values of x at ``index`` along ``dim`` (torch.gather); ``sparse_grad``: False (gradkit
    has no sparse gradients)."""
    if type(sparse_grad) is not bool:  # torch's parser: a bool only
        raise TypeError("gather(): argument 'sparse_grad' must be bool, not "
                        f"{type(sparse_grad).__name__}")
    if sparse_grad:
        raise NotImplementedError("gather(sparse_grad=True): gradkit has no sparse tensors")
    dim = dim_among_inputs("gather", dim, x.ndim)
    if index.size == 0:  # torch checks nothing more: an empty result of index's shape
        return xp.zeros(index.shape, dtype=x.dtype)
    index = _integer_index(index, "gather")
    if max(index.ndim, 1) != max(x.ndim, 1):  # torch reads a 0-d tensor as 1-d here
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if _scalar_case(x, index):
        return _gather_along(xp, x.reshape(-1), 0, index.reshape(-1)).reshape(index.shape)
    return _gather_along(xp, x, dim, index)


def _scalar_case(x, index) -> bool:
    """gather/scatter with a 0-d input or index: torch reads both as one-element 1-d tensors
    (only one of them 0-d: the other is at most 1-d, its dims checked first)."""
    return x.ndim == 0 or index.ndim == 0


def _gather_along(xp, x, dim, index):
    for d, (i, n) in enumerate(zip(index.shape, x.shape)):
        if d != dim and i > n:  # NumPy would fail to broadcast: torch's message
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(index.shape)} to be no larger than self {list(x.shape)} "
                               f"apart from dimension {dim}")
    refuse_outside(index, x.shape[dim], dim)  # NumPy would read a negative index from the end
    # torch reads only index's extent in the other dims (NumPy would broadcast index to x)
    block = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))
    return xp.take_along_axis(x[block], index, axis=dim)


def _integer_index(index, name: str):
    """torch takes int32/int64 indices (an empty index of any dtype is read as no index)."""
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    return index


gather.defvjp(lambda g, dim, index, x, sparse_grad=False:
              scatter_into_zeros(g, index, tuple(x.shape), _normalize_dim(dim, x.ndim)),
              None, None)
gather.defjvp(lambda t, dim, index, x, sparse_grad=False: gather(t, dim, index), None, None)
gather.keyword_only("sparse_grad")


@op(save="index", linear=True)
def scatter_into_zeros(xp, g, index, shape=None, dim=None):
    """Zeros of ``shape`` with g scatter-added at ``index`` along ``dim`` (gather's vjp)."""
    out = xp.zeros(shape, dtype=g.dtype)
    if index.size == 0:  # gather took an empty index of any dtype: nothing to add
        return out
    if _scalar_case(out, index):
        xp.add.at(out.reshape(-1), index.reshape(-1), g.reshape(-1))
    else:
        xp.add.at(out, _along_axis_key(xp, index, dim), g)
    return out


scatter_into_zeros.defvjp(lambda g, index, shape, dim: gather(g, dim, index), None)
scatter_into_zeros.defjvp(lambda t, index, shape, dim: scatter_into_zeros(t, index, shape, dim),
                          None)


def _src_block(src, index):
    """The part of src that scatter reads: its leading block of index's shape."""
    if not hasattr(src, "ndim") or src.ndim == 0:
        return src
    return src[tuple(slice(0, s) for s in index.shape)]


def _src_grad(g, dim, index, src_shape, x_shape=None):
    """Gradient of scatter's src: what each used element landed on; zeros where unused."""
    picked = gather(g, dim, index)
    if tuple(picked.shape) == tuple(src_shape):
        return picked
    block = tuple(slice(0, s) for s in picked.shape)
    return index_put_into_zeros(picked, tuple(src_shape), block)


def _scattered(xp, x, dim, index, src, write, name="scatter"):
    """A copy of x with src's block written at ``index`` along ``dim`` by
    ``write(out, key, values)``, after torch's checks."""
    dim = dim_among_inputs(name, dim, x.ndim, (x, dim, index, src) if name == "scatter" else None)
    check_scatter(x, dim, index, src)
    out = xp.array(x, order="C")  # torch's layout; x may be a NumPy scalar in a plain backward
    if not index.size:  # an empty index, of any dtype, writes nothing (torch)
        return out
    if _scalar_case(x, index):  # out.reshape(-1) is a view of the contiguous copy
        src = src.reshape(-1) if getattr(src, "ndim", 0) else src
        write(out.reshape(-1), (index.reshape(-1),), _src_block(src, index.reshape(-1)))
    else:
        write(out, _along_axis_key(xp, index, dim), _src_block(src, index))
    return out


def _assign(out, key, values) -> None:
    out[key] = values


@op(save=("dim", "index", "src.shape", "x.shape"), method=True, inplace=True)
def scatter_add(xp, x, dim, index, src):
    """x with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate)."""
    return _scattered(xp, x, dim, index, src, xp.add.at, "scatter_add")


scatter_add.defvjp(lambda g, dim, index, src_shape, x_shape: g, None, None, _src_grad)
scatter_add.defjvp(lambda t, dim, index, src_shape, x_shape: t, None, None,
                   lambda t, dim, index, src_shape, x_shape: scatter_into_zeros(
                       _src_block(t, index), index, tuple(x_shape),
                       _normalize_dim(dim, len(x_shape))))


# scatter's older ``reduce=``: ufuncs that accumulate repeated indices (bool: or / and)
_SCATTER_REDUCE_UFUNCS = {"add": ("add", "logical_or"), "multiply": ("multiply", "logical_and")}
_NO_REDUCE_DERIVATIVE = "derivative for aten::scatter is not implemented"  # torch's words


@op(save=("dim", "index", "src.shape", "x.shape"), method=True, inplace=True)
def scatter(xp, x, dim, index, src, *, reduce=None):
    """x with ``src`` (a tensor or a number) written at ``index`` along ``dim``; with
    ``reduce="add"``/``"multiply"`` combined with x's values instead (torch.scatter)."""
    if reduce is None:
        return _scattered(xp, x, dim, index, src, _assign)
    if reduce not in _SCATTER_REDUCE_UFUNCS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if hasattr(src, "ndim"):  # torch's TORCH_WARN_ONCE
        warn_once_at_user("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.")
    ufunc = getattr(xp, _SCATTER_REDUCE_UFUNCS[reduce][x.dtype.kind == "b"])
    # a number is cast to x's dtype first, as torch's Scalar
    return _scattered(xp, x, dim, index, src, lambda out, key, values: ufunc.at(
        out, key, xp.asarray(values).astype(out.dtype)))


scatter.keyword_spellings = {"src": ("value",)}  # torch's scatter.value(..., Scalar value)


def _refuses_reduce(rule):
    """scatter with ``reduce=`` has no derivative in torch: its error where one is needed."""
    def checked(g, *saved, reduce=None, **params):
        if reduce is not None:
            raise RuntimeError(_NO_REDUCE_DERIVATIVE)
        return rule(g, *saved, **params)
    return checked


def _scatter_jvp(tangents, dim, index, src_shape, x_shape, reduce=None, **_):
    """scatter is linear in (x, src): its tangent scatters src's tangent into x's."""
    if reduce is not None:
        raise RuntimeError(_NO_REDUCE_DERIVATIVE)
    t_x, _, _, t_src = tangents
    if t_x is None:
        t_x = zeros(tuple(x_shape), dtype=t_src.dtype, device=t_src.device)
    return scatter(t_x, dim, index, 0.0 if t_src is None else t_src)


scatter.defvjp(_refuses_reduce(lambda g, dim, index, src_shape, x_shape, **_:
                               scatter(g, dim, index, 0.0)), None, None,
               _refuses_reduce(lambda g, dim, index, src_shape, x_shape, **_:
                               _src_grad(g, dim, index, src_shape, x_shape)))
scatter.defjvp_all(_scatter_jvp)


@op(save=("dim", "index", "x.shape"), method=True)
def index_select(xp, x, dim, index):
    """The entries of x at the integer ``index`` along ``dim``."""
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = dim_among_inputs("index_select", dim, x.ndim)
    index = index.reshape(-1)
    if x.ndim == 0 and index.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.size} value(s)")
    size = x.shape[dim] if x.ndim else 1
    if x.ndim > 1 and not size and index.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    outside = (index < 0) | (index >= size)  # NumPy would wrap a negative index
    if outside.any():  # torch's two kernels: along dim 1 of 2+ dims (or of an empty tensor)
        if x.ndim < 2 or (dim != 1 and x.size):
            raise IndexError("index out of range in self")
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(index[outside][0])} "
                           f"axis_dim={size}")
    return x.copy() if x.ndim == 0 else xp.take(x, index, axis=dim)


def _index_select_key(dim, index, ndim):
    if ndim == 0:  # the one element of a 0-d x
        return ()
    return (slice(None),) * _normalize_dim(dim, ndim) + (index.reshape(-1),)


index_select.defvjp(lambda g, dim, index, x_shape: index_put_into_zeros(
    g, x_shape, _index_select_key(dim, getattr(index, "_data", index), len(x_shape))), None, None)
index_select.defjvp(lambda t, dim, index, x_shape: index_select(t, dim, index), None, None)
