"""Sums over samples: trapezoid / trapz and cumulative_trapezoid (composed as torch composes
them), and bincount (counts, or sums of weights, per non-negative integer; torch has no
derivative for it: a weights gradient raises)."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.creation import zeros
from gradkit.ops._op import op
from gradkit.ops.methods import tensor_method
from gradkit.ops.reduction import cumsum, sum
from gradkit.ops.shape import _normalize_dim, reshape
from gradkit.ops.slicing import _select_index, _slice
from gradkit.ops.unary_helpers import scalar_type_name
from gradkit.tensor_arguments import tensor_parameters


def _sample_dim(y: Tensor, dim: int, wrapped: bool) -> int:
    """``dim`` of y; torch reads a 0-d y's size at dim as given, or (``wrapped``, with sample
    points) after wrapping it as a scalar's dim."""
    if y.ndim == 0:
        shown = _normalize_dim(dim, 0) if wrapped else dim
        raise IndexError(f"Dimension specified as {shown} but tensor has no dimensions")
    return _normalize_dim(dim, y.ndim)


def _ends(t: Tensor, dim: int) -> tuple:
    """(t without its last sample, t without its first) along ``dim``."""
    size = t.shape[dim]
    return (_slice(t, dim=dim, start=0, end=max(size - 1, 0), step=1),
            _slice(t, dim=dim, start=min(1, size), end=size, step=1))


def _spacing(name: str, y: Tensor, x, dx, dim: int):
    """The sample spacing: x's differences (shaped to broadcast along ``dim``), or the number
    dx, with torch's checks."""
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"Tensor, dx={type(dx).__name__}), but expected one of:\n * (Tensor y, "
                        "Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, "
                        "int dim = -1)\n")
    if x is None:
        dx = 1 if dx is None else dx
        if y.dtype.name == "bool":
            raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
        if isinstance(dx, (bool, complex)):
            raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
        return float(dx)
    if "bool" in (y.dtype.name, x.dtype.name):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = reshape(x, tuple(-1 if d == dim else 1 for d in range(y.ndim)))
    elif x.ndim < y.ndim:
        x = reshape(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    left, right = _ends(x, dim)
    return right - left


@tensor_parameters("x", overloaded=True, absent=("x",))
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule's integral of the samples ``y`` along ``dim``, spaced by the
    sample points ``x`` or by ``dx`` (1 by default)."""
    dim = _sample_dim(y, dim, x is not None)
    if y.shape[dim] == 0 and (x is None or dx is None):  # no samples: 0, as NumPy
        shape = tuple(s for d, s in enumerate(y.shape) if d != dim)
        return zeros(shape, dtype=y.dtype, device=y.device)
    spacing = _spacing("trapezoid", y, x, dx, dim)
    if isinstance(spacing, float):
        first, last = (_select_index(y, dim=dim, index=i) for i in (0, y.shape[dim] - 1))
        return (sum(y, dim) - (first + last) * 0.5) * spacing
    left, right = _ends(y, dim)
    return sum((left + right) * spacing, dim) / 2.0


@tensor_parameters("x", overloaded=True, absent=("x",))
def trapz(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """torch.trapz: trapezoid under its older name."""
    return trapezoid(y, dx=dx, dim=dim) if x is None else trapezoid(y, x, dx=dx, dim=dim)


@tensor_parameters("x", overloaded=True, absent=("x",))
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral of ``y`` along ``dim`` (one sample fewer)."""
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, y.ndim)
    spacing = _spacing("cumulative_trapezoid", y, x, dx, dim)
    left, right = _ends(y, dim)
    if isinstance(spacing, float):
        return cumsum(spacing / 2.0 * (left + right), dim)
    return cumsum((left + right) * spacing, dim) / 2.0


# -- bincount ------------------------------------------------------------------------------------

def _counts(xp, x, weights, minlength):
    if x.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(x)}'")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.size == 0 or weights is None:
        return xp.bincount(x, minlength=minlength).astype(np.int64)
    if weights.dtype == np.float32:  # torch adds float weights up in float, in input order
        counts = xp.zeros(max(minlength, int(x.max()) + 1), dtype=np.float32)
        xp.add.at(counts, x, weights)
        return counts
    return xp.bincount(x, weights.astype(np.float64), minlength=minlength)


@op(name="bincount")
def _count(xp, x, *, minlength=0):
    return _counts(xp, x, None, minlength)


@op(name="bincount", node_name="NotImplemented")
def _weighted_count(xp, x, weights, *, minlength=0):
    return _counts(xp, x, weights, minlength)


def _no_bincount_derivative(g, **params):
    raise RuntimeError("derivative for aten::bincount is not implemented")


def _no_bincount_jvp(t, **params):
    raise NotImplementedError("Trying to use forward AD with aten::bincount that does not "
                              "support it.")


_weighted_count.defvjp(None, _no_bincount_derivative)
_weighted_count.defjvp(None, _no_bincount_jvp)


@tensor_method()
@tensor_parameters("weights")
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in the 1-d non-negative integer input (or the sum of
    ``weights`` at its occurrences), at least ``minlength`` bins."""
    if weights is None:
        return _count(input, minlength=minlength)
    return _weighted_count(input, weights, minlength=minlength)


bincount.function_words = True  # its method's errors do not count self
