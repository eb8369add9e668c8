"""Fractional max pooling (Graham 2014) in 2 and 3 dims, as torch's CPU kernels.

Each plane draws one number u in [0, 1) per spatial dim (``_random_samples``, shape
(N, C, d)); a dim of input size L pooled by k to ``out`` windows starts them at
int((i + u)·α) - int(u·α) with α = (L - k) / (out - 1), the last at L - k, all computed in the
input's dtype as torch's kernel does. The maxima then come from ``max_pool_with_indices`` with
one window map per plane, so the indices, gradients (``FractionalMaxPool2DBackward0``) and
second derivatives are max pooling's.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit import creation
from gradkit._tensor import Tensor
from gradkit.backend import CPU, to_device
from gradkit.ops.pooling import max_pool_with_indices
from gradkit.ops.shape import unsqueeze
from gradkit.ops.unary_helpers import require_real_floating

_WORDS = {2: "Ints", 3: "three Ints"}
_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _sizes(value, d: int, name: str, what: str) -> tuple:
    """An int or a sequence of ``d`` ints, with ATen's error for another length."""
    value = (int(value),) * d if isinstance(value, (int, np.integer)) else \
        tuple(int(v) for v in value)
    if len(value) != d:
        raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of "
                           f"{_WORDS[d]}")
    return value


def _starts(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """torch's generate_intervals for every plane: (N, C) samples -> (N, C, out) starts."""
    starts = np.full(samples.shape + (out,), size - pool, dtype=np.int64)
    if out > 1:
        kind = samples.dtype.type
        alpha = kind(size - pool) / kind(out - 1)  # in the input's dtype, as the kernel
        steps = np.arange(out - 1).astype(samples.dtype)
        starts[..., :-1] = (((steps + samples[..., None]) * alpha).astype(np.int64)
                            - (samples * alpha).astype(np.int64)[..., None])
    return starts


def _windows(samples: np.ndarray, sizes: tuple, outs: tuple, kernel: tuple) -> np.ndarray:
    """(N, C, *outs, K) flat indices into each plane: a window per output position."""
    d = len(sizes)
    flat = 0
    for i in range(d):
        positions = (_starts(samples[..., i], sizes[i], outs[i], kernel[i])[..., None]
                     + np.arange(kernel[i]))  # (N, C, out_i, k_i)
        shape = list(samples.shape[:2]) + [1] * (2 * d)
        shape[2 + i], shape[2 + d + i] = outs[i], kernel[i]
        flat = flat + positions.reshape(shape) * math.prod(sizes[i + 1:])
    # (the window length spelled out: -1 is ambiguous for an empty batch or output)
    return np.broadcast_to(flat, samples.shape[:2] + outs + kernel).reshape(
        samples.shape[:2] + outs + (math.prod(kernel),))


def _check_samples(input: Tensor, samples: Tensor, d: int, batch: int) -> None:
    """ATen's fractional_max_pool_check_shape."""
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    channels = input.shape[-d - 1]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != d:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {d}; got "
                           f"{samples.shape[2]}.")


def _fractional_max_pool(input: Tensor, kernel_size, output_size, output_ratio,
                         return_indices: bool, samples, d: int):
    name = f"fractional_max_pool{d}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        if d == 2 and len(output_ratio) > 2:  # torch's len() also refuses a lone float
            raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                             "tuple of Ints.")
        ratios = (output_ratio,) * d if isinstance(output_ratio, (int, float)) else output_ratio
        output_size = [int(s * r) for s, r in zip(input.shape[-d:], ratios)]
    if samples is None:
        batch = 1 if input.ndim == d + 1 else input.shape[0]
        samples = creation.rand(batch, input.shape[-d - 1], d, dtype=input.dtype,
                                device=input.device)
    kernel = _sizes(kernel_size, d, name, "kernel_size")
    outs = _sizes(output_size, d, name, "output_size")
    where = name if d == 2 else "fractional_max_pool3d_out"
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{where}(): Expected {d + 1}D or {d + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for dim in range(1, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{where}(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but got{list(input.shape)} with "
                               f"dimension {dim} being empty.")
    sizes = tuple(input.shape[-d:])
    for axis, size, out, pool in zip(_AXES[d], sizes, outs, kernel, strict=True):
        if out + pool - 1 > size - (d == 3):  # torch's 3-d check is strict
            raise RuntimeError(f"{where}(): pool {axis} {pool} too large relative to input "
                               f"{axis} {size}")
    if 0 in kernel:  # torch's kernel then gives -inf at each window's start; not modelled
        raise NotImplementedError(f"{name} with a kernel_size of 0 is not supported")
    added = input.ndim == d + 1
    batched = unsqueeze(input, 0) if added else input
    _check_samples(input, samples, d, batched.shape[0])
    require_real_floating(name + "_out_frame", input._data)
    drawn = to_device(samples._data, CPU)[:batched.shape[0]]
    if d == 2:  # torch's 2-d kernel reads u for the width first
        drawn = drawn[..., ::-1]
    values, indices = max_pool_with_indices(input, windows=_windows(drawn, sizes, outs, kernel),
                                            kind=f"FractionalMaxPool{d}D",
                                            torch_arguments={"kernel_size": kernel,
                                                             "output_size": outs},
                                            unbatched=added)
    return (values, indices) if return_indices else values


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """torch.nn.functional.fractional_max_pool2d on (N, C, H, W) or (C, H, W):
    ``output_size`` or ``output_ratio``; ``_random_samples`` (N, C, 2) in the input's dtype
    (u for the width, then the height, as torch) makes it deterministic."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 2)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """torch.nn.functional.fractional_max_pool3d on (N, C, T, H, W) or (C, T, H, W);
    ``_random_samples`` (N, C, 3)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 3)
