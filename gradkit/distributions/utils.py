"""Helpers shared by the distributions, as torch.distributions.utils names them."""
from __future__ import annotations

import operator
from functools import update_wrapper
from numbers import Number

import numpy as np

from gradkit import backend, ops
from gradkit._tensor import Size, Tensor
from gradkit.autograd.grad_mode import enable_grad
from gradkit.creation import tensor, zeros
from gradkit.dtype_info import finfo
from gradkit.ops._dispatch_general import broadcast_shape

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def forwarded(path: str, doc: str | None = None) -> property:
    """A read-only property reading ``self.<path>`` (dotted): what a distribution or transform
    built on another shows of it, e.g. ``loc = forwarded("base_dist.loc")``."""
    return property(operator.attrgetter(path), doc=doc or f"``self.{path}``.")


def is_number(value) -> bool:
    """True for a plain Python/NumPy number (bools included, as torch's ``_Number``)."""
    return isinstance(value, Number) and not isinstance(value, Tensor)


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """The values broadcast together; numbers become tensors of the first tensor's dtype
    (the default dtype when all are numbers)."""
    if not all(isinstance(v, Tensor) or is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    options = ({"dtype": first.dtype, "device": first.device} if first is not None
               else {"dtype": backend.get_default_dtype()})
    tensors = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    # torch.broadcast_tensors' rule and message ("The size of tensor a (2) must match ...")
    shape = broadcast_shape(*(tuple(t.shape) for t in tensors))
    # as torch: a tensor already of the broadcast shape is returned itself, not a view
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def as_size(shape) -> Size:
    """``shape`` (a Size, tuple or list) as a Size."""
    return shape if isinstance(shape, Size) else Size(tuple(shape))


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (binary) or from unnormalized log-probabilities (last dim)."""
    return ops.sigmoid(logits) if is_binary else ops.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into ``[eps, 1 - eps]`` (eps of its dtype), so logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or log-probabilities (last dim) of ``probs``."""
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


class lazy_property:  # noqa: N801 - torch's name
    """A property computed on first access (with grad enabled, so it stays differentiable)
    and then stored on the instance, as torch's ``lazy_property``."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_positions(n: int, diag: int) -> np.ndarray:
    """Flat positions (row-major) of the entries of an n x n matrix on or below diagonal
    ``diag``, in row order."""
    rows, cols = np.nonzero(np.arange(n)[None, :] < np.arange(n)[:, None] + (diag + 1))
    return rows * n + cols


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries on or below diagonal ``diag`` of (a batch of) square matrices, row by
    row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat[..., tensor(_tril_positions(n, diag), device=mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The square matrices whose entries on or below diagonal ``diag`` are ``vec``, row by
    row (zeros elsewhere)."""
    k = 1 + 2 * diag
    n = (-k + (k**2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    # each matrix entry reads its vec entry, or a zero appended at the end
    positions = _tril_positions(n, diag)
    if len(positions) != vec.shape[-1]:  # torch's indexed write fails so
        raise RuntimeError(f"shape mismatch: value tensor of shape [{vec.shape[-1]}] cannot be "
                           f"broadcast to indexing result of shape [{len(positions)}]")
    source = np.full(n * n, vec.shape[-1])
    source[positions] = np.arange(vec.shape[-1])
    padded = ops.cat([vec, zeros(tuple(vec.shape[:-1]) + (1,), dtype=vec.dtype,
                                 device=vec.device)], -1)
    return padded[..., tensor(source, device=vec.device)].reshape(tuple(vec.shape[:-1]) + (n, n))
