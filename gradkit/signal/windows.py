"""``gradkit.signal.windows``: torch.signal.windows, written with gradkit ops as torch writes
them with its own (so ``requires_grad=True`` gives, as torch's, a window computed from a leaf
of sample points: ``exponential(4, requires_grad=True).grad_fn`` is an ``ExpBackward0``).

``sym=True`` (the default) gives the symmetric window, ``sym=False`` the periodic one.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.creation import arange, empty, linspace, ones, tensor
from gradkit.memory_format import strided
from gradkit.ops.elementwise import cos, exp, sin, sqrt
from gradkit.ops.gamma import i0
from gradkit.ops.binary_breadth import rsub
from gradkit.ops.piecewise import abs as absolute

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checked_dtype(function_name: str, M: int, dtype, layout):  # noqa: N803 - torch's name
    """The window's dtype after torch's checks (M >= 0, strided, float32 or float64; a layout
    gradkit lacks, such as torch's sparse_coo, is refused as torch refuses it)."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: "
                         f"{layout}")
    if dtype not in (backend.float32, backend.float64):
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _sampled(M: int, start: float, step: float, dtype, device, requires_grad):  # noqa: N803
    """``M`` points from ``start`` by ``step``: the leaf a window is computed from."""
    return linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device,
                    requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0,  # noqa: N803
                sym: bool = True, dtype=None, layout=strided, device=None,
                requires_grad: bool = False) -> Tensor:
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``."""
    dtype = _checked_dtype("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _sampled(M, -center / tau, 1 / tau, dtype, device, requires_grad)
    return exp(-absolute(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,  # noqa: N803
           requires_grad: bool = False) -> Tensor:
    """The cosine (sine) window ``sin(pi (n + 0.5) / M)``."""
    dtype = _checked_dtype("cosine", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    return sin(_sampled(M, 0.5 * constant, constant, dtype, device, requires_grad))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None,  # noqa: N803
             layout=strided, device=None, requires_grad: bool = False) -> Tensor:
    """The Gaussian window ``exp(-(n - (M - 1) / 2)^2 / (2 std^2))``."""
    dtype = _checked_dtype("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _sampled(M, start * constant, constant, dtype, device, requires_grad)
    return exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None,  # noqa: N803
           layout=strided, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(sqrt(beta^2 - k^2)) / I0(beta)``, k from -beta to beta."""
    dtype = _checked_dtype("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    beta_t = tensor(beta, dtype=dtype, device=device)  # in the window's dtype, as torch's
    constant = 2.0 * beta_t / (M if not sym else M - 1)
    end = min(beta_t.item(), (-beta_t + (M - 1) * constant).item())  # rounding stays below beta
    k = linspace(-beta_t.item(), end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return i0(sqrt(beta_t * beta_t - k ** 2)) / i0(beta_t)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype=None,  # noqa: N803
                   layout=strided, device=None, requires_grad: bool = False) -> Tensor:
    """The sum of cosines ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _checked_dtype("general_cosine", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _sampled(M, 0, 2 * math.pi / (M if not sym else M - 1), dtype, device, requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                 requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (a_i.unsqueeze(-1) * cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None,  # noqa: N803
                    layout=strided, device=None, requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,  # noqa: N803
            requires_grad: bool = False) -> Tensor:
    """The Hamming window (general_hamming with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,  # noqa: N803
         requires_grad: bool = False) -> Tensor:
    """The Hann window (general_hamming with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,  # noqa: N803
             requires_grad: bool = False) -> Tensor:
    """The Blackman window (general_cosine with a = 0.42, 0.5, 0.08)."""
    dtype = _checked_dtype("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,  # noqa: N803
             requires_grad: bool = False) -> Tensor:
    """The triangular Bartlett window ``1 - |k|``, k from -1 to 1."""
    dtype = _checked_dtype("bartlett", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    k = _sampled(M, -1, 2 / (M if not sym else M - 1), dtype, device, requires_grad)
    return rsub(absolute(k), 1)  # torch's 1 - |k| records an RsubBackward1


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,  # noqa: N803
            requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
