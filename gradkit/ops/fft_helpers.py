"""torch.fft's helper functions: the sample frequencies of a transform (``fftfreq``,
``rfftfreq``) and the shifts that put frequency 0 in the middle (``fftshift``, ``ifftshift``)."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.creation import _finish, _resolve
from gradkit.ops.fft_primitives import wrap_dim
from gradkit.ops.fft_transforms import _as_tuple
from gradkit.ops.slicing import roll
from gradkit.ops.unary_helpers import scalar_type_name


def _frequencies(function: str, count: int, scale_n: int, d: float, dtype, device,
                 requires_grad: bool) -> Tensor:
    """``arange(count)`` (then the negative frequencies, for fftfreq) times 1 / (n * d), in
    ``dtype`` as torch computes it (arange in dtype, then a multiply by a double scalar)."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
        raise TypeError(f"fft_{function}(): argument 'n' (position 1) must be int, not "
                        f"{type(scale_n).__name__}")
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: [{count}]")
    dev, np_dtype = _resolve(dtype, device)
    if np_dtype.kind == "c":
        raise NotImplementedError(
            f"\"arange_cpu\" not implemented for '{scalar_type_name(np.empty(0, np_dtype))}'")
    if np_dtype.kind != "f":
        raise RuntimeError(f"{function} requires a floating point or complex dtype")
    values = np.arange(count)
    if function == "fftfreq":  # 0, 1, ..., (n - 1) // 2, then -(n // 2), ..., -1
        values[(scale_n + 1) // 2:] -= scale_n
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.float64(1.0) / np.float64(scale_n * float(d))  # inf for n * d == 0
        data = values.astype(np_dtype) * np_dtype.type(factor)
    return _finish(data, dev, requires_grad)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (n * d)``."""
    return _frequencies("fftfreq", n, n, d, dtype, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point ``rfft``: ``[0, 1, ..., n // 2] / (n * d)``."""
    # C++ division truncates towards zero: torch's n / 2 + 1 for a negative n
    count = int(n / 2) + 1 if isinstance(n, int) and not isinstance(n, bool) else n
    return _frequencies("rfftfreq", count, n, d, dtype, device, requires_grad)


def _shifted(input: Tensor, dim, half) -> Tensor:
    dims = range(input.ndim) if dim is None else [wrap_dim(d, input.ndim) for d in _as_tuple(dim)]
    dims = tuple(dims)
    if not dims:
        raise RuntimeError("`shifts` required")
    return roll(input, tuple(half(input.shape[d]) for d in dims), dims)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """``input`` rolled by half its size along ``dim`` (default: all), so frequency 0 of an
    FFT's output sits in the middle."""
    return _shifted(input, dim, lambda n: n // 2)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of ``fftshift``: a roll by ``(n + 1) // 2`` along ``dim``."""
    return _shifted(input, dim, lambda n: (n + 1) // 2)
