"""torch's window functions: hann_window, hamming_window, blackman_window, bartlett_window,
kaiser_window.

Each is computed as torch's kernel computes it (the same steps, in the window's own dtype), so
float32 windows round as torch's do. ``periodic=True`` (the default) is the window of length
``window_length + 1`` without its last point, the form spectral analysis (stft) wants.
The result is a leaf (``requires_grad=`` marks it), as torch's.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.creation import _finish, _resolve
from gradkit.number_arguments import number_parameters
from gradkit.ops.unary_helpers import c_type_name, scalar_type_name

_UNSET = object()  # kaiser_window's periodic and beta not given


def _checked(name: str, window_length, dtype, device):
    """(device, NumPy dtype) of a window, after torch's checks of its arguments."""
    if not isinstance(window_length, (int, np.integer)) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    dev, np_dtype = _resolve(dtype, device)
    probe = np.empty(0, np_dtype)
    if np_dtype.kind == "c":  # torch's check lets complex through to arange, which refuses it
        raise NotImplementedError(
            f"\"arange_{dev.type}\" not implemented for '{scalar_type_name(probe)}'")
    if np_dtype.kind != "f":
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{c_type_name(probe)}, device={dev}, layout=Strided (default), requires_grad=false "
            f"(default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    return dev, np_dtype


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad: bool,
            values) -> Tensor:
    """The window ``values(n, dtype)`` gives for ``n`` points, made periodic on request."""
    dev, np_dtype = _checked(name, window_length, dtype, device)
    if window_length <= 1:  # torch's special cases: empty, or the single point 1
        return _finish(np.ones(window_length, np_dtype), dev, requires_grad)
    n = window_length + 1 if periodic else window_length
    data = values(n, np_dtype).astype(np_dtype, copy=False)
    return _finish(data[:window_length] if periodic else data, dev, requires_grad)


def _points(n: int, dtype, scale: float):
    """arange(n) * scale, rounded in ``dtype`` as torch's in-place ``mul_`` rounds."""
    return np.arange(n, dtype=dtype) * dtype.type(scale)


def _cosine_window(name: str, window_length: int, periodic: bool, alpha: float, beta: float,
                   dtype, device, requires_grad: bool) -> Tensor:
    def values(n, np_dtype):
        angles = _points(n, np_dtype, 2 * math.pi / (n - 1))
        return np.cos(angles) * np_dtype.type(-beta) + np_dtype.type(alpha)
    return _window(name, window_length, periodic, dtype, device, requires_grad, values)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window ``alpha - beta cos(2 pi n / (N - 1))``."""
    return _cosine_window("hamming_window", window_length, periodic, alpha, beta, dtype, device,
                          requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (torch's hamming_window(0.5, 0.5))."""
    return _cosine_window("hann_window", window_length, periodic, 0.5, 0.5, dtype, device,
                          requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    def values(n, np_dtype):
        angles = _points(n, np_dtype, math.pi / (n - 1))
        two, four = np_dtype.type(2), np_dtype.type(4)
        return (np.cos(angles * four) * np_dtype.type(0.08)
                - np.cos(angles * two) * np_dtype.type(0.5) + np_dtype.type(0.42))
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   values)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The triangular Bartlett window ``1 - |2 n / (N - 1) - 1|``."""
    def values(n, np_dtype):
        window = _points(n, np_dtype, 2.0 / (n - 1))
        first_half = ((n - 1) >> 1) + 1
        window[first_half:] = np_dtype.type(2) - window[first_half:]
        return window
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   values)


def _kaiser_signature(window_length, periodic=_UNSET, beta=_UNSET, **_) -> bool:
    return periodic is not _UNSET or beta is _UNSET  # torch has no signature for beta alone


@number_parameters("kaiser_window", True, _kaiser_signature, beta="float")
def kaiser_window(window_length: int, periodic: bool = _UNSET, beta: float = _UNSET, *,
                  dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)``, ``a = (N - 1) / 2``
    (computed in float64 and rounded: torch's float32 kernel computes in float too);
    ``periodic`` True and ``beta`` 12 by default."""
    periodic = True if periodic is _UNSET else periodic
    beta = 12.0 if beta is _UNSET else beta
    def values(n, np_dtype):
        alpha = (n - 1) / 2.0
        ratio = (np.arange(n, dtype=np.float64) - alpha) / alpha
        return np.i0(beta * np.sqrt(np.abs(1 - ratio ** 2))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   values)
