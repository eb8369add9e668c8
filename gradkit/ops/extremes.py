"""Max and min: amax/amin, max/min (whole, along a dim, or pairwise), argmax/argmin."""
from __future__ import annotations

import numpy as np

from gradkit import backend, return_types
from gradkit.int_arguments import int_parameters, ints_reader, invalid_combination
from gradkit._tensor import Tensor
from gradkit.ops import piecewise
from gradkit.ops._op import op
from gradkit.ops.comparison import isnan
from gradkit.ops.piecewise import where
from gradkit.ops.indexing import gather, scatter_into_zeros
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim, squeeze, unsqueeze
from gradkit.ops.unary_helpers import fixed_error, kernel_error, reject_complex
from gradkit.signature_errors import missing_arguments
from gradkit.ops.reduction import axes, expand_back, sum
from gradkit.ops.spaced_values import _GRAIN


def _evenly(g, x, out, dim, keepdim):
    """Gradient of amax/amin: shared evenly among the elements equal to the extreme.

    As torch, ``g / count * mask``: a NaN extreme (equal to nothing) gives NaN gradients.
    """
    shape = tuple(x.shape)
    mask = x == expand_back(out, shape, dim, keepdim)
    count = sum(mask, axes(dim, x.ndim), True)
    return expand_back(g, shape, dim, keepdim) / count * mask


def _nan_aware_mask(x, out):
    """The elements a max()/min() over all elements picked: the NaNs when the result is NaN."""
    return (x == out) | (isnan(x) & isnan(out))


def _evenly_all(g, x, out):
    """Gradient of max()/min() without dim: shared among the picked elements (torch's
    evenly_distribute_backward, which finds NaNs)."""
    mask = _nan_aware_mask(x, out)
    # g / count first, as torch's masked_fill_ of that value: of an empty x its derivative
    # is 0 * (1 / 0), NaN (strided seed 82382: median of an empty tensor)
    return where(mask, expand_back(g / sum(mask), tuple(x.shape), None, False), 0.0)


def _evenly_all_jvp(t, x, out):
    """torch's evenly_read_jvp: the mean tangent of the elements equal to the result; unlike
    the backward it finds no NaN, so a NaN result has a NaN tangent (fwd seed 305944)."""
    mask = x == out
    return sum(mask * (t / sum(mask)))


def _first_tied_zero(xp, x, out, reduced: tuple):
    """``out`` with each zero signed as the first zero (C order) among the reduced elements.

    NumPy picks either of a tie of 0.0 and -0.0; torch's amax/amin and max/min along a dim
    keep the first (see docs/numerics.md)."""
    zero = out == 0
    if x.dtype.kind != "f" or not zero.any():
        return out
    kept = [d for d in range(x.ndim) if d not in reduced]
    rows = xp.reshape(xp.transpose(x, kept + list(reduced)),
                      tuple(x.shape[d] for d in kept) + (-1,))
    first = xp.take_along_axis(rows, xp.argmax(rows == 0, axis=-1)[..., None], -1)
    return xp.where(zero, xp.reshape(first, out.shape), out)


_TREE = (7, 3, 5, 1, 6, 2, 4, 0)  # the lane a shuffle-down of 8 float lanes keeps of a tie


def _lanes(dtype, n: int) -> tuple:
    """(lanes, the order a tie is kept in) of torch's reduce_all over n contiguous values:
    value k goes to lane k % lanes, a later one keeps a tie within its lane (vminpd returns
    its second operand), the lanes are then met one after another (double: 4 lanes of an
    AVX2 vector; a float vector of fewer than 8) or by shuffles (8 floats; a half vector is 16
    lanes, folded in two first)."""
    if dtype == np.float64:
        return 4, (3, 2, 1, 0)
    in_turn = (7, 6, 5, 4, 3, 2, 1, 0)
    if dtype == np.float32:
        return 8, in_turn if n < 8 else _TREE
    if n < 16:  # half: one vector of floats, or two with the second folded into the first
        return 8, in_turn
    return 16, tuple(lane for pair in _TREE for lane in (pair + 8, pair))


def _all_reduced_tied_zero(xp, x, out):
    """max()/min()/aminmax() of all elements: of tied zeros, the sign of the one torch's
    vectorized all-element kernel keeps (see ``_lanes``; chunks of 32768 or more values
    among its threads, the first chunk holding a zero wins)."""
    if x.dtype.kind != "f" or out != 0:
        return out
    flat = xp.reshape(x, -1)
    n, threads = flat.size, backend.threads[0]
    parts = 1 if n < _GRAIN else -(-n // _GRAIN)  # (this module's min is the op)
    chunk = -(-n // (threads if threads < parts else parts))
    for start in range(0, n, chunk):
        zeros = flat[start:start + chunk] == 0
        lanes, order = _lanes(x.dtype, zeros.size)
        grid = xp.reshape(xp.concatenate([zeros, xp.zeros(-zeros.size % lanes, bool)]),
                          (-1, lanes))
        held = grid.any(axis=0)
        for lane in order:
            if held[lane]:
                row = grid.shape[0] - 1 - int(xp.argmax(grid[::-1, lane]))
                return xp.copysign(out, flat[start + row * lanes + lane])
    return out


@op(save=("x", "result"), batchable=True, node_name="MaxBackward1")
def _max_all(xp, x):
    _check_nonempty("max", x, None)
    reject_complex(x, kernel_error("max_all"))
    return _all_reduced_tied_zero(xp, x, xp.max(x))


@op(save=("x", "result"), batchable=True, node_name="MinBackward1")
def _min_all(xp, x):
    _check_nonempty("min", x, None)
    reject_complex(x, kernel_error("min_all"))
    return _all_reduced_tied_zero(xp, x, xp.min(x))


for _extreme_all in (_max_all, _min_all):
    _extreme_all.defvjp(_evenly_all)
    _extreme_all.defjvp(_evenly_all_jvp)


def _evenly_jvp(t, x, out, dim, keepdim):
    """Tangent of amax/amin: the mean of the tangents at the elements equal to the extreme."""
    mask = x == expand_back(out, tuple(x.shape), dim, keepdim)
    reduced = axes(dim, x.ndim)
    return sum(where(mask, t, 0.0), reduced, keepdim) / sum(mask, reduced, keepdim)


def _extreme_values(name: str, kernel: str, what: str):
    """Declare amax or amin (``name`` is NumPy's function too; torch's CPU ``kernel`` has
    no complex version)."""
    def forward(xp, x, dim=None, keepdim=False):
        _check_nonempty(name, x, dim, as_given=True)  # before the dtype, as torch
        if x.size:  # no kernel runs on an empty x: torch reduces an empty complex one too
            reject_complex(x, kernel_error(kernel))
        reduced = axes(dim, x.ndim)
        out = getattr(xp, name)(x, axis=reduced, keepdims=keepdim)
        return _first_tied_zero(xp, x, out, reduced)
    forward.__name__ = name
    forward.__doc__ = f"{what} along ``dim`` (all dims by default); ties share the gradient."
    declared = op(save=("x", "result"), batchable=True, method=True, contiguous=True)(forward)
    declared.defvjp(_evenly)
    declared.defjvp(_evenly_jvp)
    declared.no_complex_grad = name
    return declared


amax = _extreme_values("amax", "max_values_cpu", "Maximum")
amin = _extreme_values("amin", "min_values_cpu", "Minimum")
amax.numbers = ints_reader("amax", dim=(1, "int[1]?"), keepdim=(2, "bool"))
amin.numbers = ints_reader("amin", dim=(1, "int[1]?"), keepdim=(2, "bool"))


def _check_nonempty(name, x, dim, as_given=False):
    """torch's errors for a max/min-like reduction with nothing to pick from (naming the dim
    as given, -1, for amax/amin; normalized for the others)."""
    if x.size:
        return
    if dim is None or dim == () or dim == []:  # torch: an empty dim list reduces everything
        if name.startswith("arg"):
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in (dim,) if isinstance(dim, int) else tuple(dim):
        a = _normalize_dim(d, x.ndim)
        if x.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d if as_given else a} to have "
                             "non-zero size.")


def _extreme_along(xp, x, dim, keepdim, name, arg_extreme):
    """(values, indices) of the max/min along ``dim``: the forward of max(x, dim)/min(x, dim)."""
    _check_nonempty(name, x, dim)
    reject_complex(x, fixed_error(RuntimeError, f"{name}(): does not support complex input"))
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=xp.int64)
    idx = arg_extreme(x, axis=dim, keepdims=True)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, values = xp.squeeze(idx, dim), xp.squeeze(values, dim)
    return values, idx


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,),
    node_name="MaxBackward0", contiguous=True)
def _max_dim(xp, x, *, dim, keepdim=False):
    return _extreme_along(xp, x, dim, keepdim, "max", xp.argmax)


@op(save=("x.shape", "result1"), outputs=2, differentiable_outputs=(0,),
    node_name="MinBackward0", contiguous=True)
def _min_dim(xp, x, *, dim, keepdim=False):
    return _extreme_along(xp, x, dim, keepdim, "min", xp.argmin)


def _select_grad(g, x_shape, indices, dim, keepdim):
    if not x_shape:  # 0-d input: the value itself was selected
        return g
    if not keepdim:
        g, indices = unsqueeze(g, dim), unsqueeze(indices, dim)
    return scatter_into_zeros(g, indices, x_shape, dim)


def _select_jvp(tangents, x_shape, indices, dim, keepdim):
    """Tangent of max/min along a dim: the tangent at the selected index (indices get none)."""
    t = tangents[0]
    if not x_shape:
        return t, None
    if keepdim:
        return gather(t, dim, indices), None
    return squeeze(gather(t, dim, unsqueeze(indices, dim)), dim), None


_max_dim.defvjp_all(lambda g, x_shape, idx, dim, keepdim: (_select_grad(g, x_shape, idx, dim,
                                                                        keepdim),))
_min_dim.defvjp_all(lambda g, x_shape, idx, dim, keepdim: (_select_grad(g, x_shape, idx, dim,
                                                                        keepdim),))
_max_dim.defjvp_all(_select_jvp)
_min_dim.defjvp_all(_select_jvp)


def _extreme(pairwise_name: str, whole, along):
    """torch.max/min: ``f(x)`` a tensor, ``f(x, dim)`` (values, indices), ``f(x, other)``."""
    name = pairwise_name[:3]  # max, min
    result_type = getattr(return_types, name)

    def reduce_along(x, dim, keepdim=False):
        values, indices = along(x, _normalize_dim(dim, x.ndim), keepdim)
        return result_type(values, indices)
    reduce_along.__name__ = name  # (its errors name max or min)
    reduce_along = numpy_keywords(int_parameters(name, "single", dim=(1, "int"),
                                                 keepdim=(2, "bool"))(reduce_along))

    def extreme(x, *args, **kwargs):
        if not args and not kwargs:
            return whole(x)
        if len(args) == 1 and not kwargs and isinstance(args[0], Tensor) or \
                not args and list(kwargs) in (["other"], ["x2"]):  # a tensor alone: other
            return getattr(piecewise, pairwise_name)(x, *args, *kwargs.values())
        if not args and "dim" not in kwargs and "axis" not in kwargs:  # keepdim: no dim
            if "keepdim" in kwargs and len(kwargs) > 1:  # only the dim signature is left
                raise missing_arguments(name, ("dim",))
            raise invalid_combination(name, (x,), kwargs)
        return reduce_along(x, *args, **kwargs)
    extreme.__name__ = name
    extreme.lists_input_in_function_form = True  # its method's listing has no Tensor
    return extreme


max = tensor_method()(_extreme("maximum", _max_all, _max_dim))  # noqa: A001
max.__doc__ = "max(x) -> tensor; max(x, dim) -> (values, indices); max(x, other) -> maximum."
min = tensor_method()(_extreme("minimum", _min_all, _min_dim))  # noqa: A001
min.__doc__ = "min(x) -> tensor; min(x, dim) -> (values, indices); min(x, other) -> minimum."


def _arg_extreme(xp, x, dim, keepdim, name, arg_extreme):
    """Index of the max/min (of the flattened x without ``dim``): argmax's and argmin's forward."""
    for kind, words in (("c", "complex"), ("b", "bool")):
        if x.dtype.kind == kind:
            raise RuntimeError(f"{name}(): does not support {words} input")
    _check_nonempty(name, x, dim)  # NumPy's own error is a ValueError
    if dim is None:
        out = arg_extreme(x)
        return xp.reshape(out, (1,) * x.ndim) if keepdim else out
    return arg_extreme(x, axis=_normalize_dim(dim, x.ndim), keepdims=keepdim)


@op(method=True)
def argmax(xp, x, dim=None, keepdim=False):
    """Index of the maximum (of the flattened x without ``dim``); no gradient."""
    return _arg_extreme(xp, x, dim, keepdim, "argmax", xp.argmax)


argmax.numbers = ints_reader("argmax", dim=(1, "int?"), keepdim=(2, "bool"))


@op(method=True)
def argmin(xp, x, dim=None, keepdim=False):
    """Index of the minimum (of the flattened x without ``dim``); no gradient."""
    return _arg_extreme(xp, x, dim, keepdim, "argmin", xp.argmin)


argmin.numbers = ints_reader("argmin", dim=(1, "int?"), keepdim=(2, "bool"))
