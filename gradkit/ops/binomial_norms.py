"""``binomial(count, prob)`` samples and ``norm_except_dim`` (weight normalization's norm),
two torch functions gradkit builds from its sampling stream and its norms."""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit._user_frames import warn_at_user
from gradkit.generator import check_draw_parameters, rng_of
from gradkit.int_arguments import int_parameters
from gradkit.ops._op import Op
from gradkit.ops.grad_edges import no_derivative
from gradkit.ops.linalg_norms import norm
from gradkit.ops.shape import _normalize_dim, transpose, view
from gradkit.ops.unary_helpers import scalar_type_name


def _draw_binomial(xp, count, prob, *, rng=None):
    """Binomial(floor(count), prob) samples in count's dtype: 0 for prob <= 0, count for
    prob >= 1, NaN where prob is NaN."""
    counts = np.floor(np.maximum(backend.to_device(count, backend.CPU), 0)).astype(np.int64)
    probs = backend.to_device(prob, backend.CPU)
    counts, probs = np.broadcast_arrays(counts, probs)
    # (asarray: NumPy returns a Python int for 0-d parameters)
    draws = np.asarray(rng.binomial(counts, np.clip(np.nan_to_num(probs), 0, 1)), dtype=count.dtype)
    return xp.asarray(np.where(np.isnan(probs), np.nan, draws).astype(count.dtype))


# torch has no derivative for binomial: its node (NotImplemented) raises when reached
_binomial = Op(_draw_binomial, name="binomial", node_name="NotImplemented")
_binomial.defvjp(no_derivative("binomial"), no_derivative("binomial"))
_binomial.defjvp(no_derivative("binomial"), no_derivative("binomial"))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Samples of Binomial(count, prob) (a count's fraction dropped), broadcast, in count's
    floating dtype; ``generator=`` a ``Generator`` or the default one."""
    for position, (name, value) in enumerate((("count", count), ("prob", prob)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
        if value._data.dtype.kind != "f":
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{scalar_type_name(value._data)}")
    rng = rng_of(generator, "binomial")
    check_draw_parameters(count, prob)
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(prob._data)} but expected "
                           f"{scalar_type_name(count._data)}")
    shape = np.broadcast_shapes(count.shape, prob.shape)
    if shape != tuple(count.shape):  # torch writes into a count-shaped output it resizes
        warn_at_user(
            f"An output with one or more elements was resized since it had shape "
            f"{list(count.shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
            "outputs will not be resized unless they have zero elements. You can explicitly "
            "reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).")
    return _binomial(count, prob, rng=rng)


@int_parameters("norm_except_dim", pow=(2, "int"), dim=(3, "int"))
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of v over every dim but ``dim`` (kept, the others size 1), as torch's
    weight normalization computes it; ``dim=-1``: the norm of all of v (0-d)."""
    if dim == -1:
        return norm(v, pow)
    ndim = v.ndim
    if ndim == 0:  # torch's two errors: a dim out of range, or 0 on a tensor without dims
        _normalize_dim(dim, ndim)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim == 0 or dim == ndim - 1:
        size = v.shape[dim]
        output_size = tuple(size if d == dim else 1 for d in range(ndim))
        rows = view(v.contiguous(), shape=(size, -1) if dim == 0 else (-1, size))
        return view(norm(rows, pow, 1 if dim == 0 else 0), shape=output_size)
    _normalize_dim(dim, ndim)  # torch's IndexError for a dim out of range
    return transpose(norm_except_dim(transpose(v, 0, dim), pow, 0), 0, dim)
